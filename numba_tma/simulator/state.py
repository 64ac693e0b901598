"""Per-block state of the simulated hardware: mbarriers and the barriers of threads (named,
warp, cluster, elect_one), and how an op finds its thread and block.

When async copies complete, how waits block and when a deadlock is reported is the scheduler's
(:mod:`.scheduler`): a copy is in flight from its issue until the block next waits on an
mbarrier (``mbarrier.wait`` / ``try_wait`` of any thread of the block delivers the copies in
flight: all, in issue order; with ``NUMBA_TMA_SIM_SEED=<int>`` a random subset in random order)
or until every thread is blocked.  A read of shared memory an undelivered copy will write raises
:class:`SimulatorError` (:mod:`.memory`).  A deadlock is reported when no thread can go on: every
thread of the block (of every block of its cluster) waits on a condition that does not hold,
nothing is in flight, and every thread polling a barrier has polled in vain; a block whose live
threads all wait in ``cuda.syncthreads()`` goes on, and an error in one thread ends the launch as
that error, not as a deadlock.
"""

from __future__ import annotations

from . import scheduler as _sched
from .scheduler import SimulatorError, where  # noqa: F401 - SimulatorError: the twins' name for it


class Barrier:
    """One mbarrier: arrivals per phase, the current phase's pending arrivals and transactions."""

    def __init__(self, label, count):
        self.label, self.count, self.pending, self.phase = label, count, count, 0
        self.expected = self.delivered = 0

    @property
    def tx(self):
        return self.expected - self.delivered

    def describe(self):
        return (f"barrier {self.label} (phase {self.phase}): expects {self.count} arrivals per phase, "
                f"{self.count - self.pending} arrived; expects {self.expected} bytes, {self.delivered} delivered")

    def advance(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending, self.expected, self.delivered = self.count, 0, 0


class Copy:
    """An async copy in flight: ``complete()`` writes it; ``dst`` is the shared byte range it writes;
    ``after``: the copies it must follow."""

    def __init__(self, op, thread, complete, dst=None, after=()):
        self.op, self.issuer, self.complete, self.dst, self.after = op, where(thread), complete, dst, after


class BlockState:
    """The twins' state of one block (a :class:`.scheduler.Block`)."""

    def __init__(self, block):
        self.block = block
        self.barriers: dict[int, Barrier] = {}
        self.gates: dict = {}            # named / cluster / warp barriers, elections, cp.async groups

    def changed(self):
        """Something a waiting thread may wait for has changed."""
        self.block.cluster.progress += 1

    # -- async copies (the scheduler delivers them) ------------------------------------------------
    @property
    def in_flight(self) -> list:
        return self.block.pending

    def issue(self, copy):
        self.block.issue(copy)

    def deliver(self, everything=False):
        self.block.deliver(everything)

    def deliver_one(self, copy):
        self.block.deliver_one(copy)


def state_of(block) -> BlockState:
    """The state of ``block`` (a :class:`.scheduler.Block`), made on first use."""
    state = block.state
    if state is None:
        state = block.state = BlockState(block)
    return state


def enter():
    """``(thread, block state)`` for an op: the running simulated thread and its block's state."""
    thread = _sched.current()
    state = thread.block.state
    if state is None:
        state = thread.block.state = BlockState(thread.block)
    return thread, state


def peer(op, thread, cta_rank):
    """``(block, state)`` of the block of rank ``cta_rank`` in ``thread``'s cluster."""
    cluster = thread.block.cluster
    size = cluster.size
    if not 0 <= int(cta_rank) < size:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op}: cta_rank={cta_rank} is not a block of "
                             f"this cluster of {size} (ranks 0-{size - 1}; launch with numba_tma.launch(..., "
                             "cluster=...) for clusters of several blocks)")
    block = cluster.blocks[int(cta_rank)]
    return block, state_of(block)
