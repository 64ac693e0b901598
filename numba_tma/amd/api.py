"""TLX-named AMD async-memory ops for kernels written in Python (Numba ``amdgcn`` target).

Each op is a Numba ``@intrinsic`` whose lowering calls one emitter; the emitter
checks the architecture first (see :mod:`.targets`).  Per-lane model: a kernel body
runs once per lane, as in numba-cuda; "this lane" and "this wave" below refer to it.
Compile kernels with :func:`numba_tma.amd.compile`.
"""
import math

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models, register_default

from ..declarations import Refusal
from . import buffer, dma, global_load, lds, sync, targets, tdm
from ._core import (AmdOp, Array, Const, Flag, Int, Ints, Number, Pred, Sample, Typed, const, data,
                    is_given, shown)
from .errors import AMDArgumentError
from .llvm_ir import I32, call_intrinsic
from .targets import ALL, GFX9, GFX1250, Requirement

# LLVM 23 adds a fifth descriptor group operand to the tensor intrinsics.
TDM = Requirement((GFX1250,), 22, 22)
ISA_DOCS = "AMD CDNA3 / CDNA4 ISA; LLVM AMDGPUUsage"


def _i32(context, builder, ty, value):
    return context.cast(builder, value, ty, types.int32)


def _arch(context):
    return context.arch


def _none(codegen):
    """A codegen returning nothing, as the void ops' lowering does."""
    def lower(context, builder, sig, args):
        codegen(context, builder, sig, args)
        return context.get_dummy_value()
    return types.none, lower


# -- thread ids and LDS ---------------------------------------------------------------

def _read_id(llvm_name):
    def typing():
        def codegen(context, builder, sig, args):
            return call_intrinsic(builder, llvm_name, I32, [])
        return types.int32, codegen
    return typing


workitem_id_x = AmdOp(
    "amd.workitem_id_x", _read_id("llvm.amdgcn.workitem.id.x"), result="int", need=Requirement(ALL, 15),
    llvm=("llvm.amdgcn.workitem.id.x",),
    doc="""This lane's x index in its workgroup (``threadIdx.x``): VGPR v0 at kernel entry (gfx9),
    or its low 10 bits (gfx1250, where the ids are packed).  All archs.

    Example: ``lane = amd.workitem_id_x()``""",
    samples=(Sample("y[amd.workitem_id_x()] = 1.0", {"gfx1250": "global_store_b32 %v, %v, %s scale_offset",
                                                      "": "global_store_dword %v, %v, %s"},
                    "AMDGPUUsage: Initial Kernel Execution State (work-item id in v0)"),),
    refusals=(Refusal("amd.workitem_id_x(0)", "workitem_id_x takes ()"),),
).intrinsic()

workgroup_id_x = AmdOp(
    "amd.workgroup_id_x", _read_id("llvm.amdgcn.workgroup.id.x"), result="int", need=Requirement(ALL, 15),
    llvm=("llvm.amdgcn.workgroup.id.x",),
    doc="""The workgroup's x index in the grid (``blockIdx.x``), in an SGPR.  All archs.

    Example: ``block = amd.workgroup_id_x()``""",
    samples=(Sample("y[amd.workgroup_id_x()] = 1.0", {"gfx1250": "global_store_b32 %v, %v, %s scale_offset",
                                                       "": "global_store_dword %v, %v, %s"},
                    "AMDGPUUsage: Initial Kernel Execution State (work-group id in an SGPR)"),),
    refusals=(Refusal("amd.workgroup_id_x(0)", "workgroup_id_x takes ()"),),
).intrinsic()


#: the most LDS any arch has per workgroup (each arch's own limit is checked by compile)
_MAX_LDS_BYTES = max(a.lds_bytes for a in targets.ARCHS.values())


def _lds_shape(shape):
    """``lds_array``'s dims: a positive int or a non-empty tuple of them, as constants."""
    items = tuple(shape) if isinstance(shape, types.BaseTuple) else (shape,)
    dims = tuple(t.literal_value for t in items if isinstance(t, types.IntegerLiteral))
    if not items or len(dims) != len(items) or min(dims) < 1:
        raise AMDArgumentError(
            "lds_array: shape must be a positive int or a non-empty tuple of positive ints, "
            f"known at compile time; got {shown(shape)}")
    return dims


def _lds_dtype(dtype):
    """``lds_array``'s element type: a scalar dtype such as ``numba.float32``."""
    if not (isinstance(dtype, (types.DType, types.NumberClass))
            and isinstance(dtype.dtype, (types.Number, types.Boolean))):
        raise AMDArgumentError("lds_array: dtype must be a scalar Numba or NumPy dtype such as "
                               f"numba.float32, got {shown(dtype)}")
    return dtype.dtype


