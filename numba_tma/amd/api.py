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
from numba.core.extending import intrinsic as _numba_intrinsic

from . import buffer, dma, global_load, lds, sync, targets, tdm
from .errors import AMDArgumentError
from .llvm_ir import I32, call_intrinsic
from .numba_target import TARGET_NAME
from .tdm_layout import TileSpec


def _intrinsic(fn):
    return _numba_intrinsic(prefer_literal=True, target=TARGET_NAME)(fn)


# -- typing helpers ------------------------------------------------------------------

def _const(value, name):
    """The compile-time value of an argument (a literal, or a default left out)."""
    if isinstance(value, types.Omitted):
        return value.value
    if isinstance(value, types.Literal):
        return value.literal_value
    if isinstance(value, types.NoneType):
        return None
    if isinstance(value, types.BaseTuple) and all(isinstance(t, types.Literal) for t in value):
        return tuple(t.literal_value for t in value)
    if isinstance(value, types.Type):
        raise AMDArgumentError(f"{name} must be a compile-time constant, got {value}")
    return value


def _const_bool(value, name):
    """The compile-time bool value of an argument."""
    flag = _const(value, name)
    if not isinstance(flag, bool):
        raise AMDArgumentError(f"{name} must be True or False, got {_shown(value)}")
    return flag


def _shown(value):
    """An argument as written: its value when it is a constant, else its type."""
    if isinstance(value, types.Literal):
        return repr(value.literal_value)
    if isinstance(value, types.Omitted):
        return repr(value.value)
    if isinstance(value, types.NoneType):
        return "None"
    if isinstance(value, types.BaseTuple):
        items = [_shown(t) for t in value]
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
    return str(value)


def _ty(value):
    """Signature type of an argument; defaults that were left out become Omitted."""
    return value if isinstance(value, types.Type) else types.Omitted(value)


def _is_given(value):
    return isinstance(value, types.Type) and not isinstance(value, (types.NoneType,
                                                                    types.Omitted))


def _require_array(value, name):
    if not isinstance(value, types.Array):
        raise AMDArgumentError(f"{name} must be an array, got {_shown(value)}")


def _require_ints(value, name):
    """An optional argument that must be a tuple of integers (constants or not)."""
    if _is_given(value) and not (isinstance(value, types.BaseTuple) and all(
            isinstance(t, types.Integer) for t in value)):
        raise AMDArgumentError(f"{name} must be a tuple of integers, got {_shown(value)}")


def _require_pred(value, name):
    """An optional predicate: a boolean, e.g. ``lane < n`` or ``True``."""
    if _is_given(value) and not isinstance(value, types.Boolean):
        raise AMDArgumentError(f"{name} must be a boolean, got {_shown(value)}")


def _data(context, builder, aryty, value):
    return context.make_array(aryty)(context, builder, value=value).data


def _i32(context, builder, ty, value):
    return context.cast(builder, value, ty, types.int32)


def _arch(context):
    return context.arch


# -- thread ids and LDS ---------------------------------------------------------------

def _id_intrinsic(llvm_name, doc):
    @_intrinsic
    def read_id(typingctx):
        def codegen(context, builder, sig, args):
            return call_intrinsic(builder, llvm_name, I32, [])
        return types.int32(), codegen
    read_id.__doc__ = doc
    return read_id


workitem_id_x = _id_intrinsic("llvm.amdgcn.workitem.id.x",
                              "This lane's x index in its workgroup (threadIdx.x).")
workgroup_id_x = _id_intrinsic("llvm.amdgcn.workgroup.id.x",
                               "The workgroup's x index in the grid (blockIdx.x).")


#: the most LDS any arch has per workgroup (each arch's own limit is checked by compile)
_MAX_LDS_BYTES = max(a.lds_bytes for a in targets.ARCHS.values())


def _lds_shape(shape):
    """``lds_array``'s dims: a positive int or a non-empty tuple of them, as constants."""
    items = tuple(shape) if isinstance(shape, types.BaseTuple) else (shape,)
    dims = tuple(t.literal_value for t in items if isinstance(t, types.IntegerLiteral))
    if not items or len(dims) != len(items) or min(dims) < 1:
        raise AMDArgumentError(
            "lds_array: shape must be a positive int or a non-empty tuple of positive ints, "
            f"known at compile time; got {_shown(shape)}")
    return dims


