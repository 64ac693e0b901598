"""Forbidden arch/op pairs and bad arguments raise Python errors in-process.

Emitting any of these for real would make LLVM abort the interpreter (SIGABRT), so
these tests passing at all shows the checks run before LLVM.
"""
import pytest
from llvmlite import ir

from amd_asm import ARCHS
from numba_tma.amd import (AMDArgumentError, AMDError, FEATURES, LLVMVersionError,
                           UnsupportedArchError, buffer, dma, global_load, sync, targets, tdm)
from numba_tma.amd.llvm_ir import i32
from numba_tma.amd.tdm_layout import TileSpec


def _desc():
    spec = TileSpec(4, (8, 8))
    return tdm.TDMDescriptor(spec, tuple(ir.Constant(t, 0) for t in tdm.GROUP_TYPES))


# op name -> call emitting that op on KernelBuilder k
CALLS = {
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
}

FORBIDDEN = [(op, arch) for op, f in FEATURES.items() for arch in ARCHS if arch not in f.archs]
ALLOWED = [(op, arch) for op, f in FEATURES.items() for arch in f.archs]


def test_every_feature_has_a_call():
    assert set(CALLS) == set(FEATURES)


@pytest.mark.parametrize("op,arch", FORBIDDEN)
def test_forbidden_pairs_raise_naming_op_and_archs(kernel, op, arch):
    k = kernel(arch)
    with pytest.raises(UnsupportedArchError) as err:
        CALLS[op](k)
    message = str(err.value)
    assert op in message and f"requested arch is {arch}" in message
    assert all(a in message for a in FEATURES[op].archs)


@pytest.mark.parametrize("op,arch", ALLOWED)
def test_allowed_pairs_pass_the_gate(kernel, op, arch):
    CALLS[op](kernel(arch))


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
     r"width must be one of \(4,\) bytes per lane on gfx942, got 16"),
    ("gfx950", lambda k: global_load.emit_async_load(k.builder, k.arch, k.src, k.lds_at(0),
                                                     dma.AsyncGroups(), width=8),
     r"width must be one of \(4, 16\)"),
    ("gfx942", lambda k: global_load.emit_async_load(k.builder, k.arch, k.src, k.lds_at(0),
                                                     dma.AsyncGroups(), cache_modifier=".wt"),
     "cache_modifier '.wt' has no encoding on gfx942"),
    ("gfx1250", lambda k: global_load.emit_async_load(k.builder, k.arch, k.src, k.lds_at(0),
                                                      dma.AsyncGroups(), cache_modifier=".cg"),
     "cache_modifier '.cg' has no encoding on gfx1250"),
    ("gfx942", lambda k: global_load.emit_async_load(
        k.builder, k.arch, k.src, k.lds_at(0), dma.AsyncGroups(),
        mask=ir.Constant(ir.IntType(1), 1), other=ir.Constant(ir.HalfType(), 0)),
     "other must have 32 bits"),
    ("gfx942", lambda k: global_load.emit_async_load(k.builder, k.arch, k.lds_at(0), k.lds_at(0),
                                                     dma.AsyncGroups()),
     "src must be a pointer in address space 1"),
    ("gfx942", lambda k: sync.emit_sched_barrier(k.builder, k.arch, 0x800),
     r"mask must be an int in \[0, 2047\]"),
    ("gfx942", lambda k: dma.emit_async_load_wait_group(k.builder, k.arch, dma.AsyncGroups(), 64),
     r"pendings must be an int in \[0, 63\]"),
    ("gfx1250", lambda k: tdm.emit_tensor_wait(k.builder, k.arch, -1),
     r"pendings must be an int in \[0, 63\]"),
    ("gfx1250", lambda k: sync.emit_barrier_arrive(k.builder, k.arch, k.lds_at(0), 2),
     "arrive_count must be 1"),
    ("gfx1250", lambda k: tdm.emit_update_tensor_descriptor(k.builder, k.arch, _desc(),
                                                            add_offsets=[i32(1)]),
     "add_offsets must have 2 values"),
    ("gfx1250", lambda k: tdm.emit_make_tensor_descriptor(
        k.builder, k.arch, TileSpec(4, (8, 8)), k.src, [8, 8], [8, 2]),
     "innermost stride must be 1"),
    ("gfx942", lambda k: buffer.emit_make_buffer_rsrc(k.builder, k.arch, k.src, stride=1 << 14),
     r"stride must be an int in \[0, 16383\]"),
])
def test_bad_arguments_name_argument_and_rule(kernel, arch, call, rule):
    with pytest.raises(AMDArgumentError, match=rule):
        call(kernel(arch))


def test_errors_share_a_documented_base():
    assert issubclass(UnsupportedArchError, AMDError)
    assert issubclass(LLVMVersionError, AMDError)
    assert issubclass(AMDArgumentError, (AMDError, ValueError))
