"""AMD async-memory ops (TLX names) for Numba kernels, compiled with llvmlite's AMDGPU
back end for gfx942, gfx950 and gfx1250.

Verified at the ISA level only (generated assembly), never run on AMD hardware.
Kernels are plain Python functions using the ops below, compiled with
:func:`compile`; the emitters behind them (``buffer``, ``global_load``, ``dma``,
``sync``, ``tdm``, ``lanes``) take an llvmlite ``IRBuilder`` and can be used directly.
"""
from .api import (amd_sched_barrier, async_amd_descriptor_load,
                  async_amd_descriptor_load_fused, async_amd_descriptor_store,
                  async_amd_descriptor_wait, async_load, async_load_commit_group,
                  async_load_wait_group, barrier_arrive, buffer_load_to_local, lds_array,
                  make_tensor_descriptor, s_barrier, s_setprio,
                  sched_group_barrier,
                  update_tensor_descriptor, workgroup_id_x, workitem_id_x)
from .codegen import compile_ir, find_ld_lld, link_hsaco
from .errors import AMDArgumentError, AMDError, LLVMVersionError, UnsupportedArchError
from .kernel import CompiledKernel, compile
from .lanes import (dpp, dpp8, ds_bpermute, lane_id, ds_permute, ds_swizzle, permlane16,
                    permlane16_swap, permlane32_swap, permlanex16, quad_perm, readfirstlane,
                    readlane, row_reduce, swizzle_bitmask, swizzle_quad_perm, wave_id,
                    wave_reduce)
from .sync import SCHED_CLASSES
from .targets import ARCHS, FEATURES

__all__ = [
    "ARCHS", "FEATURES", "SCHED_CLASSES",
    "AMDError", "AMDArgumentError", "LLVMVersionError", "UnsupportedArchError",
    "CompiledKernel", "compile", "compile_ir", "find_ld_lld", "link_hsaco",
    "workitem_id_x", "workgroup_id_x", "lds_array",
    "buffer_load_to_local", "async_load", "async_load_commit_group", "async_load_wait_group",
    "amd_sched_barrier", "sched_group_barrier", "s_barrier", "s_setprio", "barrier_arrive",
    "make_tensor_descriptor", "update_tensor_descriptor", "async_amd_descriptor_load",
    "async_amd_descriptor_load_fused", "async_amd_descriptor_store",
    "async_amd_descriptor_wait",
    "wave_id", "lane_id", "readfirstlane", "readlane", "ds_bpermute", "ds_permute", "ds_swizzle", "dpp", "dpp8",
    "permlane16", "permlanex16", "permlane16_swap", "permlane32_swap", "row_reduce",
    "wave_reduce", "quad_perm", "swizzle_quad_perm", "swizzle_bitmask",
]
