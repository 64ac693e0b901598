"""``numba_tma.bulk`` and ``numba_tma.cp_async`` under the simulator.

Bulk loads and cp.async copies are in flight until delivered (see :mod:`.state`); shared ->
global copies (bulk stores and reductions, TMA stores) read their source when issued, the
earliest time the hardware may, so the bulk async-group waits have nothing left to wait for.
cp.async groups are per thread: ``wait_group(n)`` delivers this thread's oldest groups until at
most ``n`` are pending.
"""

from __future__ import annotations

import numpy as np

from ..reductions import BULK_REDUCE_TYPES
from . import memory
from .mbarrier import _arrive, barrier, deliver_later, targets
from .state import Copy, SimulatorError, enter, peer
from .tensor import combine

_PTX = {"uint32": "u32", "int32": "s32", "uint64": "u64", "int64": "s64", "float32": "f32", "float64": "f64",
        "float16": "f16"}


def _check(op, array, role, nbytes, align, shared):
    if shared and not isinstance(array, memory.SharedArray):
        raise SimulatorError(f"numba_tma simulator: {op}: {role} must be a shared array (cuda.shared.array); got "
                             f"{memory.name(array)}")
    if not shared and isinstance(array, memory.SharedArray):
        raise SimulatorError(f"numba_tma simulator: {op}: {role} must be in global memory; got {memory.name(array)}")
    addr = memory.address(memory.host(array))
    if addr % align:
        raise SimulatorError(f"numba_tma simulator: {op}: {role} {memory.name(array)} is not {align}-byte aligned")
    if memory.host(array).nbytes < nbytes:
        raise SimulatorError(f"numba_tma simulator: {op}: {role} holds {memory.host(array).nbytes} bytes, fewer than "
                             f"nbytes={nbytes}")


def _bulk_checks(op, dst, src, nbytes, load):
    _check(op, dst, "dst", nbytes, 16, shared=load)
    _check(op, src, "src", nbytes, 16, shared=not load)


def bulk_load(dst, src, nbytes, bar, cache_hint=None, multicast=None):
    op = "bulk.load"
    thread, state = enter()
    _bulk_checks(op, dst, src, nbytes, load=True)
    data = memory.byte_view(memory.host(src))[:nbytes].copy()

    def write(view):
        memory.byte_view(view)[:nbytes] = data

    deliver_later(op, thread, targets(op, thread, state, multicast), dst, bar, nbytes, write)


def bulk_store(dst, src, nbytes, cache_hint=None):
    thread, state = enter()
    _bulk_checks("bulk.store", dst, src, nbytes, load=False)
    memory.check_fenced("bulk.store", thread, src, nbytes)
    state.stored("bulk.store", thread, src)
    memory.byte_view(memory.host(dst))[:nbytes] = memory.byte_view(src)[:nbytes]


