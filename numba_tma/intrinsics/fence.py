"""Memory fences: between proxies (generic <-> async, generic <-> tensormap), for barrier
initialisation, and the acq_rel / sc fences of the memory model."""

from ._core import Refusal, Choice, PtxOp, Qualifier, Requirement, Sample, exported
from .tma import Descriptor

CLUSTER = Requirement((9, 0), (7, 8))
_SCOPES = {"cta": ".cta", "cluster": Choice(".cluster", CLUSTER), "gpu": ".gpu", "sys": ".sys"}
_TENSORMAP = Requirement((9, 0), (8, 3))
_FENCE = "9.7.13.4 membar / fence"   # PTX ISA 9.1 (the assembly rows' hand-written PTX)

mbarrier_init = PtxOp(
    "fence.mbarrier_init", "fence.mbarrier_init.release.cluster;",
    tlx=("cute.arch.mbarrier_init_fence", "cuda::ptx::fence_mbarrier_init"),
    # ptxas emits no instruction of its own for the fence on sm_90a / sm_100a: the sample's kernel
    # is recognised by the barrier initialisation beside it
    samples=(Sample("mbarrier.init(bar, 1)\nfence.mbarrier_init()", "SYNCS.EXCH.64",
                    ptx="fence.mbarrier_init.release.cluster;", isa=_FENCE),),
    doc="""Make prior ``mbarrier.init`` visible to the async proxy and the cluster.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
    """,
    refusals=(Refusal('fence.mbarrier_init(bar)',
                      'numba_tma: fence.mbarrier_init takes (): too many positional arguments'),),
).intrinsic()

proxy_async = PtxOp(
    "fence.proxy_async", "fence.proxy.async{space};",
    qualifiers=(Qualifier("space", {None: "", "shared::cta": ".shared::cta", "shared::cluster": ".shared::cluster",
                                    "global": ".global"}, "shared::cta"),),
    tlx=("tlx.fence_async_shared", "cute.arch.fence_proxy", "cuda::ptx::fence_proxy_async"),
    samples=(Sample("fence.proxy_async()", "FENCE.VIEW.ASYNC",   # .S shared, .G global
                    ptx="fence.proxy.async.shared::cta;", isa=_FENCE),),
    doc="""Order this thread's generic-proxy memory accesses with the async proxy (TMA, bulk copies):
    after writing shared memory with ordinary stores and before a TMA store / bulk copy reads it,
    and after async writes before generic reads where no mbarrier orders them.  ``space``:
    ``"shared::cta"`` (the default: one ``FENCE.VIEW.ASYNC.S``), ``"shared::cluster"``,
    ``"global"`` (before bulk copies read global data this thread wrote) or ``None`` for every
    state space (a full memory barrier on the H200's SASS: use the narrowest that suffices).

    Example::

        tile[ty, tx] = value
        fence.proxy_async()
        cuda.syncthreads()
    """,
    refusals=(Refusal("fence.proxy_async('shared')",
                      "fence.proxy_async: argument 'space' must be a constant, one of None, 'shared::cta'"),),
).intrinsic()

acq_rel = PtxOp(
    "fence.acq_rel", "fence.acq_rel{scope};",
    qualifiers=(Qualifier("scope", _SCOPES, "gpu"),), need=Requirement((8, 0), (7, 0)),
    tlx=("cuda::ptx::fence (acq_rel)", "cuda::atomic_thread_fence(memory_order_acq_rel)"),
    samples=(Sample("fence.acq_rel()", "MEMBAR.ALL",               # .CTA / .GPU / .SYS by scope
                    ptx="fence.acq_rel.gpu;", isa=_FENCE),),
    doc="""A release-acquire fence at ``scope`` (``"cta"``, ``"cluster"`` — sm_90 —, ``"gpu"``,
    ``"sys"``): this thread's accesses before it are ordered before those after it, as seen by
    threads that synchronise with it at that scope.

    Example::

        data[i] = v
        fence.acq_rel("gpu")
        flag[0] = 1
    """,
    refusals=(Refusal("fence.acq_rel('block')",
                      "fence.acq_rel: argument 'scope' must be a constant, one of 'cta', 'cluster', 'gpu', 'sys'"),),
).intrinsic()

sc = PtxOp(
    "fence.sc", "fence.sc{scope};",
    qualifiers=(Qualifier("scope", _SCOPES, "gpu"),), need=Requirement((8, 0), (7, 0)),
    tlx=("cuda::ptx::fence (sc)", "cuda::atomic_thread_fence(memory_order_seq_cst)"),
    samples=(Sample("fence.sc()", "MEMBAR.SC", ptx="fence.sc.gpu;", isa=_FENCE),),
    doc="""A sequentially consistent fence at ``scope`` (``"cta"``, ``"cluster"`` — sm_90 —,
    ``"gpu"``, ``"sys"``).

    Example::

        fence.sc("sys")
    """,
    refusals=(Refusal("fence.sc(scope='cluster', sem='acq_rel')",
                      "numba_tma: fence.sc takes (scope): got an unexpected keyword argument 'sem'"),),
).intrinsic()

proxy_tensormap_acquire = PtxOp(
    "fence.proxy_tensormap_acquire", "fence.proxy.tensormap::generic.acquire{scope} [{desc}], 128;",
    (Descriptor("desc"),), qualifiers=(Qualifier("scope", _SCOPES, "gpu"),), need=_TENSORMAP,
    tlx=("cuda::ptx::fence_proxy_tensormap_generic (acquire)",),
    samples=(Sample("fence.proxy_tensormap_acquire(desc)", "UTMACCTL.IV",
                    ptx="fence.proxy.tensormap::generic.acquire.gpu [%rd], 128;", isa=_FENCE),),
    doc="""Before TMA uses a descriptor that ordinary stores (or ``tensormap.replace_*``) wrote:
    make those writes visible to the tensormap proxy.  ``scope``: ``"gpu"`` (the default) when
    another kernel or block wrote it, ``"sys"`` for the host, ``"cta"`` / ``"cluster"`` for this
    block or cluster.  (``tma.load`` and friends issue ``.sys`` themselves for a descriptor in
    global memory.)

    Example::

        fence.proxy_tensormap_acquire(edited, "gpu")
    """,
    refusals=(Refusal("fence.proxy_tensormap_acquire(desc, 'block')",
                      "fence.proxy_tensormap_acquire: argument 'scope' must be a constant, one of 'cta'"),),
).intrinsic()

proxy_tensormap_release = PtxOp(
    "fence.proxy_tensormap_release", "fence.proxy.tensormap::generic.release{scope};",
    qualifiers=(Qualifier("scope", _SCOPES, "gpu"),), need=_TENSORMAP,
    tlx=("cuda::ptx::fence_proxy_tensormap_generic (release)",),
    samples=(Sample("fence.proxy_tensormap_release()", "MEMBAR.ALL",
                    ptx="fence.proxy.tensormap::generic.release.gpu;", isa=_FENCE),),
    doc="""After writing a descriptor with ordinary stores: release those writes to the tensormap
    proxy at ``scope``, for the consumer's :func:`proxy_tensormap_acquire`.

    Example::

        fence.proxy_tensormap_release("gpu")
    """,
    refusals=(Refusal('fence.proxy_tensormap_release(desc)',
                      "fence.proxy_tensormap_release: argument 'scope' must be a constant, one of 'cta'"),),
).intrinsic()

__all__ = exported("fence")
