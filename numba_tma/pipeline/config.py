"""A pipeline's configuration: its stages, who produces, who consumes, whether it spans a cluster.
Made once, outside the kernel; used in the kernel as a constant whose Numba type carries it."""

from __future__ import annotations

from dataclasses import dataclass

from .rules import refuse

MAX_ARRIVALS = (1 << 20) - 1     # an mbarrier's arrival count (PTX: 2^20 - 1)
MAX_STAGES = 64


def _positive(where, argument, value, limit):
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= limit:
        raise refuse(where, argument, f"must be an integer from 1 to {limit}", value)
    return value


# -- participants -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Participants:
    """Who takes part in one side of a pipeline: ``count`` threads, warps or warpgroups.

    Threads arrive one by one; a warp (or each warp of a warpgroup) arrives once, from one lane
    the pipeline elects after ``__syncwarp`` orders the warp's reads before it."""
    kind: str
    count: int

    @property
    def arrivals(self) -> int:
        """Arrivals per stage and round on the barrier this side releases."""
        return 0 if self.kind == "same_thread" else self.count * (4 if self.kind == "warpgroup" else 1)

    def __str__(self):
        return f"{self.kind}s({self.count})"


def threads(count: int = 1) -> Participants:
    """``count`` threads, each arriving itself."""
    return Participants("thread", _positive("pipeline.threads", "count", count, MAX_ARRIVALS))


def warps(count: int = 1) -> Participants:
    """``count`` whole warps (all 32 lanes call the step), one arrival each."""
    return Participants("warp", _positive("pipeline.warps", "count", count, MAX_ARRIVALS))


