"""gfx1250 Tensor Data Mover: descriptor build/update, tensor loads and stores, waits.

A descriptor is held as four wide integers (i128, i256, i128, i128); fields are
read and written through the table in :mod:`.tdm_layout`, and the groups become
``<4 x i32>``/``<8 x i32>`` vectors only at the intrinsic call.
"""
import math
from dataclasses import dataclass, replace

from llvmlite import ir

from . import targets
from .llvm_ir import (GLOBAL, I1, I16, I32, I64, LDS, VOID, as_addrspace, call_intrinsic,
                      compiler_barrier, i32, wave_id)
from .errors import reject
from .tdm_layout import (FIELDS, GROUP_BITS, TileSpec, groups_for_rank, pack, stride_of_dim,
                         tensor_dim, tile_dim, validate_warp_hints)

GROUP_TYPES = tuple(ir.IntType(bits) for bits in GROUP_BITS)


@dataclass(frozen=True)
class TDMDescriptor:
    """A descriptor in IR (``groups``) plus what is fixed at compile time (``spec``)."""
    spec: TileSpec
    groups: tuple


def _get(builder, groups, name):
    field = FIELDS[name]
    wide = groups[field.group]
    value = builder.lshr(wide, ir.Constant(wide.type, field.lsb))
    return builder.zext(builder.trunc(value, ir.IntType(field.width)), I64)


def _set(builder, groups, name, value):
    """*groups* with field *name* replaced by *value* (an IR int, truncated to the field)."""
    field = FIELDS[name]
    wide = groups[field.group]
    value = builder.trunc(value, ir.IntType(field.width)) if value.type.width > field.width \
        else value
    placed = builder.shl(builder.zext(value, wide.type), ir.Constant(wide.type, field.lsb))
    keep = ~(((1 << field.width) - 1) << field.lsb) & ((1 << wide.type.width) - 1)
    cleared = builder.and_(wide, ir.Constant(wide.type, keep))
    groups = list(groups)
    groups[field.group] = builder.or_(cleared, placed)
    return tuple(groups)


def _as_i64(builder, value):
    if isinstance(value, int):
        return ir.Constant(I64, targets.check_int_range("tdm", "value", value, -2**63,
                                                        2**63 - 1))
    if value.type.width < 64:
        return builder.sext(value, I64)
    return value


#: largest tensor dim: the fields hold 32 bits, but the bound clamp of
#: update_tensor_descriptor is 32-bit signed arithmetic, as in Triton
MAX_TENSOR_DIM = 2**31 - 1


def _check_field_ints(op, name, values, field, hi=None):
    """Python ints among *values* must fit descriptor field *field* (no truncation)
    and be at most *hi*.  IR values are truncated to the field's width at run time."""
    hi = (1 << FIELDS[field].width) - 1 if hi is None else hi
    for i, value in enumerate(values or ()):
        if isinstance(value, int):
            targets.check_int_range(op, f"{name}[{i}]", value, 0, hi)


def _check_rank(op, name, values, rank):
    if values is not None and len(values) != rank:
        raise reject(op, name, f"must have {rank} values (one per dimension)", f"{len(values)} values")


