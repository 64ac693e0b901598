"""Forbidden arch/op pairs and bad arguments raise Python errors in-process.

Emitting any of these for real would make LLVM abort the interpreter (SIGABRT), so
these tests passing at all shows the checks run before LLVM.
"""
import json
import pathlib
import subprocess
import sys

import pytest
from llvmlite import ir

from amd_asm import ARCHS
from numba_tma import ArchError, OpArgumentError, OpError
from numba_tma.amd import (AMDArgumentError, AMDError, FEATURES, LLVMVersionError,
                           UnsupportedArchError, buffer, dma, global_load, lanes, sync, targets,
                           tdm)
from numba_tma.amd.llvm_ir import call_intrinsic, i32
from numba_tma.amd.tdm_layout import TileSpec


def _desc():
    spec = TileSpec(4, (8, 8))
    return tdm.TDMDescriptor(spec, tuple(ir.Constant(t, 0) for t in tdm.GROUP_TYPES))


# op name -> call emitting that op on KernelBuilder k
CALLS = {
    # the ids and lds_array have no emitter: what their lowering emits, on every arch
    "workitem_id_x": lambda k: k.tid(),
    "workgroup_id_x": lambda k: call_intrinsic(k.builder, "llvm.amdgcn.workgroup.id.x", ir.IntType(32), []),
    "lds_array": lambda k: k.builder.load(k.lds_at(0)),
    "make_buffer_rsrc": lambda k: buffer.emit_make_buffer_rsrc(k.builder, k.arch, k.src),
    "buffer_load_to_local": lambda k: buffer.emit_buffer_load_to_local(
        k.builder, k.arch, ir.Constant(ir.PointerType(addrspace=8), None), k.lds_at(0), i32(0),
        dma.AsyncGroups()),
    "async_load": lambda k: global_load.emit_async_load(k.builder, k.arch, k.src, k.lds_at(0),
                                                        dma.AsyncGroups()),
    "async_load_commit_group": lambda k: dma.emit_async_load_commit_group(
        k.builder, k.arch, dma.AsyncGroups()),
    "async_load_wait_group": lambda k: dma.emit_async_load_wait_group(
        k.builder, k.arch, dma.AsyncGroups(), 0),
    "amd_sched_barrier": lambda k: sync.emit_sched_barrier(k.builder, k.arch, 0),
    "sched_group_barrier": lambda k: sync.emit_sched_group_barrier(k.builder, k.arch, 8, 1, 0),
    "s_barrier": lambda k: sync.emit_s_barrier(k.builder, k.arch),
    "s_setprio": lambda k: sync.emit_s_setprio(k.builder, k.arch, 2),
    "barrier_arrive": lambda k: sync.emit_barrier_arrive(k.builder, k.arch, k.lds_at(0)),
    "make_tensor_descriptor": lambda k: tdm.emit_make_tensor_descriptor(
        k.builder, k.arch, TileSpec(4, (8, 8)), k.src, [8, 8], [8, 1]),
    "update_tensor_descriptor": lambda k: tdm.emit_update_tensor_descriptor(
        k.builder, k.arch, _desc(), pred=0),
    "async_amd_descriptor_load": lambda k: tdm.emit_tensor_load(k.builder, k.arch, _desc(),
                                                                k.lds_at(0)),
    "async_amd_descriptor_load_fused": lambda k: tdm.emit_tensor_load_fused(
        k.builder, k.arch, [(_desc(), k.lds_at(0), 1), (_desc(), k.lds_at(64), 2)]),
    "async_amd_descriptor_store": lambda k: tdm.emit_tensor_store(k.builder, k.arch, _desc(),
                                                                  k.lds_at(0)),
    "async_amd_descriptor_wait": lambda k: tdm.emit_tensor_wait(k.builder, k.arch, 0),
    # cross-lane ops: each on this lane's id
    "wave_id": lambda k: lanes.emit_wave_id(k.builder, k.arch),
    "lane_id": lambda k: lanes.emit_lane_id(k.builder, k.arch),
    "readfirstlane": lambda k: lanes.emit_readfirstlane(k.builder, k.arch, k.tid()),
    "readlane": lambda k: lanes.emit_readlane(k.builder, k.arch, k.tid(), 3),
    "ds_bpermute": lambda k: lanes.emit_ds_bpermute(k.builder, k.arch, k.tid(), k.tid()),
    "ds_permute": lambda k: lanes.emit_ds_permute(k.builder, k.arch, k.tid(), k.tid()),
    "ds_swizzle": lambda k: lanes.emit_ds_swizzle(k.builder, k.arch, k.tid(), 0x401F),
    "dpp": lambda k: lanes.emit_dpp(k.builder, k.arch, k.tid(), "row_shr:1"),
    "dpp8": lambda k: lanes.emit_dpp8(k.builder, k.arch, k.tid(), (1, 0, 3, 2, 5, 4, 7, 6)),
    "permlane16": lambda k: lanes.emit_permlane16(k.builder, k.arch, k.tid(), 0x76543210,
                                                  0xFEDCBA98),
    "permlanex16": lambda k: lanes.emit_permlanex16(k.builder, k.arch, k.tid(), 0x76543210,
                                                    0xFEDCBA98),
    "permlane16_swap": lambda k: lanes.emit_permlane16_swap(k.builder, k.arch, k.tid(),
                                                            k.tid())[0],
    "permlane32_swap": lambda k: lanes.emit_permlane32_swap(k.builder, k.arch, k.tid(),
                                                            k.tid())[1],
    "row_reduce": lambda k: lanes.emit_row_reduce(k.builder, k.arch, k.tid(), "sum", 16, "i"),
    "wave_reduce": lambda k: lanes.emit_wave_reduce(k.builder, k.arch, k.tid(), "max", "u"),
}