def _lds_dtype(dtype):
    """``lds_array``'s element type: a scalar dtype such as ``numba.float32``."""
    if not (isinstance(dtype, (types.DType, types.NumberClass))
            and isinstance(dtype.dtype, (types.Number, types.Boolean))):
        raise AMDArgumentError("lds_array: dtype must be a scalar Numba or NumPy dtype such as "
                               f"numba.float32, got {_shown(dtype)}")
    return dtype.dtype


@_intrinsic
def lds_array(typingctx, shape, dtype):
    """A C-contiguous array in LDS (``addrspace(3)``), like ``cuda.shared.array``.

    *shape*: a positive int or a tuple of them, constants.  *dtype*: a scalar dtype.
    Arrays above the largest LDS of any arch (320 KiB) are refused here; the arch's
    own limit is checked by :func:`numba_tma.amd.compile`.  Its type is an
    :class:`~numba_tma.amd.lds.LDSArray`, which its slices and views keep, so the ops
    check that their LDS arguments are in LDS and large enough.

    Example: ``tile = lds_array(1024, numba.float32)``.
    """
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

    return aryty(shape, dtype), codegen


# -- LDS DMA (gfx942 / gfx950 / gfx1250) ----------------------------------------------

# op -> the names of its LDS destination and its global source
_DMA_ARGUMENTS = {"buffer_load_to_local": ("dest", "ptr"), "async_load": ("result", "src")}


def _dma_typer(op, dest, src, offsets, mask, other, cache_modifier, width):
    dest_name, src_name = _DMA_ARGUMENTS[op]
    _require_array(dest, f"{op}: {dest_name}")
    _require_array(src, f"{op}: {src_name}")
    lds.require_lds(op, dest_name, dest)
    lds.require_global(op, src_name, src)
    if not isinstance(offsets, types.Integer):
        raise AMDArgumentError(f"{op}: offsets must be an integer, got {_shown(offsets)}")
    _require_pred(mask, f"{op}: mask")
    if _is_given(other) and not isinstance(other, (types.Number, types.Boolean)):
        raise AMDArgumentError(f"{op}: other must be a number, got {_shown(other)}")
    return dict(cache_modifier=_const(cache_modifier, "cache_modifier"),
                width=_const(width, "width"))


def _require_wave_write(op, arch, dest, width):
    """*dest*'s LDS allocation must hold what one wave writes: *width* bytes a lane.
    Called after the op's emitter, which checks the arch and *width* first."""
    lanes = targets.require(op, arch).wave_size
    lds.require_room(op, _DMA_ARGUMENTS[op][0], dest, lanes * width,
                     f"one wave's write, {lanes} lanes x {width} bytes")


def _mask_other(context, builder, sig, args, mask_at, src_index):
    mask = args[mask_at] if _is_given(sig.args[mask_at]) else None
    other = None
    if _is_given(sig.args[mask_at + 1]):
        dtype = sig.args[src_index].dtype
        if buffer.is_zero(args[mask_at + 1]):
            # A literal 0 / 0.0 arrives as a constant: keep it one (the cast would be an
            # instruction), so buffer_load_to_local keeps its branch-free zero fill.
            other = context.get_constant(dtype, 0)
        else:
            other = context.cast(builder, args[mask_at + 1], sig.args[mask_at + 1], dtype)
    return mask, other


