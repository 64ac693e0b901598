"""The gfx1250 Tensor Data Mover: tensor descriptors (``make_tensor_descriptor``,
``update_tensor_descriptor``; integer IR on the four descriptor groups, wave-uniform) and the
block copies between global memory and LDS they describe, one instruction per block
(``tensor_load_to_lds`` / ``tensor_store_from_lds``), waited for with
``async_amd_descriptor_wait``."""
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models, register_default

from ...declarations import Refusal
from .. import lds, tdm
from .._core import (CACHE_MODIFIER, AmdOp, Array, Const, Flag, Ints, Pred, Sample, Typed, const, data, is_given,
                     no_result, shown)
from ..errors import reject
from ..targets import GFX1250, Requirement

# LLVM 23 adds a fifth descriptor group operand to the tensor intrinsics.
_TDM = Requirement((GFX1250,), 22, 22)


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
            raise reject(op_name, self.name, "must be a tensor descriptor (make_tensor_descriptor)", shown(ty))


def _unpack_desc(builder, ty, value):
    return tdm.TDMDescriptor(ty.spec, tuple(builder.extract_value(value, i) for i in range(4)))


def _pack_desc(builder, desc):
    value = ir.Constant(ir.LiteralStructType(list(tdm.GROUP_TYPES)), None)
    for i, group in enumerate(desc.groups):
        value = builder.insert_value(value, group, i)
    return value


def _block_room(op, name, desc, array):
    """*array* (an LDS array) must be an allocation that holds one block of *desc*."""
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
_SMALL = "small = amd.lds_array(8, numba.float32)\n"   # 32 bytes: less than a block of _DESC


def _one_block_dim_per_dim(array, block_shape, **_):
    """The rule of two arguments: *block_shape* has a dim for each dim of *array* (what else a
    block shape must be, the Tensor Data Mover's :class:`~numba_tma.amd.tdm.TileSpec` says)."""
    block = const(block_shape, "make_tensor_descriptor", "block_shape")
    if isinstance(block, tuple) and len(block) != array.ndim:
        raise reject("make_tensor_descriptor", "block_shape", f"must have {array.ndim} dims (one per dim of array)",
                     block)


def _make_tensor_descriptor(array, block_shape, pad_interval, pad_amount):
    op = "make_tensor_descriptor"
    spec = tdm.TileSpec(array.dtype.bitwidth // 8, const(block_shape, op, "block_shape"),
                        const(pad_interval, op, "pad_interval"), const(pad_amount, op, "pad_amount"))

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        shape = cgutils.unpack_tuple(builder, ary.shape)
        itemsize = ir.Constant(shape[0].type, spec.elem_bytes)
        strides = [builder.sdiv(s, itemsize) for s in cgutils.unpack_tuple(builder, ary.strides)]
        desc = tdm.emit_make_tensor_descriptor(builder, context.arch, spec, ary.data,
                                               shape, strides[:-1] + [1])
        return _pack_desc(builder, desc)

    return TensorDescriptorType(spec), codegen


make_tensor_descriptor = AmdOp(
    "amd.make_tensor_descriptor", _make_tensor_descriptor,
    (Array("array", "global", contiguous=True), Const("block_shape", annotation="tuple[int, ...]"),
     Const("pad_interval", 0), Const("pad_amount", 0)),
    check=_one_block_dim_per_dim, result="TensorDescriptor", need=_TDM, tlx=("tlx.make_tensor_descriptor",),
    doc="""TDM descriptor (groups 0-3) of a C-contiguous global *array*, copied in blocks of
    *block_shape* (constant tuple).  *pad_interval*/*pad_amount* (elements) pad the LDS
    copy.  Pure SALU integer code, no instruction of its own; gfx1250 only.

    Example::

        desc = amd.make_tensor_descriptor(x, (64, 64))
    """,
    samples=(Sample(_DESC + "amd.async_amd_descriptor_load(d, tile)", "tensor_load_to_lds %s, %s", _TDM_REF),),
    refusals=(Refusal("d = amd.make_tensor_descriptor(x, (64, 64))", "amd.make_tensor_descriptor: argument 'block_shape' must have 1 dims (one per dim of array); got (64, 64)"),
              Refusal("d = amd.make_tensor_descriptor(tile, (64,))", "amd.make_tensor_descriptor: argument 'array' must be a global array"),
              Refusal("d = amd.make_tensor_descriptor(x[::2], (64,))",
                      "amd.make_tensor_descriptor: argument 'array' must be C-contiguous")),
).intrinsic()


