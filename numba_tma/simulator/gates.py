"""The barriers of threads the named and cluster barriers are made of (:mod:`.sync`,
:mod:`.cluster`): a gate counts ``expected`` arrivals per generation; and the exchange of the
warp's registers the warp-level MMA twins make (a gate of the warp's running lanes).  numba-cuda's
``cuda.syncwarp`` and the other warp-level functions are :mod:`.warp_ops`'s.
"""

from __future__ import annotations

from . import memory, scheduler
from .state import SimulatorError, enter, where


class Gate:
    """A barrier of threads: ``expected`` arrivals per generation (``count`` so far, by the
    threads ``arrived``)."""

    def __init__(self, expected):
        self.expected, self.arrived, self.count, self.generation = expected, set(), 0, 0
        self.clock = None            # the arrivals' clocks of this generation, merged (scheduler.release)
        self.released = None         # ... and of the last generation completed, which its waiters acquire

    def complete(self):
        """Every thread has arrived: the next generation begins."""
        self.arrived, self.count, self.generation = set(), 0, self.generation + 1
        self.released, self.clock = self.clock, None


def arrive(state, thread, key, expected, op, counted=False):
    """``thread`` arrives at the gate ``key`` of ``expected`` arrivals: once a generation (a
    cluster barrier's rule), or ``counted``, each arrival counting (a named barrier's ``bar.arrive``
    then ``bar.sync`` by one warp in one phase counts twice, as the hardware counts it)."""
    gate = state.gates.setdefault(key, Gate(expected))
    if gate.expected != expected:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} with {expected} threads, but the barrier's "
                             f"other threads said {gate.expected}")
    if counted or thread not in gate.arrived:
        gate.count += 1
    gate.arrived.add(thread)
    gate.clock = scheduler.joined(gate.clock, scheduler.release(thread))
    generation = gate.generation
    if gate.count >= gate.expected:
        gate.complete()
        state.changed()
    return gate, generation


def _warp_lanes(thread):
    """The lanes of ``thread``'s warp that have not exited."""
    warp = thread.thread_id // 32
    return [t for t in thread.block.threads[32 * warp:32 * warp + 32] if t.status != scheduler.DONE]


def _running_lanes_barrier():
    """A barrier of the warp's running lanes (those not exited), for :func:`warp_exchange`."""
    thread, state = enter()
    key = ("warp", thread.thread_id // 32)

    def lanes():
        return set(_warp_lanes(thread))

    gate = state.gates.setdefault(key, Gate(0))
    gate.arrived.add(thread)
    gate.clock = scheduler.joined(gate.clock, scheduler.release(thread))
    generation = gate.generation

    def done():
        if gate.generation == generation and lanes() <= gate.arrived:
            gate.complete()
            state.changed()
        return gate.generation != generation

    scheduler.wait(thread, done, lambda: f"the warp's register exchange: {len(gate.arrived)} of {len(lanes())} lanes "
                                         "arrived")
    scheduler.acquire(thread, gate.released)


def warp_exchange(key, value):
    """Every running lane's ``value`` of this warp, by lane, once each lane brought its own (a
    warp-collective op's operands; ``key`` names the op's exchange): ``(lane, {lane: value})``."""
    thread, _ = enter()
    warp, lane = thread.thread_id // 32, thread.thread_id % 32
    box = memory.per_block((key, warp), dict)
    box[lane] = value
    _running_lanes_barrier()        # every lane has put its value in
    values = dict(box)
    _running_lanes_barrier()        # every lane has read them: the next call may overwrite
    return lane, values
