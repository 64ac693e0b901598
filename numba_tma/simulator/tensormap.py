"""``numba_tma.tensormap`` under the simulator: descriptor edits on the 128 bytes themselves,
field by field in the layout :mod:`numba_tma.descriptors.layout` documents (values as the PTX
``tensormap.replace`` takes them: sizes in elements, strides in bytes, the rank minus one)."""

from __future__ import annotations

import numpy as np

from ..descriptors import layout
from ..descriptors.tensor_map import TensorMap
from . import memory
from .state import RUNNING, SimulatorError, enter

F = layout.FIELDS     # (bit offset, width) of each field


def _buffer(op, buf):
    data = memory.byte_view(memory.host(buf))
    misaligned = isinstance(buf, memory.SharedArray) and memory.address(buf) % 128
    if data.size < layout.NUM_BYTES or misaligned:
        raise SimulatorError(f"numba_tma simulator: {op}: buf must hold 128 bytes (a shared one 128-byte aligned: "
                             f"alignment=128); got {data.size} bytes, {memory.name(buf)}")
    return data[:layout.NUM_BYTES]


def _edit(buf, field, value):
    """Store ``value`` in ``field`` = (bit offset, width) of the descriptor in ``buf``."""
    thread, _ = enter()
    data = _buffer(RUNNING.op, buf)
    memory.tensormap_edited(thread, RUNNING.op, buf)
    offset, width = field
    mask = (1 << width) - 1
    word = int.from_bytes(data.tobytes(), "little")
    word = (word & ~(mask << offset)) | ((int(value) & mask) << offset)
    data[:] = np.frombuffer(word.to_bytes(layout.NUM_BYTES, "little"), np.uint8)


def _entry(name, i):
    first, step, width, count = layout.ARRAYS[name]
    if not 0 <= i < count:
        raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: index {i} must be in [0, {count - 1}]")
    return first + i * step, width


def copy(buf, desc):
    thread, _ = enter()
    memory.tensormap_edited(thread, RUNNING.op, buf)
    raw = desc.bytes if isinstance(desc, TensorMap) else memory.byte_view(memory.host(desc))[:layout.NUM_BYTES].tobytes()
    _buffer(RUNNING.op, buf)[:] = np.frombuffer(raw, np.uint8)


def cp_fenceproxy(dst, src, scope="gpu"):
    thread, _ = enter()
    op = RUNNING.op
    memory.tensormap_edited(thread, op, dst, released=True)
    _buffer(op, dst)[:] = _buffer(op, src)


def replace_global_stride(buf, i, value):
    if int(value) % 16:
        raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: value={value} must be a multiple of 16 bytes")
    _edit(buf, _entry("stride_lo", i), int(value) >> 4)
    _edit(buf, _entry("stride_hi", i), int(value) >> 36)


def replace_global_address(buf, value):
    _edit(buf, F["global_address"], value)


def replace_rank(buf, value):
    _edit(buf, F["rank_m1"], value)


def replace_box_dim(buf, i, value):
    _edit(buf, _entry("box_m1", i), value - 1)


def replace_global_dim(buf, i, value):
    _edit(buf, _entry("dim_m1", i), value - 1)


def replace_element_stride(buf, i, value):
    _edit(buf, _entry("estride_m1", i), value - 1)


def replace_elemtype(buf, value):
    _edit(buf, F["type_code"], value)


def replace_interleave(buf, value):
    _edit(buf, F["interleave"], value)


def replace_swizzle(buf, value):
    _edit(buf, F["swizzle"], value)


def replace_fill_mode(buf, value):
    _edit(buf, F["oob_fill"], value)