# the emitters, called directly (each op's own claims: tests/amd/test_amd_declarations.py)
FORBIDDEN = [(op, arch) for op in CALLS for arch in ARCHS if arch not in FEATURES[op].archs]
ALLOWED = [(op, arch) for op in CALLS for arch in FEATURES[op].archs]


def test_every_call_is_of_a_declared_requirement():
    assert set(CALLS) <= set(FEATURES)


@pytest.mark.parametrize("op,arch", FORBIDDEN)
def test_forbidden_pairs_raise_naming_op_and_archs(kernel, op, arch):
    k = kernel(arch)
    with pytest.raises(UnsupportedArchError) as err:
        CALLS[op](k)
    message = str(err.value)
    assert op in message and f"requested arch is {arch}" in message
    assert all(a in message for a in FEATURES[op].archs)


def sink(k, value):
    """Store what an op returned to global memory, so LLVM cannot drop the op."""
    if isinstance(value, tdm.TDMDescriptor):
        for i, group in enumerate(value.groups):
            slot = k.builder.gep(k.dst, [i32(8 * i)], source_etype=ir.IntType(32))
            k.builder.store(group, slot)
    elif isinstance(value, ir.Instruction) and isinstance(value.type, ir.PointerType):
        k.builder.store(k.builder.ptrtoint(value, ir.IntType(128)), k.dst)
    elif isinstance(value, ir.Instruction) and not isinstance(value.type, ir.VoidType):
        k.builder.store(value, k.dst)


_COMPILE_ALL = """
import json, sys
sys.path.insert(0, sys.argv[1])
from amd_asm import KernelBuilder, instructions
from test_amd_gating import ALLOWED, CALLS, sink
for op, arch in ALLOWED:
    k = KernelBuilder(arch)
    sink(k, CALLS[op](k))
    asm = k.compile().asm
    print(json.dumps([op, arch, len(instructions(asm))]), flush=True)
"""


@pytest.fixture(scope="module")
def compiled_allowed_pairs():
    """Every allowed op x arch compiled to assembly in one subprocess: an LLVM abort
    would end it, and the pairs it never printed fail."""
    here = str(pathlib.Path(__file__).parent)
    proc = subprocess.run([sys.executable, "-c", _COMPILE_ALL, here], capture_output=True,
                          text=True, timeout=120)
    done = {}
    for line in proc.stdout.splitlines():
        op, arch, count = json.loads(line)
        done[op, arch] = count
    return done, proc.returncode, proc.stderr[-2000:]


@pytest.mark.parametrize("op,arch", ALLOWED)
def test_allowed_pairs_pass_the_gate(kernel, op, arch):
    CALLS[op](kernel(arch))


@pytest.mark.parametrize("op,arch", ALLOWED)
def test_allowed_pairs_compile_to_assembly(compiled_allowed_pairs, op, arch):
    done, returncode, stderr = compiled_allowed_pairs
    assert (op, arch) in done, f"LLVM died (rc {returncode}) compiling {op} for {arch}:\n{stderr}"
    assert done[op, arch] > 1  # more than s_endpgm


