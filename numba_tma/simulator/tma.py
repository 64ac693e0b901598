"""``numba_tma.tma`` under the simulator: box and im2col copies taken from the descriptor's own
128 bytes (decoded; no second copy of the parameters).

Loads: out-of-bounds elements are filled (zero, or with ``oob_fill="nan"`` on a floating map the
all-ones NaN of the element width), element strides of dimensions 1-4 step through the tensor
(``ceil(box / stride)`` elements), TF32 maps round to nearest even at 10 mantissa bits and the
FTZ maps flush subnormals, and each byte lands where the swizzle puts it (the 16-byte chunk index
XOR address bits 7-9).  Stores and reductions write the part of the box inside the tensor, and
along dimension 0 on to the next 16-byte boundary of each row, as the H200 does
(:mod:`numba_tma.descriptors.edge`): a map whose rows end short of 16 bytes is refused as the
compiled op refuses it (a ``TensorMap`` or its ``to_device()`` array, without ``allow_store_overrun``),
or, for descriptor bytes in memory, when the box crosses a row's end (as debug mode traps), unless
the call passes ``allow_overrun``.
Dimension 0's element stride is ignored (the H200 loads the whole inner row densely), as measured.
An im2col load whose first pixel lies outside the bounding box raises (the H200 faults).
Not modelled (each raises naming why): strided stores (the H200's behaviour is not established),
stores and reductions through im2col maps, interleaved maps.
"""

from __future__ import annotations

import ctypes
import functools
import math

import numpy as np

from ..descriptors import decode
from ..descriptors.edge import store_limit
from ..descriptors.tensor_map import TensorMap
from ..descriptors.enums import (SWIZZLE_BYTES, TYPE_INFO, DataType, Interleave, Mode, OOBFill, smem_row_bytes,
                                 swizzled_offsets)
from ..reductions import TENSOR_REDUCE_TYPES
from . import memory, numba_sim, scheduler
from .delivery import combine
from .barriers import deliver_later, targets
from .state import RUNNING, SimulatorError, enter

_NUMPY = {DataType.UINT8: "u1", DataType.UINT16: "u2", DataType.UINT32: "u4", DataType.INT32: "i4",
          DataType.UINT64: "u8", DataType.INT64: "i8", DataType.FLOAT16: "f2", DataType.FLOAT32: "f4",
          DataType.FLOAT64: "f8", DataType.BFLOAT16: "u2", DataType.FLOAT32_FTZ: "f4", DataType.TFLOAT32: "f4",
          DataType.TFLOAT32_FTZ: "f4"}
_NAN = {2: 0x7FF7, 4: 0x7FF77FF7, 8: 0x7FF77FF77FF77FF7}   # the H200's fill: 0x7FF7 per 16 bits


def _fields_of(desc, op):
    """The decoded fields of a TensorMap or of 128 descriptor bytes in a uint8 array, which ``op``
    reads through the tensormap proxy (an edited one must have been released and acquired)."""
    if isinstance(desc, TensorMap):
        return _decoded(desc.bytes, op)
    memory.check_tensormap_use(op, desc)
    return _decoded(memory.host(desc).tobytes(), op)


@functools.lru_cache(maxsize=256)
def _decoded(raw, op):
    fields = decode(raw)
    if fields.interleave != Interleave.NONE:
        raise SimulatorError(f"numba_tma simulator: {op}: interleaved maps are not simulated (the bytes their loads "
                             "deliver are not established)")
    if TYPE_INFO[fields.data_type].bits < 8:
        raise SimulatorError(f"numba_tma simulator: {op}: packed sub-byte maps (sm_100) are not simulated")
    return fields


def _itemsize(fields):
    return TYPE_INFO[fields.data_type].bits // 8


def _global_view(fields, width=None):
    """The tensor as a numpy array (outermost first) over its memory, from the descriptor (with
    ``width`` elements per row instead of ``global_dim[0]``: the reach of a store)."""
    size = _itemsize(fields)
    shape = tuple(reversed(fields.global_dim[1:])) + (width or fields.global_dim[0],)
    strides = tuple(reversed(fields.global_strides)) + (size,)
    span = sum((n - 1) * s for n, s in zip(shape, strides)) + size
    raw = np.ctypeslib.as_array((ctypes.c_uint8 * span).from_address(fields.global_address))
    return np.lib.stride_tricks.as_strided(raw.view(f"u{size}"), shape=shape, strides=strides, writeable=True)


