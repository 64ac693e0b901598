"""The barriers of threads the named, warp and cluster barriers are made of (:mod:`.sync`,
:mod:`.cluster`): a gate counts ``expected`` arrivals per generation.
"""

from __future__ import annotations

from .state import SimulatorError, where


class Gate:
    """A barrier of threads: ``expected`` arrivals per generation."""

    def __init__(self, expected):
        self.expected, self.arrived, self.generation = expected, set(), 0


def arrive(state, thread, key, expected, op):
    gate = state.gates.setdefault(key, Gate(expected))
    if gate.expected != expected:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} with {expected} threads, but the barrier's "
                             f"other threads said {gate.expected}")
    gate.arrived.add(thread)
    generation = gate.generation
    if len(gate.arrived) >= gate.expected:
        gate.arrived, gate.generation = set(), gate.generation + 1
        state.changed()
    return gate, generation