def _update_tensor_descriptor(desc, add_offsets, set_bounds, pred, clamp_bounds):
    clamp = const(clamp_bounds, "update_tensor_descriptor", "clamp_bounds")

    def codegen(context, builder, sig, args):
        new = tdm.emit_update_tensor_descriptor(
            builder, context.arch, _unpack_desc(builder, sig.args[0], args[0]),
            add_offsets=_int_tuple(context, builder, sig.args[1], args[1]),
            set_bounds=_int_tuple(context, builder, sig.args[2], args[2]),
            pred=_pred(context, builder, sig.args[3], args[3]), clamp_bounds=clamp)
        return _pack_desc(builder, new)

    return desc, codegen


update_tensor_descriptor = AmdOp(
    "amd.update_tensor_descriptor", _update_tensor_descriptor,
    (Descriptor("desc"), Ints("add_offsets"), Ints("set_bounds", lo=0, hi=tdm.MAX_TENSOR_DIM), Pred("pred"),
     Flag("clamp_bounds", True)),
    result="TensorDescriptor", need=_TDM,
    doc="""A moved / re-bounded / re-predicated copy of *desc*: integer IR on the descriptor
    groups, no instruction of its own (gfx1250 only).  *add_offsets* and *set_bounds*
    are tuples of ints (row-major); with *clamp_bounds* the bounds shrink by the offsets.
    The descriptor is wave-uniform (SGPRs): a lane-varying *pred*, offset or bound is
    taken from the wave's first active lane (``v_readfirstlane``), not checked.

    Example::

        desc = amd.update_tensor_descriptor(desc, add_offsets=(64, 0))
    """,
    samples=(Sample(_DESC + "d = amd.update_tensor_descriptor(d, add_offsets=(64,))\n"
                    "amd.async_amd_descriptor_load(d, tile)", "tensor_load_to_lds %s, %s", _TDM_REF),),
    refusals=(Refusal(_DESC + "d = amd.update_tensor_descriptor(d, set_bounds=(-1,))",
                      "amd.update_tensor_descriptor: argument 'set_bounds[0]' must be an int in"),
              Refusal("d = amd.update_tensor_descriptor(x)", "amd.update_tensor_descriptor: argument 'desc' must be a tensor descriptor")),
).intrinsic()


def _descriptor_load(desc, result, offsets, pred, clamp_bounds):
    clamp = const(clamp_bounds, "async_amd_descriptor_load", "clamp_bounds")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_load(builder, context.arch, _unpack_desc(builder, sig.args[0], args[0]),
                             data(context, builder, sig.args[1], args[1]),
                             offsets=_int_tuple(context, builder, sig.args[2], args[2]),
                             pred=_pred(context, builder, sig.args[3], args[3]), clamp_bounds=clamp)
    return no_result(codegen)