def bulk_store_bytemask(dst, src, nbytes, mask, cache_hint=None):
    thread, state = enter()
    _bulk_checks("bulk.store_bytemask", dst, src, nbytes, load=False)
    memory.check_fenced("bulk.store_bytemask", thread, src, nbytes)
    state.stored("bulk.store_bytemask", thread, src)
    keep = np.tile(((int(mask) >> np.arange(16)) & 1).astype(bool), nbytes // 16)
    target = memory.byte_view(memory.host(dst))[:nbytes]
    target[keep] = memory.byte_view(src)[:nbytes][keep]


def bulk_reduce(dst, src, nbytes, op, cache_hint=None):
    thread, state = enter()
    _bulk_checks("bulk.reduce", dst, src, nbytes, load=False)
    memory.check_fenced("bulk.reduce", thread, src, nbytes)
    state.stored("bulk.reduce", thread, src)
    ptx = _PTX.get(np.dtype(src.dtype).name)
    if op not in BULK_REDUCE_TYPES or ptx not in BULK_REDUCE_TYPES[op]:
        raise SimulatorError(f"numba_tma simulator: bulk.reduce: op {op!r} does not take {src.dtype} elements "
                             f"(PTX ISA; see numba_tma.bulk.reduce)")
    target = memory.byte_view(memory.host(dst))[:nbytes]
    target[:] = combine(op, np.dtype(src.dtype), target.copy(), memory.byte_view(src)[:nbytes].copy()).view(np.uint8)


def bulk_prefetch(src, nbytes, cache_hint=None):
    pass        # an L2 hint: nothing to simulate (its size rule is the declaration's)


# Shared -> global copies complete when issued here: the bulk async-groups have nothing to wait for.

def bulk_commit_group():
    thread, state = enter()
    mine = state.stores.get(thread)
    if mine is not None and mine[0]:
        mine[1].append(mine[0])
        mine[0] = []


def bulk_wait_group(n):
    thread, state = enter()
    mine = state.stores.get(thread)
    if mine is not None and len(mine[1]) > n:     # the data is written at issue; the exit check counts groups
        del mine[1][:len(mine[1]) - n]


def bulk_wait_group_read(n):
    bulk_wait_group(n)


BULK_OPS = dict(load=bulk_load, store=bulk_store, store_bytemask=bulk_store_bytemask, reduce=bulk_reduce,
                prefetch=bulk_prefetch, commit_group=bulk_commit_group, wait_group=bulk_wait_group,
                wait_group_read=bulk_wait_group_read)


# -- dsmem: into the shared memory of a block of the cluster (rank cta_rank) --------------------------

def _deliver_later(op, dst, data, bar, cta_rank, combine_with=None):
    """An async write of ``data`` (bytes) at ``dst``'s element 0 in block ``cta_rank``, completing
    on ``bar`` there, later."""
    thread, _ = enter()
    if not isinstance(dst, memory.SharedArray):
        raise SimulatorError(f"numba_tma simulator: {op}: dst must be a shared array; got {memory.name(dst)}")
    nbytes = len(data)

    def write(view):
        target = memory.byte_view(view)[:nbytes]
        target[:] = data if combine_with is None else combine_with(target.copy(), data)

    deliver_later(op, thread, [peer(op, thread, cta_rank)], dst, bar, nbytes, write)


def _values(dst, value):
    values = value if isinstance(value, tuple) else (value,)
    return np.array(values).astype(dst.dtype).view(np.uint8)


def dsmem_store_async(dst, value, bar, cta_rank):
    _deliver_later("dsmem.store_async", dst, _values(dst, value), bar, cta_rank)


def dsmem_reduce_async(dst, value, bar, cta_rank, op):
    dtype = np.dtype(dst.dtype)
    _deliver_later("dsmem.reduce_async", dst, _values(dst, value), bar, cta_rank,
                   lambda old, new: combine(op, dtype, old, new).view(np.uint8))


def dsmem_copy_async(dst, src, nbytes, bar, cta_rank):
    memory.check_fenced("dsmem.copy_async", enter()[0], src, nbytes)
    _deliver_later("dsmem.copy_async", dst, memory.byte_view(src)[:nbytes].copy(), bar, cta_rank)


def dsmem_reduce_copy_async(dst, src, nbytes, bar, cta_rank, op):
    memory.check_fenced("dsmem.reduce_copy_async", enter()[0], src, nbytes)
    dtype = np.dtype(src.dtype)
    _deliver_later("dsmem.reduce_copy_async", dst, memory.byte_view(src)[:nbytes].copy(), bar, cta_rank,
                   lambda old, new: combine(op, dtype, old, new).view(np.uint8))


DSMEM_OPS = dict(store_async=dsmem_store_async, reduce_async=dsmem_reduce_async, copy_async=dsmem_copy_async,
                 reduce_copy_async=dsmem_reduce_copy_async)


# -- cp.async ------------------------------------------------------------------------------------

class _CpAsync:
    """A thread's cp.async copies in flight: ``groups`` (committed, oldest first) and the open one."""

    def __init__(self):
        self.groups, self.open = [], []


def _mine(state, thread):
    return state.gates.setdefault(("cp.async", thread), _CpAsync())


def cp_async_load(dst, src, nbytes, src_nbytes=None, cache="ca"):
    op = "cp_async.load"
    thread, state = enter()
    if nbytes not in (4, 8, 16) or (cache == "cg" and nbytes != 16):
        raise SimulatorError(f"numba_tma simulator: {op}: nbytes={nbytes} must be 4, 8 or 16 (16 with cache='cg')")
    _check(op, dst, "dst", nbytes, nbytes, shared=True)
    _check(op, src, "src", src_nbytes if src_nbytes is not None else nbytes, nbytes, shared=False)
    n = nbytes if src_nbytes is None else int(src_nbytes)
    data = np.zeros(nbytes, np.uint8)
    data[:n] = memory.byte_view(memory.host(src))[:n]
    start = memory.address(dst)
    copy = Copy(op, thread, lambda: memory.byte_view(dst)[:nbytes].__setitem__(slice(None), data),
                (start, start + nbytes))
    _mine(state, thread).open.append(copy)
    state.issue(copy)


def cp_async_commit_group():
    thread, state = enter()
    mine = _mine(state, thread)
    mine.groups.append(mine.open)
    mine.open = []


def _complete(state, copies):
    for copy in copies:
        if copy in state.in_flight:
            state.deliver_one(copy)


def cp_async_wait_group(n):
    thread, state = enter()
    mine = _mine(state, thread)
    while len(mine.groups) > n:
        _complete(state, mine.groups.pop(0))


def cp_async_wait_all():
    thread, state = enter()
    mine = _mine(state, thread)
    for group in mine.groups + [mine.open]:
        _complete(state, group)
    mine.groups, mine.open = [], []


def cp_async_mbarrier_arrive(bar, noinc=False):
    op = "cp_async.mbarrier_arrive"
    thread, state = enter()
    b = barrier(state, thread, op, bar)
    if not noinc:
        b.pending += 1         # the arrival is added to the phase's expected count
    mine = _mine(state, thread)
    after = tuple(c for group in mine.groups + [mine.open] for c in group if c in state.in_flight)
    state.issue(Copy(op, thread, lambda: _arrive(thread, state, op, bar, 1), None, after))


CP_ASYNC_OPS = dict(load=cp_async_load, commit_group=cp_async_commit_group, wait_group=cp_async_wait_group,
                    wait_all=cp_async_wait_all, mbarrier_arrive=cp_async_mbarrier_arrive)