def emit_make_tensor_descriptor(builder, arch, spec, global_ptr, shape, strides, *,
                                multicast_mask=0, pred=1):
    """Build groups 0-3 for a row-major tensor at *global_ptr*.

    *shape* and *strides* (in elements, row-major, innermost stride 1) are IR ints or
    Python ints; Python ints must fit their fields (dims below 2**31, strides 48 bits,
    no negatives), IR values are truncated to them at run time.  *spec* fixes element
    size, block shape and LDS padding.  The LDS
    address is filled in by the load or store.  Pure integer IR (SALU); gfx1250 only.
    """
    op = "make_tensor_descriptor"
    targets.require(op, arch)
    _check_rank(op, "shape", shape, spec.rank)
    _check_rank(op, "strides", strides, spec.rank)
    _check_field_ints(op, "shape", shape, tensor_dim(0), MAX_TENSOR_DIM)
    _check_field_ints(op, "strides", strides, stride_of_dim(1))
    if isinstance(strides[-1], int) and strides[-1] != 1:
        raise reject(op, "strides", "must end in 1 (the innermost stride is 1 element)", strides[-1])
    targets.check_int_range(op, "multicast_mask", multicast_mask, 0, 0xFFFF)
    static = dict(spec.static_fields(), multicast_mask=multicast_mask)
    groups = tuple(ir.Constant(t, g) for t, g in zip(GROUP_TYPES, pack(static)))
    address = builder.ptrtoint(as_addrspace(builder, op, "global_ptr", global_ptr, GLOBAL), I64)
    groups = _set(builder, groups, "global_addr", address)
    rank = spec.rank
    for d in range(rank):
        groups = _set(builder, groups, tensor_dim(d), _as_i64(builder, shape[rank - 1 - d]))
        if d:
            groups = _set(builder, groups, stride_of_dim(d),
                          _as_i64(builder, strides[rank - 1 - d]))
    desc = TDMDescriptor(spec, groups)
    return _with_pred(builder, desc, pred)


def _with_pred(builder, desc, pred):
    if isinstance(pred, (int, bool)):
        value = ir.Constant(I32, targets.check_int_range("tdm", "pred", int(pred), 0, 1))
    elif pred.type == I1:
        value = builder.zext(pred, I32)
    else:
        raise reject("tdm", "pred", "must be 0, 1 or an i1 value", pred.type)
    return replace(desc, groups=_set(builder, desc.groups, "pred", value))


def _clamped_dim(builder, dim, off):
    """max(0, dim - off) for a tensor_dim field, in 32-bit scalar arithmetic.

    *dim* (i64) holds the field (below 2**31, see MAX_TENSOR_DIM); *off* is an i64
    offset.  A 64-bit signed compare or an unsigned saturating subtract has no scalar
    instruction on gfx1250, so LLVM would compute them on the vector unit and move the
    descriptor back with ``v_readfirstlane``.  Instead: an offset that fits in 32
    bits uses a signed 32-bit max (``s_max_i32``, as Triton does); a larger positive
    one clamps to 0; a negative one gives ``dim - off`` truncated to the field, like
    the 64-bit difference."""
    zero = ir.Constant(I32, 0)
    dim = builder.trunc(dim, I32)
    lo = builder.trunc(off, I32)
    hi = builder.trunc(builder.ashr(off, ir.Constant(I64, 32)), I32)
    fits = builder.icmp_signed("==", hi, builder.ashr(lo, ir.Constant(I32, 31)))
    difference = builder.sub(dim, lo)
    clamped = builder.select(builder.icmp_signed(">", difference, zero), difference, zero)
    in_range = builder.select(builder.icmp_signed("<", lo, zero), difference, clamped)
    out_of_range = builder.select(builder.icmp_signed(">=", hi, zero), zero, difference)
    return builder.select(fits, in_range, out_of_range)


def emit_update_tensor_descriptor(builder, arch, desc, *, add_offsets=None, set_bounds=None,
                                  pred=None, clamp_bounds=True):
    """Return *desc* moved and/or re-bounded; pure integer IR, no instruction of its own.

    ``add_offsets`` (row-major, elements): global address += sum(off_i * stride_i) *
    element bytes and, with ``clamp_bounds``, each tensor dim becomes max(0, dim - off)
    so the tile stays bounded by the original tensor.  ``set_bounds`` overwrites the
    tensor dims.  ``pred`` (i1/int) sets the predicate (0 = the op does nothing).
    """
    op = "update_tensor_descriptor"
    targets.require(op, arch)
    rank = desc.spec.rank
    _check_rank(op, "add_offsets", add_offsets, rank)
    _check_rank(op, "set_bounds", set_bounds, rank)
    _check_field_ints(op, "set_bounds", set_bounds, tensor_dim(0), MAX_TENSOR_DIM)
    groups = desc.groups
    if add_offsets is not None:
        delta = ir.Constant(I64, 0)
        for d in range(rank):
            off = _as_i64(builder, add_offsets[rank - 1 - d])
            step = builder.mul(off, _get(builder, groups, stride_of_dim(d))) if d else off
            delta = builder.add(delta, step)
            if clamp_bounds:
                groups = _set(builder, groups, tensor_dim(d),
                              _clamped_dim(builder, _get(builder, groups, tensor_dim(d)), off))
        delta = builder.mul(delta, ir.Constant(I64, desc.spec.elem_bytes))
        groups = _set(builder, groups, "global_addr",
                      builder.add(_get(builder, groups, "global_addr"), delta))
    if set_bounds is not None:
        for d in range(rank):
            groups = _set(builder, groups, tensor_dim(d),
                          _as_i64(builder, set_bounds[rank - 1 - d]))
    desc = replace(desc, groups=groups)
    return desc if pred is None else _with_pred(builder, desc, pred)