def warpgroups(count: int = 1) -> Participants:
    """``count`` warpgroups (4 warps each, as wgmma consumers are), one arrival per warp."""
    return Participants("warpgroup", _positive("pipeline.warpgroups", "count", count, MAX_ARRIVALS // 4))


def same_thread() -> Participants:
    """The producer's own thread consumes each stage (a TMA load -> TMA store ring in one thread):
    the ring has no ``empty`` barriers and ``release`` is nothing; the slot is free again when the
    thread's own use of it is (a store's ``TmaStorePipeline.acquire()``)."""
    return Participants("same_thread", 1)


def _participants(where, argument, value):
    if not isinstance(value, Participants):
        raise refuse(where, argument, "must be pipeline.threads(n), pipeline.warps(n) or pipeline.warpgroups(n)",
                      value)
    return value


_ONE_THREAD = Participants("thread", 1)


class _Pipeline:
    """What the three pipelines share: their stage count and a name for messages; the facts a
    kind does not set keep these defaults (a store ring has no barriers, no participants)."""

    kind = "pipeline"
    producer = producers = consumers = _ONE_THREAD
    cluster = async_consumer = False
    reads = "loads"
    full_count = empty_count = 0

    def __init__(self, stages):
        self.stages = _positive(type(self).__name__, "stages", stages, MAX_STAGES)

    @property
    def barrier_count(self) -> int:
        """The mbarriers the ring needs (``full`` then ``empty``, ``stages`` each; ``full`` only when
        the producer's thread consumes): the length of the uint64 shared array ``create`` takes
        (``SharedMemoryPlan.pipeline`` reserves it)."""
        return self.stages if self.consumers.kind == "same_thread" else 2 * self.stages

    def _key(self):
        return (type(self).__name__, self.stages)

    def __eq__(self, other):
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self):
        return hash(self._key())

    @property
    def _numba_type_(self):
        from .numba_types import pipeline_type

        return pipeline_type(self)


class TmaPipeline(_Pipeline):
    """A ring filled by TMA (or bulk) loads: ``full[i]`` counts one arrival (the producer's
    ``arrive_expect_tx``) and the bytes; ``empty[i]`` one arrival per consumer participant (times
    the cluster's blocks when ``cluster=True``: a stage of block r is filled by multicast from
    every block, so each consumer releases it in every block).

    ``producer``: ``threads(1)`` (default: the calling thread issues everything; pick it yourself,
    e.g. ``if sync.elect_one():`` around the producer loop) or ``warps(1)`` (the whole warp calls
    the steps; the pipeline elects the lane that arrives and issues).  ``consumers``: who releases.
    The steps: ``prime(state, expect)`` (a stage of a fresh ring's first round: expect the bytes,
    no wait), ``acquire(state, expect)`` (wait ``empty``; ``arrive_expect_tx`` on ``full`` with
    ``expect`` bytes: a ``TensorMap`` — its ``box_bytes`` —, a tuple of maps, or a number),
    ``full(state)`` (the barrier a ``tma.load`` completes), ``load(state, desc, tile, coords,
    multicast=None)``, ``wait(state)``, ``release(state)``, ``tail(state)`` (the producer's drain
    before exit: waits every stage's last release, so no arrival is still on its way in).

    ``reads``: how the consumers read a stage.  ``"loads"`` (default): ordinary loads, which a
    cluster ring's release orders with one ``fence.acq_rel.cluster`` before its relaxed arrivals.
    ``"wgmma"``: only ``wgmma.mma_async`` from shared memory, waited for (``wgmma.wait_group``)
    before the release: those reads are over, so the arrivals order nothing and need no fence
    (CUTLASS's consumer_release; the fence is a ``MEMBAR.ALL.GPU`` per warp and K step).  Under the
    simulator a release while the thread's wgmma may still read the stage is reported.
    """

    kind = "tma"

    def __init__(self, stages, consumers=None, producer=None, cluster=False, reads="loads"):
        super().__init__(stages)
        self.consumers = _participants("TmaPipeline", "consumers", consumers if consumers is not None else threads(1))
        self.producer = _participants("TmaPipeline", "producer", producer if producer is not None else threads(1))
        if self.producer not in (threads(1), warps(1)):
            raise refuse("TmaPipeline", "producer", "must be threads(1) (one thread issues) or warps(1) (a whole "
                          "warp calls the steps; one lane is elected)", self.producer)
        if not isinstance(cluster, bool):
            raise refuse("TmaPipeline", "cluster", "must be True or False", cluster)
        self.cluster = cluster
        if self.consumers.kind == "same_thread" and (cluster or self.producer != threads(1)):
            raise refuse("TmaPipeline", "consumers", "may be same_thread() only with producer=threads(1) and no cluster",
                         self.consumers)
        if reads not in ("loads", "wgmma"):
            raise refuse("TmaPipeline", "reads", "must be 'loads' (the consumers read stages with ordinary loads) or "
                         "'wgmma' (only with wgmma.mma_async, waited for before each release)", reads)
        self.reads = reads
        self.full_count = 1
        self.empty_count = self.consumers.arrivals       # times the cluster's size, at run time

    def _key(self):
        return (*super()._key(), self.consumers, self.producer, self.cluster, self.reads)

    def create(self, bars):
        """The ring over ``bars`` (see :func:`_ring`)."""
        return _ring(self, bars)

    def __repr__(self):
        return (f"TmaPipeline(stages={self.stages}, consumers={self.consumers}, producer={self.producer}"
                f"{', cluster=True' if self.cluster else ''}{', reads=' + repr(self.reads) if self.reads != 'loads' else ''})")


class AsyncPipeline(_Pipeline):
    """A ring filled by threads: their stores (``commit(state)`` after writing the stage) or their
    ``cp.async`` copies (``commit_cp_async(state)`` after issuing them: the arrival lands when the
    thread's copies have).  ``full[i]`` counts one arrival per producer participant, ``empty[i]``
    one per consumer participant.  ``async_consumer=True``: the consumer is an async-proxy op
    (a TMA store, a wgmma): ``commit`` then issues ``fence.proxy_async()`` before arriving."""

    kind = "async"

    def __init__(self, stages, producers=None, consumers=None, async_consumer=False):
        super().__init__(stages)
        self.producers = _participants("AsyncPipeline", "producers", producers if producers is not None else threads(1))
        self.consumers = _participants("AsyncPipeline", "consumers", consumers if consumers is not None else threads(1))
        if not isinstance(async_consumer, bool):
            raise refuse("AsyncPipeline", "async_consumer", "must be True or False", async_consumer)
        self.async_consumer = async_consumer
        self.full_count = self.producers.arrivals
        self.empty_count = self.consumers.arrivals

    def _key(self):
        return (*super()._key(), self.producers, self.consumers, self.async_consumer)

    def create(self, bars):
        """The ring over ``bars`` (see :func:`_ring`)."""
        return _ring(self, bars)

    def __repr__(self):
        return (f"AsyncPipeline(stages={self.stages}, producers={self.producers}, consumers={self.consumers}"
                f"{', async_consumer=True' if self.async_consumer else ''})")


class TmaStorePipeline(_Pipeline):
    """A ring of output tiles drained by TMA (or bulk) stores, one thread issuing: before writing
    stage ``state.index`` again, ``acquire()`` waits until at most ``stages - 1`` stores are still
    reading their tiles (``tma.wait_group_read(stages - 1)``); ``commit()`` closes the store just
    issued as a bulk async-group; ``tail()`` waits for every store (``tma.wait_group(0)``).  It
    needs no barriers: the stores' groups are its state.  The threads that write a tile must
    ``fence.proxy_async()`` and synchronise with the issuing thread before its ``tma.store``."""

    kind = "store"

    @property
    def barrier_count(self) -> int:
        return 0

    def __repr__(self):
        return f"TmaStorePipeline(stages={self.stages})"

    # Called as Python only where kernels run as Python (numba-cuda's CUDA simulator); a compiled
    # kernel calls its Numba type's methods (.compiled).
    def acquire(self):
        _store_step(self, "acquire")

    def commit(self):
        _store_step(self, "commit")

    def tail(self):
        _store_step(self, "tail")

    def state(self):
        from .state import PipelineState

        return PipelineState(self.stages, 0, 0)


def _ring(config, bars):
    """``config.create(bars)`` called as Python, which happens only where kernels run as Python
    (numba-cuda's CUDA simulator: :mod:`.simulated`); a compiled kernel calls its Numba type's
    method (:mod:`.compiled`)."""
    from .simulated import bind_ring
    from .steps import steps

    return bind_ring(config, bars, steps(config))


def _store_step(config, name):
    from .steps import steps

    steps(config)[f"store_{name}"]()


