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
# the memory-model checker's marks (fence.proxy_async, read-before-refill, store-source and map_shared
# checks): NUMBA_TMA_SIM_CHECKER=0 turns them off (to measure their cost: benchmarks/bench_checker.py)
MARKS = _sched.CHECKER
_DYNAMIC = ("dynamic shared memory", 0)          # the allocation key of a block's dynamic buffer
_SEGMENT = (1 << 24) - 1


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
    remote = False           # reached through cluster.map_shared from another block

    def __array_finalize__(self, obj):
        if obj is not None:
            for attribute in ("variable", "place", "origin", "caller", "owner", "piece", "remote"):
                setattr(self, attribute, getattr(obj, attribute, getattr(self, attribute)))

    def __getitem__(self, index):
        value = _getitem(self, index)
        if not isinstance(value, np.ndarray):
            if _sched.IN_FLIGHT:
                check_read(self, index)
            running = _sched.RUNNING_THREAD
            if running is not None and running.released:
                check_released(running, self, index)
            owner = self.owner
            if MARKS and owner is not None:
                if self.remote:
                    check_peer_read(self, index)
                reads = self.__dict__.get("_reads")      # who read which byte when
                if reads is None:
                    reads = self.__dict__["_reads"] = _marks_view(self, owner.reads)
                thread = _sched.RUNNING_THREAD
                if reads is not False and thread is not None:    # not a read from outside the kernel
                    reads[index] = thread.mark
        return value

    def __setitem__(self, index, value):
        _setitem(self, index, value)
        owner = self.owner
        if MARKS and owner is not None:
            marks = self.__dict__.get("_marks")
            if marks is None:
                marks = self.__dict__["_marks"] = _marks_view(self, owner.marks)
            thread = _sched.RUNNING_THREAD
            if marks is not False and thread is not None:
                marks[index] = thread.mark      # written by the generic proxy: who, and when
            if owner.reading:
                check_store_source(self, index)


def _marks_view(array, store):
    """The marks of ``array``'s bytes in ``store`` (its block's write or read marks: an int64 per
    byte, the accessing thread's ``mark``, 0 where none), shaped ``array.shape + (itemsize,)``."""
    base = array.owner.shared.get(array.caller)
    if base is None or array.caller is None:
        return False
    marks = marks_of(base, store)
    offset = address(array) - address(base.base)
    if not 0 <= offset < base.base.size:         # a copy of a shared array (tile.copy(), tile * 2): not shared
        return False
    try:
        return np.ndarray(array.shape + (array.itemsize,), np.int64, buffer=marks, offset=8 * offset,
                          strides=tuple(8 * s for s in array.strides) + (8,))
    except (TypeError, ValueError):
        return False


def marks_of(base, store):
    """The marks of an allocation in ``store`` (one int64 per byte of its raw buffer), made on first use."""
    marks = store.get(base.caller)
    if marks is None:
        marks = store[base.caller] = np.zeros(base.base.size, np.int64)
    return marks


def _raw(array, store):
    """``(marks, offset of array's first byte in them)`` for a shared array, or None."""
    if not isinstance(array, SharedArray) or array.owner is None or array.caller is None:
        return None
    base = array.owner.shared.get(array.caller)
    if base is None:
        return None
    marks = marks_of(base, store)
    start = address(array) - address(base.base)
    return (marks, start) if 0 <= start < marks.size else None


def _region(array, offsets, store):
    """The marks of ``array``'s bytes at ``offsets`` (a byte count from 0, or byte offsets), and
    those offsets; None when ``array`` is not in shared memory."""
    found = _raw(array, store)
    if found is None:
        return None
    marks, start = found
    if isinstance(offsets, (int, np.integer)):
        return marks[start:start + int(offsets)], np.arange(min(int(offsets), marks.size - start))
    offsets = np.asarray(offsets)
    return marks[np.minimum(start + offsets, marks.size - 1)], offsets


def _decode(thread, marks):
    """Of nonzero marks: whether each was left in this cluster, by which thread (its slot), in which segment."""
    mine = (marks >> 40) == thread.block.cluster.serial
    return mine, np.where(mine, ((marks >> 24) & 0xFFFF) - 1, 0), marks & _SEGMENT


def unordered(thread, marks):
    """Which of ``marks`` (nonzero) are accesses of this cluster not ordered before ``thread``'s present."""
    mine, slot, segment = _decode(thread, marks)
    return mine & (segment > thread.block.cluster.clock[thread.slot][slot])


