"""Async loads into LDS (gfx942 / gfx950 / gfx1250): ``buffer_load_to_local`` (buffer DMA) and
``async_load`` (global DMA) write LDS without going through registers; they count into groups,
closed by ``async_load_commit_group`` and waited for by ``async_load_wait_group``
(``s_waitcnt vmcnt`` / ``s_wait_asynccnt``, counted by :mod:`numba_tma.amd.vmcnt`)."""
from llvmlite import ir
from numba.core import cgutils, types

from ...declarations import Refusal
from .. import buffer, dma, global_load, lds, targets
from .._core import CACHE_MODIFIER, AmdOp, Array, Const, Int, Number, Pred, Sample, const, data, is_given, no_result
from ..llvm_ir import I32
from ..targets import ALL, GFX9, Requirement


def _i32(context, builder, ty, value):
    return context.cast(builder, value, ty, types.int32)


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


def _dma_options(op, cache_modifier, width):
    return dict(cache_modifier=const(cache_modifier, op, "cache_modifier"), width=const(width, op, "width"))


def _byte_offset_fits(ptr, offsets, **_):
    """The rule of two arguments: a constant *offsets* of *ptr*'s elements is a 32-bit byte offset."""
    if isinstance(offsets, types.IntegerLiteral):
        targets.check_int_range("buffer_load_to_local", "offsets", offsets.literal_value, 0,
                                (2**31 - 1) // (ptr.dtype.bitwidth // 8), " when a constant (a 32-bit byte offset)")


def _buffer_load_to_local(dest, ptr, offsets, mask, other, cache_modifier, width):
    opts = _dma_options("buffer_load_to_local", cache_modifier, width)

    def codegen(context, builder, sig, args):
        arch = context.arch
        rsrc = buffer.emit_make_buffer_rsrc(builder, arch, data(context, builder, sig.args[1], args[1]))
        itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[1].dtype))
        voffset = builder.mul(_i32(context, builder, sig.args[2], args[2]), ir.Constant(I32, itemsize))
        mask, other = _mask_other(context, builder, sig, args, 3, 1)
        buffer.emit_buffer_load_to_local(
            builder, arch, rsrc, data(context, builder, sig.args[0], args[0]), voffset,
            context.async_groups(builder.function), mask=mask, other=other, **opts)
        _require_wave_write("buffer_load_to_local", arch, "dest", sig.args[0], opts["width"])

    return no_result(codegen)