def _swizzle_bytes(fields):
    return SWIZZLE_BYTES[fields.swizzle.name]


def _check_tile(op, fields, tile, nbytes, role):
    """A TMA shared-memory operand: in shared memory, aligned, large enough."""
    if not isinstance(tile, memory.SharedArray):
        raise SimulatorError(f"numba_tma simulator: {op}: {role} must be a shared array (cuda.shared.array); got "
                             f"{memory.name(tile)}")
    swizzle = _swizzle_bytes(fields)
    need = max(128, 8 * swizzle)
    addr = memory.address(tile)
    if addr % need:
        raise SimulatorError(f"numba_tma simulator: {op}: {role} {memory.name(tile)} is only {addr & -addr}-byte "
                             f"aligned; TMA needs {need}-byte alignment{' for ' + fields.swizzle.name if swizzle else ''}"
                             f": cuda.shared.array(..., alignment={need}) (the GPU guarantees no more than asked for)")
    span = _smem_footprint(fields, nbytes) if fields.mode == Mode.TILED else nbytes
    if tile.nbytes < span:
        raise SimulatorError(f"numba_tma simulator: {op}: {role} {memory.name(tile)} holds {tile.nbytes} bytes, "
                             f"smaller than the box ({span} bytes of shared memory"
                             f"{f'; {nbytes} bytes of data, rows {_swizzle_bytes(fields)} bytes apart' if span != nbytes else ''})")


def _check_coords(op, fields, coords, store=False):
    if len(coords) != fields.rank:
        raise SimulatorError(f"numba_tma simulator: {op}: coords has {len(coords)} entries for a rank-{fields.rank} "
                             "map")
    if fields.mode == Mode.TILED and (coords[0] * _itemsize(fields)) % 16:
        raise SimulatorError(f"numba_tma simulator: {op}: coords[0]={coords[0]} times the element size is not a "
                             "multiple of 16 bytes (the H200 faults with CUDA_ERROR_ILLEGAL_INSTRUCTION)")
    if store and any(c < 0 for c in coords):
        raise SimulatorError(f"numba_tma simulator: {op}: coords {tuple(coords)} start before the tensor: a TMA store "
                             "box with a negative coordinate kills the kernel on the H200")


def _positions(fields, coords, op, store=False):
    """Per dimension (outermost first): the tensor indices the box covers."""
    estr = fields.element_strides
    if store and any(e != 1 for e in estr):
        raise SimulatorError(f"numba_tma simulator: {op}: element strides {estr} (innermost first) are not simulated "
                             "for stores: the H200's behaviour is not established")
    # dimension 0's stride is ignored: the H200 loads all box_dim[0] elements, densely (41 of 41
    # random maps with a dimension-0 stride of 2 or 3 byte-identical in tests/test_gpu_simulator_identity.py)
    strides = (1,) + tuple(estr[1:])
    counts = [fields.box_dim[0]] + [-(-b // e) for b, e in zip(fields.box_dim[1:], estr[1:])]
    return [c + e * np.arange(n) for c, e, n in zip(reversed(coords), reversed(strides), reversed(counts))]


def _gather(view, fields, index, op):
    """``view`` at the broadcast index arrays ``index`` (outermost first), out-of-bounds filled; the
    bytes read checked against the launch's unfenced generic writes (memory.check_global_read)."""
    shape = view.shape
    valid = np.ones(np.broadcast_shapes(*(i.shape for i in index)), bool)
    for i, n in zip(index, shape):
        valid &= (i >= 0) & (i < n)
    thread = scheduler.current()
    if thread.block.launch.global_marks:
        at = memory.address(view) + sum(i * s for i, s in zip(index, view.strides))
        at = np.broadcast_to(at, valid.shape)[valid]
        memory.check_global_read(op, thread, (at[:, None] + np.arange(view.itemsize)).reshape(-1))
    values = view[tuple(np.clip(i, 0, n - 1) for i, n in zip(index, shape))]
    fill = 0
    if fields.oob_fill == OOBFill.NAN_REQUEST_ZERO_FMA and TYPE_INFO[fields.data_type].floating:
        fill = _NAN[view.dtype.itemsize]
    return _convert(fields, np.where(valid, values, values.dtype.type(fill)), valid)


def _convert(fields, values, valid):
    """TF32 maps (``TFLOAT32`` and ``TFLOAT32_FTZ`` alike) round each in-bounds element to 10 mantissa
    bits, nearest even, denormals included (no flush), and turn every NaN into 0x7FFFE000; a
    ``FLOAT32_FTZ`` map loads the bits unchanged (all measured on the H200)."""
    if fields.data_type not in (DataType.TFLOAT32, DataType.TFLOAT32_FTZ):
        return values
    bits = np.ascontiguousarray(values).view(np.uint32)
    nan = ((bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)) & ((bits & np.uint32(0x007FFFFF)) != 0)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> 13) & np.uint32(1))) & np.uint32(0xFFFFE000)
    converted = np.where(nan, np.uint32(0x7FFFE000), rounded)
    return np.where(valid, converted, bits).astype(np.uint32).view(values.dtype)