@_intrinsic
def buffer_load_to_local(typingctx, dest, ptr, offsets, mask=None, other=None,
                         cache_modifier="", width=4):
    """Buffer load straight into LDS: ``llvm.amdgcn.raw.ptr.buffer.load.lds``.

    ISA: ``buffer_load_dword ... offen lds`` (``buffer_load_dwordx4`` for width 16).
    Archs: gfx942 (width 4), gfx950 (width 4 or 16).  This lane reads *width* bytes
    at element *offsets* of *ptr* (a global array) into ``dest`` (an LDS array) at
    byte ``lane * width``; *dest* must be the same for the whole wave (it goes to
    ``M0``: compute a wave's region from constants, loop counters and
    :func:`~numba_tma.amd.wave_id`, so ``M0`` is set on the scalar unit; from
    ``workitem_id_x() // 64`` each DMA costs a ``v_readfirstlane``).  Lanes where
    *mask* is False get zeros (branch-free: the DMA always issues), or *other* when
    given (a non-zero *other* puts the DMA behind a branch and makes the waits of the
    kernel ``vmcnt(0)``).  The byte offset ``offsets * itemsize`` is a 32-bit voffset:
    runtime offsets are truncated to 32 bits, constants must fit.  Count it into a
    group with :func:`async_load_commit_group`.

    Example: ``buffer_load_to_local(tile[w * 64:], x, base + lane, mask=lane < n)``
    """
    opts = _dma_typer("buffer_load_to_local", dest, ptr, offsets, mask, other,
                      cache_modifier, width)
    if isinstance(offsets, types.IntegerLiteral):
        itemsize = ptr.dtype.bitwidth // 8
        targets.check_int_range("buffer_load_to_local", "offsets (a constant)",
                                offsets.literal_value, 0, (2**31 - 1) // itemsize)

    def codegen(context, builder, sig, args):
        arch = _arch(context)
        rsrc = buffer.emit_make_buffer_rsrc(builder, arch,
                                            _data(context, builder, sig.args[1], args[1]))
        itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[1].dtype))
        voffset = builder.mul(_i32(context, builder, sig.args[2], args[2]),
                              ir.Constant(I32, itemsize))
        mask, other = _mask_other(context, builder, sig, args, 3, 1)
        buffer.emit_buffer_load_to_local(
            builder, arch, rsrc, _data(context, builder, sig.args[0], args[0]), voffset,
            context.async_groups(builder.function), mask=mask, other=other, **opts)
        _require_wave_write("buffer_load_to_local", arch, sig.args[0], opts["width"])
        return context.get_dummy_value()

    return types.none(dest, ptr, offsets, _ty(mask), _ty(other), _ty(cache_modifier),
                      _ty(width)), codegen


@_intrinsic
def async_load(typingctx, src, offsets, result, mask=None, other=None, cache_modifier="",
               width=4):
    """Per-lane global -> LDS copy of ``src[offsets]`` (*width* bytes) into *result*.

    gfx942/gfx950: ``llvm.amdgcn.global.load.lds`` -> ``global_load_lds_dword``
    (``_dwordx4`` for width 16, gfx950 only).  gfx1250:
    ``llvm.amdgcn.global.load.async.to.lds.b{8,32,64,128}`` ->
    ``global_load_async_to_lds_bN``.  This lane's bytes land at byte ``lane * width``
    of *result* (uniform across the wave; on gfx942/gfx950 it goes to ``M0``, see
    :func:`buffer_load_to_local`).  Masked lanes copy nothing; with *other*
    they store it instead.  A masked ``async_load`` sits behind a branch that a fully
    masked wave skips, so the waits of the kernel become ``vmcnt(0)`` /
    ``s_wait_asynccnt 0``; to keep a pipeline's waits, clamp the offsets instead.

    Example: ``async_load(x, base + lane, tile[w * 64:]); async_load_commit_group()``
    """
    opts = _dma_typer("async_load", result, src, offsets, mask, other, cache_modifier, width)
    # masked lanes write nothing, unless they store other
    whole_wave = not _is_given(mask) or _is_given(other)

    def codegen(context, builder, sig, args):
        src_ptr = cgutils.get_item_pointer2(
            context, builder, _data(context, builder, sig.args[0], args[0]),
            [context.get_constant(types.intp, 1)], [context.get_constant(types.intp, 1)],
            "C", [context.cast(builder, args[1], sig.args[1], types.intp)])
        mask, other = _mask_other(context, builder, sig, args, 3, 0)
        global_load.emit_async_load(
            builder, _arch(context), src_ptr, _data(context, builder, sig.args[2], args[2]),
            context.async_groups(builder.function), mask=mask, other=other, **opts)
        if whole_wave:
            _require_wave_write("async_load", _arch(context), sig.args[2], opts["width"])
        return context.get_dummy_value()

    return types.none(src, offsets, result, _ty(mask), _ty(other), _ty(cache_modifier),
                      _ty(width)), codegen


