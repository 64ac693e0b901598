"""``numba_tma.sync`` under the simulator.

**Named barriers** count arrivals: ``nthreads`` arrive (a thread's ``bar.arrive`` and its
``bar.sync`` in one phase count as two, as the hardware counts them), then the waiters go on; barrier 0
is ``cuda.syncthreads()``'s and is refused here (the simulator's syncthreads cannot share it).
**elect_one** (:mod:`.elect`) elects the lowest lane among those executing it together.
"""

from __future__ import annotations

from . import elect, scheduler
from .gates import arrive
from .state import RUNNING, SimulatorError, enter


def _meet(key, expected, op, wait=True):
    thread, state = enter()
    gate, generation = arrive(state, thread, key, expected, op, counted=True)
    if wait:
        scheduler.wait(thread, lambda: gate.generation != generation,
                       lambda: f"{op}: {gate.count} of {gate.expected} threads arrived")
        scheduler.acquire(thread, gate.released)


def _check_named(op, barrier_id, nthreads):
    if barrier_id == 0:
        raise SimulatorError(f"numba_tma simulator: {op}: barrier_id={barrier_id} must be 1-15 (0 is "
                             "cuda.syncthreads()'s barrier, which the simulator cannot share)")


def _named(barrier_id, nthreads, wait):
    op = RUNNING.op
    _check_named(op, barrier_id, nthreads)
    _meet(("named", barrier_id), nthreads, f"{op}({barrier_id}, {nthreads})", wait)


def named_barrier_sync(barrier_id, nthreads):
    _named(barrier_id, nthreads, wait=True)


def named_barrier_arrive(barrier_id, nthreads):
    _named(barrier_id, nthreads, wait=False)


elect_one = elect.elect_one