def _lds_array(shape, dtype):
    dims, elem = _lds_shape(shape), _lds_dtype(dtype)
    itemsize = 1 if isinstance(elem, types.Boolean) else elem.bitwidth // 8
    if math.prod(dims) * itemsize > _MAX_LDS_BYTES:
        raise AMDArgumentError(
            f"lds_array: shape {dims} of {elem} takes {math.prod(dims) * itemsize} bytes; "
            f"it must fit in {_MAX_LDS_BYTES} bytes, the largest LDS of any arch")
    aryty = lds.LDSArray(elem, len(dims), "C", math.prod(dims) * itemsize)

    def codegen(context, builder, sig, args):
        elem = context.get_data_type(aryty.dtype)
        itemsize = context.get_abi_sizeof(elem)
        storage = ir.ArrayType(elem, math.prod(dims))
        gv = cgutils.add_global_variable(builder.module, storage, "lds", addrspace=3)
        gv.linkage = "internal"
        gv.initializer = ir.Constant(storage, ir.Undefined)  # LDS cannot be initialized
        gv.align = 16
        strides, step = [], itemsize
        for n in reversed(dims):
            strides.insert(0, step)
            step *= n
        ary = context.make_array(aryty)(context, builder)
        intp = lambda n: context.get_constant(types.intp, n)  # noqa: E731
        context.populate_array(ary, data=builder.addrspacecast(gv, ary.data.type),
                               shape=[intp(n) for n in dims],
                               strides=[intp(s) for s in strides],
                               itemsize=intp(itemsize), meminfo=None)
        return ary._getvalue()

    return aryty, codegen


lds_array = AmdOp(
    "amd.lds_array", _lds_array, (Typed("shape", "int | tuple[int, ...]"), Typed("dtype", "type")),
    result="LDSArray", need=Requirement(ALL, 15),
    doc="""A C-contiguous array in LDS (``addrspace(3)``), like ``cuda.shared.array``.

    *shape*: a positive int or a tuple of them, constants.  *dtype*: a scalar dtype.
    Arrays above the largest LDS of any arch (320 KiB) are refused here; the arch's
    own limit is checked by :func:`numba_tma.amd.compile`.  Its type is an
    :class:`~numba_tma.amd.lds.LDSArray`, which its slices and views keep, so the ops
    check that their LDS arguments are in LDS and large enough.  It emits no instruction:
    an ``addrspace(3)`` global that the kernel's LDS size counts.

    Example: ``tile = lds_array(1024, numba.float32)``""",
    samples=(Sample("t = amd.lds_array(64, numba.float32)\nt[lane] = 1.0\ny[lane] = t[63 - lane]",
                    {"gfx1250": ("ds_store_b32 %v, %v", "ds_load_b32 %v, %v"),
                     "": ("ds_write_b32 %v, %v", "ds_read_b32 %v, %v")},
                    "CDNA3 ISA 12.x DS instructions; GFX12 renames them ds_store / ds_load"),),
    refusals=(Refusal("amd.lds_array(0, numba.float32)", "lds_array: shape must be a positive int"),
              Refusal("amd.lds_array(4, 4)", "lds_array: dtype must be a scalar Numba or NumPy dtype")),
).intrinsic()


# -- LDS DMA (gfx942 / gfx950 / gfx1250) ----------------------------------------------

def _require_wave_write(op, arch, dest_name, dest, width):
    """*dest*'s LDS allocation must hold what one wave writes: *width* bytes a lane.
    Called after the op's emitter, which checks the arch and *width* first."""
    lanes = targets.require(op, arch).wave_size
    lds.require_room(op, dest_name, dest, lanes * width,
                     f"one wave's write, {lanes} lanes x {width} bytes")


def _mask_other(context, builder, sig, args, mask_at, src_index):
    mask = args[mask_at] if is_given(sig.args[mask_at]) else None
    other = None
    if is_given(sig.args[mask_at + 1]):
        dtype = sig.args[src_index].dtype
        if buffer.is_zero(args[mask_at + 1]):
            # A literal 0 / 0.0 arrives as a constant: keep it one (the cast would be an
            # instruction), so buffer_load_to_local keeps its branch-free zero fill.
            other = context.get_constant(dtype, 0)
        else:
            other = context.cast(builder, args[mask_at + 1], sig.args[mask_at + 1], dtype)
    return mask, other


def _dma_options(cache_modifier, width):
    return dict(cache_modifier=const(cache_modifier, "cache_modifier"), width=const(width, "width"))


def _buffer_load_to_local(dest, ptr, offsets, mask, other, cache_modifier, width):
    opts = _dma_options(cache_modifier, width)
    if isinstance(offsets, types.IntegerLiteral):
        itemsize = ptr.dtype.bitwidth // 8
        targets.check_int_range("buffer_load_to_local", "offsets (a constant)",
                                offsets.literal_value, 0, (2**31 - 1) // itemsize)

    def codegen(context, builder, sig, args):
        arch = _arch(context)
        rsrc = buffer.emit_make_buffer_rsrc(builder, arch, data(context, builder, sig.args[1], args[1]))
        itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[1].dtype))
        voffset = builder.mul(_i32(context, builder, sig.args[2], args[2]), ir.Constant(I32, itemsize))
        mask, other = _mask_other(context, builder, sig, args, 3, 1)
        buffer.emit_buffer_load_to_local(
            builder, arch, rsrc, data(context, builder, sig.args[0], args[0]), voffset,
            context.async_groups(builder.function), mask=mask, other=other, **opts)
        _require_wave_write("buffer_load_to_local", arch, "dest", sig.args[0], opts["width"])

    return _none(codegen)