@_intrinsic
def async_load_commit_group(typingctx):
    """Close the current group of LDS-DMA loads (``buffer_load_to_local``/``async_load``).

    LLVM 22 has no ``asyncmark``, so this emits nothing: it records how many DMA
    instructions the group holds for :func:`async_load_wait_group`.  Commit in the
    same straight-line code as the group's DMA ops (not in a branch or loop of its
    own), or the group counts as empty.  All archs.

    Example: ``async_load_commit_group()``
    """
    def codegen(context, builder, sig, args):
        dma.emit_async_load_commit_group(builder, _arch(context),
                                         context.async_groups(builder.function))
        return context.get_dummy_value()
    return types.none(), codegen


@_intrinsic
def async_load_wait_group(typingctx, pendings):
    """Wait until at most *pendings* committed groups are still loading.

    gfx942/gfx950: ``llvm.amdgcn.s.waitcnt`` -> ``s_waitcnt vmcnt(K)``; gfx1250:
    ``llvm.amdgcn.s.wait.asynccnt`` -> ``s_wait_asynccnt K``, where
    K = *pendings* x the smallest group of the kernel (DMA instructions certain to
    issue; 0 if any group is uncertain).  *pendings*: constant 0..63.  LLVM moves no
    LDS access across the wait, nor across a DMA op (docs/amd.md, LDS ordering).

    Example (3 stages, one DMA per group): ``async_load_wait_group(2)`` ->
    ``s_waitcnt vmcnt(2)``
    """
    count = _const(pendings, "pendings")

    def codegen(context, builder, sig, args):
        dma.emit_async_load_wait_group(builder, _arch(context),
                                       context.async_groups(builder.function), count)
        return context.get_dummy_value()
    return types.none(pendings), codegen


# -- scheduling and barriers ----------------------------------------------------------

@_intrinsic
def amd_sched_barrier(typingctx, mask):
    """``llvm.amdgcn.sched.barrier(mask)``: let only the instruction classes in *mask*
    (see ``SCHED_CLASSES``) be scheduled across this point.  No ISA encoding; verbose
    assembly shows ``; sched_barrier mask(0x...)``.  All archs.

    Example: ``amd_sched_barrier(0)`` (nothing crosses)
    """
    value = _const(mask, "mask")

    def codegen(context, builder, sig, args):
        sync.emit_sched_barrier(builder, _arch(context), value)
        return context.get_dummy_value()
    return types.none(mask), codegen


@_intrinsic
def sched_group_barrier(typingctx, mask, size, sync_id):
    """``llvm.amdgcn.sched.group.barrier(mask, size, sync_id)``: ask the scheduler for
    a group of *size* instructions of class *mask*.  Shows as
    ``; sched_group_barrier mask(...) size(...) SyncID(...)``.  All archs.

    Example: ``sched_group_barrier(0x8, 1, 0)`` (one MFMA)
    """
    values = [_const(v, n) for v, n in ((mask, "mask"), (size, "size"), (sync_id, "sync_id"))]

    def codegen(context, builder, sig, args):
        sync.emit_sched_group_barrier(builder, _arch(context), *values)
        return context.get_dummy_value()
    return types.none(mask, size, sync_id), codegen


@_intrinsic
def s_setprio(typingctx, priority):
    """Set this wave's instruction-issue priority: ``llvm.amdgcn.s.setprio`` ->
    ``s_setprio <priority>``.  *priority*: constant 0 (lowest, the default) .. 3
    (highest); it holds until the next ``s_setprio``.  Used to let MFMA-issuing waves
    go ahead of memory-issuing ones (ping-pong schedules).  All archs.

    Example: ``s_setprio(1); ...mfma...; s_setprio(0)``
    """
    value = _const(priority, "priority")
    targets.check_int_range("s_setprio", "priority", value, 0, sync.SETPRIO_MAX)

    def codegen(context, builder, sig, args):
        sync.emit_s_setprio(builder, _arch(context), value)
        return context.get_dummy_value()
    return types.none(priority), codegen


