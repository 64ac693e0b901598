"""``sync.elect_one`` under the simulator: the lowest lane among those executing it together.

The GPU elects among the warp's active lanes (``activemask``): the lanes that reach the
instruction together.  The simulator runs each lane as its own thread, so a lane at an
``elect_one`` call site waits until every other lane of its warp has arrived at the same call
site, or cannot arrive there now: it has exited, waits in ``cuda.syncthreads()`` or in a wait
that has not completed, or waits at another ``elect_one`` call site.  The lanes that arrived take
part, and the lowest is elected.  (A lane that skips the call and reaches the same call site
later without waiting in between is counted in: the simulator does not model divergence.)
"""

from __future__ import annotations

import os
import sys

from . import hooks
from .state import LOCK, enter

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep   # numba_tma/


class _Election:
    """The lanes of one warp at one call site: those taking part, and the one elected once decided."""

    def __init__(self):
        self.lanes, self.elected = set(), None


def _call_site():
    """The kernel's (or device function's) instruction that called elect_one."""
    frame = sys._getframe(1)
    while frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return frame.f_code, frame.f_lasti


def _warp(thread):
    """The lanes of ``thread``'s warp (exited ones included), or None while the block manager has
    not made them all."""
    warp = hooks.linear_id(thread) // 32
    lanes = [t for t in hooks.every_block_thread(thread) if hooks.linear_id(t) // 32 == warp]
    x, y, z = hooks.block_dim(thread)
    return lanes if len(lanes) == min(32, x * y * z - 32 * warp) else None


def _cannot_come(lane, state, elections) -> bool:
    if lane.ident is not None and not lane.is_alive():
        return True                                   # exited
    if hooks.in_syncthreads(lane) or any(lane in e.lanes for e in elections.values()):
        return True                                   # at a block barrier, or electing elsewhere
    waiting = state.blocked.get(lane)
    return waiting is not None and not waiting[0]()   # in a wait that has not completed


def elect_one():
    thread, state = enter()
    site, warp = _call_site(), hooks.linear_id(thread) // 32
    with LOCK:
        elections = state.gates.setdefault(("elect_one", warp), {})   # call site -> its undecided election
        election = elections.setdefault(site, _Election())
        election.lanes.add(thread)
        state.changed()

        def decided():
            if election.elected is None:
                lanes = _warp(thread)
                if lanes is not None and all(_cannot_come(t, state, elections) for t in lanes
                                             if t not in election.lanes):
                    election.elected = min(election.lanes, key=hooks.linear_id)
                    del elections[site]
                    state.changed()
            return election.elected is not None

        state.block_until(thread, decided, lambda: f"sync.elect_one: {len(election.lanes)} lanes of warp {warp} "
                                                   "arrived; the others run on")
    return election.elected is thread
