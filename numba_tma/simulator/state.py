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

import threading

from . import scheduler as _sched
from .scheduler import SimulatorError, where  # noqa: F401 - SimulatorError: the twins' name for it


class Barrier:
    """One mbarrier: arrivals per phase, the current phase's pending arrivals and transactions."""

    def __init__(self, label, count, block=None, initialiser=None):
        self.label, self.count, self.pending, self.phase = label, count, count, 0
        self.expected = self.delivered = 0
        self.block, self.initialiser = block, initialiser    # its block; the thread that initialised it
        self.fenced = False          # fence.mbarrier_init() in its block since the init
        self.proxy_fenced = False    # fence.proxy_async (shared) by its initialiser since the init
        self.published = None        # (cluster gate, generation, fenced then) the initialiser arrived at after init
        self.seen: dict = {}         # thread -> the last phase it waited for
        self.observed = -1           # the latest phase a wait in its block saw complete
        self.clock = None            # the arrivals' clocks of the current phase, merged (scheduler.release)
        self.released = None         # ... and of the last phase completed, which its waiters acquire
        self.fills: dict = {}        # the shared byte ranges the copies that completed on it wrote: start -> end

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
            self.released, self.clock = self.clock, None


class Copy:
    """An async copy in flight: ``complete()`` writes it; ``dst`` is the shared byte range it writes;
    ``after``: the copies it must follow."""

    def __init__(self, op, thread, complete, dst=None, after=(), bar=None, what=None):
        self.op, self.issuer, self.complete, self.dst, self.after = op, where(thread), complete, dst, after
        self.thread, self.bar, self.what = thread, bar, what     # the issuing thread; its Barrier; what it writes
        self.phase = None if bar is None else bar.phase          # the barrier's phase when it was issued


class Remote:
    """An op of another block into this block's shared memory (a copy, a multicast, an arrival):
    the block must not exit before it has landed and been waited for (or a cluster barrier the
    issuer arrived at after it has completed)."""

    def __init__(self, op, thread, bar, what):
        self.op, self.thread, self.bar, self.what = op, thread, bar, what
        self.phase = None            # the barrier phase it counted in, once it landed
        self.cover = None            # (cluster gate, generation) the issuer arrived at after it

    def waited(self) -> bool:
        if self.phase is not None and self.bar is not None and self.bar.observed >= self.phase:
            return True
        return self.cover is not None and self.cover[0].generation > self.cover[1]


class BlockState:
    """The twins' state of one block (a :class:`.scheduler.Block`)."""

    def __init__(self, block):
        self.block = block
        self.barriers: dict[int, Barrier] = {}
        self.gates: dict = {}            # named / cluster / warp barriers, elections, cp.async groups
        self.remote: list = []           # Remote ops of other blocks into this block
        self.stores: dict = {}           # thread -> [uncommitted async stores, committed groups]
        self.async_reads: dict = {}      # thread -> its AsyncReads (the shared bytes its wgmma may read)

    def stored(self, op, thread, src, offsets):
        """``thread`` issued an async store (shared -> global) reading ``src`` at ``offsets`` (a byte
        count, or byte offsets): its source until a wait_group_read of ``thread`` covers it."""
        from .memory import StoreSource
        source = StoreSource(op, thread, src, offsets)
        self.stores.setdefault(thread, [[], []])[0].append(source)
        self.block.reading.append(source)

    def read_done(self, sources):
        """A wait_group_read covered ``sources``: their stores no longer read shared memory."""
        reading = self.block.reading
        for source in sources:
            reading.remove(source)

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


def remote(op, thread, state, bar, what):
    """Record an op of ``thread`` into the block of ``state`` (when that is another block)."""
    if state.block is thread.block:
        return None
    record = Remote(op, thread, bar, what)
    state.remote.append(record)
    thread.block.cluster.gates.setdefault("remote", []).append(record)
    return record


def _seed_note():
    return f" [NUMBA_TMA_SIM_SEED={_sched.seed()} replays this run]"


def block_exit(thread):
    """The last thread of ``thread``'s block ends: report what the block leaves in flight."""
    block = thread.block
    state = block.state
    if state is None:
        return
    for t, (open_, groups) in state.stores.items():
        pending = open_ + [s for g in groups for s in g]
        if pending:
            step = ("tma.commit_group() and tma.wait_group_read(0)" if open_ else "tma.wait_group_read(0)")
            raise SimulatorError(
                f"numba_tma simulator: block {block.index} exits while the {pending[0].op} of {pending[0].what} "
                f"issued by thread {t.index} "
                f"is not waited for{f' (and {len(pending) - 1} more)' if len(pending) > 1 else ''}: the store may "
                f"still read the block's shared memory after it is gone. Missing step: {step} (or wait_group(0)) "
                "in that thread before the block exits")
    for copy in block.pending:
        remote_ = copy.thread is not None and copy.thread.block is not block
        into = f" into {copy.what}" if copy.what else ""
        step = ("a wait in this block on the barrier it completes on, or cluster.sync() in every block after it "
                "was issued" if remote_ else "wait on its barrier (mbarrier.wait, or cp_async.wait_group) before "
                "exiting")
        raise SimulatorError(
            f"numba_tma simulator: block {block.index} exits while the {copy.op} issued by {copy.issuer}{into} is "
            f"still in flight: its bytes would land in freed shared memory. Missing step: {step}")
    for record in state.remote:
        if not record.waited():
            on = f" on {record.bar.label}" if record.bar is not None else ""
            raise SimulatorError(
                f"numba_tma simulator: block {block.index} exits with no wait ordering it after the {record.op} "
                f"issued by {where(record.thread)}{f' into {record.what}' if record.what else ''}{on}: on the GPU "
                "the block may be gone before it lands. Missing step: cluster.sync() in every block before exiting "
                "(or a wait in this block on the barrier it completes)")


def state_of(block) -> BlockState:
    """The state of ``block`` (a :class:`.scheduler.Block`), made on first use."""
    state = block.state
    if state is None:
        state = block.state = BlockState(block)
    return state


class _Running(threading.local):
    """What the calling thread (each simulated thread has its own OS thread) is running."""

    op = ""


RUNNING = _Running()
"""``RUNNING.op``: the declared name of the op the calling thread runs (``"tma.load"``; for a twin
serving several ops, the one the kernel called), recorded by the package's wiring before it runs
the twin: the name a twin's messages give.  A twin reads it before it blocks or defers anything
(a deadlock report and an async copy run in other threads)."""


class AsyncReads:
    """The shared byte ranges a thread's warpgroup MMAs may still read (wgmma reads its tiles
    between issue and ``wait_group``): those not committed yet, and each committed group's."""

    def __init__(self):
        self.open: list = []
        self.groups: list = []

    def pending(self):
        return [r for group in (self.open, *self.groups) for r in group]


def async_reads(thread) -> AsyncReads:
    """``thread``'s :class:`AsyncReads`, kept in its block's state."""
    state = state_of(thread.block)
    found = state.async_reads.get(thread)
    if found is None:
        found = state.async_reads[thread] = AsyncReads()
    return found


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
    if block.live == 0 and block is not thread.block:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} into block {block.index} (rank {cta_rank}), "
                             "which has already exited: its shared memory is gone. Missing step: cluster.sync() in "
                             f"every block before exiting, so no block leaves while others still use it")
    return block, state_of(block)


_sched.EXIT_HOOK = block_exit
