"""The ``(index, phase)`` state of a pipeline, and how it advances (one body, both paths)."""

from __future__ import annotations

import numba

from ..ops import BACKEND

device = BACKEND.device_function
"""``fn`` as a device function of the CUDA target, inlined (under the simulator, its device
function, which sees the running thread's ``cuda.threadIdx``)."""


class PipelineState:
    """``(index, phase)`` of a ring of ``stages``: the stage a step uses and the parity of its
    round.  ``advance()`` returns the next state (index + 1; at ``stages`` back to 0 with the phase
    flipped).  In a kernel it is a value of two ``uint32``; keep it across persistent tiles."""

    __slots__ = ("stages", "index", "phase")

    def __init__(self, stages, index, phase):
        self.stages, self.index, self.phase = stages, index, phase

    def advance(self):
        return advance(self)

    def __repr__(self):
        return f"PipelineState(stages={self.stages}, index={self.index}, phase={self.phase})"


def _state_like(state, index, phase):
    """A state of ``state``'s ring with ``index`` and ``phase``."""
    return PipelineState(state.stages, int(index), int(phase))


def _compiled_state_like():
    from .numba_types import state_like

    return state_like


state_like = BACKEND.twin(_state_like, _compiled_state_like)


def advance_of(uint32, state_like, device):
    """``advance(state)`` for one compiler: ``uint32`` its ``uint32`` type, ``state_like`` its
    intrinsic building a state, ``device`` its device-function decorator."""
    @device
    def advance(state):
        index = uint32(state.index + uint32(1))
        if index == state.stages:
            return state_like(state, uint32(0), uint32(state.phase ^ uint32(1)))
        return state_like(state, index, state.phase)
    return advance


advance = advance_of(numba.uint32, state_like, device)
