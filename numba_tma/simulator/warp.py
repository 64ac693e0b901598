"""Where a warp's lanes meet: the rendezvous of numba-cuda's warp-level functions (``.sync``
shuffles, votes, matches, ``cuda.syncwarp``) and of ``cuda.activemask()`` under the simulator.

**A collective with a mask** (:func:`meet`), as PTX defines ``shfl.sync``, ``vote.sync``,
``match.sync`` and ``bar.warp.sync``: each lane waits until every non-exited lane of the mask has
executed the same instruction with the same mask, and the operands compared or collected are
those of the non-exited lanes of the mask.  The simulator runs one lane at a time, so a lane that
arrives waits until every lane of the mask has arrived at the same op with the same mask, or
exited (a lane the block does not have, in a partial last warp, counts as exited, as on the GPU);
then each reads the arrived lanes' operands (:class:`Meeting`).  What the GPU leaves undefined,
or hangs on, is reported, not guessed (a :class:`SimulatorError` naming the op, the block, the
warp and the lane):

* the calling lane is not in its own mask;
* a lane of the mask waits in ``cuda.syncthreads()`` (it can never come);
* a lane of the mask waits at another collective of the warp (another op, or the same op with
  another mask) that itself waits for a lane waiting here;
* (:mod:`.warp_ops`) a shuffle reads a lane outside the mask, or one that has exited.

A lane of the mask that is still running, or blocked in a wait that may complete (an mbarrier, a
named barrier), is waited for; if it never comes, the scheduler's deadlock report names the
collective and the lanes missing.

**``activemask()``** (:func:`gather`): the lanes executing it together.  A lane waits until every
other lane of its warp has arrived at an ``activemask()`` call or cannot arrive now (it has
exited, waits in ``cuda.syncthreads()``, or waits in a wait that has not completed, a collective
included); the lanes that arrived are the mask.  As for ``elect_one``, the simulator does not
model divergence: a lane reaching ``activemask()`` at another call site without waiting in
between is counted in.
"""

from __future__ import annotations

from . import scheduler
from .state import SimulatorError, enter, where

FULL = 0xFFFFFFFF


def lanes_of(mask) -> list:
    """The lanes a 32-bit mask names, lowest first."""
    return [lane for lane in range(32) if mask >> lane & 1]


def spans(lanes) -> str:
    """Lanes as runs: ``"0-15, 17, 20-21"``."""
    runs: list = []
    for lane in sorted(lanes):
        if runs and runs[-1][1] == lane - 1:
            runs[-1][1] = lane
        else:
            runs.append([lane, lane])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _warp(thread) -> int:
    return thread.thread_id // 32


def warp_lanes(thread) -> list:
    """The simulated threads of lanes 0-31 of ``thread``'s warp (None where the block has none)."""
    first = 32 * _warp(thread)
    threads = thread.block.threads
    return [threads[i] if i < len(threads) else None for i in range(first, first + 32)]


def gone(lane_thread) -> bool:
    """Whether a lane (its thread, or None where the block has none) has exited: the GPU's
    collectives neither wait for it nor count it."""
    return lane_thread is None or lane_thread.status == scheduler.DONE


class Meeting:
    """One collective of one warp: the op, its mask, the warp's lanes, each arrived lane's operand
    (``values``), ``complete`` once every non-exited lane of the mask has arrived, and ``error``:
    why it cannot complete."""

    def __init__(self, op, mask, block, warp, lanes):
        self.op, self.mask, self.block, self.warp, self.lanes = op, mask, block, warp, lanes
        self.values: dict = {}
        self.complete, self.error = False, None
        self.clock = None             # cuda.syncwarp: the arrivals' clocks, merged (scheduler.release)

    def name(self) -> str:
        return f"{self.op}(mask={self.mask:#010x})"

    def missing(self) -> list:
        """The lanes of the mask that have neither arrived nor exited."""
        return [lane for lane in lanes_of(self.mask) if lane not in self.values and not gone(self.lanes[lane])]


def _open(state, warp) -> list:
    """The collectives of ``warp`` some lanes wait at (a list kept in the block's state)."""
    return state.gates.setdefault(("warp collectives", warp), [])