_CACHE = Const("cache_modifier", "", annotation="str")


buffer_load_to_local = AmdOp(
    "amd.buffer_load_to_local", _buffer_load_to_local,
    (Array("dest", "lds"), Array("ptr", "global"), Int("offsets"), Pred("mask"), Number("other"), _CACHE,
     Const("width", 4)),
    need=Requirement(GFX9, 22), llvm=("llvm.amdgcn.make.buffer.rsrc.p8.p1", "llvm.amdgcn.raw.ptr.buffer.load.lds"),
    isa=("buffer_load_dword ... offen lds", "buffer_load_dwordx4 ... offen lds"),
    tlx=("tlx.buffer_load_to_local",),
    doc="""Buffer load straight into LDS.

    This lane reads *width* bytes (4; 4 or 16 on gfx950) at element *offsets* of *ptr* (a global
    array) into ``dest`` (an LDS array) at byte ``lane * width``; *dest* must be the same for the
    whole wave (it goes to ``M0``: compute a wave's region from constants, loop counters and
    :func:`~numba_tma.amd.wave_id`, so ``M0`` is set on the scalar unit; from
    ``workitem_id_x() // 64`` each DMA costs a ``v_readfirstlane``).  Lanes where
    *mask* is False get zeros (branch-free: the DMA always issues), or *other* when
    given (a non-zero *other* puts the DMA behind a branch and makes the waits of the
    kernel ``vmcnt(0)``).  The byte offset ``offsets * itemsize`` is a 32-bit voffset:
    runtime offsets are truncated to 32 bits, constants must fit.  Count it into a
    group with :func:`async_load_commit_group`.

    Example: ``buffer_load_to_local(tile[w * 64:], x, base + lane, mask=lane < n)``""",
    samples=(Sample("amd.buffer_load_to_local(tile, x, lane)", "buffer_load_dword %v, %s, 0 offen lds",
                    "CDNA3 ISA 9.1 MUBUF (LDS = 1: the data goes to LDS at M0)"),
             Sample("amd.buffer_load_to_local(tile, x, lane, width=16)",
                    "buffer_load_dwordx4 %v, %s, 0 offen lds", "CDNA4 ISA MUBUF (buffer_load_dwordx4 to LDS)",
                    archs=("gfx950",))),
    refusals=(Refusal("amd.buffer_load_to_local(x, x, lane)", "buffer_load_to_local: dest must be an LDS array"),
              Refusal("amd.buffer_load_to_local(tile, x, 1.5)", "buffer_load_to_local: offsets must be an integer")),
).intrinsic()


def _async_load(src, offsets, result, mask, other, cache_modifier, width):
    opts = _dma_options(cache_modifier, width)
    # masked lanes write nothing, unless they store other
    whole_wave = not is_given(mask) or is_given(other)

    def codegen(context, builder, sig, args):
        src_ptr = cgutils.get_item_pointer2(
            context, builder, data(context, builder, sig.args[0], args[0]),
            [context.get_constant(types.intp, 1)], [context.get_constant(types.intp, 1)],
            "C", [context.cast(builder, args[1], sig.args[1], types.intp)])
        mask, other = _mask_other(context, builder, sig, args, 3, 0)
        global_load.emit_async_load(
            builder, _arch(context), src_ptr, data(context, builder, sig.args[2], args[2]),
            context.async_groups(builder.function), mask=mask, other=other, **opts)
        if whole_wave:
            _require_wave_write("async_load", _arch(context), "result", sig.args[2], opts["width"])

    return _none(codegen)


async_load = AmdOp(
    "amd.async_load", _async_load,
    (Array("src", "global"), Int("offsets"), Array("result", "lds"), Pred("mask"), Number("other"), _CACHE,
     Const("width", 4)),
    need=Requirement(ALL, 22),
    llvm=("llvm.amdgcn.global.load.lds", "llvm.amdgcn.global.load.async.to.lds.b32"),
    isa=("global_load_lds_dword", "global_load_lds_dwordx4", "global_load_async_to_lds_b32"),
    tlx=("tlx.async_load",),
    doc="""Per-lane global -> LDS copy of ``src[offsets]`` (*width* bytes) into *result*.

    gfx942/gfx950: ``global_load_lds_dword`` (``_dwordx4`` for width 16, gfx950 only); gfx1250:
    ``llvm.amdgcn.global.load.async.to.lds.b{8,32,64,128}`` -> ``global_load_async_to_lds_bN``
    (width 1, 4, 8 or 16).  This lane's bytes land at byte ``lane * width``
    of *result* (uniform across the wave; on gfx942/gfx950 it goes to ``M0``, see
    :func:`buffer_load_to_local`).  Masked lanes copy nothing; with *other*
    they store it instead.  A masked ``async_load`` sits behind a branch that a fully
    masked wave skips, so the waits of the kernel become ``vmcnt(0)`` /
    ``s_wait_asynccnt 0``; to keep a pipeline's waits, clamp the offsets instead.

    Example: ``async_load(x, base + lane, tile[w * 64:]); async_load_commit_group()``""",
    samples=(Sample("amd.async_load(x, lane, tile)",
                    {"gfx1250": "global_load_async_to_lds_b32 %v, %v, %s scale_offset",
                     "": "global_load_lds_dword %v, %s"},
                    "CDNA3 ISA 9.1.x global_load_lds_dword; LLVM AMDGPUUsage (global_load_async_to_lds)"),),
    refusals=(Refusal("amd.async_load(x, lane, y)", "async_load: result must be an LDS array"),
              Refusal("amd.async_load(x, lane, tile, mask=1)", "async_load: mask must be a boolean")),
).intrinsic()