def unfenced(thread, marks, space):
    """Which of ``marks`` (generic writes, nonzero) are not ordered for an async-proxy op of
    ``thread`` in ``space`` ("shared" or "global"): ordered when the writer fenced
    (fence.proxy_async) after the write and ``thread`` synchronised with it after that fence, or
    when ``thread`` fenced after a barrier that ordered the write before it."""
    cluster = thread.block.cluster
    mine, slot, segment = _decode(thread, marks)
    ordered = ~mine
    snapshot = cluster.fenced[space].get(thread.slot)
    if snapshot is not None:
        ordered |= segment <= snapshot[slot]
    if cluster.fences[space]:
        fences = np.sort(np.array(cluster.fences[space], np.int64))
        at = np.searchsorted(fences, (slot + 1) << 24 | segment)     # the writer's first fence after the write
        found = fences[np.minimum(at, fences.size - 1)]
        ordered |= (at < fences.size) & (found >> 24 == slot + 1) & \
            ((found & _SEGMENT) <= cluster.clock[thread.slot][slot])
    return ~ordered


def _who(thread, marks, bad):
    """``(first bad index, how a message names the thread that left that mark)``."""
    first = int(np.flatnonzero(bad)[0])
    writer = thread.block.cluster.threads[int((marks[first] >> 24) & 0xFFFF) - 1]
    if writer is thread:
        return first, "this thread"
    return first, f"thread {writer.index}" if writer.block is thread.block else where(writer)


def check_fenced(op, thread, array, offsets, role="src"):
    """An async-proxy op of ``thread`` reads ``array`` at ``offsets`` (a byte count, or byte offsets):
    raise if a thread wrote one of those bytes with ordinary stores and no fence.proxy_async orders
    the write for this op."""
    found = _region(array, offsets, array.owner.marks) if MARKS and isinstance(array, SharedArray) else None
    if found is None:
        return
    marks, offsets = found
    hit = np.flatnonzero(marks)
    if not hit.size:
        return
    bad = unfenced(thread, marks[hit], "shared")
    if not bad.any():
        return
    first, by = _who(thread, marks[hit], bad)
    raise SimulatorError(
        f"numba_tma simulator: {where(thread)}: {op} reads {role} {name(array, address(array) + int(offsets[hit[first]]))}"
        f", which {by} wrote with ordinary stores (the generic proxy) and no fence.proxy_async() orders that write "
        f"before this {op}: the async proxy may read the old bytes. Missing step: fence.proxy_async() after the "
        f"writes (in each writing thread), then cuda.syncthreads(), then the {op} (or, after the "
        f"cuda.syncthreads(), fence.proxy_async() in the thread that issues the {op})")


def clear_marks(array, nbytes):
    """An async-proxy write of ``nbytes`` at ``array``: those bytes are no longer generic writes."""
    found = _raw(array, array.owner.marks) if MARKS else None
    if found is not None:
        marks, start = found
        marks[start:start + nbytes] = 0


class StoreSource:
    """The shared bytes an async store (shared -> global) may still read: from ``lo``, where ``mask``
    is set; until the issuing thread's wait_group_read covers its group."""

    def __init__(self, op, thread, src, offsets):
        self.op, self.thread, self.what = op, thread, name(src)
        offsets = np.arange(int(offsets)) if isinstance(offsets, (int, np.integer)) else np.asarray(offsets)
        self.lo = address(src)
        self.mask = np.zeros(int(offsets.max()) + 1 if offsets.size else 0, bool)
        self.mask[offsets] = True

    def covers(self, addresses) -> int | None:
        """The first of ``addresses`` (byte addresses) this store still reads, or None."""
        rel = addresses - self.lo
        inside = rel[(rel >= 0) & (rel < self.mask.size)]
        hit = inside[self.mask[inside]]
        return int(hit[0]) + self.lo if hit.size else None


def _byte_addresses(view) -> np.ndarray:
    """The addresses of the bytes of a numpy view."""
    view = np.asarray(view)
    first = address(view)
    if view.ndim == 0:
        return first + np.arange(view.itemsize)
    grids = np.indices(view.shape).reshape(view.ndim, -1)
    elements = first + (grids * np.array(view.strides)[:, None]).sum(axis=0)
    return (elements[:, None] + np.arange(view.itemsize)).reshape(-1)


def _overwritten(thread, what, array, addresses):
    """Raise if ``addresses`` (bytes of ``array`` that ``thread`` writes; ``what``: how) lie in the
    source of an async store of its block that may still read them."""
    for source in array.owner.reading:
        hit = source.covers(addresses)
        if hit is not None:
            issuer = "this thread" if source.thread is thread else where(source.thread)
            raise SimulatorError(
                f"numba_tma simulator: {where(thread)}: {what} {name(array, hit)}, which the "
                f"{source.op} issued by {issuer} may still read (the async proxy reads a store's source until the "
                "issuing thread's tma.wait_group_read covers it). Missing step: tma.commit_group() and "
                f"tma.wait_group_read(0) (or wait_group) in {'this' if source.thread is thread else 'that'} thread "
                "before the source is written again (then a barrier before other threads write it)")


