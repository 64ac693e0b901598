"""Simulated shared memory: arrays that know where they were allocated, sit at exactly the
alignment the GPU guarantees them, and refuse a read of bytes an async copy has not delivered.

**Placement.**  On the GPU a shared array is aligned to its dtype (or to ``alignment=``) and to
nothing more that can be relied on; the simulator places each array at an address that is a
multiple of that alignment but *not* of twice it, so a TMA tile that is aligned only by luck on
the GPU is reported here (``alignment=128``; 1024 for 128B swizzle).  Dynamic shared memory
(``cuda.shared.array(0, ...)``) is one buffer per block at its declared alignment (ptxas honours
``.align`` on the extern declaration) and at least 16 bytes.  Each block has its own
arrays (at the same addresses modulo 8 KiB, so a layout computed from an address is the same in
every block, as it is on the GPU).

**Allocation.**  :func:`shared_array` is ``cuda.shared.array`` in a kernel (numba-cuda's is
replaced: :mod:`.numba_sim`): one array per block and source line, made when the block first
reaches that line (numba-cuda's keeps one per line for every block); a block's arrays go with
the block.  :func:`peer_array` finds the same array in another block of the cluster
(distributed shared memory).
"""

from __future__ import annotations

import linecache
import os
import sys

import numpy as np

from .. import launch_limits
from . import numba_sim
from . import scheduler as _sched
from .scheduler import SimulatorError, where

_MAX_ALIGNMENT = 1 << 12
# the memory-model checker's generic-write marks (fence.proxy_async checks): NUMBA_TMA_SIM_CHECKER=0
# turns them off (to measure their cost: benchmarks/bench_simulator.py --examples)
MARKS = os.environ.get("NUMBA_TMA_SIM_CHECKER", "1") != "0"
_DYNAMIC = ("dynamic shared memory", 0)          # the allocation key of a block's dynamic buffer


_getitem = np.ndarray.__getitem__
_setitem = np.ndarray.__setitem__


class SharedArray(np.ndarray):
    """A numpy array in simulated shared memory; views keep what their allocation knows."""

    variable = "shared"      # the name it was assigned to
    place = "?"              # where it was allocated (file:line)
    origin = 0               # the address of its first element
    caller = None            # the allocation's key: (file, line) of its cuda.shared.array
    owner = None             # the block it belongs to (a scheduler.Block)
    piece = None             # a SharedMemoryPlan piece: (its name, its address, its offset in the plan)

    def __array_finalize__(self, obj):
        if obj is not None:
            for attribute in ("variable", "place", "origin", "caller", "owner", "piece"):
                setattr(self, attribute, getattr(obj, attribute, getattr(self, attribute)))

    def __getitem__(self, index):
        value = _getitem(self, index)
        if _sched.IN_FLIGHT and not isinstance(value, np.ndarray):
            check_read(self, index)
        return value

    def __setitem__(self, index, value):
        _setitem(self, index, value)
        if MARKS and self.owner is not None:
            marks = self.__dict__.get("_marks")
            if marks is None:
                marks = self.__dict__["_marks"] = _marks_view(self)
            if marks is not False:
                thread = _sched.current()
                marks[index] = thread.thread_id + 1      # written by the generic proxy, not fenced yet


def _marks_view(array):
    """The generic-write marks of ``array``'s bytes (a uint16 per byte: the writing thread's id + 1,
    0 where no thread wrote since the last fence.proxy_async), shaped ``array.shape + (itemsize,)``."""
    base = array.owner.shared.get(array.caller)
    if base is None or array.caller is None:
        return False
    marks = generic_marks(base)
    offset = address(array) - address(base.base)
    if not 0 <= offset < base.base.size:         # a copy of a shared array (tile.copy(), tile * 2): not shared
        return False
    try:
        return np.ndarray(array.shape + (array.itemsize,), np.uint16, buffer=marks, offset=2 * offset,
                          strides=tuple(2 * s for s in array.strides) + (2,))
    except (TypeError, ValueError):
        return False


def generic_marks(base):
    """The mark buffer of an allocation (its raw buffer's bytes, one uint16 each), made on first use."""
    marks = base.owner.marks.get(base.caller)
    if marks is None:
        marks = base.owner.marks[base.caller] = np.zeros(base.base.size, np.uint16)
    return marks


def _raw_marks(array):
    """``(marks, offset of array's first byte in them)`` for a shared array, or None."""
    if not isinstance(array, SharedArray) or array.owner is None or array.caller is None:
        return None
    base = array.owner.shared.get(array.caller)
    if base is None:
        return None
    return generic_marks(base), address(array) - address(base.base)


def unfenced(array, offsets):
    """The first byte offset (into ``array``) among ``offsets`` (an int count from 0, or an index
    array) that a thread wrote with no fence.proxy_async since, as ``(offset, writer thread id)``;
    None when every byte is ordered for the async proxy."""
    found = _raw_marks(array)
    if found is None:
        return None
    marks, start = found
    if not 0 <= start < marks.size:
        return None
    if isinstance(offsets, (int, np.integer)):
        region = marks[start:start + int(offsets)]
        hit = np.flatnonzero(region)
        return None if not hit.size else (int(hit[0]), int(region[hit[0]]) - 1)
    region = marks[np.minimum(start + np.asarray(offsets), marks.size - 1)]
    hit = np.flatnonzero(region)
    return None if not hit.size else (int(np.asarray(offsets)[hit[0]]), int(region[hit[0]]) - 1)


