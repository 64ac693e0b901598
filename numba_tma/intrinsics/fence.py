"""Memory fences between proxies and for barrier initialisation."""

from ._core import PtxOp, Sample, exported

mbarrier_init = PtxOp(
    "fence.mbarrier_init", "fence.mbarrier_init.release.cluster;",
    tlx=("cute.arch.mbarrier_init_fence", "cuda::ptx::fence_mbarrier_init"),
    # ptxas emits no instruction of its own for the fence on sm_90a / sm_100a: the sample's kernel
    # is recognised by the barrier initialisation beside it
    samples=(Sample("mbarrier.init(bar, 1)\nfence.mbarrier_init()", "SYNCS.EXCH.64"),),
    doc="""Make prior ``mbarrier.init`` visible to the async proxy and the cluster.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
    """,
).intrinsic()

proxy_async = PtxOp(
    "fence.proxy_async", "fence.proxy.async.shared::cta;",
    tlx=("tlx.fence_async_shared", "cute.arch.fence_proxy", "cuda::ptx::fence_proxy_async"),
    samples=(Sample("fence.proxy_async()", "FENCE.VIEW.ASYNC.S"),),
    doc="""Order this thread's generic-proxy shared-memory accesses with the async proxy.

    Use it after writing shared memory with ordinary stores and before a TMA store / bulk copy reads
    it (and after async writes before generic reads where no mbarrier orders them).

    Example::

        tile[ty, tx] = value
        fence.proxy_async()
        cuda.syncthreads()
    """,
).intrinsic()

__all__ = exported("fence")
