"""numba_tma's own block and cluster scheduler for numba-cuda's CUDA simulator.

numba-cuda hands the blocks of a launch here one after another (:func:`run_block`, through
:mod:`.numba_sim`).  A block runs as soon as its cluster is complete (a kernel launched with
numba's own syntax is a grid of clusters of one block; ``numba_tma.launch(..., cluster=...)``
sets the shape with :func:`clusters_of`), and the blocks of a cluster run at once.

**One simulated thread at a time.**  Each simulated CUDA thread (:class:`SimThread`) runs on an
OS thread of the launch (:class:`Worker`), but only one of them runs at any moment: a thread runs
until it blocks (``cuda.syncthreads()``, an mbarrier wait, a named, warp or cluster barrier,
``elect_one``, a failed probe) or ends, and then hands over to the next ready thread, waking it
by its own lock.  No thread polls, nothing sleeps, the GIL is never contended, and the state of
the simulated hardware needs no locks (only the running thread touches it).  A worker whose
thread ended runs the next thread that has not started yet itself.  A thread that spins on plain
memory without an op never hands over (the scheduler is cooperative; the GPU's warps are not).

**Waits.**  :func:`wait` blocks the running thread until ``done()``; :func:`poll` (a failed
``test_wait`` / ``try_wait``) lets the others run before the probe returns False.  When no thread
is ready, the waits' conditions are looked at again; when none holds, the async copies in flight
are delivered (:meth:`Block.deliver`), and then the pollers get another turn.  When nothing can
go on (every thread waits, nothing is in flight, and every poller has failed ``POLL_ROUNDS``
probes in a row with nothing changing), a :class:`SimulatorError` naming each thread's wait is
raised in one waiting thread: a deadlock is reported as soon as it exists, and only then.

**Errors end the launch.**  An exception in a simulated thread ends the launch as that exception
(its message prefixed ``tid=[x, y, z] ctaid=[x, y, z]:``, as numba-cuda's simulator does): the
threads not started yet never start, the blocked ones unwind (:class:`Abort`), and the launching
thread raises it.

**Async copies in flight** (:meth:`Block.issue`) complete when the block next waits on an
mbarrier (:meth:`Block.deliver`, called by the twins), or when every thread is blocked;
``NUMBA_TMA_SIM_SEED=<int>`` delivers a random subset in random order at each wait, and queues the
threads that become ready together (at the start, at a barrier's release) in a random order.

**Happens-before** (the memory-model checker, :mod:`.memory`): each thread has a vector clock
(a row of ``Cluster.clock``); an arrival at a barrier (:func:`release`) publishes it and begins a
new segment of the thread, a completed wait (:func:`acquire`) merges the barrier's, and
``cuda.syncthreads()`` merges those of the block; :func:`proxy_fence` records fence.proxy_async.
"""

from __future__ import annotations

import _thread
import collections
import contextlib
import itertools
import os
import random
import threading

import weakref

import numpy as np

from .. import launch_limits

# the completion order's seed: NUMBA_TMA_SIM_SEED replays a run; by default each process draws a fresh one
SEED = int(os.environ["NUMBA_TMA_SIM_SEED"]) if os.environ.get("NUMBA_TMA_SIM_SEED") else \
    random.SystemRandom().randrange(1 << 31)
EXIT_HOOK = None             # state.block_exit: called in the last thread of a block to end
POLL_ROUNDS = 100            # failed probes in a row, with nothing changing, before a poller is stuck
IN_FLIGHT = 0                # async copies in flight over all blocks: a fast "nothing to check" for reads
RUNNING_THREAD = None        # the simulated thread running now (one runs at a time), None outside a kernel
# the memory-model checker's happens-before clocks and generic-access marks: NUMBA_TMA_SIM_CHECKER=0 turns
# them off (to measure their cost: benchmarks/bench_checker.py)
CHECKER = os.environ.get("NUMBA_TMA_SIM_CHECKER", "1") != "0"
_CLUSTERS = itertools.count(1)    # each cluster's serial number (in the marks of the bytes its threads write)

READY, RUNNING, WAITING, POLLING, SYNC, DONE = "ready", "running", "waiting", "polling", "sync", "done"


class SimulatorError(RuntimeError):
    """A kernel did something the GPU would fault on, hang on or silently get wrong."""