async_amd_descriptor_load = AmdOp(
    "amd.async_amd_descriptor_load", _descriptor_load,
    (Descriptor("desc"), Array("result", "lds"), Ints("offsets"), Pred("pred"), Flag("clamp_bounds", True)),
    check=lambda desc, result, **_: _block_room("async_amd_descriptor_load", "result", desc, result), need=_TDM, llvm=("llvm.amdgcn.tensor.load.to.lds", "llvm.amdgcn.tensor.load.to.lds.d2"),
    isa=("tensor_load_to_lds",), tlx=("tlx.async_amd_descriptor_load",),
    doc="""Copy the block at *desc* (moved by *offsets*) into the LDS array *result*
    (``.d2`` for rank <= 2); gfx1250 only.  The calling wave issues the whole block; wait with
    :func:`async_amd_descriptor_wait`.  *offsets* and *pred* are wave-uniform: a
    lane-varying value is taken from the first active lane (``v_readfirstlane``).

    Example::

        amd.async_amd_descriptor_load(desc, tile, offsets=(row, 0))
    """,
    samples=(Sample(_DESC + "amd.async_amd_descriptor_load(d, tile, offsets=(64,))",
                    "tensor_load_to_lds %s, %s", _TDM_REF),),
    refusals=(Refusal(_DESC + "amd.async_amd_descriptor_load(d, y)",
                      "amd.async_amd_descriptor_load: argument 'result' must be an LDS array"),
              Refusal(_DESC + _SMALL + "amd.async_amd_descriptor_load(d, small)",
                      "amd.async_amd_descriptor_load: argument 'result' must hold one block of (64,) x 4 bytes "
                      "(256 bytes)")),
).intrinsic()


def _descriptor_store(desc, source, offsets, clamp_bounds):
    clamp = const(clamp_bounds, "async_amd_descriptor_store", "clamp_bounds")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_store(builder, context.arch, _unpack_desc(builder, sig.args[0], args[0]),
                              data(context, builder, sig.args[1], args[1]),
                              offsets=_int_tuple(context, builder, sig.args[2], args[2]), clamp_bounds=clamp)
    return no_result(codegen)


async_amd_descriptor_store = AmdOp(
    "amd.async_amd_descriptor_store", _descriptor_store,
    (Descriptor("desc"), Array("source", "lds"), Ints("offsets"), Flag("clamp_bounds", True)),
    check=lambda desc, source, **_: _block_room("async_amd_descriptor_store", "source", desc, source), need=_TDM, llvm=("llvm.amdgcn.tensor.store.from.lds", "llvm.amdgcn.tensor.store.from.lds.d2"),
    isa=("tensor_store_from_lds",), tlx=("tlx.async_amd_descriptor_store",),
    doc="""Copy the LDS array *source* to the block at *desc* (moved by *offsets*);
    gfx1250 only.

    Example::

        amd.async_amd_descriptor_store(out_desc, tile, offsets=(row, 0))
    """,
    samples=(Sample(_DESC + "amd.async_amd_descriptor_store(d, tile)", "tensor_store_from_lds %s, %s", _TDM_REF),),
    refusals=(Refusal(_DESC + "amd.async_amd_descriptor_store(d, tile, clamp_bounds=1)",
                      "amd.async_amd_descriptor_store: argument 'clamp_bounds' must be True or False"),
              Refusal(_DESC + _SMALL + "amd.async_amd_descriptor_store(d, small)",
                      "amd.async_amd_descriptor_store: argument 'source' must hold one block of (64,) x 4 bytes "
                      "(256 bytes)")),
).intrinsic()


class _Members(Typed):
    """``(desc, dst, warp_used_hint)`` members: a descriptor, an LDS array holding one block of
    it, a constant wave mask."""

    def __init__(self, name):
        super().__init__(name, "tuple[tuple[TensorDescriptor, LDSArray, int], ...]")

    def check(self, op_name, ty):
        if not isinstance(ty, types.BaseTuple) or not all(isinstance(m, types.BaseTuple) and len(m) == 3 for m in ty):
            raise reject(op_name, self.name, "must be a tuple of (desc, dst, warp_used_hint)", ty)
        for m in ty:
            Descriptor("desc").check(op_name, m[0])
            Array("dst", "lds").check(op_name, m[1])
            _block_room(op_name, "dst", m[0], m[1])
            const(m[2], op_name, "warp_used_hint")