def _blocker(meeting, lane, open_meetings):
    """Why lane ``lane`` of the mask (not arrived, not exited) can never arrive at ``meeting``, or
    None while it still may."""
    thread = meeting.lanes[lane]
    where_ = f"lane {lane} of warp {meeting.warp} of block {meeting.block.index} (thread {thread.index})"
    if thread.status == scheduler.SYNC:
        return f"{where_} waits in cuda.syncthreads(), where it can never come: every lane of the mask must reach it"
    for other in open_meetings:
        if other is not meeting and lane in other.values:
            ours = [k for k in other.missing() if k in meeting.values]
            if ours:
                return (f"{where_} waits at {other.name()}, which waits for lane {ours[0]}, waiting here: a warp's "
                        "lanes must meet at the same op with the same mask")
    return None


def _settle(meeting, state) -> bool:
    """Complete ``meeting`` once no lane of its mask is missing, or record in ``meeting.error`` a
    lane that can never arrive; whether its lanes can go on (complete, or failed)."""
    if not meeting.complete and meeting.error is None:
        open_meetings = _open(state, meeting.warp)
        missing = meeting.missing()
        why = next((w for w in (_blocker(meeting, lane, open_meetings) for lane in missing) if w), None)
        if not missing or why is not None:
            meeting.complete = not missing
            meeting.error = None if why is None else f"numba_tma simulator: {meeting.name()}: {why}"
            open_meetings.remove(meeting)
            state.changed()
    return meeting.complete or meeting.error is not None


def meet(op, mask, value, ordering=False) -> tuple:
    """The running lane brings ``value`` to the collective ``op`` of its warp with ``mask`` (a
    32-bit int) and waits for every lane of the mask: ``(lane, {lane: value})``.  ``ordering``
    (``cuda.syncwarp``): the meeting is also a barrier of the memory-model checker."""
    thread, state = enter()
    warp, lane = _warp(thread), thread.thread_id % 32
    if not mask >> lane & 1:
        raise SimulatorError(f"numba_tma simulator: {op}(mask={mask:#010x}): lane {lane} of warp {warp} "
                             f"({where(thread)}) calls it but is not in the mask: the calling lane must be in "
                             "its own mask")
    open_meetings = _open(state, warp)
    meeting = next((m for m in open_meetings if m.op == op and m.mask == mask and lane not in m.values), None)
    if meeting is None:
        meeting = Meeting(op, mask, thread.block, warp, warp_lanes(thread))
        open_meetings.append(meeting)
    meeting.values[lane] = value
    if ordering:
        meeting.clock = scheduler.joined(meeting.clock, scheduler.release(thread))
    state.changed()
    scheduler.wait(thread, lambda: _settle(meeting, state),
                   lambda: f"{meeting.name()} in warp {warp}: lanes {spans(meeting.values)} arrived, lanes "
                           f"{spans(meeting.missing())} have not")
    if meeting.error is not None:
        raise SimulatorError(meeting.error)
    if ordering:
        scheduler.acquire(thread, meeting.clock)
    return lane, meeting.values


class _Gathering:
    """The lanes of one warp at ``activemask()``: those arrived, and the mask once decided."""

    def __init__(self):
        self.lanes, self.mask = set(), None


def _cannot_come(thread) -> bool:
    return thread.status in (scheduler.DONE, scheduler.SYNC) or scheduler.waits_in_vain(thread)


def gather() -> int:
    """``activemask()`` of the running lane: the mask of the lanes of its warp that arrive together."""
    thread, state = enter()
    warp = _warp(thread)
    key = ("activemask", warp)
    gathering = state.gates.get(key)
    if gathering is None:
        gathering = state.gates[key] = _Gathering()
    gathering.lanes.add(thread)
    state.changed()
    lanes = [t for t in warp_lanes(thread) if t is not None]

    def decided():
        if gathering.mask is None and all(_cannot_come(t) for t in lanes if t not in gathering.lanes):
            gathering.mask = sum(1 << t.thread_id % 32 for t in gathering.lanes)
            del state.gates[key]
            state.changed()
        return gathering.mask is not None

    scheduler.wait(thread, decided, lambda: f"cuda.activemask(): {len(gathering.lanes)} lanes of warp {warp} "
                                            "arrived; the others run on")
    return gathering.mask