def _at_lds(builder, op, desc, lds_ptr):
    address = builder.ptrtoint(as_addrspace(builder, op, "lds", lds_ptr, LDS), I32)
    return replace(desc, groups=_set(builder, desc.groups, "lds_addr", address))


def _issue(builder, arch, op, kind, groups, rank, cache_modifier):
    """The tensor intrinsic, after a compiler barrier: it takes no pointer, so LLVM
    would move (or delete as dead) LDS accesses across it."""
    cpol = targets.cache_bits(op, arch, cache_modifier)
    count = groups_for_rank(rank)
    vectors = [builder.bitcast(g, ir.VectorType(I32, g.type.width // 32))
               for g in groups[:count]]
    suffix = ".d2" if count == 2 else ""
    compiler_barrier(builder)
    return call_intrinsic(builder, f"llvm.amdgcn.tensor.{kind}{suffix}", VOID,
                          vectors + [i32(cpol)])


def emit_tensor_load(builder, arch, desc, lds_ptr, *, offsets=None, pred=None,
                     clamp_bounds=True, cache_modifier=""):
    """``llvm.amdgcn.tensor.load.to.lds[.d2]`` -> ``tensor_load_to_lds``.

    The calling wave copies the whole block at ``desc`` (moved by *offsets*) into LDS
    at *lds_ptr*.  gfx1250 only; completion is counted by ``s_wait_tensorcnt``.
    """
    op = "async_amd_descriptor_load"
    targets.require(op, arch)
    desc = emit_update_tensor_descriptor(builder, arch, desc, add_offsets=offsets,
                                         pred=pred, clamp_bounds=clamp_bounds)
    desc = _at_lds(builder, op, desc, lds_ptr)
    return _issue(builder, arch, op, "load.to.lds", desc.groups, desc.spec.rank,
                  cache_modifier)


def emit_tensor_store(builder, arch, desc, lds_ptr, *, offsets=None, clamp_bounds=True,
                      cache_modifier=""):
    """``llvm.amdgcn.tensor.store.from.lds[.d2]`` -> ``tensor_store_from_lds``; gfx1250."""
    op = "async_amd_descriptor_store"
    targets.require(op, arch)
    desc = emit_update_tensor_descriptor(builder, arch, desc, add_offsets=offsets,
                                         clamp_bounds=clamp_bounds)
    desc = _at_lds(builder, op, desc, lds_ptr)
    return _issue(builder, arch, op, "store.from.lds", desc.groups, desc.spec.rank,
                  cache_modifier)


def _mask32(mask):
    """A 32-bit wave mask as an i32 constant (bit 31 as the sign bit)."""
    return i32(mask - (1 << 32) if mask & 0x80000000 else mask)


def _member_part(builder, arch, desc, lds_ptr, hint, wid):
    """The share of *desc*'s block that this wave loads: the block is split along its
    outermost dim into popcount(hint) parts, part r going to the r-th wave of *hint*."""
    op = "async_amd_descriptor_load_fused"
    spec = desc.spec
    parts = bin(hint).count("1")
    rows = spec.block_shape[0]
    if rows % parts:
        raise reject(op, "members", f"must each have a block_shape[0] divisible by the waves of their "
                     f"warp_used_hint ({parts} in {hint:#x})", f"block_shape[0] = {rows}")
    part_rows = rows // parts
    below = builder.sub(builder.shl(i32(1), wid), i32(1))
    rank_in_hint = call_intrinsic(builder, "llvm.ctpop.i32", I32,
                                  [builder.and_(_mask32(hint), below)])
    first_row = builder.mul(rank_in_hint, i32(part_rows))
    offsets = [first_row] + [0] * (spec.rank - 1)
    part_spec = replace(spec, block_shape=(part_rows,) + spec.block_shape[1:])
    part = emit_update_tensor_descriptor(builder, arch, replace(desc, spec=part_spec),
                                         add_offsets=offsets)
    part = replace(part, groups=_set(builder, part.groups, tile_dim(spec.rank - 1),
                                     ir.Constant(I16, part_rows)))
    elements = builder.mul(first_row, i32(math.prod(spec.block_shape[1:])))
    if spec.pad_interval:
        pads = builder.udiv(elements, i32(spec.pad_interval))
        elements = builder.add(elements, builder.mul(pads, i32(spec.pad_amount)))
    lds = builder.gep(as_addrspace(builder, op, "dst", lds_ptr, LDS),
                      [builder.mul(elements, i32(spec.elem_bytes))],
                      source_etype=ir.IntType(8))
    return _at_lds(builder, op, part, lds)


def emit_tensor_load_fused(builder, arch, members, *, cache_modifier=""):
    """One ``tensor_load_to_lds`` serving 2-4 members ``(desc, lds_ptr, warp_used_hint)``.

    Each wave picks the member whose hint contains its wave id and loads its share of
    that member's block; a wave in no hint issues the instruction with pred = 0 (it
    loads nothing).  Hints must be non-empty, disjoint and axis-aligned; all members
    share rank and cache modifier.  gfx1250.
    """
    op = "async_amd_descriptor_load_fused"
    row = targets.require(op, arch)
    groups, rank = fused_groups(builder, arch, members, wave_id(builder, row.wave_size))
    return _issue(builder, arch, op, "load.to.lds", groups, rank, cache_modifier)


def fused_groups(builder, arch, members, wid):
    """The descriptor groups wave *wid* (i32) issues for a fused load, and the rank."""
    op = "async_amd_descriptor_load_fused"
    targets.require(op, arch)
    hints = [hint for _, _, hint in members]
    validate_warp_hints(hints)
    ranks = {desc.spec.rank for desc, _, _ in members}
    if len(ranks) != 1:
        raise reject(op, "members", "must all have the same rank", f"ranks {sorted(ranks)}")

    def in_hint(mask):
        bit = builder.and_(builder.lshr(_mask32(mask), wid), i32(1))
        return builder.icmp_unsigned("!=", bit, i32(0))

    chosen = None
    for desc, lds_ptr, hint in reversed(members):
        groups = _member_part(builder, arch, desc, lds_ptr, hint, wid).groups
        if chosen is None:
            chosen = groups
            continue
        mine = in_hint(hint)
        chosen = tuple(builder.select(mine, g, c) for g, c in zip(groups, chosen))
    # The last member is the fallback of the selects: a wave outside every hint would
    # load part rank_in_hint >= parts of it, past its LDS block.  Predicate it off.
    union = 0
    for hint in hints:
        union |= hint
    pred = builder.select(in_hint(union), _get(builder, chosen, "pred"), ir.Constant(I64, 0))
    return _set(builder, chosen, "pred", pred), ranks.pop()


def emit_tensor_wait(builder, arch, pendings=0):
    """``llvm.amdgcn.s.wait.tensorcnt(pendings)`` -> ``s_wait_tensorcnt``: wait until at
    most *pendings* tensor loads/stores of this wave are in flight; gfx1250 only.

    The intrinsic is memory(inaccessiblemem), so a compiler barrier follows it: an LDS
    access after the wait is never moved before it."""
    op = "async_amd_descriptor_wait"
    targets.require(op, arch)
    targets.check_int_range(op, "pendings", pendings, 0, 63)
    wait = call_intrinsic(builder, "llvm.amdgcn.s.wait.tensorcnt", VOID,
                          [ir.Constant(I16, pendings)])
    compiler_barrier(builder)
    return wait