class Abort(BaseException):
    """Unwinds a simulated thread when another thread's error ends the launch."""


class Dim3:
    """``threadIdx`` / ``blockIdx``: ``.x``, ``.y``, ``.z``, iterable."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self):
        return f"Dim3({self.x}, {self.y}, {self.z})"

    def __str__(self):
        return f"({self.x}, {self.y}, {self.z})"


class SimThread:
    """One simulated CUDA thread: its indices, its block, and where it is."""

    __slots__ = ("threadIdx", "blockIdx", "thread_id", "index", "block", "status", "wait", "worker", "polls",
                 "poll_mark", "error", "slot", "mark", "fenced", "released")

    def __init__(self, block, index, thread_id):
        self.index, self.thread_id, self.block = index, thread_id, block
        self.slot = block.rank * block.size + thread_id      # its row of the cluster's clocks
        self.mark = 0                 # what its accesses leave in the checker's marks (set by its Cluster)
        self.threadIdx, self.blockIdx = Dim3(*index), Dim3(*block.index)
        self.status, self.wait, self.worker, self.error = READY, None, None, None
        self.polls, self.poll_mark = 0, -1
        self.fenced = None            # (its clock at its last fence.acq_rel / fence.sc, the fence's scope)
        self.released = []            # shared byte ranges it gave back (memory.check_released)

    def __repr__(self):
        return f"<simulated thread {self.index} of block {self.block.index}: {self.status}>"


def where(thread) -> str:
    return f"thread {thread.index} of block {thread.block.index}"


class Block:
    """One running block: its threads, its shared memory (kept by :mod:`.memory`), the twins' state
    of it (made by :func:`.state.state_of`) and the async copies in flight into it."""

    def __init__(self, cluster, index, rank):
        self.cluster, self.launch, self.index, self.rank = cluster, cluster.launch, index, rank
        x, y, z = cluster.launch.block_dim
        self.size = x * y * z
        self.threads = [SimThread(self, (i % x, i // x % y, i // (x * y)), i) for i in range(self.size)]
        self.live, self.in_sync = self.size, []       # threads not ended; those waiting in syncthreads
        self.votes = None                             # syncthreads_count / _and / _or: a value per thread
        self.shared: dict = {}                        # memory: allocation key -> this block's array
        self.marks: dict = {}                         # memory: allocation key -> its generic-write marks
        self.reads: dict = {}                         # memory: allocation key -> its generic-read marks
        self.reading: list = []                       # state: async stores that may still read its bytes
        self.state = None                             # the twins' state of this block (state.state_of)
        self.pending: list = []                       # async copies in flight into this block
        self.rng = None if SEED is None else random.Random(f"{SEED}/{index}")

    # -- async copies -------------------------------------------------------------------------
    def issue(self, copy):
        """An async copy into this block, in flight until delivered: ``copy.complete()`` writes it;
        ``copy.after``: the copies it must follow."""
        global IN_FLIGHT
        self.pending.append(copy)
        IN_FLIGHT += 1

    def deliver(self, everything=False):
        """Complete copies in flight: all (in issue order, or shuffled with a seed) or, with a seed
        and not ``everything``, a random subset; a copy waits for the copies it must follow."""
        if not self.pending:
            return
        chosen = list(self.pending)
        if self.rng is not None:
            if self.rng.random() < 0.25:
                chosen.reverse()                 # the latest-issued copy first
            else:
                self.rng.shuffle(chosen)
            if not everything:
                chosen = [c for c in chosen if self.rng.random() < 0.5]
        done = True
        while done:
            done = False
            for copy in list(chosen):
                if not any(c in self.pending for c in copy.after):
                    chosen.remove(copy)
                    self.deliver_one(copy)
                    done = True

    def deliver_one(self, copy):
        global IN_FLIGHT
        self.pending.remove(copy)
        IN_FLIGHT -= 1
        self.cluster.progress += 1
        copy.complete()

    def _drop_pending(self):
        global IN_FLIGHT
        IN_FLIGHT -= len(self.pending)
        self.pending.clear()


class Cluster:
    """The blocks that run at once (one, or a cluster's): their threads, which one runs, and which
    are ready, waiting or ended; the cluster barrier's gates (kept by the twins)."""

    def __init__(self, launch, first):
        self.launch, self.shape = launch, launch.cluster_shape
        self.size = self.shape[0] * self.shape[1] * self.shape[2]
        self.blocks = []
        for offset in np.ndindex(*self.shape[::-1]):          # ranks in order: x fastest
            index = tuple(f * c + o for f, c, o in zip(first, self.shape, offset[::-1]))
            self.blocks.append(Block(self, index, len(self.blocks)))
        self.threads = [t for b in self.blocks for t in b.threads]
        self.serial = next(_CLUSTERS)
        # happens-before: clock[t] is thread t's vector clock (clock[t, u]: the last segment of thread u
        # ordered before t's present; clock[t, t]: t's own segment, which each release ends)
        self.clock = None
        self.fences = {"shared": [], "global": []}   # fence.proxy_async per space: (slot + 1) << 24 | segment
        self.fenced = {"shared": {}, "global": {}}   # per space: slot -> its clock at its last proxy fence
        if CHECKER:
            n = len(self.threads)
            self.clock = np.full((n, n), -1, np.int32)
            np.fill_diagonal(self.clock, 0)
            for t in self.threads:
                t.mark = self.serial << 40 | (t.slot + 1) << 24
        self.live = len(self.threads)
        self.waiting: dict = {}        # WAITING / POLLING threads, in the order they began to wait
        self.progress = 0              # counts every change that could let a waiting thread go on
        self.error = None              # (exception, traceback) of the first thread that raised
        self.aborting = False
        self.interrupted = None        # an exception the launching thread got while waiting
        self.gates: dict = {}          # the cluster barrier's gates (cluster.py)
        self._finished = _thread.allocate_lock()
        # with a seed, the threads that become ready together (at the start, at a barrier's release)
        # are queued in a random order
        self.rng = None if SEED is None else random.Random(f"{SEED}/threads/{first}")
        self.ready = collections.deque(self._shuffled(self.threads))

    def _shuffled(self, threads) -> list:
        threads = list(threads)
        if self.rng is not None:
            self.rng.shuffle(threads)
        return threads

    def rank(self, block_index) -> int:
        x, y, z = (b % s for b, s in zip(block_index, self.shape))
        return x + self.shape[0] * (y + self.shape[1] * z)

    # -- running ----------------------------------------------------------------------------------
    def run(self):
        """Run every thread of the cluster's blocks to its end (in the launching thread)."""
        self._finished.acquire()
        first = self._next(None)
        if first is not None:
            self._start(first)
            try:
                self._finished.acquire()      # the last thread to end hands back here
            except BaseException as exc:      # e.g. KeyboardInterrupt: stop the threads, then raise
                self._interrupted(exc)
                raise
            finally:
                _running(None)
        for block in self.blocks:      # the blocks are over: free their memory now (no cycle to wait for)
            block._drop_pending()
            block.shared, block.state, block.marks, block.reads = {}, None, {}, {}
        self.gates.clear()
        if self.error is not None:
            raise self.error[0].with_traceback(self.error[1])

    def _interrupted(self, exc):
        """The launching thread was interrupted (Ctrl-C) while a simulated thread ran: the running
        thread ends the launch at its next switch; wait for every thread to unwind."""
        self.interrupted = exc
        self._finished.acquire()

    def _start(self, thread):
        """Run ``thread`` (ready, not started) on a free worker of the launch."""
        worker = self.launch.free_worker()
        worker.sim, thread.worker = thread, worker
        worker.lock.release()

    def _switch(self, me):
        """``me`` (the running thread) has blocked: run the next ready thread and wait until ``me``
        is run again.  Raises :class:`Abort` if another thread's error ended the launch meanwhile, or
        the error ``me`` was woken to raise (a deadlock report)."""
        nxt = self._next(me)
        if nxt is not me:
            try:
                if nxt.worker is None:
                    self._start(nxt)
                else:
                    nxt.worker.lock.release()
            except BaseException:          # no OS thread to run it on: me runs on, and raises
                nxt.status = READY
                self.ready.appendleft(nxt)
                self.waiting.pop(me, None)
                if me in me.block.in_sync:
                    me.block.in_sync.remove(me)
                me.status = RUNNING
                _running(me)
                raise
            me.worker.lock.acquire()       # parked until run again
        if self.aborting:
            raise Abort
        if me.error is not None:
            error, me.error = me.error, None
            raise error

    def _ended(self, me, worker):
        """``me`` has ended: run what comes next.  Returns the thread ``worker`` (now free) should
        run itself (one not started yet), else hands over and returns None."""
        me.status = DONE
        self.live -= 1
        block = me.block
        block.live -= 1
        self.progress += 1
        if block.in_sync and len(block.in_sync) == block.live:
            self._release_sync(block)
        nxt = self._next(me)
        if nxt is not None and nxt.worker is None:
            worker.sim, nxt.worker = nxt, worker
            return nxt
        self.launch.idle.append(worker)
        worker.sim = None
        if nxt is None:
            self._finished.release()       # back to the launching thread
        else:
            nxt.worker.lock.release()
        return None

    def _next(self, me):
        """The thread to run next (marked running), or None when every thread has ended."""
        ready = self.ready
        if self.interrupted is not None and self.error is None:
            self.error = (self.interrupted, self.interrupted.__traceback__)
            self._abort()
        while True:
            if ready:
                t = ready.popleft()
                if self.aborting and t.worker is None:   # never started: it never will
                    t.status = DONE
                    self.live -= 1
                    t.block.live -= 1
                    continue
                t.status = RUNNING
                _running(t)
                return t
            if self.live == 0:
                _running(None)
                return None
            try:
                if not self._wake_waiters():
                    self._all_blocked()
            except Exception as exc:        # a copy's delivery (or a wait's check) failed: me's error
                self.fail(me, exc)

    def _wake_waiters(self) -> bool:
        """Ready the waiting threads whose condition now holds (whether any was)."""
        woken = self._shuffled(t for t, _ in self.waiting.items() if t.wait[0]())
        for t in woken:
            del self.waiting[t]
            t.status = READY
            self.ready.append(t)
        return bool(woken)

    def _all_blocked(self):
        """No thread can run: deliver the copies in flight, else give the pollers another turn,
        else report the deadlock from one waiting thread."""
        if any(b.pending for b in self.blocks):
            for b in self.blocks:
                b.deliver(everything=True)
            return
        pollers = [t for t in self.waiting if t.status == POLLING]
        if pollers and any(t.polls < POLL_ROUNDS for t in pollers):
            for t in pollers:
                del self.waiting[t]
                t.status = READY
                self.ready.append(t)
            return
        waiters = sorted(self.waiting, key=lambda t: (t.block.rank, t.thread_id))
        if not waiters:
            raise SimulatorError("numba_tma simulator: no thread can run, none waits (a scheduler bug)")
        reporter = next((t for t in waiters if t.status == WAITING), waiters[0])
        del self.waiting[reporter]
        reporter.status, reporter.error = READY, SimulatorError(self.deadlock_report())
        self.ready.append(reporter)

    def deadlock_report(self) -> str:
        """One line per group of threads blocked on the same thing."""
        groups: dict[str, list] = {}
        threads = sorted((t for t in self.threads if t.status != DONE), key=lambda t: (t.block.index, t.thread_id))
        for t in threads:
            what = "cuda.syncthreads()" if t.status == SYNC else t.wait[1]()
            groups.setdefault(what, []).append((t.index, t.block.index))
        if self.size == 1:
            where_ = f"block {self.blocks[0].index}"
        else:
            where_ = f"the cluster of blocks {sorted({t.block.index for t in threads})}"
        lines = [f"numba_tma simulator: deadlock in {where_}: every thread is blocked and no async copy is in "
                 "flight, so no wait can complete:"]
        for what, ids in groups.items():
            blocks = sorted({b for _, b in ids})
            of = "" if self.size == 1 else f" of block {blocks[0]}" if len(blocks) == 1 else f" of blocks {blocks}"
            listed = ", ".join(str(i) for i, _ in ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")
            who = f"thread {ids[0][0]}" if len(ids) == 1 else f"{len(ids)} threads ({listed})"
            lines.append(f"  {who}{of}: {what}")
        return "\n".join(lines)

    def fail(self, thread, exc):
        """``thread`` raised ``exc``: the launch ends as that error (the first one); every other
        thread is stopped (those not started never start, the blocked ones unwind)."""
        if self.error is None:
            error = exc
            if thread is not None:
                prefix = f"tid={list(thread.threadIdx)} ctaid={list(thread.blockIdx)}"
                text = str(exc)
                if isinstance(exc, SimulatorError) and SEED is not None and "NUMBA_TMA_SIM_SEED=" not in text:
                    text += f" [NUMBA_TMA_SIM_SEED={SEED} replays this run]"
                try:
                    error = type(exc)(f"{prefix}: {text}" if text else prefix)
                except Exception:         # an exception type that takes other arguments: as it is
                    error = exc
            self.error = (error, exc.__traceback__)
        self._abort()

    def _abort(self):
        if not self.aborting:
            self.aborting = True
            for t in self.threads:        # the blocked threads are run, to unwind
                if t.status in (WAITING, POLLING, SYNC):
                    t.status = READY
                    self.ready.append(t)
            self.waiting.clear()
            for b in self.blocks:
                b.in_sync = []

    # -- block barriers ------------------------------------------------------------------------
    def syncthreads(self, me):
        block = me.block
        if self.aborting:
            raise Abort
        me.status = SYNC
        block.in_sync.append(me)
        self.progress += 1
        if len(block.in_sync) == block.live:
            self._release_sync(block)
        self._switch(me)

    def _release_sync(self, block):
        if self.clock is not None and block.in_sync:
            rows = np.array([t.slot for t in block.in_sync])
            merged = self.clock[rows].max(axis=0)
            self.clock[rows] = merged
            self.clock[rows, rows] = merged[rows] + 1
            for t in block.in_sync:
                t.mark += 1
        for t in block.in_sync:
            t.status = READY
        self.ready.extend(self._shuffled(block.in_sync))
        block.in_sync = []


class Worker(threading.Thread):
    """An OS thread of a launch, running one simulated thread at a time.  numba-cuda's kernel
    ``cuda`` module reads ``threadIdx``, ``blockIdx``, ``thread_id`` and calls ``syncthreads*`` on
    ``threading.current_thread()``: here."""

    def __init__(self, launch, number):
        super().__init__(name=f"numba_tma simulator worker {number}", daemon=True)
        self.launch, self.sim = launch, None
        self.threadIdx = self.blockIdx = None
        self.thread_id = 0
        self.lock = _thread.allocate_lock()
        self.lock.acquire()               # held: the worker waits on it for something to run

    def run(self):
        if self.launch.debug:
            np.seterr(divide="raise")     # numba-cuda's simulator does this for debug=True kernels
        while True:
            self.lock.acquire()
            sim = self.sim
            if sim is None:
                return                    # the launch is over
            while sim is not None:
                sim = self._run(sim)

    def _run(self, sim):
        self.threadIdx, self.blockIdx, self.thread_id = sim.threadIdx, sim.blockIdx, sim.thread_id
        cluster = sim.block.cluster
        try:
            self.launch.fn(*self.launch.args)
            if sim.block.live == 1 and EXIT_HOOK is not None and not cluster.aborting:
                EXIT_HOOK(sim)
        except Abort:
            pass
        except BaseException as exc:      # noqa: BLE001 - ends the launch as this error
            cluster.fail(sim, exc)
        return cluster._ended(sim, self)

    def syncthreads(self):
        self.sim.block.cluster.syncthreads(self.sim)

    def _vote(self, value, combine):
        sim = self.sim
        block = sim.block
        if block.votes is None:
            block.votes = np.zeros(self.launch.block_dim, dtype=np.bool_)
        block.votes[tuple(sim.index)] = value
        self.syncthreads()
        result = combine(block.votes)
        self.syncthreads()
        return result

    def syncthreads_count(self, value):
        return self._vote(value, np.count_nonzero)

    def syncthreads_and(self, value):
        return self._vote(value, lambda votes: 1 if np.all(votes) else 0)

    def syncthreads_or(self, value):
        return self._vote(value, lambda votes: 1 if np.any(votes) else 0)


class Launch:
    """One kernel launch: its grid, the blocks handed over but not run yet (their cluster is not
    complete), its workers, and what the shared-memory allocator records per launch."""

    def __init__(self, fn, grid_dim, block_dim, debug, args, dynamic_bytes, cluster_shape):
        self.fn, self.grid_dim, self.block_dim, self.debug, self.args = fn, grid_dim, block_dim, debug, args
        self.dynamic_bytes = dynamic_bytes   # the launch's dynamic shared memory (memory.py)
        self.cluster_shape = cluster_shape
        if any(g % c for g, c in zip(grid_dim, cluster_shape)):
            raise SimulatorError(f"numba_tma simulator: grid {grid_dim} is not a whole number of clusters "
                                 f"{cluster_shape}")
        self.blocks_left = grid_dim[0] * grid_dim[1] * grid_dim[2]
        self.arrived: dict = {}          # cluster index -> blocks handed over so far
        self.workers: list = []
        self.idle: list = []
        self.shared_layout: dict = {}    # memory: allocation key -> its first declaration's arguments
        self.dynamic_placed = None       # memory: (the dynamic buffer's alignment, where first declared)
        self.global_marks: dict = {}     # memory: a device array's address -> its bytes' generic-write marks
        self.global_views: dict = {}     # memory: id of a kernel argument's array -> (it, its marks' view)
        self.tensormaps: dict = {}       # memory: a descriptor's address -> its edit by a thread of the launch
        self.cluster = None              # the cluster running now
        self.call = None                 # numba-cuda's kernel call this launch serves

    def add(self, point):
        """Block ``point`` was handed over: run its cluster once all its blocks are."""
        first = tuple(p // c for p, c in zip(point, self.cluster_shape))
        count = self.arrived.get(first, 0) + 1
        self.blocks_left -= 1
        size = self.cluster_shape[0] * self.cluster_shape[1] * self.cluster_shape[2]
        if count < size:
            self.arrived[first] = count
            return
        self.arrived.pop(first, None)
        self.cluster = Cluster(self, first)
        try:
            self.cluster.run()
        finally:
            self.cluster = None

    def free_worker(self) -> Worker:
        if self.idle:
            return self.idle.pop()
        worker = Worker(self, len(self.workers))
        worker.start()
        self.workers.append(worker)
        return worker

    def end(self):
        """Stop the workers (every one is idle, or about to be)."""
        for worker in self.workers:
            worker.sim = None
            worker.lock.release()
        for worker in self.workers:
            worker.join()
        self.workers, self.idle = [], []


_LAUNCH = None                   # the launch running now (numba-cuda runs one kernel at a time)
_CLUSTER_SHAPE = (1, 1, 1)       # the cluster shape of the next launch (clusters_of)
_OPTED_IN = weakref.WeakKeyDictionary()   # kernel function -> the dynamic shared memory it is opted in to


def opt_in(fn, shared_mem):
    """``numba_tma.launch`` opted the kernel (its Python function) in to ``shared_mem`` bytes of
    dynamic shared memory; the GPU's driver keeps that, so numba's own launch may then take as
    much."""
    _OPTED_IN[fn] = max(_OPTED_IN.get(fn, 0), shared_mem)


@contextlib.contextmanager
def clusters_of(shape):
    """Run the blocks of the kernel launched inside in clusters of ``shape`` (a 3-tuple)."""
    global _CLUSTER_SHAPE
    before, _CLUSTER_SHAPE = _CLUSTER_SHAPE, tuple(shape)
    try:
        yield
    finally:
        _CLUSTER_SHAPE = before


def run_block(fn, grid_dim, block_dim, debug, point, args, call, dynamic_bytes):
    """numba-cuda's kernel call (``call``: an object of its own) hands over each block of the grid
    here, one after another; the first begins the simulator's kernel launch.  Blocks run when
    their cluster is complete."""
    global _LAUNCH
    launch = _LAUNCH
    if launch is None or launch.call is not call:   # the simulator's kernel launch
        if launch is not None:                        # one whose call was cut short (Ctrl-C between blocks)
            _LAUNCH = None
            launch.end()
        # refused before anything runs if an H200 would not take it (numba's own launch takes more
        # than 48 KB of dynamic shared memory only once numba_tma.launch opted the kernel in)
        launch_limits.check(grid_dim, block_dim, dynamic_bytes, launch_limits.H200, cluster=_CLUSTER_SHAPE,
                            opted_in=dynamic_bytes <= _OPTED_IN.get(fn, 0))
        launch = _LAUNCH = Launch(fn, grid_dim, block_dim, debug, args, dynamic_bytes, _CLUSTER_SHAPE)
        launch.call = call
    try:
        launch.add(point)
    except BaseException:
        _LAUNCH = None
        launch.end()
        raise
    if launch.blocks_left == 0:
        _LAUNCH = None
        launch.end()


# -- what the twins use ---------------------------------------------------------------------------

def current() -> SimThread:
    """The simulated CUDA thread running the caller."""
    sim = getattr(threading.current_thread(), "sim", None)
    if sim is None:
        raise SimulatorError("numba_tma simulator: a device op was called outside a kernel")
    return sim


def _running(thread):
    global RUNNING_THREAD
    RUNNING_THREAD = thread


def seed():
    """The seed of this run's completion order (NUMBA_TMA_SIM_SEED replays it)."""
    return SEED


def current_launch() -> Launch:
    if _LAUNCH is None:
        raise SimulatorError("numba_tma simulator: no kernel is running")
    return _LAUNCH


def syncthreads():
    """``cuda.syncthreads()`` of the running thread."""
    thread = current()
    thread.block.cluster.syncthreads(thread)


def wait(thread, done, what):
    """Block ``thread`` (the running one) until ``done()``; ``what()`` describes the wait for a
    deadlock report."""
    if done():
        return
    cluster = thread.block.cluster
    if cluster.aborting:
        raise Abort
    thread.status, thread.wait = WAITING, (done, what)
    cluster.waiting[thread] = None
    cluster._switch(thread)


def poll(thread, done, what):
    """A probe of ``thread`` (the running one) failed: let the other threads run first (until
    ``done()``, or until nothing else can run); the probe then returns False."""
    cluster = thread.block.cluster
    if cluster.aborting:
        raise Abort
    if cluster.progress == thread.poll_mark:
        thread.polls += 1
    else:
        thread.polls, thread.poll_mark = 1, cluster.progress
    thread.status, thread.wait = POLLING, (done, what)
    cluster.waiting[thread] = None
    cluster._switch(thread)


def release(thread):
    """``thread`` releases (arrives at a barrier): its clock as the barrier publishes it (a copy;
    None with the checker off); the thread goes on in a new segment."""
    clock = thread.block.cluster.clock
    if clock is None:
        return None
    row = clock[thread.slot].copy()
    clock[thread.slot, thread.slot] += 1
    thread.mark += 1
    return row


def fence(thread, scope):
    """``thread``'s ``fence.acq_rel`` / ``fence.sc`` at ``scope``: what it did and acquired so far,
    as a later relaxed arrival publishes it (:func:`relaxed_release`); it goes on in a new segment."""
    thread.fenced = (release(thread), scope)


def relaxed_release(thread, block):
    """What a relaxed arrival of ``thread`` at a barrier of ``block`` publishes: nothing of its own
    accesses (a relaxed arrival orders nothing), only what its last fence covered, if that fence's
    scope reaches ``block`` (a CTA-scope fence does not reach another block of the cluster)."""
    if thread.fenced is None:
        return None
    row, scope = thread.fenced
    return None if scope == "cta" and block is not thread.block else row


def acquire(thread, published):
    """``thread`` has waited for a barrier that published ``published`` (clocks merged by
    :func:`joined`): what was ordered before those releases is ordered before ``thread``'s present."""
    if published is not None:
        row = thread.block.cluster.clock[thread.slot]
        np.maximum(row, published, out=row)


def joined(published, more):
    """The clocks of two releases at one barrier phase, merged."""
    return more if published is None else published if more is None else np.maximum(published, more)


def proxy_fence(thread, spaces):
    """``thread`` fences the generic proxy against the async proxy for ``spaces`` ("shared",
    "global"): its writes so far (its segments up to now) are ordered for the async ops of the
    threads that synchronise with it later, and every write ordered before it for its own."""
    cluster = thread.block.cluster
    if cluster.clock is None:
        return
    for space in spaces:
        cluster.fences[space].append((thread.slot + 1) << 24 | int(cluster.clock[thread.slot, thread.slot]))
        cluster.fenced[space][thread.slot] = cluster.clock[thread.slot].copy()
    cluster.clock[thread.slot, thread.slot] += 1
    thread.mark += 1


def changed(thread):
    """Something a waiting thread may wait for has changed."""
    thread.block.cluster.progress += 1


def waits_in_vain(thread) -> bool:
    """Whether ``thread`` is blocked in a wait (or a failed probe) whose condition does not hold."""
    return thread.status in (WAITING, POLLING) and not thread.wait[0]()


def live_threads(block) -> list:
    """The threads of ``block`` that have not ended."""
    return [t for t in block.threads if t.status != DONE]
