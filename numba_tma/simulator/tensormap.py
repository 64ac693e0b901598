"""``numba_tma.tensormap`` under the simulator: descriptor edits on the 128 bytes themselves,
field by field in the layout :mod:`numba_tma.descriptors.layout` documents (values as the PTX
``tensormap.replace`` takes them: sizes in elements, strides in bytes, the rank minus one)."""

from __future__ import annotations

import numpy as np

from ..descriptors import layout
from ..descriptors.tensor_map import TensorMap
from . import memory
from . import scheduler as _sched
from .state import SimulatorError, enter, where


def _buffer(op, buf):
    data = memory.byte_view(memory.host(buf))
    misaligned = isinstance(buf, memory.SharedArray) and memory.address(buf) % 128
    if data.size < layout.NUM_BYTES or misaligned:
        raise SimulatorError(f"numba_tma simulator: {op}: buf must hold 128 bytes (a shared one 128-byte aligned: "
                             f"alignment=128); got {data.size} bytes, {memory.name(buf)}")
    return data[:layout.NUM_BYTES]


class _Edit:
    """A descriptor a thread of the launch edited in memory (``op``): whether it was released for
    the tensormap proxy since, and the threads that acquired it after that."""

    def __init__(self, thread, op, released):
        self.thread, self.op, self.released, self.acquired = thread, op, released, set()


def _edited(thread, op, buf, released=False):
    thread.block.launch.tensormaps[memory.address(memory.host(buf))] = _Edit(thread, op, released)


def release(thread):
    """fence.proxy_tensormap_release in ``thread``: its edits are released for the tensormap proxy."""
    for edit in thread.block.launch.tensormaps.values():
        if edit.thread is thread:
            edit.released = True


def acquire(thread, desc):
    """fence.proxy_tensormap_acquire(desc) in ``thread``: a released edit of ``desc`` is visible to its TMA ops."""
    edit = thread.block.launch.tensormaps.get(memory.address(memory.host(desc)))
    if edit is not None and edit.released:
        edit.acquired.add(thread)


def check_use(op, desc):
    """A TMA op reads the descriptor in memory ``desc``: raise if a thread of the launch edited it
    and the edit was not released, or this thread did not acquire it after the release."""
    thread = _sched.current()
    addr = memory.address(memory.host(desc))
    edit = thread.block.launch.tensormaps.get(addr)
    if edit is None or thread in edit.acquired:
        return
    by = "this thread" if edit.thread is thread else where(edit.thread)
    what = memory.name(desc) if isinstance(desc, memory.SharedArray) else memory.global_name(thread.block.launch, addr)
    if not edit.released:
        step = (f"fence.proxy_tensormap_release() in {'this' if edit.thread is thread else 'that'} thread after its "
                "edits (or tensormap.cp_fenceproxy, which copies and releases), then "
                f"fence.proxy_tensormap_acquire(desc) in this thread before the {op}")
        state = "and did not release it"
    else:
        step = f"fence.proxy_tensormap_acquire(desc) in this thread after the release, before the {op}"
        state = "and released it, but this thread did not acquire it since"
    raise SimulatorError(
        f"numba_tma simulator: {where(thread)}: {op} uses the descriptor {what}, which {by} edited in memory "
        f"({edit.op}) {state}: the tensormap proxy may read the old descriptor. Missing step: {step}")


def _edit(op, buf, field, value):
    """Store ``value`` in ``field`` = (bit offset, width) of the descriptor in ``buf``."""
    thread, _ = enter()
    data = _buffer(op, buf)
    _edited(thread, op, buf)
    offset, width = field
    mask = (1 << width) - 1
    word = int.from_bytes(data.tobytes(), "little")
    word = (word & ~(mask << offset)) | ((int(value) & mask) << offset)
    data[:] = np.frombuffer(word.to_bytes(layout.NUM_BYTES, "little"), np.uint8)


def _entry(name, i):
    first, step, width, count = layout.ARRAYS[name]
    if not 0 <= i < count:
        raise SimulatorError(f"numba_tma simulator: tensormap: index {i} must be in [0, {count - 1}]")
    return first + i * step, width


def copy(buf, desc):
    thread, _ = enter()
    _edited(thread, "tensormap.copy", buf)
    raw = desc.bytes if isinstance(desc, TensorMap) else memory.byte_view(memory.host(desc))[:layout.NUM_BYTES].tobytes()
    _buffer("tensormap.copy", buf)[:] = np.frombuffer(raw, np.uint8)


def replace_global_stride(buf, i, value):
    if int(value) % 16:
        raise SimulatorError(f"numba_tma simulator: tensormap.replace_global_stride: value={value} must be a "
                             "multiple of 16 bytes")
    _edit("tensormap.replace_global_stride", buf, _entry("stride_lo", i), int(value) >> 4)
    _edit("tensormap.replace_global_stride", buf, _entry("stride_hi", i), int(value) >> 36)


def cp_fenceproxy(dst, src, scope="gpu"):
    thread, _ = enter()
    _edited(thread, "tensormap.cp_fenceproxy", dst, released=True)
    _buffer("tensormap.cp_fenceproxy", dst)[:] = _buffer("tensormap.cp_fenceproxy", src)


F = layout.FIELDS
OPS = dict(
    copy=copy, cp_fenceproxy=cp_fenceproxy, replace_global_stride=replace_global_stride,
    replace_global_address=lambda buf, value: _edit("tensormap.replace_global_address", buf, F["global_address"], value),
    replace_rank=lambda buf, value: _edit("tensormap.replace_rank", buf, F["rank_m1"], value),
    replace_box_dim=lambda buf, i, value: _edit("tensormap.replace_box_dim", buf, _entry("box_m1", i), value - 1),
    replace_global_dim=lambda buf, i, value: _edit("tensormap.replace_global_dim", buf, _entry("dim_m1", i), value - 1),
    replace_element_stride=lambda buf, i, value: _edit("tensormap.replace_element_stride", buf,
                                                       _entry("estride_m1", i), value - 1),
    replace_elemtype=lambda buf, value: _edit("tensormap.replace_elemtype", buf, F["type_code"], value),
    replace_interleave=lambda buf, value: _edit("tensormap.replace_interleave", buf, F["interleave"], value),
    replace_swizzle=lambda buf, value: _edit("tensormap.replace_swizzle", buf, F["swizzle"], value),
    replace_fill_mode=lambda buf, value: _edit("tensormap.replace_fill_mode", buf, F["oob_fill"], value),
)