def _inner_bytes(fields):
    """The bytes one row of the box brings: all of its inner dimension (its element stride is ignored)."""
    return fields.box_dim[0] * _itemsize(fields)


def _smem_offsets(nbytes, fields):
    """Where each of the ``nbytes`` dense box bytes lands in shared memory: rows
    ``smem_row_bytes`` apart (the swizzle span, with a swizzle), then swizzled."""
    span, k = _swizzle_bytes(fields), np.arange(nbytes)
    if fields.mode != Mode.TILED:   # im2col: one dense run (its row pitch is not measured)
        return swizzled_offsets(k, span)
    inner = _inner_bytes(fields)
    return swizzled_offsets((k // inner) * smem_row_bytes(inner, span) + k % inner, span)


def _smem_footprint(fields, nbytes):
    """The shared-memory bytes a box of ``nbytes`` dense bytes spans."""
    return int(_smem_offsets(nbytes, fields).max()) + 1 if nbytes else 0


def _place(tile, raw, fields):
    memory.byte_view(tile)[_smem_offsets(raw.size, fields)] = raw


def _unplace(tile, nbytes, fields):
    return memory.byte_view(tile)[_smem_offsets(nbytes, fields)]


def _issue_load(op, thread, state, tile, raw, fields, bar, multicast):
    deliver_later(op, thread, targets(op, thread, state, multicast), tile, bar, raw.size,
                  lambda view: _place(view, raw, fields))


def load(desc, dst, coords, bar, cache_hint=None, multicast=None, dst_space="cluster", cta_group=1):
    op = RUNNING.op
    thread, state = enter()
    fields = _fields_of(desc, op)
    if fields.mode != Mode.TILED:
        raise SimulatorError(f"numba_tma simulator: {op}: desc is an im2col map: use tma.load_im2col")
    if cta_group != 1:
        raise SimulatorError(f"numba_tma simulator: {op}: cta_group=2 needs a pair of blocks; the simulator runs one")
    _check_coords(op, fields, coords)
    _check_tile(op, fields, dst, fields.transfer_bytes, "dst")
    index = np.ix_(*_positions(fields, coords, op))
    raw = np.ascontiguousarray(_gather(_global_view(fields), fields, index, op)).reshape(-1).view(np.uint8)
    _issue_load(op, thread, state, dst, raw, fields, bar, multicast)


def _im2col_pixels(fields, coords):
    """The (spatial position innermost first, image) of each pixel an im2col load gathers:
    from ``coords``, stepping W (then H, D, N) by the element strides through the bounding box
    ``[lower corner, dim - 1 + upper corner]`` of each spatial dimension."""
    spatial = fields.rank - 2
    dims, estr = fields.global_dim, fields.element_strides
    lower, upper = fields.pixel_box_lower_corner, fields.pixel_box_upper_corner
    pos, image = list(coords[1:1 + spatial]), coords[-1]
    pixels = []
    for _ in range(fields.pixels_per_column):
        pixels.append((tuple(pos), image))
        for d in range(spatial):
            pos[d] += estr[1 + d]
            if pos[d] <= dims[1 + d] - 1 + upper[d]:
                break
            pos[d] = lower[d]
        else:
            image += 1
    return pixels


def _check_im2col_start(op, fields, coords):
    """The first pixel must lie in the bounding box ``[lower, dim - 1 + upper]`` of every spatial
    dimension: on the H200 a start outside it, before or past, in W or in H, ends the kernel with
    CUDA_ERROR_ILLEGAL_INSTRUCTION (14 of 14 such starts; all 78 starts inside worked)."""
    names = "WHD"
    for d in range(fields.rank - 2):
        lo, hi = fields.pixel_box_lower_corner[d], fields.global_dim[1 + d] - 1 + fields.pixel_box_upper_corner[d]
        if not lo <= coords[1 + d] <= hi:
            raise SimulatorError(f"numba_tma simulator: {op}: coords[{1 + d}]={coords[1 + d]} (the first pixel's "
                                 f"{names[d]}) lies outside the bounding box [{lo}, {hi}] (lower corner .. size - 1 "
                                 "+ upper corner): the H200 ends the kernel with CUDA_ERROR_ILLEGAL_INSTRUCTION")


def load_im2col(desc, dst, coords, offsets, bar, cache_hint=None, multicast=None):
    op = RUNNING.op
    thread, state = enter()
    fields = _fields_of(desc, op)
    if fields.mode != Mode.IM2COL:
        raise SimulatorError(f"numba_tma simulator: {op}: desc must be an im2col map (TensorMap.im2col)")
    _check_coords(op, fields, coords)
    if len(offsets) != fields.rank - 2:
        raise SimulatorError(f"numba_tma simulator: {op}: offsets must have {fields.rank - 2} entries")
    if fields.element_strides[0] != 1:
        raise SimulatorError(f"numba_tma simulator: {op}: a channel element stride is not simulated (not established)")
    _check_tile(op, fields, dst, fields.transfer_bytes, "dst")
    _check_im2col_start(op, fields, coords)
    pixels = _im2col_pixels(fields, coords)
    spatial = np.array([p for p, _ in pixels]) + np.array(offsets)          # (pixels, spatial) innermost first
    images = np.array([n for _, n in pixels])
    channels = coords[0] + np.arange(fields.channels_per_pixel)
    index = (images[:, None],) + tuple(spatial[:, d][:, None] for d in reversed(range(fields.rank - 2))) \
        + (channels[None, :],)
    raw = np.ascontiguousarray(_gather(_global_view(fields), fields, index, op)).reshape(-1).view(np.uint8)
    _issue_load(op, thread, state, dst, raw, fields, bar, multicast)


def _store_reach(op, desc, fields, first, box, allow_overrun):
    """The row width a store writes up to along dimension 0: ``global_dim[0]``, or on to the next
    16 bytes where the user opted in.  Refuses a store that would write past the tensor otherwise:
    descriptor bytes in memory when this box crosses a row's end (debug mode's trap).  A map whose
    type says its layout (a ``TensorMap``, ``to_device()``'s array) with rows ending short of 16
    bytes is the declaration's refusal, unless the map or the call opted in (its type carries the
    overrun, 0 where the map opted in)."""
    bits, width = TYPE_INFO[fields.data_type].bits, fields.global_dim[0]
    reach = store_limit(bits, width)
    if isinstance(desc, TensorMap) or numba_sim.numba_type_of(desc) is not None:
        allow_overrun = True     # (the declaration refused the store had neither opted in)
    elif reach != width and first + box > width and not allow_overrun:
        raise SimulatorError(f"numba_tma simulator: {op}: the box (elements {first}..{first + box - 1} of dimension "
                             f"0) crosses the end of the row ({width} elements, {width * bits // 8} bytes: not a "
                             "multiple of 16); the store would write outside the tensor up to the next 16-byte "
                             "boundary — pad the array's last dimension, or pass allow_overrun=True")
    return reach if allow_overrun else width


def _write_box(op, desc, src, coords, combine, allow_overrun):
    """A store-like op: the box in ``src`` written (``combine(old, new)``) where it lies inside the
    tensor, dimension 0 reaching on to the next 16 bytes where the user opted in."""
    thread, state = enter()
    fields = _fields_of(desc, op)
    if fields.mode != Mode.TILED:
        raise SimulatorError(f"numba_tma simulator: {op}: stores through im2col maps are not simulated (their "
                             "traversal without offsets is not established)")
    _check_coords(op, fields, coords, store=True)
    _check_tile(op, fields, src, fields.transfer_bytes, "src")
    offsets = _smem_offsets(fields.transfer_bytes, fields)
    memory.check_fenced(op, thread, src, offsets)
    state.stored(op, thread, src, offsets)
    positions = _positions(fields, coords, op, store=True)
    view = _global_view(fields, _store_reach(op, desc, fields, coords[0], fields.box_dim[0], allow_overrun))
    shape = tuple(len(p) for p in positions)
    box = _unplace(src, math.prod(shape) * view.dtype.itemsize, fields).view(view.dtype).reshape(shape)
    grids = np.meshgrid(*positions, indexing="ij")
    inside = np.ones(shape, bool)
    for g, n in zip(grids, view.shape):
        inside &= g < n
    where_ = tuple(g[inside] for g in grids)
    view[where_] = combine(fields, view[where_], box[inside])


def store(desc, src, coords, cache_hint=None, allow_overrun=False):
    _write_box(RUNNING.op, desc, src, coords, lambda fields, old, new: new, allow_overrun)


def reduce(desc, src, coords, op, cache_hint=None, allow_overrun=False):
    name = RUNNING.op     # (``op`` is the reduction)
    fields = _fields_of(desc, name)
    if op not in TENSOR_REDUCE_TYPES or fields.data_type.name not in TENSOR_REDUCE_TYPES[op]:
        raise SimulatorError(f"numba_tma simulator: {name}: op {op!r} cannot reduce a "
                             f"{fields.data_type.name.lower()} map (PTX ISA; see numba_tma.{name})")
    dtype = "bfloat16" if fields.data_type == DataType.BFLOAT16 else np.dtype(_NUMPY[fields.data_type])
    _write_box(name, desc, src, coords,
               lambda f, old, new: combine(op, dtype, old, new).view(old.dtype), allow_overrun)


def _four_rows(op, desc, tile, col, rows, nbytes_role):
    fields = _fields_of(desc, op)
    if fields.mode != Mode.TILED or fields.rank != 2 or fields.box_dim[1] != 1:
        raise SimulatorError(f"numba_tma simulator: {op}: desc must be a tiled 2-D map whose box is one row")
    if len(rows) != 4:
        raise SimulatorError(f"numba_tma simulator: {op}: rows must have 4 entries")
    _check_tile(op, fields, tile, 4 * fields.transfer_bytes, nbytes_role)
    return fields


def gather4(desc, dst, col, rows, bar):
    op = RUNNING.op
    thread, state = enter()
    fields = _four_rows(op, desc, dst, col, rows, "dst")
    _check_coords(op, fields, (col, rows[0]))
    index = (np.array(rows)[:, None], col + np.arange(fields.box_dim[0])[None, :])
    raw = np.ascontiguousarray(_gather(_global_view(fields), fields, index, op)).reshape(-1).view(np.uint8)
    _issue_load(op, thread, state, dst, raw, fields, bar, None)


def scatter4(desc, src, col, rows, allow_overrun=False):
    """Four rows written like a store's (the 16-byte edge assumed as for ``tma.store``: the H200
    has no scatter4 to measure it on)."""
    op = RUNNING.op
    thread, state = enter()
    fields = _four_rows(op, desc, src, col, rows, "src")
    offsets = _smem_offsets(4 * fields.transfer_bytes, fields)
    memory.check_fenced(op, thread, src, offsets)
    state.stored(op, thread, src, offsets)
    _check_coords(op, fields, (col, 0), store=True)
    view = _global_view(fields, _store_reach(op, desc, fields, col, fields.box_dim[0], allow_overrun))
    width = fields.box_dim[0]
    box = _unplace(src, 4 * width * view.dtype.itemsize, fields).view(view.dtype).reshape(4, width)
    cols = col + np.arange(width)
    for r, values in zip(rows, box):
        if 0 <= r < view.shape[0]:
            keep = cols < view.shape[1]
            view[r, cols[keep]] = values[keep]


def prefetch(desc, coords, cache_hint=None):
    op = RUNNING.op
    _check_coords(op, _fields_of(desc, op), coords)


def prefetch_im2col(desc, coords, offsets, cache_hint=None):
    op = RUNNING.op
    if _fields_of(desc, op).mode != Mode.IM2COL:
        raise SimulatorError(f"numba_tma simulator: {op}: desc must be an im2col map")


def prefetch_descriptor(desc):
    _fields_of(desc, RUNNING.op)


def swizzled_index(desc, r, c):
    """The flat shared-memory element index of box element (r, c) under the map's swizzle."""
    fields = _decoded(desc.bytes if isinstance(desc, TensorMap) else memory.host(desc).tobytes(), RUNNING.op)
    size = _itemsize(fields)
    pitch = smem_row_bytes(fields.box_dim[0] * size, _swizzle_bytes(fields))
    return int(swizzled_offsets(r * pitch + c * size, _swizzle_bytes(fields)) // size)

