"""Per-block simulator state: mbarriers, async copies in flight, blocked threads, and the deadlock
detector.

**When async copies complete.**  A TMA / bulk / cp.async copy into shared memory is *in flight*
from its issue until the block next waits: an ``mbarrier.wait`` / ``try_wait`` of any thread of
the block delivers the copies in flight (all of them, in issue order; with
``NUMBA_TMA_SIM_SEED=<int>`` a random subset in random order, to shake out missing waits), and
when every thread of the block is blocked (in ``cuda.syncthreads``, a wait, a named or cluster
barrier, or polling a barrier with ``test_wait`` / ``try_wait``) the rest is delivered.  A read of
shared memory that an undelivered copy will write raises :class:`SimulatorError`.

**Deadlocks.**  When every thread of the block (of every block of its cluster, for clusters of
several blocks) is blocked, no copy is in flight and nothing has changed for
``DEADLOCK_WINDOW_S`` seconds, the waiting thread raises a report naming the block, each thread's
op and barrier, and the barrier's arrivals and bytes.  The rule holds without the window: a block
whose manager is still making its threads, or whose live threads all wait in
``cuda.syncthreads()`` (its manager releases them, however late it gets to run), is not stuck;
and once a thread has died with an error, the others of its block (its cluster) leave quietly,
polling ones too, so the launch raises that error and no deadlock report.
"""

from __future__ import annotations

import os
import random
import threading
import time

from . import hooks
from .hooks import SimulatorError

DEADLOCK_WINDOW_S = 0.3      # how long "every thread blocked, nothing in flight" must last
POLL_S = 0.05                # how often a blocked thread looks again
SEED = int(os.environ["NUMBA_TMA_SIM_SEED"]) if os.environ.get("NUMBA_TMA_SIM_SEED") else None

LOCK = threading.RLock()
CHANGED = threading.Condition(LOCK)
COPIES_IN_FLIGHT = 0         # over all blocks: a fast "nothing to check" for shared-memory reads


def where(thread) -> str:
    return f"thread {hooks.index(thread)} of block {hooks.index(thread, 'block')}"


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
            CHANGED.notify_all()


class Copy:
    """An async copy in flight: ``complete()`` writes it; ``dst`` is the shared byte range it writes."""

    def __init__(self, op, thread, complete, dst=None, after=()):
        self.op, self.issuer, self.complete, self.dst, self.after = op, where(thread), complete, dst, after


class BlockState:
    def __init__(self, block):
        self.barriers: dict[int, Barrier] = {}
        self.in_flight: list[Copy] = []
        self.blocked: dict = {}          # thread -> (done, what): its wait's condition and description
        self.progress = 0
        self.stuck = None                # (since, progress) while every thread is blocked
        self.deadlocked = False          # reported (by one thread; the others wait to be stopped)
        self.gates: dict = {}            # named / cluster / warp barriers: key -> [expected, arrived set, generation]
        self.block = block
        self.rng = None if SEED is None else random.Random(hash((SEED, block)))

    def changed(self):
        self.progress += 1
        CHANGED.notify_all()

    # -- async copies ----------------------------------------------------------------------------
    def issue(self, copy):
        global COPIES_IN_FLIGHT
        self.in_flight.append(copy)
        COPIES_IN_FLIGHT += 1

    def deliver(self, everything=False):
        """Complete copies in flight: all (in issue order, or shuffled with a seed) or, with a seed
        and not ``everything``, a random subset; a copy waits for the copies it must follow."""
        if not self.in_flight:
            return
        chosen = list(self.in_flight)
        if self.rng is not None:
            self.rng.shuffle(chosen)
            if not everything:
                chosen = [c for c in chosen if self.rng.random() < 0.5]
        done = True
        while done:
            done = False
            for copy in list(chosen):
                if not any(c in self.in_flight for c in copy.after):
                    chosen.remove(copy)
                    self.deliver_one(copy)
                    done = True

    def deliver_one(self, copy):
        global COPIES_IN_FLIGHT
        self.in_flight.remove(copy)
        COPIES_IN_FLIGHT -= 1
        copy.complete()
        self.changed()

    # -- blocking ------------------------------------------------------------------------------
    def block_until(self, thread, done, what, timeout=None):
        """Block ``thread`` until ``done()`` (called under LOCK); ``what()`` describes the wait for a
        deadlock report.  Returns ``done()`` (False only when ``timeout`` ran out)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not done():
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                self.blocked[thread] = (done, what)
                pause = POLL_S if deadline is None else min(POLL_S, max(0.0, deadline - time.monotonic()))
                if not CHANGED.wait(pause):      # nothing changed for a while: is the whole block stuck?
                    self.idle(thread)
                leave_if_aborted(thread)
            return True
        finally:                                 # however it ends, this thread no longer waits
            self.blocked.pop(thread, None)

    def idle(self, thread):
        """If every thread of the block (of every block of its cluster) is blocked: deliver the
        copies in flight, or report a deadlock once that has lasted DEADLOCK_WINDOW_S with nothing
        changing.  A block whose manager has not made all its threads yet, or whose live threads
        all wait in ``cuda.syncthreads()`` (which its manager is about to release), will go on; a
        thread's error ends the launch as that error, not as a deadlock."""
        leave_if_aborted(thread)
        cluster = hooks.cluster_of(thread)
        managers = [hooks.block_key(thread)] if cluster is None else [m for m in cluster.managers if m is not None]
        states = [state_of(m) for m in managers]
        threads = [(t, st) for m, st in zip(managers, states) for t in hooks.manager_threads(m)]
        if not all(map(_settled, managers)) or not all(
                hooks.in_syncthreads(t) or (t in st.blocked and not st.blocked[t][0]()) for t, st in threads):
            self.stuck = None
            return
        if any(st.in_flight for st in states):
            for st in states:
                st.deliver(everything=True)
            return
        now, progress = time.monotonic(), sum(st.progress for st in states)
        reported = self if cluster is None else cluster
        if self.stuck is None or self.stuck[1] != progress:
            self.stuck = (now, progress)
        elif now - self.stuck[0] >= DEADLOCK_WINDOW_S and not reported.deadlocked:
            reported.deadlocked = True
            raise SimulatorError(deadlock_report(threads, cluster))