def _commit():
    def codegen(context, builder, sig, args):
        dma.emit_async_load_commit_group(builder, _arch(context), context.async_groups(builder.function))
    return _none(codegen)


async_load_commit_group = AmdOp(
    "amd.async_load_commit_group", _commit, need=Requirement(ALL, 22), tlx=("tlx.async_load_commit_group",),
    doc="""Close the current group of LDS-DMA loads (``buffer_load_to_local``/``async_load``).

    LLVM 22 has no ``asyncmark``, so this emits nothing: it records how many DMA
    instructions the group holds for :func:`async_load_wait_group`.  Commit in the
    same straight-line code as the group's DMA ops (not in a branch or loop of its
    own), or the group counts as empty.  All archs.

    Example: ``async_load_commit_group()``""",
    samples=(Sample("amd.async_load(x, lane, tile)\namd.async_load_commit_group()\namd.async_load_wait_group(0)",
                    {"gfx1250": "s_wait_asynccnt 0x0", "": "s_waitcnt vmcnt(0)"},
                    "CDNA3 ISA 4.4 s_waitcnt; LLVM AMDGPUUsage (s_wait_asynccnt)"),),
    refusals=(Refusal("amd.async_load_commit_group(1)", "async_load_commit_group takes ()"),),
).intrinsic()


def _wait_group(pendings):
    count = const(pendings, "pendings")

    def codegen(context, builder, sig, args):
        dma.emit_async_load_wait_group(builder, _arch(context), context.async_groups(builder.function), count)
    return _none(codegen)


async_load_wait_group = AmdOp(
    "amd.async_load_wait_group", _wait_group, (Const("pendings", lo=0, hi=dma.MAX_COUNT),),
    need=Requirement(ALL, 22), llvm=("llvm.amdgcn.s.waitcnt", "llvm.amdgcn.s.wait.asynccnt"),
    isa=("s_waitcnt vmcnt", "s_wait_asynccnt"), tlx=("tlx.async_load_wait_group",),
    doc="""Wait until at most *pendings* committed groups are still loading.

    gfx942/gfx950: ``s_waitcnt vmcnt(K)``; gfx1250: ``s_wait_asynccnt K``, where
    K = *pendings* x the smallest group of the kernel (DMA instructions certain to
    issue; 0 if any group is uncertain; on gfx942/gfx950 :func:`numba_tma.amd.compile` counts
    the kernel's other vector-memory instructions too, :mod:`numba_tma.amd.vmcnt`).
    *pendings*: constant 0..63.  LLVM moves no LDS access across the wait, nor across a DMA op
    (docs/amd.md, LDS ordering).

    Example (3 stages, one DMA per group): ``async_load_wait_group(2)`` ->
    ``s_waitcnt vmcnt(2)``""",
    samples=(Sample("for t in range(2):\n    amd.async_load(x, t * 64 + lane, tile[t * 64:])\n"
                    "    amd.async_load_commit_group()\namd.async_load_wait_group(1)",
                    {"gfx1250": "s_wait_asynccnt 0x1", "": "s_waitcnt vmcnt(1)"},
                    "CDNA3 ISA 4.4 s_waitcnt; LLVM AMDGPUUsage (s_wait_asynccnt)"),),
    refusals=(Refusal("amd.async_load_wait_group(n)", "pendings must be a compile-time constant"),
              Refusal("amd.async_load_wait_group(64)", "async_load_wait_group: pendings must be an int in [0, 63]")),
).intrinsic()


# -- scheduling and barriers ----------------------------------------------------------

def _sched_barrier(mask):
    value = const(mask, "mask")

    def codegen(context, builder, sig, args):
        sync.emit_sched_barrier(builder, _arch(context), value)
    return _none(codegen)


amd_sched_barrier = AmdOp(
    "amd.amd_sched_barrier", _sched_barrier, (Const("mask", lo=0, hi=sync.SCHED_MASK_MAX),),
    need=Requirement(ALL, 15), llvm=("llvm.amdgcn.sched.barrier",), tlx=("tlx.amd_sched_barrier",),
    doc="""``llvm.amdgcn.sched.barrier(mask)``: let only the instruction classes in *mask*
    (see ``SCHED_CLASSES``) be scheduled across this point.  No ISA encoding; verbose
    assembly shows ``; sched_barrier mask(0x...)``.  All archs.

    Example: ``amd_sched_barrier(0)`` (nothing crosses)""",
    samples=(Sample("amd.amd_sched_barrier(0)", "s_endpgm", "LLVM AMDGPUUsage (sched_barrier: no encoding)"),),
    refusals=(Refusal("amd.amd_sched_barrier(n)", "mask must be a compile-time constant"),),
).intrinsic()


