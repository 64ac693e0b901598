"""Memory fences between proxies and for barrier initialisation."""

from ._core import PtxOp, ptx_intrinsic

__all__ = ["mbarrier_init", "proxy_async"]

MBARRIER_INIT = PtxOp("fence.mbarrier_init", "fence.mbarrier_init.release.cluster;", min_cc=(9, 0), min_ptx=(8, 0))
mbarrier_init = ptx_intrinsic(
    MBARRIER_INIT, [],
    doc="""Make prior ``mbarrier.init`` visible to the async proxy and the cluster.

    PTX: ``fence.mbarrier_init.release.cluster;`` — sm_90+, PTX ISA 8.0.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
    """,
)

PROXY_ASYNC = PtxOp("fence.proxy_async", "fence.proxy.async.shared::cta;", min_cc=(9, 0), min_ptx=(8, 0))
proxy_async = ptx_intrinsic(
    PROXY_ASYNC, [],
    doc="""Order this thread's generic-proxy shared-memory accesses with the async proxy.

    Use it after writing shared memory with ordinary stores and before a TMA store / bulk copy reads
    it (and after async writes before generic reads where no mbarrier orders them).
    PTX: ``fence.proxy.async.shared::cta;`` — sm_90+, PTX ISA 8.0.

    Example::

        tile[ty, tx] = value
        fence.proxy_async()
        cuda.syncthreads()
    """,
)