@pytest.mark.parametrize("major", [21, 23])
def test_llvm_version_outside_range_raises(kernel, monkeypatch, major):
    monkeypatch.setattr(targets, "llvm_major", lambda: major)
    with pytest.raises(LLVMVersionError, match=r"async_amd_descriptor_load needs LLVM 22\.\.22"):
        CALLS["async_amd_descriptor_load"](kernel("gfx1250"))


def test_unknown_arch():
    with pytest.raises(UnsupportedArchError, match="known archs: gfx942, gfx950, gfx1250"):
        targets.require("s_barrier", "gfx90a")


@pytest.mark.parametrize("arch,call,rule", [
    ("gfx942", lambda k: global_load.emit_async_load(k.builder, k.arch, k.src, k.lds_at(0),
                                                     dma.AsyncGroups(), width=16),
     r"numba_tma: amd.async_load: argument 'width' must be one of \(4,\) bytes per lane on gfx942; got 16"),
    ("gfx950", lambda k: global_load.emit_async_load(k.builder, k.arch, k.src, k.lds_at(0),
                                                     dma.AsyncGroups(), width=8),
     r"amd.async_load: argument 'width' must be one of \(4, 16\) bytes per lane on gfx950; got 8"),
    ("gfx942", lambda k: global_load.emit_async_load(k.builder, k.arch, k.src, k.lds_at(0),
                                                     dma.AsyncGroups(), cache_modifier=".wt"),
     r"amd.async_load: argument 'cache_modifier' must be one of \['', '.ca', '.cg', '.cs', '.cv'\] on gfx942 .*; got '.wt'"),
    ("gfx1250", lambda k: global_load.emit_async_load(k.builder, k.arch, k.src, k.lds_at(0),
                                                      dma.AsyncGroups(), cache_modifier=".cg"),
     r"amd.async_load: argument 'cache_modifier' must be one of \[''\] on gfx1250 .*; got '.cg'"),
    ("gfx942", lambda k: global_load.emit_async_load(
        k.builder, k.arch, k.src, k.lds_at(0), dma.AsyncGroups(),
        mask=ir.Constant(ir.IntType(1), 1), other=ir.Constant(ir.HalfType(), 0)),
     r"amd.async_load: argument 'other' must have 32 bits, or 32 bits to fill each dword .*; got half"),
    ("gfx942", lambda k: global_load.emit_async_load(k.builder, k.arch, k.lds_at(0), k.lds_at(0),
                                                     dma.AsyncGroups()),
     r"amd.async_load: argument 'src' must be a pointer in address space 1 \(or flat\); got i32 addrspace\(3\)\*"),
    ("gfx942", lambda k: sync.emit_sched_barrier(k.builder, k.arch, 0x800),
     r"amd.amd_sched_barrier: argument 'mask' must be an int in \[0, 2047\]; got 2048"),
    ("gfx942", lambda k: dma.emit_async_load_wait_group(k.builder, k.arch, dma.AsyncGroups(), 64),
     r"amd.async_load_wait_group: argument 'pendings' must be an int in \[0, 63\]; got 64"),
    ("gfx1250", lambda k: tdm.emit_tensor_wait(k.builder, k.arch, -1),
     r"amd.async_amd_descriptor_wait: argument 'pendings' must be an int in \[0, 63\]; got -1"),
    ("gfx1250", lambda k: sync.emit_barrier_arrive(k.builder, k.arch, k.lds_at(0), 2),
     r"amd.barrier_arrive: argument 'arrive_count' must be 1 on AMD; got 2"),
    ("gfx1250", lambda k: tdm.emit_update_tensor_descriptor(k.builder, k.arch, _desc(),
                                                            add_offsets=[i32(1)]),
     r"amd.update_tensor_descriptor: argument 'add_offsets' must have 2 values \(one per dimension\); got 1"),
    ("gfx1250", lambda k: tdm.emit_make_tensor_descriptor(
        k.builder, k.arch, TileSpec(4, (8, 8)), k.src, [8, 8], [8, 2]),
     r"amd.make_tensor_descriptor: argument 'strides' must end in 1 \(the innermost stride is 1 element\); got 2"),
    ("gfx942", lambda k: buffer.emit_make_buffer_rsrc(k.builder, k.arch, k.src, stride=1 << 14),
     r"amd.make_buffer_rsrc: argument 'stride' must be an int in \[0, 16383\]; got 16384"),
    # num_records: 32 bits on gfx9 (1 << 32 would become 0), 45 on gfx1250
    ("gfx942", lambda k: buffer.emit_make_buffer_rsrc(k.builder, k.arch, k.src,
                                                      num_records=1 << 32),
     r"amd.make_buffer_rsrc: argument 'num_records' must be an int in \[0, 4294967295\] on gfx942; got 4294967296"),
    ("gfx1250", lambda k: buffer.emit_make_buffer_rsrc(k.builder, k.arch, k.src,
                                                       num_records=1 << 45),
     r"amd.make_buffer_rsrc: argument 'num_records' must be an int in \[0, 35184372088831\] on gfx1250; got 35184372088832"),
    # masked lanes' voffset 0x80000000 must stay out of range
    ("gfx950", lambda k: buffer.emit_buffer_load_to_local(
        k.builder, k.arch, buffer.emit_make_buffer_rsrc(k.builder, k.arch, k.src,
                                                        num_records=0x80000001),
        k.lds_at(0), i32(0), dma.AsyncGroups(), mask=ir.Constant(ir.IntType(1), 1)),
     r"amd.buffer_load_to_local: argument 'mask' needs a buffer whose num_records is a compile-time int <= 0x80000000 .*; got num_records = 0x80000001"),
    ("gfx942", lambda k: buffer.emit_buffer_load_to_local(
        k.builder, k.arch, buffer.emit_make_buffer_rsrc(
            k.builder, k.arch, k.src, num_records=k.builder.zext(k.n, ir.IntType(64))),
        k.lds_at(0), i32(0), dma.AsyncGroups(), mask=ir.Constant(ir.IntType(1), 1)),
     r"argument 'mask' needs a buffer whose num_records is a compile-time int .*; got num_records = a runtime value"),
    # TDM fields from Python ints are range-checked, not truncated
    ("gfx1250", lambda k: tdm.emit_make_tensor_descriptor(
        k.builder, k.arch, TileSpec(4, (8, 8)), k.src, [8, 1 << 31], [8, 1]),
     r"amd.make_tensor_descriptor: argument 'shape\[1\]' must be an int in \[0, 2147483647\]; got 2147483648"),  # the clamp is 32-bit signed
    ("gfx1250", lambda k: tdm.emit_make_tensor_descriptor(
        k.builder, k.arch, TileSpec(4, (8, 8)), k.src, [8, 8], [-3, 1]),
     r"amd.make_tensor_descriptor: argument 'strides\[0\]' must be an int in \[0, 281474976710655\]; got -3"),
    ("gfx1250", lambda k: tdm.emit_update_tensor_descriptor(k.builder, k.arch, _desc(),
                                                            set_bounds=[8, -1]),
     r"amd.update_tensor_descriptor: argument 'set_bounds\[1\]' must be an int in \[0, 2147483647\]; got -1"),
])
def test_bad_arguments_name_argument_and_rule(kernel, arch, call, rule):
    with pytest.raises(AMDArgumentError, match=rule):
        call(kernel(arch))