def check_store_source(array, index):
    """A generic write of ``array[index]`` while async stores of its block may still read some of its bytes."""
    value = _getitem(array, index)
    try:
        addresses = _byte_addresses(value) if isinstance(value, np.ndarray) else \
            element_address(array, index) + np.arange(array.itemsize)
    except (TypeError, ValueError):
        return
    _overwritten(_sched.current(), "writes", array, addresses)


def check_overwrite(op, thread, array, nbytes):
    """``thread`` issues an async write (``op``) of ``nbytes`` at ``array`` (a shared array of any
    block of the cluster): raise if an async store may still read those bytes, or if a thread read
    them with no barrier ordering the read before this issue (the refill of a ring slot whose
    readers have not released it)."""
    if not MARKS or not isinstance(array, SharedArray) or array.owner is None:
        return
    if array.owner.reading:
        _overwritten(thread, f"{op} writes", array, address(array) + np.arange(nbytes))
    base = array.owner.shared.get(array.caller)
    if base is None:
        return
    found = array.owner.reads.get(array.caller)
    if found is None:
        return
    start = address(array) - address(base.base)
    region = found[start:start + nbytes]
    hit = np.flatnonzero(region)
    if not hit.size:
        return
    bad = unordered(thread, region[hit])
    if bad.any():
        first, by = _who(thread, region[hit], bad)
        raise SimulatorError(
            f"numba_tma simulator: {where(thread)}: {op} writes {name(array, address(array) + int(hit[first]))}, "
            f"which {by} read with no barrier ordering that read before this {op}: the copy may overwrite the "
            "bytes before they are read (a refill of a slot its readers have not released). Missing step: the "
            f"readers release the slot after their last read (mbarrier.arrive on its 'empty' barrier, which the "
            f"issuing thread waits for before the {op}; or cuda.syncthreads() between the reads and the {op})")


def check_peer_read(array, index):
    """A read through cluster.map_shared of another block's ``array[index]``: raise if a thread wrote
    it with no barrier ordering the write before this read."""
    thread = _sched.current()
    if array.owner is thread.block:
        return
    marks = array.__dict__.get("_marks")
    if marks is None:
        marks = array.__dict__["_marks"] = _marks_view(array, array.owner.marks)
    if marks is False:
        return
    values = np.asarray(marks[index]).reshape(-1)
    hit = np.flatnonzero(values)
    if not hit.size:
        return
    bad = unordered(thread, values[hit])
    if bad.any():
        _, by = _who(thread, values[hit], bad)
        raise SimulatorError(
            f"numba_tma simulator: {where(thread)} reads {name(array, element_address(array, index))} of block "
            f"{array.owner.index} through cluster.map_shared, which {by} wrote with no barrier ordering that write "
            "before this read: the read may see the old bytes. Missing step: cluster.sync() in every block after "
            "the writes, before reading another block's shared memory (or cluster.arrive() after the writes and "
            "cluster.wait() before the read)")


def mapped(array, block):
    """``array`` as it lies in ``block``, for the running thread's reads through cluster.map_shared."""
    view = peer_array(array, block)
    if view is not array:
        view.remote = True
    return view


# -- global memory: the generic stores of a launch's threads into device arrays --------------------

def global_stored(ary, index):
    """A kernel's store ``ary[index] = ...`` into a device array (numba_sim's hook; ``ary`` the
    numpy array behind it): marks the bytes, for the async-proxy reads of the launch."""
    thread = _sched.RUNNING_THREAD
    if thread is None:
        return
    launch = thread.block.launch
    if ary.base is None:                 # a kernel argument's own array: its marks' view kept for the launch
        cached = launch.global_views.get(id(ary))
        if cached is None or cached[0] is not ary:
            cached = launch.global_views[id(ary)] = (ary, _global_view(launch, ary))
        view = cached[1]
    else:
        view = _global_view(launch, ary)
    if view is not None:
        view[index] = thread.mark


def _global_view(launch, ary):
    """The marks of a device array's bytes, shaped ``ary.shape + (itemsize,)``; None for a record."""
    if ary.dtype.fields is not None or not ary.size:
        return None
    root = ary
    while isinstance(root.base, np.ndarray):
        root = root.base
    key = address(root)
    found = launch.global_marks.get(key)
    if found is None:
        found = launch.global_marks[key] = np.zeros(root.nbytes, np.int64)
    try:
        return np.ndarray(ary.shape + (ary.itemsize,), np.int64, buffer=found, offset=8 * (address(ary) - key),
                          strides=tuple(8 * s for s in ary.strides) + (8,))
    except (TypeError, ValueError):
        return None


