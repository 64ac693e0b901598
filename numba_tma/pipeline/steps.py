"""The steps of a ring, written once: device functions of the CUDA target when compiled, the same
Python on the simulator's ops under the simulator, and device functions of numba-cuda-mlir
(``numba_tma.mlir``) on its families: a :class:`Host` names what the steps are written with."""

from __future__ import annotations

from typing import Any, NamedTuple

import numba

from .. import ops
from . import block
from .state import advance, device


class Host(NamedTuple):
    """What a ring's steps are written with on one compiler (``name``): its device functions of the
    block's threads (:mod:`.block`: the first thread, the block and warp barriers, the lane),
    ``at`` and the op families, its device-function decorator, its ``uint32`` and ``advance`` made
    with them (:func:`.state.advance_of`)."""
    name: str
    threads: Any
    at: Any
    cluster: Any
    cp_async: Any
    fence: Any
    mbarrier: Any
    sync: Any
    tma: Any
    device: Any
    uint32: Any
    advance: Any


def _steps(config, host):
    """The step functions of ``config``'s ring on ``host``; its facts are constants of their closures."""
    first_thread, syncthreads, syncwarp, laneid = host.threads
    at, cluster, cp_async, fence = host.at, host.cluster, host.cp_async, host.fence
    mbarrier, sync, tma, advance, _device = host.mbarrier, host.sync, host.tma, host.advance, host.device
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
        if first_thread():
            blocks = cluster.nctarank() if cluster_wide else 1
            for i in range(stages):
                mbarrier.init(at(bars, i), full_count)
                if has_empty:
                    mbarrier.init(at(bars, stages + i), empty_count * blocks)
            fence.mbarrier_init()
        if cluster_wide:
            cluster.sync()
        else:
            syncthreads()

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
            syncwarp()
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
            syncwarp()
            if cluster_wide:
                lane = laneid()
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


#: numba-cuda's (under the simulator, the simulator's) host.
NUMBA_CUDA = Host("numba-cuda", block.THREADS, ops.at, ops.cluster, ops.cp_async, ops.fence, ops.mbarrier, ops.sync, ops.tma, device,
                  numba.uint32, advance)

_STEPS: dict = {}


def steps(config, host=NUMBA_CUDA):
    """``config``'s step functions on ``host``, made once per configuration and host name."""
    found = _STEPS.get((config, host.name))
    if found is None:
        found = _STEPS[config, host.name] = _steps(config, host)
    return found
