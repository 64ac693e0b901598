"""Memory fences: between proxies (generic <-> async, generic <-> tensormap), for barrier
initialisation, and the acq_rel / sc fences of the memory model.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

DeviceArray: TypeAlias = Any   # a device array in global memory (a kernel argument)

def acq_rel(scope: Literal['cta', 'cluster', 'gpu', 'sys'] = 'gpu') -> None:
    """A release-acquire fence at ``scope`` (``"cta"``, ``"cluster"`` — sm_90 —, ``"gpu"``,
    ``"sys"``): this thread's accesses before it are ordered before those after it, as seen by
    threads that synchronise with it at that scope.

    Example::

        data[i] = v
        fence.acq_rel("gpu")
        flag[0] = 1

    PTX::

        fence.acq_rel.gpu;

    Requires sm_80 or newer, PTX ISA 7.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cuda::ptx::fence (acq_rel)``, ``cuda::atomic_thread_fence(memory_order_acq_rel)``.
    """


def mbarrier_init() -> None:
    """Make prior ``mbarrier.init`` visible to the async proxy and the cluster.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()

    PTX::

        fence.mbarrier_init.release.cluster;

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.arch.mbarrier_init_fence``, ``cuda::ptx::fence_mbarrier_init``.
    """


def proxy_async(space: Literal[None, 'shared::cta', 'shared::cluster', 'global'] = 'shared::cta') -> None:
    """Order this thread's generic-proxy memory accesses with the async proxy (TMA, bulk copies):
    after writing shared memory with ordinary stores and before a TMA store / bulk copy reads it,
    and after async writes before generic reads where no mbarrier orders them.  ``space``:
    ``"shared::cta"`` (the default: one ``FENCE.VIEW.ASYNC.S``), ``"shared::cluster"``,
    ``"global"`` (before bulk copies read global data this thread wrote) or ``None`` for every
    state space (a full memory barrier on the H200's SASS: use the narrowest that suffices).

    Example::

        tile[ty, tx] = value
        fence.proxy_async()
        cuda.syncthreads()

    PTX::

        fence.proxy.async.shared::cta;

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.fence_async_shared``, ``cute.arch.fence_proxy``, ``cuda::ptx::fence_proxy_async``.
    """


def proxy_tensormap_acquire(desc: TensorMap | DeviceArray, scope: Literal['cta', 'cluster', 'gpu', 'sys'] = 'gpu') -> None:
    """Before TMA uses a descriptor that ordinary stores (or ``tensormap.replace_*``) wrote:
    make those writes visible to the tensormap proxy.  ``scope``: ``"gpu"`` (the default) when
    another kernel or block wrote it, ``"sys"`` for the host, ``"cta"`` / ``"cluster"`` for this
    block or cluster.  (``tma.load`` and friends issue ``.sys`` themselves for a descriptor in
    global memory.)

    Example::

        fence.proxy_tensormap_acquire(edited, "gpu")

    PTX::

        fence.proxy.tensormap::generic.acquire.gpu [desc], 128;

    Requires sm_90 or newer, PTX ISA 8.3.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::fence_proxy_tensormap_generic (acquire)``.
    """


def proxy_tensormap_release(scope: Literal['cta', 'cluster', 'gpu', 'sys'] = 'gpu') -> None:
    """After writing a descriptor with ordinary stores: release those writes to the tensormap
    proxy at ``scope``, for the consumer's :func:`proxy_tensormap_acquire`.

    Example::

        fence.proxy_tensormap_release("gpu")

    PTX::

        fence.proxy.tensormap::generic.release.gpu;

    Requires sm_90 or newer, PTX ISA 8.3.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::fence_proxy_tensormap_generic (release)``.
    """


def sc(scope: Literal['cta', 'cluster', 'gpu', 'sys'] = 'gpu') -> None:
    """A sequentially consistent fence at ``scope`` (``"cta"``, ``"cluster"`` — sm_90 —,
    ``"gpu"``, ``"sys"``).

    Example::

        fence.sc("sys")

    PTX::

        fence.sc.gpu;

    Requires sm_80 or newer, PTX ISA 7.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cuda::ptx::fence (sc)``, ``cuda::atomic_thread_fence(memory_order_seq_cst)``.
    """