def check_global_read(op, thread, addresses):
    """An async-proxy op of ``thread`` reads global memory at ``addresses`` (byte addresses): raise if
    a thread of the launch wrote one of them with ordinary stores and no fence.proxy_async("global")
    orders the write for this op."""
    launch = thread.block.launch
    for key, marks in launch.global_marks.items():
        inside = addresses[(addresses >= key) & (addresses < key + marks.size)]
        values = marks[inside - key]
        hit = np.flatnonzero(values)
        if not hit.size:
            continue
        bad = unfenced(thread, values[hit], "global")
        if bad.any():
            first, by = _who(thread, values[hit], bad)
            raise SimulatorError(
                f"numba_tma simulator: {where(thread)}: {op} reads {global_name(launch, int(inside[hit[first]]))}, "
                f"which {by} wrote in this launch with ordinary stores (the generic proxy) and no "
                f"fence.proxy_async(\"global\") orders that write before this {op}: the async proxy may read the "
                f"old bytes. Missing step: fence.proxy_async(\"global\") after the writes (in each writing thread), "
                f"then a barrier (cuda.syncthreads(), an mbarrier, cluster.sync()) before the {op}")


def global_name(launch, addr) -> str:
    """How messages name a byte of global memory: ``src[3, 4] (kernel argument src)``."""
    code = launch.fn.__code__
    for parameter, arg in zip(code.co_varnames[:code.co_argcount], launch.args):
        ary = numba_sim.host_array_or_none(arg)
        if ary is not None and ary.size and 0 <= addr - address(ary) < ary.nbytes and ary.flags.c_contiguous:
            index = np.unravel_index((addr - address(ary)) // ary.itemsize, ary.shape)
            return f"{parameter}[{', '.join(str(int(i)) for i in index)}] (kernel argument {parameter})"
    return "global memory"


# -- descriptors edited in memory: the tensormap proxy's release / acquire ------------------------
# (the tensormap family's edits record them, fence.proxy_tensormap_release / _acquire order them,
# the TMA ops check them at use)

class _Edit:
    """A descriptor a thread of the launch edited in memory (``op``): whether it was released for
    the tensormap proxy since, and the threads that acquired it after that."""

    def __init__(self, thread, op, released):
        self.thread, self.op, self.released, self.acquired = thread, op, released, set()


def tensormap_edited(thread, op, buf, released=False):
    """``thread`` edited the descriptor in ``buf`` (``op``; ``released``: the op also released it)."""
    thread.block.launch.tensormaps[address(host(buf))] = _Edit(thread, op, released)


def tensormap_release(thread):
    """fence.proxy_tensormap_release in ``thread``: its edits are released for the tensormap proxy."""
    for edit in thread.block.launch.tensormaps.values():
        if edit.thread is thread:
            edit.released = True


def tensormap_acquire(thread, desc):
    """fence.proxy_tensormap_acquire(desc) in ``thread``: a released edit of ``desc`` is visible to its TMA ops."""
    edit = thread.block.launch.tensormaps.get(address(host(desc)))
    if edit is not None and edit.released:
        edit.acquired.add(thread)


def check_tensormap_use(op, desc):
    """A TMA op reads the descriptor in memory ``desc``: raise if a thread of the launch edited it
    and the edit was not released, or this thread did not acquire it after the release."""
    thread = _sched.current()
    addr = address(host(desc))
    edit = thread.block.launch.tensormaps.get(addr)
    if edit is None or thread in edit.acquired:
        return
    by = "this thread" if edit.thread is thread else where(edit.thread)
    what = name(desc) if isinstance(desc, SharedArray) else global_name(thread.block.launch, addr)
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


def check_released(thread, array, index):
    """Raise if ``array[index]`` lies in shared bytes ``thread`` gave back (``thread.released``:
    ``(lo, hi, why, owner)``, a pipeline stage it released and has not waited for again)."""
    try:
        addr = element_address(array, index)
    except (TypeError, ValueError):
        return
    for lo, hi, why, _ in thread.released:
        if lo <= addr < hi:
            raise SimulatorError(f"numba_tma simulator: {where(thread)} reads {name(array, addr)}: {why}")


def byte_view(array) -> np.ndarray:
    """The bytes of a contiguous array, writable, as plain numpy (no read checks)."""
    return np.asarray(array).reshape(-1).view(np.uint8)


def host(array) -> np.ndarray:
    """The plain numpy array behind a simulator device array (inside or outside a kernel) or a
    shared array: the same memory."""
    return np.asarray(numba_sim.host_array(array))