def clear_marks(array, nbytes):
    """An async-proxy write of ``nbytes`` at ``array``: those bytes are no longer generic writes."""
    found = _raw_marks(array)
    if found is not None:
        marks, start = found
        if 0 <= start < marks.size:
            marks[start:start + nbytes] = 0


def check_fenced(op, thread, array, offsets, role="src"):
    """An async-proxy op of ``thread`` reads ``array`` at ``offsets`` (a byte count, or byte offsets):
    raise if a thread wrote one of those bytes with ordinary stores and no fence.proxy_async since."""
    found = unfenced(array, offsets)
    if found is None:
        return
    offset, writer = found
    who = array.owner.threads[writer] if 0 <= writer < len(array.owner.threads) else None
    by = f"thread {who.index}" if who is not None else "a thread"
    if who is thread:
        by = "this thread"
    raise SimulatorError(
        f"numba_tma simulator: {where(thread)}: {op} reads {role} {name(array, address(array) + offset)}, which "
        f"{by} wrote with ordinary stores (the generic proxy) and no fence.proxy_async() since: the async proxy may "
        f"read the old bytes. Missing step: fence.proxy_async() after the writes (in each writing thread), then "
        f"cuda.syncthreads(), then the {op}")


def fence_generic(block):
    """fence.proxy_async in ``block``: every generic write so far is ordered for the async proxy."""
    for marks in block.marks.values():
        marks[:] = 0


def address(array) -> int:
    """The address of element 0 of a numpy-backed array (a shared array or a host array)."""
    return np.asarray(array).__array_interface__["data"][0]


def element_address(array, index) -> int:
    """The address of ``array[index]`` for an integer index tuple (negative entries wrap)."""
    index = index if isinstance(index, tuple) else (index,)
    base = address(array)
    for i, n, stride in zip(index, array.shape, array.strides):
        base += (int(i) + n if int(i) < 0 else int(i)) * stride
    return base


def name(array, addr=None) -> str:
    """How messages name a shared array (or one of its elements): ``bars[1] (k.py:12: bars = ...)``."""
    if not isinstance(array, SharedArray):
        return "an array outside shared memory"
    addr = address(array) if addr is None else addr
    if array.piece is not None:
        piece, start, offset = array.piece
        if addr >= start:
            return (f"{piece}[{(addr - start) // array.itemsize}] (SharedMemoryPlan piece {piece!r}, at byte "
                    f"{offset} of the plan's layout)")
    return f"{array.variable}[{(addr - array.origin) // array.itemsize}] (allocated at {array.place})"


def _variable(caller) -> str:
    """``tile`` from the source line ``tile = cuda.shared.array(...)``."""
    text = linecache.getline(*caller).strip()
    variable = text.split("=", 1)[0].strip() if "=" in text else ""
    return variable if variable.isidentifier() else "shared"


def alignment_of(dtype, alignment) -> int:
    """The alignment a shared array is guaranteed: ``alignment``, else the dtype's size rounded up
    to a power of two (as numba-cuda aligns it)."""
    align = alignment or 1 << (dtype.itemsize - 1).bit_length()
    if align & (align - 1) or not 0 < align <= _MAX_ALIGNMENT:
        raise SimulatorError(f"numba_tma simulator: cuda.shared.array(alignment={alignment}) must be a power of "
                             f"two up to {_MAX_ALIGNMENT}")
    return align


def allocate(shape, dtype, alignment, caller, owner) -> SharedArray:
    """A shared array of ``shape`` and ``dtype`` aligned to :func:`alignment_of` and to no more,
    allocated at ``caller`` (file, line; line 0: the launch's dynamic shared memory) for the block
    ``owner``."""
    align = alignment_of(dtype, alignment)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.zeros(nbytes + 2 * _MAX_ALIGNMENT, np.uint8)
    start = raw.__array_interface__["data"][0]
    # a multiple of align, not of 2 * align, and the same modulo 2 * _MAX_ALIGNMENT in every block,
    # as the GPU's blocks share one shared-memory layout (a start rounded up at run time, as
    # SharedMemoryPlan's carver does, then lands at the same offset in every block)
    offset = (align - start) % (2 * _MAX_ALIGNMENT)
    array = np.ndarray.__new__(SharedArray, shape, dtype, buffer=raw, offset=offset)
    if caller[1]:
        array.variable, array.place = _variable(caller), f"{os.path.basename(caller[0])}:{caller[1]}"
    else:
        array.variable, array.place = "dynamic_shared", "launch"
    array.origin, array.caller, array.owner = start + offset, caller, owner
    return array


# -- allocation ----------------------------------------------------------------------------------