buffer_load_to_local = AmdOp(
    "amd.buffer_load_to_local", _buffer_load_to_local,
    (Array("dest", "lds"), Array("ptr", "global"), Int("offsets"), Pred("mask"), Number("other"), CACHE_MODIFIER,
     Const("width", 4)),
    check=_byte_offset_fits, need=Requirement(GFX9, 22), llvm=("llvm.amdgcn.make.buffer.rsrc.p8.p1", "llvm.amdgcn.raw.ptr.buffer.load.lds"),
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

    Example::

        amd.buffer_load_to_local(tile[w * 64:], x, base + lane, mask=lane < n)
    """,
    samples=(Sample("amd.buffer_load_to_local(tile, x, lane)", "buffer_load_dword %v, %s, 0 offen lds",
                    "CDNA3 ISA 9.1 MUBUF (LDS = 1: the data goes to LDS at M0)"),
             Sample("amd.buffer_load_to_local(tile, x, lane, width=16)",
                    "buffer_load_dwordx4 %v, %s, 0 offen lds", "CDNA4 ISA MUBUF (buffer_load_dwordx4 to LDS)",
                    archs=("gfx950",))),
    refusals=(Refusal("amd.buffer_load_to_local(x, x, lane)", "amd.buffer_load_to_local: argument 'dest' must be an LDS array"),
              Refusal("amd.buffer_load_to_local(tile, x, 1.5)", "amd.buffer_load_to_local: argument 'offsets' must be an integer"),
              Refusal("amd.buffer_load_to_local(tile, x, 1 << 29)", "amd.buffer_load_to_local: argument 'offsets' must be "
                      "an int in [0, 536870911] when a constant (a 32-bit byte offset); got 536870912")),
).intrinsic()


def _async_load(src, result, mask, other, cache_modifier, offsets, width):
    opts = _dma_options("async_load", cache_modifier, width)
    # masked lanes write nothing, unless they store other
    whole_wave = not is_given(mask) or is_given(other)

    def codegen(context, builder, sig, args):
        if isinstance(sig.args[5], types.Omitted):
            index = context.get_constant(types.intp, sig.args[5].value)
        else:
            index = context.cast(builder, args[5], sig.args[5], types.intp)
        src_ptr = cgutils.get_item_pointer2(
            context, builder, data(context, builder, sig.args[0], args[0]),
            [context.get_constant(types.intp, 1)], [context.get_constant(types.intp, 1)], "C", [index])
        mask, other = _mask_other(context, builder, sig, args, 2, 0)
        global_load.emit_async_load(
            builder, context.arch, src_ptr, data(context, builder, sig.args[1], args[1]),
            context.async_groups(builder.function), mask=mask, other=other, **opts)
        if whole_wave:
            _require_wave_write("async_load", context.arch, "result", sig.args[1], opts["width"])

    return no_result(codegen)


async_load = AmdOp(
    "amd.async_load", _async_load,
    (Array("src", "global"), Array("result", "lds"), Pred("mask"), Number("other"), CACHE_MODIFIER,
     Int("offsets", default=0), Const("width", 4)),
    need=Requirement(ALL, 22),
    llvm=("llvm.amdgcn.global.load.lds", "llvm.amdgcn.global.load.async.to.lds.b32"),
    isa=("global_load_lds_dword", "global_load_lds_dwordx4", "global_load_async_to_lds_b32"),
    tlx=("tlx.async_load",),
    doc="""Per-lane global -> LDS copy of ``src[offsets]`` (*width* bytes) into *result*.

    TLX's ``async_load(src, result, mask, other, cache_modifier)``, with AMD's two trailing
    keywords: *offsets*, this lane's element offset into *src* (an integer, default 0: pass it
    rather than slicing *src* per lane, which costs a bounds clamp), and *width*.

    gfx942/gfx950: ``global_load_lds_dword`` (``_dwordx4`` for width 16, gfx950 only); gfx1250:
    ``llvm.amdgcn.global.load.async.to.lds.b{8,32,64,128}`` -> ``global_load_async_to_lds_bN``
    (width 1, 4, 8 or 16).  This lane's bytes land at byte ``lane * width``
    of *result* (uniform across the wave; on gfx942/gfx950 it goes to ``M0``, see
    :func:`buffer_load_to_local`).  Masked lanes copy nothing; with *other*
    they store it instead.  A masked ``async_load`` sits behind a branch that a fully
    masked wave skips, so the waits of the kernel become ``vmcnt(0)`` /
    ``s_wait_asynccnt 0``; to keep a pipeline's waits, clamp the offsets instead.

    Example::

        amd.async_load(x, tile[w * 64:], offsets=base + lane)
        amd.async_load_commit_group()
    """,
    samples=(Sample("amd.async_load(x, tile, offsets=lane)",
                    {"gfx1250": "global_load_async_to_lds_b32 %v, %v, %s scale_offset",
                     "": "global_load_lds_dword %v, %s"},
                    "CDNA3 ISA 9.1.x global_load_lds_dword; LLVM AMDGPUUsage (global_load_async_to_lds)"),),
    refusals=(Refusal("amd.async_load(x, y, offsets=lane)", "amd.async_load: argument 'result' must be an LDS array"),
              Refusal("amd.async_load(x, tile, offsets=lane, mask=1)", "amd.async_load: argument 'mask' must be a boolean")),
).intrinsic()


def _commit():
    def codegen(context, builder, sig, args):
        dma.emit_async_load_commit_group(builder, context.arch, context.async_groups(builder.function))
    return no_result(codegen)


async_load_commit_group = AmdOp(
    "amd.async_load_commit_group", _commit, need=Requirement(ALL, 22), tlx=("tlx.async_load_commit_group",),
    doc="""Close the current group of LDS-DMA loads (``buffer_load_to_local``/``async_load``).

    LLVM 22 has no ``asyncmark``, so this emits nothing: it records how many DMA
    instructions the group holds for :func:`async_load_wait_group`.  Commit in the
    same straight-line code as the group's DMA ops (not in a branch or loop of its
    own), or the group counts as empty.  All archs.

    Example::

        amd.async_load_commit_group()
    """,
    samples=(Sample("amd.async_load(x, tile, offsets=lane)\namd.async_load_commit_group()\namd.async_load_wait_group(0)",
                    {"gfx1250": "s_wait_asynccnt 0x0", "": "s_waitcnt vmcnt(0)"},
                    "CDNA3 ISA 4.4 s_waitcnt; LLVM AMDGPUUsage (s_wait_asynccnt)"),),
    refusals=(Refusal("amd.async_load_commit_group(1)", "async_load_commit_group takes ()"),),
).intrinsic()


def _wait_group(pendings):
    count = const(pendings, "async_load_wait_group", "pendings")

    def codegen(context, builder, sig, args):
        dma.emit_async_load_wait_group(builder, context.arch, context.async_groups(builder.function), count)
    return no_result(codegen)


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

    Example::

        amd.async_load_wait_group(2)    # 3 stages, one DMA per group: s_waitcnt vmcnt(2)
    """,
    samples=(Sample("for t in range(2):\n    amd.async_load(x, tile[t * 64:], offsets=t * 64 + lane)\n"
                    "    amd.async_load_commit_group()\namd.async_load_wait_group(1)",
                    {"gfx1250": "s_wait_asynccnt 0x1", "": "s_waitcnt vmcnt(1)"},
                    "CDNA3 ISA 4.4 s_waitcnt; LLVM AMDGPUUsage (s_wait_asynccnt)"),),
    refusals=(Refusal("amd.async_load_wait_group(n)", "amd.async_load_wait_group: argument 'pendings' must be a compile-time constant; got int32"),
              Refusal("amd.async_load_wait_group(64)", "amd.async_load_wait_group: argument 'pendings' must be an int in [0, 63]")),
).intrinsic()