def _sched_group_barrier(mask, size, sync_id):
    values = [const(v, n) for v, n in ((mask, "mask"), (size, "size"), (sync_id, "sync_id"))]

    def codegen(context, builder, sig, args):
        sync.emit_sched_group_barrier(builder, _arch(context), *values)
    return _none(codegen)


sched_group_barrier = AmdOp(
    "amd.sched_group_barrier", _sched_group_barrier,
    (Const("mask", lo=0, hi=sync.SCHED_MASK_MAX), Const("size", lo=0, hi=2**31 - 1),
     Const("sync_id", lo=0, hi=2**31 - 1)),
    need=Requirement(ALL, 15), llvm=("llvm.amdgcn.sched.group.barrier",),
    doc="""``llvm.amdgcn.sched.group.barrier(mask, size, sync_id)``: ask the scheduler for
    a group of *size* instructions of class *mask*.  Shows as
    ``; sched_group_barrier mask(...) size(...) SyncID(...)``.  All archs.

    Example: ``sched_group_barrier(0x8, 1, 0)`` (one MFMA)""",
    samples=(Sample("amd.sched_group_barrier(0x8, 1, 0)", "s_endpgm",
                    "LLVM AMDGPUUsage (sched_group_barrier: no encoding)"),),
    refusals=(Refusal("amd.sched_group_barrier(0x8, n, 0)", "size must be a compile-time constant"),),
).intrinsic()


def _s_setprio(priority):
    value = const(priority, "priority")

    def codegen(context, builder, sig, args):
        sync.emit_s_setprio(builder, _arch(context), value)
    return _none(codegen)


s_setprio = AmdOp(
    "amd.s_setprio", _s_setprio, (Const("priority", lo=0, hi=sync.SETPRIO_MAX),),
    need=Requirement(ALL, 15), llvm=("llvm.amdgcn.s.setprio",), isa=("s_setprio",),
    doc="""Set this wave's instruction-issue priority.  *priority*: constant 0 (lowest, the
    default) .. 3 (highest); it holds until the next ``s_setprio``.  Used to let MFMA-issuing
    waves go ahead of memory-issuing ones (ping-pong schedules).  All archs.

    Example: ``s_setprio(1); ...mfma...; s_setprio(0)``""",
    samples=(Sample("amd.s_setprio(3)", "s_setprio 3", "CDNA3 ISA 4.x SOPP s_setprio"),),
    refusals=(Refusal("amd.s_setprio(4)", "s_setprio: priority must be an int in [0, 3]"),),
).intrinsic()


def _s_barrier():
    def codegen(context, builder, sig, args):
        sync.emit_s_barrier(builder, _arch(context), one_wave=context.one_wave)
    return _none(codegen)


s_barrier = AmdOp(
    "amd.s_barrier", _s_barrier, need=Requirement(ALL, 15),
    llvm=("llvm.amdgcn.s.waitcnt", "llvm.amdgcn.s.barrier"),
    isa=("s_waitcnt lgkmcnt(0)", "s_barrier", "s_barrier_signal -1", "s_barrier_wait -1"),
    doc="""Workgroup barrier that orders LDS: this wave's LDS reads and writes complete
    before any wave of the workgroup passes it.

    * gfx942/gfx950: ``s_waitcnt lgkmcnt(0)`` then ``s_barrier`` (LLVM merges the wait into a
      preceding ``s_waitcnt``, e.g. ``s_waitcnt vmcnt(2) lgkmcnt(0)``).
    * gfx1250: ``fence syncscope("workgroup") release`` / ``acquire`` narrowed to LDS
      (``!mmra amdgpu-synchronize-as local``) around ``llvm.amdgcn.s.barrier`` ->
      ``s_wait_dscnt 0x0`` (left out when no LDS access is pending), then
      ``s_barrier_signal -1`` + ``s_barrier_wait -1``.

    So "write LDS, barrier, another wave reads" and "read a slot, barrier, DMA refills
    it" are safe.  It waits neither for global memory nor for LDS DMA (vmcnt,
    asynccnt, tensorcnt): wait for a DMA with its wait op first.  In a kernel compiled
    with ``max_workgroup_size`` at most the wave size only the LDS wait is emitted:
    ``llvm.amdgcn.s.barrier`` is convergent, which keeps LLVM from unrolling the loop
    around it, and LLVM drops it in a one-wave workgroup anyway.

    Example: ``async_load_wait_group(1); s_barrier()``""",
    samples=(Sample("tile[lane] = 1.0\namd.s_barrier()\ny[lane] = tile[lane ^ 1]",
                    {"gfx1250": ("s_wait_dscnt 0x0", "s_barrier_signal -1", "s_barrier_wait -1"),
                     "": ("s_waitcnt lgkmcnt(0)", "s_barrier")},
                    "CDNA3 ISA 4.x s_barrier / s_waitcnt; LLVM AMDGPUUsage (GFX12 split barriers)"),),
    refusals=(Refusal("amd.s_barrier(1)", "s_barrier takes ()"),),
).intrinsic()


def _barrier_arrive(bar, arrive_count):
    count = const(arrive_count, "arrive_count")

    def codegen(context, builder, sig, args):
        sync.emit_barrier_arrive(builder, _arch(context), data(context, builder, sig.args[0], args[0]), count)
    return _none(codegen)


