"""``numba_tma.cp_async`` under the simulator.

cp.async copies are in flight until delivered (see :mod:`.state`).  cp.async groups are per
thread: ``wait_group(n)`` delivers this thread's oldest groups until at most ``n`` are pending.
"""

from __future__ import annotations

import numpy as np

from . import memory
from .delivery import check_operand
from .barriers import arrive_on, barrier
from .state import RUNNING, Copy, SimulatorError, enter


class _CpAsync:
    """A thread's cp.async copies in flight: ``groups`` (committed, oldest first) and the open one."""

    def __init__(self):
        self.groups, self.open = [], []


def _mine(state, thread):
    return state.gates.setdefault(("cp.async", thread), _CpAsync())


def load(dst, src, nbytes, src_nbytes=None, cache="ca"):
    op = RUNNING.op
    thread, state = enter()
    if nbytes not in (4, 8, 16) or (cache == "cg" and nbytes != 16):
        raise SimulatorError(f"numba_tma simulator: {op}: nbytes={nbytes} must be 4, 8 or 16 (16 with cache='cg')")
    check_operand(op, dst, "dst", nbytes, nbytes, shared=True)
    check_operand(op, src, "src", src_nbytes if src_nbytes is not None else nbytes, nbytes, shared=False)
    n = nbytes if src_nbytes is None else int(src_nbytes)
    data = np.zeros(nbytes, np.uint8)
    data[:n] = memory.byte_view(memory.host(src))[:n]
    memory.check_overwrite(op, thread, dst, nbytes)
    start = memory.address(dst)
    copy = Copy(op, thread, lambda: memory.byte_view(dst)[:nbytes].__setitem__(slice(None), data),
                (start, start + nbytes))
    _mine(state, thread).open.append(copy)
    state.issue(copy)


def commit_group():
    thread, state = enter()
    mine = _mine(state, thread)
    mine.groups.append(mine.open)
    mine.open = []


def _complete(state, copies):
    for copy in copies:
        if copy in state.in_flight:
            state.deliver_one(copy)


def wait_group(n):
    thread, state = enter()
    mine = _mine(state, thread)
    while len(mine.groups) > n:
        _complete(state, mine.groups.pop(0))


def wait_all():
    thread, state = enter()
    mine = _mine(state, thread)
    for group in mine.groups + [mine.open]:
        _complete(state, group)
    mine.groups, mine.open = [], []


def mbarrier_arrive(bar, noinc=False):
    op = RUNNING.op
    thread, state = enter()
    b = barrier(state, thread, op, bar)
    if not noinc:
        b.pending += 1         # the arrival is added to the phase's expected count
    mine = _mine(state, thread)
    after = tuple(c for group in mine.groups + [mine.open] for c in group if c in state.in_flight)
    state.issue(Copy(op, thread, lambda: arrive_on(thread, state, op, bar, 1), None, after))