def leave_if_aborted(thread):
    """Another thread's error ends the block (the cluster): leave quietly (SystemExit ends a
    thread without a report), so the launch raises that error and not this thread's."""
    if hooks.aborted(thread):
        raise SystemExit


def _settled(manager) -> bool:
    """Whether a block can go on only when another thread acts (see :meth:`BlockState.idle`)."""
    live = hooks.manager_threads(manager)
    return hooks.all_threads_made(manager) and not (live and all(map(hooks.in_syncthreads, live)))


def deadlock_report(threads, cluster=None):
    """One line per group of threads blocked on the same thing (``threads``: (thread, its block's
    state) pairs of one block, or of every block of ``cluster``)."""
    groups: dict[str, list] = {}
    for t, st in sorted(threads, key=lambda pair: (hooks.index(pair[0], "block"), hooks.linear_id(pair[0]))):
        what = "cuda.syncthreads()" if hooks.in_syncthreads(t) else st.blocked[t][1]()
        groups.setdefault(what, []).append((hooks.index(t), hooks.index(t, "block")))
    if cluster is None:
        where_ = f"block {threads[0][1].block if threads else '?'}"
    else:
        where_ = f"the cluster of blocks {sorted({st.block for _, st in threads})}"
    lines = [f"numba_tma simulator: deadlock in {where_}: every thread is blocked and no async copy is in "
             "flight, so no wait can complete:"]
    for what, ids in groups.items():
        blocks = sorted({b for _, b in ids})
        of = "" if cluster is None else f" of block {blocks[0]}" if len(blocks) == 1 else f" of blocks {blocks}"
        who = f"thread {ids[0][0]}" if len(ids) == 1 else f"{len(ids)} threads ({ids[0][0]} .. {ids[-1][0]})"
        lines.append(f"  {who}{of}: {what}")
    return "\n".join(lines)


_STATES_KEY = "numba_tma_block_state"


def state_of(manager, block=None) -> BlockState:
    """The state of a block (by its manager), made on first use (``block``: its blockIdx, when the
    manager does not say it)."""
    state = manager.__dict__.get(_STATES_KEY)
    if state is None:
        with LOCK:
            state = manager.__dict__.setdefault(_STATES_KEY, BlockState(block or hooks.manager_block(manager)))
    return state


def enter(op=None):
    """``(thread, block state)`` for an op; the thread is no longer polling a barrier."""
    thread = hooks.current_thread()
    state = state_of(hooks.block_key(thread), hooks.index(thread, "block"))
    state.blocked.pop(thread, None)
    return thread, state


def peer(op, thread, cta_rank):
    """``(manager, state)`` of the block of rank ``cta_rank`` in ``thread``'s cluster."""
    cluster = hooks.cluster_of(thread)
    size = 1 if cluster is None else cluster.size
    if not 0 <= int(cta_rank) < size:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op}: cta_rank={cta_rank} is not a block of "
                             f"this cluster of {size} (ranks 0-{size - 1}; launch with numba_tma.launch(..., "
                             "cluster=...) for clusters of several blocks)")
    manager = hooks.block_key(thread) if cluster is None else cluster.managers[int(cta_rank)]
    return manager, state_of(manager)


def check_generic_read(array, index):
    """Raise if ``array[index]`` (a scalar read) lies in bytes a copy in flight will write."""
    from .memory import element_address, name

    thread, state = enter()
    with LOCK:
        if not state.in_flight:
            return
        try:
            addr = element_address(array, index)
        except (TypeError, ValueError):
            return
        for copy in state.in_flight:
            if copy.dst is not None and copy.dst[0] <= addr < copy.dst[1]:
                raise SimulatorError(
                    f"numba_tma simulator: {where(thread)} reads {name(array, addr)} while the {copy.op} issued by "
                    f"{copy.issuer} that writes it is still in flight: wait for it (mbarrier.wait on its barrier, "
                    "or cp_async.wait_group) before reading")