barrier_arrive = AmdOp(
    "amd.barrier_arrive", _barrier_arrive, (Array("bar", "lds", types.int64), Const("arrive_count", 1)),
    need=Requirement((GFX1250,), 22), llvm=("llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64",),
    isa=("ds_atomic_barrier_arrive_rtn_b64",), tlx=("tlx.barrier_arrive",),
    doc="""Arrive on the LDS barrier word ``bar[0]`` (an int64 :func:`lds_array`), once per
    wave (lane 0 of the wave does it).  gfx1250 only; *arrive_count* must be 1 (as TLX on AMD).

    Example: ``barrier_arrive(bar)``""",
    samples=(Sample("amd.barrier_arrive(bar)", "ds_atomic_barrier_arrive_rtn_b64 %v, %v, %v",
                    "LLVM AMDGPUUsage / IntrinsicsAMDGPU.td (ds_atomic_barrier_arrive_rtn_b64, GFX1250)"),),
    refusals=(Refusal("amd.barrier_arrive(tile)", "barrier_arrive: bar must be an int64 LDS array"),),
).intrinsic()


# -- gfx1250 Tensor Data Mover --------------------------------------------------------

class TensorDescriptorType(types.Type):
    """Numba type of a TDM descriptor; the static :class:`TileSpec` is part of it."""

    def __init__(self, spec):
        self.spec = spec
        super().__init__(name=f"AMDTensorDescriptor({spec})")


@register_default(TensorDescriptorType)
class _TensorDescriptorModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.LiteralStructType(list(tdm.GROUP_TYPES)))


class Descriptor(Typed):
    """A TDM descriptor (:func:`make_tensor_descriptor`)."""

    def __init__(self, name):
        super().__init__(name, "TensorDescriptor")

    def check(self, op_name, ty):
        if not isinstance(ty, TensorDescriptorType):
            raise AMDArgumentError(f"{op_name.split('.', 1)[1]}: {self.name} must be a tensor descriptor, "
                                   f"got {shown(ty)}")


def _unpack_desc(builder, ty, value):
    return tdm.TDMDescriptor(ty.spec, tuple(builder.extract_value(value, i) for i in range(4)))


def _pack_desc(builder, desc):
    value = ir.Constant(ir.LiteralStructType(list(tdm.GROUP_TYPES)), None)
    for i, group in enumerate(desc.groups):
        value = builder.insert_value(value, group, i)
    return value


def _require_block_room(op, name, desc, array):
    """*array* must be an LDS array whose allocation holds one block of *desc*."""
    lds.require_lds(op, name, array)
    spec = desc.spec
    lds.require_room(op, name, array, spec.lds_bytes(),
                     f"one block of {spec.block_shape} x {spec.elem_bytes} bytes"
                     + (" with its padding" if spec.pad_interval else ""))


def _int_tuple(context, builder, ty, value):
    """A tuple of ints (IR) -> list of i64 values, or None when not given."""
    if not is_given(ty):
        return None
    return [context.cast(builder, builder.extract_value(value, i), t, types.int64)
            for i, t in enumerate(ty)]


def _pred(context, builder, ty, value):
    if not is_given(ty):
        return None
    if isinstance(ty, types.BooleanLiteral):
        return ty.literal_value  # the emitter takes a constant as is
    return context.cast(builder, value, ty, types.boolean)


_TDM_REF = "LLVM AMDGPUUsage / IntrinsicsAMDGPU.td (tensor_load_to_lds, GFX1250 TDM)"
_DESC = "d = amd.make_tensor_descriptor(x, (64,))\n"


def _make_tensor_descriptor(array, block_shape, pad_interval, pad_amount):
    if array.layout != "C":
        raise AMDArgumentError(f"make_tensor_descriptor: array must be C-contiguous, got {array}")
    block = const(block_shape, "block_shape")
    spec = tdm.TileSpec(array.dtype.bitwidth // 8, block, const(pad_interval, "pad_interval"),
                        const(pad_amount, "pad_amount"))
    if len(block) != array.ndim:
        raise AMDArgumentError(f"make_tensor_descriptor: block_shape needs {array.ndim} dims")

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        shape = cgutils.unpack_tuple(builder, ary.shape)
        itemsize = ir.Constant(shape[0].type, spec.elem_bytes)
        strides = [builder.sdiv(s, itemsize) for s in cgutils.unpack_tuple(builder, ary.strides)]
        desc = tdm.emit_make_tensor_descriptor(builder, _arch(context), spec, ary.data,
                                               shape, strides[:-1] + [1])
        return _pack_desc(builder, desc)

    return TensorDescriptorType(spec), codegen


