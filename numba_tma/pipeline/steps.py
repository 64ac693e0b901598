"""The steps of a ring, written once: device functions of the CUDA target when compiled, the same
Python on the simulator's ops under the simulator."""

from __future__ import annotations

from numba import cuda

from ..ops import at, cluster, cp_async, fence, mbarrier, sync, tma
from .state import advance
from .state import device as _device


def _steps(config):
    """The step functions of ``config``'s ring; its facts are constants of their closures."""
    stages = config.stages
    cluster_wide, full_count, empty_count = config.cluster, config.full_count, config.empty_count
    consumer_warps = config.consumers.kind in ("warp", "warpgroup")
    has_empty = config.consumers.kind != "same_thread"
    producer_warp = config.producer.kind != "thread"
    producer_thread_arrives = config.producers.kind == "thread"
    async_consumer = config.async_consumer
    ordering_release = config.reads == "loads"     # "wgmma": the consumers' reads are over at their release
    reading = stages - 1                  # stores still reading when a store stage is acquired

    @_device
    def init(bars):
        if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0:
            blocks = cluster.nctarank() if cluster_wide else 1
            for i in range(stages):
                mbarrier.init(at(bars, i), full_count)
                if has_empty:
                    mbarrier.init(at(bars, stages + i), empty_count * blocks)
            fence.mbarrier_init()
        if cluster_wide:
            cluster.sync()
        else:
            cuda.syncthreads()

    # The producer's wait on ``empty`` has the default (CTA-scope acquire) semantics in a cluster
    # ring too, as CUTLASS's ClusterBarrier::wait (the PipelineTmaAsync producer_acquire) has:
    # the consumers' remote arrivals are cluster-scope releases.  An ``.acquire.cluster`` wait adds
    # an L1 invalidation (CCTL.IVALL) per stage; on the H200 the two scopes timed within the
    # run-to-run spread of examples/cluster_multicast.py (BENCHMARKS.md, seventh session).
    @_device
    def wait_empty(bars, index, phase):
        if not has_empty:
            return
        mbarrier.wait(at(bars, stages + index), phase)

    @_device
    def prime(bars, index, nbytes):
        if producer_warp:
            if sync.elect_one():
                mbarrier.arrive_expect_tx(at(bars, index), nbytes)
        else:
            mbarrier.arrive_expect_tx(at(bars, index), nbytes)

    @_device
    def acquire(bars, index, phase, nbytes):
        wait_empty(bars, index, phase)
        prime(bars, index, nbytes)

    @_device
    def load(bars, index, desc, tile, coords, multicast):
        if producer_warp:
            if sync.elect_one():
                tma.load(desc, tile, coords, at(bars, index), multicast=multicast)
        else:
            tma.load(desc, tile, coords, at(bars, index), multicast=multicast)

    @_device
    def commit(bars, index):
        if async_consumer:
            fence.proxy_async()
        if producer_thread_arrives:
            mbarrier.arrive(at(bars, index))
        else:
            cuda.syncwarp()
            if sync.elect_one():
                mbarrier.arrive(at(bars, index))

    @_device
    def commit_cp_async(bars, index):
        cp_async.mbarrier_arrive(at(bars, index), noinc=True)

    @_device
    def wait(bars, index, phase):
        mbarrier.wait(at(bars, index), phase)

    # A cluster ring's release is one cluster-scope fence and a relaxed arrival in each block: a
    # release arrival each is one MEMBAR.ALL.GPU each (ptxas), and the consumer's thread waits for
    # every one; in one H200 run of benchmarks/bench_pipeline.py the fenced form ran
    # examples/cluster_multicast.py 1.03x (clusters of 2) and 1.31x (of 4) faster than the
    # hand-written ring's release arrivals (BENCHMARKS.md, eighth session).
    @_device
    def arrive_empty(bars, index):
        """One consumer's arrival on ``empty[index]``: in every block of a cluster ring."""
        if cluster_wide:
            if ordering_release:
                fence.acq_rel("cluster")
            for rank in range(cluster.nctarank()):
                mbarrier.arrive_remote(at(bars, stages + index), rank, sem="relaxed")
        else:
            mbarrier.arrive(at(bars, stages + index))

    # A warp's release in a cluster ring: lane r arrives in block r (CUTLASS's signalling lanes),
    # the cluster's arrivals one instruction of the warp instead of a loop of one lane.
    @_device
    def release(bars, index):
        if not has_empty:
            return
        if consumer_warps:
            cuda.syncwarp()
            if cluster_wide:
                lane = cuda.laneid
                if lane < cluster.nctarank():
                    if ordering_release:
                        fence.acq_rel("cluster")
                    mbarrier.arrive_remote(at(bars, stages + index), lane, sem="relaxed")
            elif sync.elect_one():
                arrive_empty(bars, index)
        else:
            arrive_empty(bars, index)

    @_device
    def tail(bars, state):
        if not has_empty:
            return
        for _ in range(stages):
            wait_empty(bars, state.index, state.phase)
            state = advance(state)

    @_device
    def store_acquire():
        tma.wait_group_read(reading)

    @_device
    def store_commit():
        tma.commit_group()

    @_device
    def store_tail():
        tma.wait_group(0)

    return dict(init=init, acquire=acquire, prime=prime, wait_empty=wait_empty, load=load,
                commit=commit, commit_cp_async=commit_cp_async, wait=wait, release=release, tail=tail,
                store_acquire=store_acquire, store_commit=store_commit, store_tail=store_tail)


_STEPS: dict = {}


def steps(config):
    """``config``'s step functions, made once per configuration."""
    found = _STEPS.get(config)
    if found is None:
        found = _STEPS[config] = _steps(config)
    return found