@_intrinsic
def s_barrier(typingctx):
    """Workgroup barrier that orders LDS: this wave's LDS reads and writes complete
    before any wave of the workgroup passes it.

    * gfx942/gfx950: ``llvm.amdgcn.s.waitcnt`` (lgkmcnt only) + ``llvm.amdgcn.s.barrier``
      -> ``s_waitcnt lgkmcnt(0)`` then ``s_barrier`` (LLVM merges the wait into a
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

    Example: ``async_load_wait_group(1); s_barrier()``
    """
    def codegen(context, builder, sig, args):
        sync.emit_s_barrier(builder, _arch(context), one_wave=context.one_wave)
        return context.get_dummy_value()
    return types.none(), codegen


@_intrinsic
def barrier_arrive(typingctx, bar, arrive_count=1):
    """Arrive on the LDS barrier word ``bar[0]`` (an int64 :func:`lds_array`), once per
    wave.

    ``llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64`` -> ``ds_atomic_barrier_arrive_rtn_b64``;
    gfx1250 only; *arrive_count* must be 1 (as TLX on AMD).

    Example: ``barrier_arrive(bar)``
    """
    _require_array(bar, "barrier_arrive: bar")
    if bar.dtype != types.int64:
        raise AMDArgumentError(f"barrier_arrive: bar must be an int64 LDS array, got {bar}")
    lds.require_lds("barrier_arrive", "bar", bar)
    count = _const(arrive_count, "arrive_count")

    def codegen(context, builder, sig, args):
        sync.emit_barrier_arrive(builder, _arch(context),
                                 _data(context, builder, sig.args[0], args[0]), count)
        return context.get_dummy_value()
    return types.none(bar, _ty(arrive_count)), codegen


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


def _unpack_desc(builder, ty, value):
    return tdm.TDMDescriptor(ty.spec, tuple(builder.extract_value(value, i) for i in range(4)))


def _pack_desc(builder, desc):
    value = ir.Constant(ir.LiteralStructType(list(tdm.GROUP_TYPES)), None)
    for i, group in enumerate(desc.groups):
        value = builder.insert_value(value, group, i)
    return value


def _require_desc(value, name):
    if not isinstance(value, TensorDescriptorType):
        raise AMDArgumentError(f"{name} must be a tensor descriptor, got {_shown(value)}")


def _require_block_room(op, name, desc, array):
    """*array* must be an LDS array whose allocation holds one block of *desc*."""
    lds.require_lds(op, name, array)
    spec = desc.spec
    lds.require_room(op, name, array, spec.lds_bytes(),
                     f"one block of {spec.block_shape} x {spec.elem_bytes} bytes"
                     + (" with its padding" if spec.pad_interval else ""))


def _int_tuple(context, builder, ty, value):
    """A tuple of ints (IR) -> list of i64 values, or None when not given."""
    if not _is_given(ty):
        return None
    return [context.cast(builder, builder.extract_value(value, i), t, types.int64)
            for i, t in enumerate(ty)]


def _pred(context, builder, ty, value):
    if not _is_given(ty):
        return None
    if isinstance(ty, types.BooleanLiteral):
        return ty.literal_value  # the emitter takes a constant as is
    return context.cast(builder, value, ty, types.boolean)