def test_the_amd_errors_are_the_one_hierarchy():
    """Both vendors raise numba_tma's errors; the AMD names are aliases of them."""
    assert UnsupportedArchError is ArchError and LLVMVersionError is ArchError
    assert AMDArgumentError is OpArgumentError


def test_amd_error_still_catches_every_amd_refusal():
    """``AMDError``, the AMD path's base of before, is the shared base: code catching it still
    catches an argument refused and an arch refused."""
    assert AMDError is OpError
    assert issubclass(OpArgumentError, AMDError) and issubclass(ArchError, AMDError)
    with pytest.raises(AMDError, match="argument 'priority' must be an int in \\[0, 3\\]"):
        sync.emit_s_setprio(None, "gfx942", 7)
    with pytest.raises(AMDError, match="gfx000"):
        sync.emit_s_setprio(None, "gfx000", 1)


def test_masking_accepts_num_records_up_to_0x80000000(kernel):
    k = kernel("gfx942")
    rsrc = buffer.emit_make_buffer_rsrc(k.builder, k.arch, k.src, num_records=0x80000000)
    buffer.emit_buffer_load_to_local(k.builder, k.arch, rsrc, k.lds_at(0), i32(0),
                                     dma.AsyncGroups(), mask=ir.Constant(ir.IntType(1), 1))