def _descriptor_load_fused(members, cache_modifier):
    op = "async_amd_descriptor_load_fused"
    hints = [const(m[2], op, "warp_used_hint") for m in members]
    cache = const(cache_modifier, op, "cache_modifier")

    def codegen(context, builder, sig, args):
        resolved = []
        for i, (mty, hint) in enumerate(zip(sig.args[0], hints)):
            member = builder.extract_value(args[0], i)
            resolved.append((_unpack_desc(builder, mty[0], builder.extract_value(member, 0)),
                             data(context, builder, mty[1], builder.extract_value(member, 1)), hint))
        tdm.emit_tensor_load_fused(builder, context.arch, resolved, cache_modifier=cache)
    return no_result(codegen)


async_amd_descriptor_load_fused = AmdOp(
    "amd.async_amd_descriptor_load_fused", _descriptor_load_fused,
    (_Members("members"), CACHE_MODIFIER),
    need=_TDM, llvm=("llvm.amdgcn.tensor.load.to.lds", "llvm.amdgcn.tensor.load.to.lds.d2"),
    isa=("tensor_load_to_lds",), tlx=("tlx.async_amd_descriptor_load_fused",),
    doc="""One ``tensor_load_to_lds`` for 2-4 ``(desc, dst, warp_used_hint)`` members.

    Each wave takes the member whose hint has its wave id and loads its share of that
    block (split along the outermost dim among the hint's waves).  Hints: constant,
    non-empty, disjoint, axis-aligned.  gfx1250 only.

    Example::

        amd.async_amd_descriptor_load_fused(((da, ta, 0x0F), (db, tb, 0xF0)))
    """,
    samples=(Sample(_DESC + "amd.async_amd_descriptor_load_fused(((d, tile, 0x1), (d, tile[64:], 0x2)))",
                    "tensor_load_to_lds %s, %s", _TDM_REF),),
    refusals=(Refusal("amd.async_amd_descriptor_load_fused(tile)", "amd.async_amd_descriptor_load_fused: argument 'members' must be"),
              Refusal(_DESC + _SMALL + "amd.async_amd_descriptor_load_fused(((d, tile, 0x1), (d, small, 0x2)))",
                      "amd.async_amd_descriptor_load_fused: argument 'dst' must hold one block of (64,) x 4 bytes "
                      "(256 bytes)"),
              Refusal(_DESC + "amd.async_amd_descriptor_load_fused(((d, tile, n), (d, tile[64:], 0x2)))",
                      "amd.async_amd_descriptor_load_fused: argument 'warp_used_hint' must be a compile-time constant")),
).intrinsic()


def _descriptor_wait(pendings):
    count = const(pendings, "async_amd_descriptor_wait", "pendings")

    def codegen(context, builder, sig, args):
        tdm.emit_tensor_wait(builder, context.arch, count)
    return no_result(codegen)


async_amd_descriptor_wait = AmdOp(
    "amd.async_amd_descriptor_wait", _descriptor_wait, (Const("pendings", 0, lo=0, hi=63),),
    need=Requirement((GFX1250,), 22), llvm=("llvm.amdgcn.s.wait.tensorcnt",), isa=("s_wait_tensorcnt",),
    tlx=("tlx.async_amd_descriptor_wait",),
    doc="""Wait until at most *pendings* tensor loads/stores of this wave are in flight;
    gfx1250 only.  LLVM moves no LDS access across the wait, nor across a TDM op
    (docs/amd.md, LDS ordering).

    Example::

        amd.async_amd_descriptor_wait(0)
    """,
    samples=(Sample(_DESC + "amd.async_amd_descriptor_load(d, tile)\namd.async_amd_descriptor_wait(0)",
                    ("tensor_load_to_lds %s, %s", "s_wait_tensorcnt 0x0"), _TDM_REF),),
    refusals=(Refusal("amd.async_amd_descriptor_wait(64)", "amd.async_amd_descriptor_wait: argument 'pendings' must be an int in [0, 63]"),),
).intrinsic()