@_intrinsic
def make_tensor_descriptor(typingctx, array, block_shape, pad_interval=0, pad_amount=0):
    """TDM descriptor (groups 0-3) of a C-contiguous global *array*, copied in blocks of
    *block_shape* (constant tuple).  *pad_interval*/*pad_amount* (elements) pad the LDS
    copy.  Pure SALU integer code; gfx1250 only.

    Example: ``desc = make_tensor_descriptor(x, (64, 64))``
    """
    _require_array(array, "make_tensor_descriptor: array")
    lds.require_global("make_tensor_descriptor", "array", array)
    if array.layout != "C":
        raise AMDArgumentError(
            f"make_tensor_descriptor: array must be C-contiguous, got {array}")
    block = _const(block_shape, "block_shape")
    spec = TileSpec(array.dtype.bitwidth // 8, block, _const(pad_interval, "pad_interval"),
                    _const(pad_amount, "pad_amount"))
    if len(block) != array.ndim:
        raise AMDArgumentError(f"make_tensor_descriptor: block_shape needs {array.ndim} dims")
    descty = TensorDescriptorType(spec)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        shape = cgutils.unpack_tuple(builder, ary.shape)
        itemsize = ir.Constant(shape[0].type, spec.elem_bytes)
        strides = [builder.sdiv(s, itemsize) for s in cgutils.unpack_tuple(builder, ary.strides)]
        desc = tdm.emit_make_tensor_descriptor(builder, _arch(context), spec, ary.data,
                                               shape, strides[:-1] + [1])
        return _pack_desc(builder, desc)

    return descty(array, block_shape, _ty(pad_interval), _ty(pad_amount)), codegen


@_intrinsic
def update_tensor_descriptor(typingctx, desc, add_offsets=None, set_bounds=None, pred=None,
                             clamp_bounds=True):
    """A moved / re-bounded / re-predicated copy of *desc*: integer IR on the descriptor
    groups, no instruction of its own (gfx1250 only).  *add_offsets* and *set_bounds*
    are tuples of ints (row-major); with *clamp_bounds* the bounds shrink by the offsets.
    The descriptor is wave-uniform (SGPRs): a lane-varying *pred*, offset or bound is
    taken from the wave's first active lane (``v_readfirstlane``), not checked.

    Example: ``desc = update_tensor_descriptor(desc, add_offsets=(64, 0))``
    """
    op = "update_tensor_descriptor"
    _require_desc(desc, f"{op}: desc")
    _require_ints(add_offsets, f"{op}: add_offsets")
    _require_ints(set_bounds, f"{op}: set_bounds")
    for i, bound in enumerate(set_bounds if _is_given(set_bounds) else ()):
        if isinstance(bound, types.IntegerLiteral):  # a runtime bound is truncated
            targets.check_int_range(op, f"set_bounds[{i}]", bound.literal_value, 0,
                                    tdm.MAX_TENSOR_DIM)
    _require_pred(pred, f"{op}: pred")
    clamp = _const_bool(clamp_bounds, "clamp_bounds")

    def codegen(context, builder, sig, args):
        new = tdm.emit_update_tensor_descriptor(
            builder, _arch(context), _unpack_desc(builder, sig.args[0], args[0]),
            add_offsets=_int_tuple(context, builder, sig.args[1], args[1]),
            set_bounds=_int_tuple(context, builder, sig.args[2], args[2]),
            pred=_pred(context, builder, sig.args[3], args[3]), clamp_bounds=clamp)
        return _pack_desc(builder, new)

    return desc(desc, _ty(add_offsets), _ty(set_bounds), _ty(pred), _ty(clamp_bounds)), codegen


@_intrinsic
def async_amd_descriptor_load(typingctx, desc, result, offsets=None, pred=None,
                              clamp_bounds=True):
    """Copy the block at *desc* (moved by *offsets*) into the LDS array *result*.

    ``llvm.amdgcn.tensor.load.to.lds`` (``.d2`` for rank <= 2) -> ``tensor_load_to_lds``;
    gfx1250 only.  The calling wave issues the whole block; wait with
    :func:`async_amd_descriptor_wait`.  *offsets* and *pred* are wave-uniform: a
    lane-varying value is taken from the first active lane (``v_readfirstlane``).

    Example: ``async_amd_descriptor_load(desc, tile, offsets=(row, 0))``
    """
    op = "async_amd_descriptor_load"
    _require_desc(desc, f"{op}: desc")
    _require_array(result, f"{op}: result")
    _require_block_room(op, "result", desc, result)
    _require_ints(offsets, f"{op}: offsets")
    _require_pred(pred, f"{op}: pred")
    clamp = _const_bool(clamp_bounds, "clamp_bounds")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_load(builder, _arch(context), _unpack_desc(builder, sig.args[0], args[0]),
                             _data(context, builder, sig.args[1], args[1]),
                             offsets=_int_tuple(context, builder, sig.args[2], args[2]),
                             pred=_pred(context, builder, sig.args[3], args[3]),
                             clamp_bounds=clamp)
        return context.get_dummy_value()

    return types.none(desc, result, _ty(offsets), _ty(pred), _ty(clamp_bounds)), codegen