make_tensor_descriptor = AmdOp(
    "amd.make_tensor_descriptor", _make_tensor_descriptor,
    (Array("array", "global"), Const("block_shape", annotation="tuple[int, ...]"), Const("pad_interval", 0),
     Const("pad_amount", 0)),
    result="TensorDescriptor", need=TDM, tlx=("tlx.make_tensor_descriptor",),
    doc="""TDM descriptor (groups 0-3) of a C-contiguous global *array*, copied in blocks of
    *block_shape* (constant tuple).  *pad_interval*/*pad_amount* (elements) pad the LDS
    copy.  Pure SALU integer code, no instruction of its own; gfx1250 only.

    Example: ``desc = make_tensor_descriptor(x, (64, 64))``""",
    samples=(Sample(_DESC + "amd.async_amd_descriptor_load(d, tile)", "tensor_load_to_lds %s, %s", _TDM_REF),),
    refusals=(Refusal("d = amd.make_tensor_descriptor(x, (64, 64))", "make_tensor_descriptor: block_shape needs 1 dims"),
              Refusal("d = amd.make_tensor_descriptor(tile, (64,))", "make_tensor_descriptor: array must be a global array")),
).intrinsic()


def _update_tensor_descriptor(desc, add_offsets, set_bounds, pred, clamp_bounds):
    op = "update_tensor_descriptor"
    for i, bound in enumerate(set_bounds if is_given(set_bounds) else ()):
        if isinstance(bound, types.IntegerLiteral):  # a runtime bound is truncated
            targets.check_int_range(op, f"set_bounds[{i}]", bound.literal_value, 0, tdm.MAX_TENSOR_DIM)
    clamp = const(clamp_bounds, "clamp_bounds")

    def codegen(context, builder, sig, args):
        new = tdm.emit_update_tensor_descriptor(
            builder, _arch(context), _unpack_desc(builder, sig.args[0], args[0]),
            add_offsets=_int_tuple(context, builder, sig.args[1], args[1]),
            set_bounds=_int_tuple(context, builder, sig.args[2], args[2]),
            pred=_pred(context, builder, sig.args[3], args[3]), clamp_bounds=clamp)
        return _pack_desc(builder, new)

    return desc, codegen


update_tensor_descriptor = AmdOp(
    "amd.update_tensor_descriptor", _update_tensor_descriptor,
    (Descriptor("desc"), Ints("add_offsets"), Ints("set_bounds"), Pred("pred"), Flag("clamp_bounds", True)),
    result="TensorDescriptor", need=TDM,
    doc="""A moved / re-bounded / re-predicated copy of *desc*: integer IR on the descriptor
    groups, no instruction of its own (gfx1250 only).  *add_offsets* and *set_bounds*
    are tuples of ints (row-major); with *clamp_bounds* the bounds shrink by the offsets.
    The descriptor is wave-uniform (SGPRs): a lane-varying *pred*, offset or bound is
    taken from the wave's first active lane (``v_readfirstlane``), not checked.

    Example: ``desc = update_tensor_descriptor(desc, add_offsets=(64, 0))``""",
    samples=(Sample(_DESC + "d = amd.update_tensor_descriptor(d, add_offsets=(64,))\n"
                    "amd.async_amd_descriptor_load(d, tile)", "tensor_load_to_lds %s, %s", _TDM_REF),),
    refusals=(Refusal(_DESC + "d = amd.update_tensor_descriptor(d, set_bounds=(-1,))",
                      "update_tensor_descriptor: set_bounds[0] must be an int in"),
              Refusal("d = amd.update_tensor_descriptor(x)", "update_tensor_descriptor: desc must be a tensor descriptor")),
).intrinsic()


def _descriptor_load(desc, result, offsets, pred, clamp_bounds):
    _require_block_room("async_amd_descriptor_load", "result", desc, result)
    clamp = const(clamp_bounds, "clamp_bounds")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_load(builder, _arch(context), _unpack_desc(builder, sig.args[0], args[0]),
                             data(context, builder, sig.args[1], args[1]),
                             offsets=_int_tuple(context, builder, sig.args[2], args[2]),
                             pred=_pred(context, builder, sig.args[3], args[3]), clamp_bounds=clamp)
    return _none(codegen)


async_amd_descriptor_load = AmdOp(
    "amd.async_amd_descriptor_load", _descriptor_load,
    (Descriptor("desc"), Array("result"), Ints("offsets"), Pred("pred"), Flag("clamp_bounds", True)),
    need=TDM, llvm=("llvm.amdgcn.tensor.load.to.lds", "llvm.amdgcn.tensor.load.to.lds.d2"),
    isa=("tensor_load_to_lds",), tlx=("tlx.async_amd_descriptor_load",),
    doc="""Copy the block at *desc* (moved by *offsets*) into the LDS array *result*
    (``.d2`` for rank <= 2); gfx1250 only.  The calling wave issues the whole block; wait with
    :func:`async_amd_descriptor_wait`.  *offsets* and *pred* are wave-uniform: a
    lane-varying value is taken from the first active lane (``v_readfirstlane``).

    Example: ``async_amd_descriptor_load(desc, tile, offsets=(row, 0))``""",
    samples=(Sample(_DESC + "amd.async_amd_descriptor_load(d, tile, offsets=(64,))",
                    "tensor_load_to_lds %s, %s", _TDM_REF),),
    refusals=(Refusal(_DESC + "amd.async_amd_descriptor_load(d, y)",
                      "async_amd_descriptor_load: result must be an LDS array"),),
).intrinsic()


