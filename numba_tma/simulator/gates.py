"""The barriers of threads the named, warp and cluster barriers are made of (:mod:`.sync`,
:mod:`.cluster`): a gate counts ``expected`` arrivals per generation.
"""

from __future__ import annotations

from . import scheduler
from .state import SimulatorError, where


class Gate:
    """A barrier of threads: ``expected`` arrivals per generation."""

    def __init__(self, expected):
        self.expected, self.arrived, self.generation = expected, set(), 0
        self.clock = None            # the arrivals' clocks of this generation, merged (scheduler.release)
        self.released = None         # ... and of the last generation completed, which its waiters acquire

    def complete(self):
        """Every thread has arrived: the next generation begins."""
        self.arrived, self.generation = set(), self.generation + 1
        self.released, self.clock = self.clock, None


def arrive(state, thread, key, expected, op):
    gate = state.gates.setdefault(key, Gate(expected))
    if gate.expected != expected:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} with {expected} threads, but the barrier's "
                             f"other threads said {gate.expected}")
    gate.arrived.add(thread)
    gate.clock = scheduler.joined(gate.clock, scheduler.release(thread))
    generation = gate.generation
    if len(gate.arrived) >= gate.expected:
        gate.complete()
        state.changed()
    return gate, generation