def shared_array(shape, dtype, alignment=None, frame=None) -> SharedArray:
    """``cuda.shared.array(shape, dtype, alignment=...)`` called at ``frame`` (the caller's, by
    default): the running block's array for that source line, allocated on its first call;
    ``shape=0``: the block's dynamic shared memory as ``dtype``."""
    frame = frame or sys._getframe(1)
    block = _sched.current().block
    if shape == 0:
        return _dynamic(block, np.dtype(dtype), alignment, frame)
    key = (frame.f_code.co_filename, frame.f_lineno)
    array = block.shared.get(key)
    if array is None:
        array = _allocate_in(block, key, (shape, np.dtype(dtype), alignment))
    return array


def per_block(key, make):
    """``make()``'s value, made once per block (the first thread of the running block to ask)."""
    shared = _sched.current().block.shared
    value = shared.get(key)
    if value is None:
        value = shared[key] = make()
    return value


def _dynamic(block, dtype, alignment, frame):
    """The block's dynamic shared memory as ``dtype``, placed when first declared in the launch at
    that declaration's alignment (at least 16 bytes: the GPU's least for dynamic shared memory)."""
    launch = block.launch
    align = max(16, alignment_of(dtype, alignment))
    if launch.dynamic_placed is None:
        launch.dynamic_placed = (align, f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}")
    placed, first = launch.dynamic_placed
    if align > placed:
        raise SimulatorError(f"numba_tma simulator: cuda.shared.array(0, ..., alignment={align}): dynamic shared "
                             f"memory was placed when first declared ({first}), {placed}-byte aligned: declare its "
                             "largest alignment first")
    buffer = block.shared.get(_DYNAMIC)
    if buffer is None:
        buffer = _allocate_in(block, _DYNAMIC, ((launch.dynamic_bytes,), np.dtype(np.uint8), placed))
    return buffer[:buffer.size // dtype.itemsize * dtype.itemsize].view(dtype)


def _allocate_in(block, caller, args):
    """The array allocated at ``caller`` in ``block``, with ``args`` (shape, dtype, alignment);
    the launch keeps the first declaration's, for blocks that have not reached the line (and
    checks the kernel's static shared memory with each new one)."""
    layout = block.launch.shared_layout
    if caller not in layout:
        if caller != _DYNAMIC:
            _check_static(block.launch, layout, caller, args)
        layout[caller] = args
    array = block.shared[caller] = allocate(*args, caller, block)
    return array


def _check_static(launch, layout, caller, args):
    """The kernel's static shared arrays with the one at ``caller`` added, against the H200's
    limits: at most 48 KB (ptxas refuses more: a SimulatorError), and with the launch's dynamic
    shared memory at most the opt-in maximum (a LaunchError, as the GPU's launch gives)."""
    static = sum(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                 for key, (shape, dtype, _) in list(layout.items()) + [(caller, args)] if key != _DYNAMIC)
    try:
        launch_limits.check_static(static, launch_limits.H200)
    except launch_limits.LaunchError as refusal:
        shape, dtype, _ = args
        raise SimulatorError(f"numba_tma simulator: cuda.shared.array({shape}, {dtype}) at "
                             f"{os.path.basename(caller[0])}:{caller[1]}: {refusal}") from None
    launch_limits.check((1, 1, 1), (1, 1, 1), launch.dynamic_bytes, launch_limits.H200, static=static)


def peer_array(array, block):
    """``array`` (a shared array or a view of one) as it lies in ``block`` (of the same cluster):
    the same allocation, the same offset (allocated there now if that block has not reached it)."""
    if array.owner is block:
        return array
    base = block.shared.get(array.caller)
    if base is None:
        base = _allocate_in(block, array.caller, block.launch.shared_layout[array.caller])
    raw = base.base
    offset = base.origin - address(raw) + (address(array) - array.origin)
    view = np.ndarray.__new__(SharedArray, array.shape, array.dtype, buffer=raw, offset=offset,
                              strides=array.strides)
    view.variable, view.place, view.origin, view.caller, view.owner = base.variable, base.place, base.origin, \
        base.caller, block
    if array.piece is not None:
        view.piece = (array.piece[0], array.piece[1] - address(array) + address(view), array.piece[2])
    return view


def check_read(array, index):
    """Raise if ``array[index]`` (a scalar read) lies in bytes a copy in flight into the running
    block will write."""
    thread = _sched.current()
    pending = thread.block.pending
    if not pending:
        return
    try:
        addr = element_address(array, index)
    except (TypeError, ValueError):
        return
    for copy in pending:
        if copy.dst is not None and copy.dst[0] <= addr < copy.dst[1]:
            raise SimulatorError(
                f"numba_tma simulator: {where(thread)} reads {name(array, addr)} while the {copy.op} issued by "
                f"{copy.issuer} that writes it is still in flight: wait for it (mbarrier.wait on its barrier, or "
                "cp_async.wait_group) before reading")


def byte_view(array) -> np.ndarray:
    """The bytes of a contiguous array, writable, as plain numpy (no read checks)."""
    return np.asarray(array).reshape(-1).view(np.uint8)


def host(array) -> np.ndarray:
    """The plain numpy array behind a simulator device array (inside or outside a kernel) or a
    shared array: the same memory."""
    return np.asarray(numba_sim.host_array(array))
