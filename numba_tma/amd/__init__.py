"""AMD async-memory and cross-lane ops (TLX names) for Numba kernels, compiled with llvmlite's
AMDGPU back end for gfx942, gfx950 and gfx1250.

Verified at the ISA level only (generated assembly), never run on AMD hardware.
Kernels are plain Python functions using the ops below, compiled with
:func:`compile`.  Each op is declared once in the module of its family in :mod:`numba_tma.amd.ops`
(``workgroup``: ids and LDS arrays; ``async_loads``: LDS DMA and its groups; ``scheduling``:
scheduling barriers, priority, workgroup barriers; ``tensor_descriptors``: the Tensor Data
Mover; ``lanes``: cross-lane moves and reductions) on the declaration core
(:mod:`numba_tma.declarations`, :mod:`numba_tma.amd._core`); the emitters behind them
(``buffer``, ``global_load``, ``dma``, ``sync``, ``tdm``, ``lanes``) take an llvmlite
``IRBuilder`` and can be used directly.
"""
from ..declarations import exported
from . import ops
from .codegen import compile_ir, find_ld_lld, link_hsaco
from .errors import AMDArgumentError, AMDError, LLVMVersionError, UnsupportedArchError
from .kernel import CompiledKernel, compile
from .lanes import quad_perm, swizzle_bitmask, swizzle_quad_perm
from .sync import SCHED_CLASSES
from .targets import ARCHS, features

_OPS = exported("amd")   # the declared ops, by name (each in its family module of ops)
globals().update({name: getattr(ops.FAMILIES[ops.family_of(name)], name) for name in _OPS})
FEATURES = features()   # what each op (and emitter) needs, from the declarations

__all__ = [
    "ARCHS", "FEATURES", "SCHED_CLASSES",
    "AMDArgumentError", "AMDError", "LLVMVersionError", "UnsupportedArchError",
    "CompiledKernel", "compile", "compile_ir", "find_ld_lld", "link_hsaco",
    "quad_perm", "swizzle_quad_perm", "swizzle_bitmask", *_OPS,
]