@_intrinsic
def async_amd_descriptor_store(typingctx, desc, source, offsets=None, clamp_bounds=True):
    """Copy the LDS array *source* to the block at *desc* (moved by *offsets*).

    ``llvm.amdgcn.tensor.store.from.lds`` (``.d2`` for rank <= 2) ->
    ``tensor_store_from_lds``; gfx1250 only.

    Example: ``async_amd_descriptor_store(out_desc, tile, offsets=(row, 0))``
    """
    op = "async_amd_descriptor_store"
    _require_desc(desc, f"{op}: desc")
    _require_array(source, f"{op}: source")
    _require_block_room(op, "source", desc, source)
    _require_ints(offsets, f"{op}: offsets")
    clamp = _const_bool(clamp_bounds, "clamp_bounds")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_store(builder, _arch(context), _unpack_desc(builder, sig.args[0], args[0]),
                              _data(context, builder, sig.args[1], args[1]),
                              offsets=_int_tuple(context, builder, sig.args[2], args[2]),
                              clamp_bounds=clamp)
        return context.get_dummy_value()

    return types.none(desc, source, _ty(offsets), _ty(clamp_bounds)), codegen


@_intrinsic
def async_amd_descriptor_load_fused(typingctx, members, cache_modifier=""):
    """One ``tensor_load_to_lds`` for 2-4 ``(desc, dst, warp_used_hint)`` members.

    Each wave takes the member whose hint has its wave id and loads its share of that
    block (split along the outermost dim among the hint's waves).  Hints: constant,
    non-empty, disjoint, axis-aligned.  ``llvm.amdgcn.tensor.load.to.lds[.d2]``;
    gfx1250 only.

    Example: ``async_amd_descriptor_load_fused(((da, ta, 0x0F), (db, tb, 0xF0)))``
    """
    op = "async_amd_descriptor_load_fused"
    if not isinstance(members, types.BaseTuple) or not all(
            isinstance(m, types.BaseTuple) and len(m) == 3 for m in members):
        raise AMDArgumentError(
            f"{op}: members must be a tuple of (desc, dst, warp_used_hint), got {members}")
    for m in members:
        _require_desc(m[0], f"{op}: desc")
        _require_array(m[1], f"{op}: dst")
        _require_block_room(op, "dst", m[0], m[1])
    hints = [_const(m[2], "warp_used_hint") for m in members]
    cache = _const(cache_modifier, "cache_modifier")

    def codegen(context, builder, sig, args):
        resolved = []
        for i, (mty, hint) in enumerate(zip(sig.args[0], hints)):
            member = builder.extract_value(args[0], i)
            resolved.append((_unpack_desc(builder, mty[0], builder.extract_value(member, 0)),
                             _data(context, builder, mty[1], builder.extract_value(member, 1)),
                             hint))
        tdm.emit_tensor_load_fused(builder, _arch(context), resolved, cache_modifier=cache)
        return context.get_dummy_value()

    return types.none(members, _ty(cache_modifier)), codegen


@_intrinsic
def async_amd_descriptor_wait(typingctx, pendings=0):
    """Wait until at most *pendings* tensor loads/stores of this wave are in flight.

    ``llvm.amdgcn.s.wait.tensorcnt`` -> ``s_wait_tensorcnt``; gfx1250 only.  LLVM moves
    no LDS access across the wait, nor across a TDM op (docs/amd.md, LDS ordering).

    Example: ``async_amd_descriptor_wait(0)``
    """
    count = _const(pendings, "pendings")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_wait(builder, _arch(context), count)
        return context.get_dummy_value()
    return types.none(_ty(pendings)), codegen