def _descriptor_store(desc, source, offsets, clamp_bounds):
    _require_block_room("async_amd_descriptor_store", "source", desc, source)
    clamp = const(clamp_bounds, "clamp_bounds")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_store(builder, _arch(context), _unpack_desc(builder, sig.args[0], args[0]),
                              data(context, builder, sig.args[1], args[1]),
                              offsets=_int_tuple(context, builder, sig.args[2], args[2]), clamp_bounds=clamp)
    return _none(codegen)


async_amd_descriptor_store = AmdOp(
    "amd.async_amd_descriptor_store", _descriptor_store,
    (Descriptor("desc"), Array("source"), Ints("offsets"), Flag("clamp_bounds", True)),
    need=TDM, llvm=("llvm.amdgcn.tensor.store.from.lds", "llvm.amdgcn.tensor.store.from.lds.d2"),
    isa=("tensor_store_from_lds",), tlx=("tlx.async_amd_descriptor_store",),
    doc="""Copy the LDS array *source* to the block at *desc* (moved by *offsets*);
    gfx1250 only.

    Example: ``async_amd_descriptor_store(out_desc, tile, offsets=(row, 0))``""",
    samples=(Sample(_DESC + "amd.async_amd_descriptor_store(d, tile)", "tensor_store_from_lds %s, %s", _TDM_REF),),
    refusals=(Refusal(_DESC + "amd.async_amd_descriptor_store(d, tile, clamp_bounds=1)",
                      "async_amd_descriptor_store: clamp_bounds must be True or False"),),
).intrinsic()


def _descriptor_load_fused(members, cache_modifier):
    op = "async_amd_descriptor_load_fused"
    if not isinstance(members, types.BaseTuple) or not all(
            isinstance(m, types.BaseTuple) and len(m) == 3 for m in members):
        raise AMDArgumentError(f"{op}: members must be a tuple of (desc, dst, warp_used_hint), got {members}")
    for m in members:
        Descriptor("desc").check(f"amd.{op}", m[0])
        Array("dst").check(f"amd.{op}", m[1])
        _require_block_room(op, "dst", m[0], m[1])
    hints = [const(m[2], "warp_used_hint") for m in members]
    cache = const(cache_modifier, "cache_modifier")

    def codegen(context, builder, sig, args):
        resolved = []
        for i, (mty, hint) in enumerate(zip(sig.args[0], hints)):
            member = builder.extract_value(args[0], i)
            resolved.append((_unpack_desc(builder, mty[0], builder.extract_value(member, 0)),
                             data(context, builder, mty[1], builder.extract_value(member, 1)), hint))
        tdm.emit_tensor_load_fused(builder, _arch(context), resolved, cache_modifier=cache)
    return _none(codegen)


async_amd_descriptor_load_fused = AmdOp(
    "amd.async_amd_descriptor_load_fused", _descriptor_load_fused,
    (Typed("members", "tuple[tuple[TensorDescriptor, LDSArray, int], ...]"), _CACHE),
    need=TDM, llvm=("llvm.amdgcn.tensor.load.to.lds", "llvm.amdgcn.tensor.load.to.lds.d2"),
    isa=("tensor_load_to_lds",), tlx=("tlx.async_amd_descriptor_load_fused",),
    doc="""One ``tensor_load_to_lds`` for 2-4 ``(desc, dst, warp_used_hint)`` members.

    Each wave takes the member whose hint has its wave id and loads its share of that
    block (split along the outermost dim among the hint's waves).  Hints: constant,
    non-empty, disjoint, axis-aligned.  gfx1250 only.

    Example: ``async_amd_descriptor_load_fused(((da, ta, 0x0F), (db, tb, 0xF0)))``""",
    samples=(Sample(_DESC + "amd.async_amd_descriptor_load_fused(((d, tile, 0x1), (d, tile[64:], 0x2)))",
                    "tensor_load_to_lds %s, %s", _TDM_REF),),
    refusals=(Refusal("amd.async_amd_descriptor_load_fused(tile)", "async_amd_descriptor_load_fused: members must be"),),
).intrinsic()


def _descriptor_wait(pendings):
    count = const(pendings, "pendings")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_wait(builder, _arch(context), count)
    return _none(codegen)


async_amd_descriptor_wait = AmdOp(
    "amd.async_amd_descriptor_wait", _descriptor_wait, (Const("pendings", 0, lo=0, hi=63),),
    need=Requirement((GFX1250,), 22), llvm=("llvm.amdgcn.s.wait.tensorcnt",), isa=("s_wait_tensorcnt",),
    tlx=("tlx.async_amd_descriptor_wait",),
    doc="""Wait until at most *pendings* tensor loads/stores of this wave are in flight;
    gfx1250 only.  LLVM moves no LDS access across the wait, nor across a TDM op
    (docs/amd.md, LDS ordering).

    Example: ``async_amd_descriptor_wait(0)``""",
    samples=(Sample(_DESC + "amd.async_amd_descriptor_load(d, tile)\namd.async_amd_descriptor_wait(0)",
                    ("tensor_load_to_lds %s, %s", "s_wait_tensorcnt 0x0"), _TDM_REF),),
    refusals=(Refusal("amd.async_amd_descriptor_wait(64)", "async_amd_descriptor_wait: pendings must be an int in [0, 63]"),),
).intrinsic()
