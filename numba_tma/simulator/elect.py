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

from . import scheduler
from .state import RUNNING, enter

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
    """The lanes of ``thread``'s warp (exited ones included)."""
    warp = thread.thread_id // 32
    return thread.block.threads[32 * warp:32 * warp + 32]


def _cannot_come(lane, elections) -> bool:
    if lane.status in (scheduler.DONE, scheduler.SYNC):
        return True                                   # exited, or at a block barrier
    if any(lane in e.lanes for e in elections.values()):
        return True                                   # electing elsewhere
    return scheduler.waits_in_vain(lane)              # in a wait that has not completed


def elect_one():
    thread, state = enter()
    op = RUNNING.op
    site, warp = _call_site(), thread.thread_id // 32
    elections = state.gates.setdefault(("elect_one", warp), {})   # call site -> its undecided election
    election = elections.setdefault(site, _Election())
    election.lanes.add(thread)
    state.changed()

    def decided():
        if election.elected is None:
            if all(_cannot_come(t, elections) for t in _warp(thread) if t not in election.lanes):
                election.elected = min(election.lanes, key=lambda t: t.thread_id)
                del elections[site]
                state.changed()
        return election.elected is not None

    scheduler.wait(thread, decided, lambda: f"{op}: {len(election.lanes)} lanes of warp {warp} "
                                               "arrived; the others run on")
    return election.elected is thread
