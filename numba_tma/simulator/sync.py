"""``numba_tma.sync`` under the simulator, and the ``cuda.syncwarp`` numba-cuda's simulator lacks.

**Named barriers** count threads: ``nthreads`` threads arrive, then the waiters go on; barrier 0
is ``cuda.syncthreads()``'s and is refused here (the simulator's syncthreads cannot share it).
**elect_one** (:mod:`.elect`) elects the lowest lane among those executing it together.
"""

from __future__ import annotations

from . import elect, scheduler
from .gates import Gate, arrive
from .state import SimulatorError, enter, where


def _meet(key, expected, op, wait=True):
    thread, state = enter()
    gate, generation = arrive(state, thread, key, expected, op)
    if wait:
        scheduler.wait(thread, lambda: gate.generation != generation,
                       lambda: f"{op}: {len(gate.arrived)} of {gate.expected} threads arrived")
        scheduler.acquire(thread, gate.released)


def _check_named(op, barrier_id, nthreads):
    if barrier_id == 0:
        raise SimulatorError(f"numba_tma simulator: {op}: barrier_id={barrier_id} must be 1-15 (0 is "
                             "cuda.syncthreads()'s barrier, which the simulator cannot share)")


def named_barrier_sync(barrier_id, nthreads):
    _check_named("sync.named_barrier_sync", barrier_id, nthreads)
    _meet(("named", barrier_id), nthreads, f"sync.named_barrier_sync({barrier_id}, {nthreads})")


def named_barrier_arrive(barrier_id, nthreads):
    _check_named("sync.named_barrier_arrive", barrier_id, nthreads)
    _meet(("named", barrier_id), nthreads, f"sync.named_barrier_arrive({barrier_id}, {nthreads})", wait=False)


def _warp_lanes(thread):
    """The lanes of ``thread``'s warp that have not exited."""
    warp = thread.thread_id // 32
    return [t for t in thread.block.threads[32 * warp:32 * warp + 32] if t.status != scheduler.DONE]


def syncwarp(mask=0xFFFFFFFF):
    """A barrier of the warp's running lanes (those in ``mask``)."""
    thread, state = enter()
    lane = thread.thread_id % 32
    if not (mask >> lane) & 1:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: cuda.syncwarp(mask={mask:#x}) from lane {lane}, "
                             "which the mask leaves out")
    key = ("warp", thread.thread_id // 32)

    def lanes():
        return {t for t in _warp_lanes(thread) if (mask >> (t.thread_id % 32)) & 1}

    gate = state.gates.setdefault(key, Gate(0))
    gate.arrived.add(thread)
    gate.clock = scheduler.joined(gate.clock, scheduler.release(thread))
    generation = gate.generation

    def done():
        if gate.generation == generation and lanes() <= gate.arrived:
            gate.complete()
            state.changed()
        return gate.generation != generation

    scheduler.wait(thread, done, lambda: f"cuda.syncwarp: {len(gate.arrived)} of {len(lanes())} lanes arrived")
    scheduler.acquire(thread, gate.released)


SYNC_OPS = dict(named_barrier_sync=named_barrier_sync, named_barrier_arrive=named_barrier_arrive,
                elect_one=elect.elect_one)
