"""Thread-block clusters (sm_90): where a block sits in its cluster, the cluster barrier, and
distributed shared memory (another block's shared array, addressed directly).
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

DeviceArray: TypeAlias = Any   # a device array in global memory (a kernel argument)

def arrive(relaxed: Literal[False, True] = False) -> None:
    """Arrive at the cluster barrier (every thread of every block of the cluster takes part);
    ``relaxed=True`` drops the release ordering.  Pair with :func:`wait`.

    Example::

        cluster.arrive()
        ...                                 # independent work
        cluster.wait()

    PTX::

        barrier.cluster.arrive;

    Requires sm_90 or newer, PTX ISA 7.8.
    With ``relaxed=True``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.arch.cluster_arrive``, ``cuda::ptx::barrier_cluster_arrive``.
    """


def clusterid(axis: Literal['x', 'y', 'z'] = 'x') -> int:
    """This cluster's position in the grid along ``axis``, in clusters.

    Example::

        r = cluster.clusterid()          # axis="x" (default), "y" or "z"

    PTX::

        mov.u32 out, %clusterid.x;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.clusterid``.
    """


def cta_rank_of(array: DeviceArray) -> int:
    """Which block of the cluster owns the shared memory of ``array`` (this block's rank for a
    local array; ``r`` for ``map_shared(array, r)``).

    Example::

        assert cluster.cta_rank_of(cluster.map_shared(tile, 1)) == 1

    PTX::

        getctarank.u64 out, array;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.block_rank_in_cluster (of an address)``.
    """


def ctaid(axis: Literal['x', 'y', 'z'] = 'x') -> int:
    """This block's position in its cluster along ``axis``.

    Example::

        r = cluster.ctaid()          # axis="x" (default), "y" or "z"

    PTX::

        mov.u32 out, %cluster_ctaid.x;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.ctaid``.
    """


def ctarank() -> int:
    """This block's rank in its cluster (0 to ``nctarank() - 1``).

    Example::

        r = cluster.ctarank()

    PTX::

        mov.u32 out, %cluster_ctarank;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.ctarank``.
    """


def is_first_cta() -> bool:
    """``True`` in the cluster's first block (rank 0).

    Example::

        if cluster.is_first_cta():
            mbarrier.init(bars, cluster.nctarank())

    PTX::

        {
        .reg .b32 r;
        .reg .pred p;
        mov.u32 r, %cluster_ctarank;
        setp.eq.u32 p, r, 0;
        selp.u32 out, 1, 0, p;
        }

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.is_first_cta_in_cluster``.
    """


def nclusterid(axis: Literal['x', 'y', 'z'] = 'x') -> int:
    """The grid's shape along ``axis``, in clusters.

    Example::

        r = cluster.nclusterid()          # axis="x" (default), "y" or "z"

    PTX::

        mov.u32 out, %nclusterid.x;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.nclusterid``.
    """


def nctaid(axis: Literal['x', 'y', 'z'] = 'x') -> int:
    """The cluster's shape along ``axis``, in blocks.

    Example::

        r = cluster.nctaid()          # axis="x" (default), "y" or "z"

    PTX::

        mov.u32 out, %cluster_nctaid.x;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.nctaid``.
    """


def nctarank() -> int:
    """The number of blocks in this block's cluster.

    Example::

        r = cluster.nctarank()

    PTX::

        mov.u32 out, %cluster_nctarank;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.nctarank``.
    """


def sync() -> None:
    """Arrive and wait at the cluster barrier: ``cuda.syncthreads()`` for the whole cluster (after
    it, shared-memory writes of every block before it are visible to every block).

    Example::

        cluster.sync()

    PTX::

        barrier.cluster.arrive;
        barrier.cluster.wait;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.cluster_sync``, ``tlx.cluster_barrier``.
    """


def wait() -> None:
    """Wait until every thread of the cluster arrived (:func:`arrive`); acquire ordering.

    Example::

        cluster.wait()

    PTX::

        barrier.cluster.wait;

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.cluster_wait``, ``cuda::ptx::barrier_cluster_wait``.
    """


def map_shared(array, cta_rank):
    """The shared array ``array`` as it lives in block ``cta_rank`` of this cluster: an ordinary
    Numba array (loads, stores, atomics) over that block's shared memory (``mapa``).  Issue a
    ``cluster.sync()`` between the other block's writes and these reads.  A constant ``cta_rank``
    outside 0-15 is refused at compile time; debug mode traps an ``array`` not in shared memory.

    PTX::

        mapa.u64 remote, local, cta_rank;

    Requires sm_90 or newer, PTX ISA 7.8.

    Example::

        peer = cluster.map_shared(tile, (cluster.ctarank() + 1) % cluster.nctarank())
        value = peer[i]
    """


def mask_all(size):
    """The multicast mask of every CTA of a
    cluster of ``size`` blocks (``multicast=`` of ``tma.load`` / ``bulk.load``).

    PTX::

        shl.b32 / add.s32 (integer arithmetic, no instruction of its own)

    Requires sm_90 or newer, PTX ISA 8.0 (for the multicast copy it feeds).  Constant arguments
    whose mask needs more than 16 bits (or names a block outside the cluster) are refused at
    compile time.

    Example::

        tma.load(desc, tile, coords, bars, multicast=cluster.mask_all(cluster.nctarank()))
    """


def mask_row(cluster_x, row):
    """The multicast mask of the CTAs of row ``row`` of a 2-D cluster ``cluster_x`` blocks
    wide (rank = x + y * cluster_x).

    PTX::

        shl.b32 / add.s32 (integer arithmetic, no instruction of its own)

    Requires sm_90 or newer, PTX ISA 8.0 (for the multicast copy it feeds).  Constant arguments
    whose mask needs more than 16 bits (or names a block outside the cluster) are refused at
    compile time.

    Example::

        mask = cluster.mask_row(cluster.nctaid("x"), cluster.ctaid("y"))
    """


def mask_column(cluster_x, cluster_y, column):
    """The multicast mask of the CTAs of column ``column``
    of a ``cluster_x`` x ``cluster_y`` cluster.

    PTX::

        shl.b32 / add.s32 (integer arithmetic, no instruction of its own)

    Requires sm_90 or newer, PTX ISA 8.0 (for the multicast copy it feeds).  Constant arguments
    whose mask needs more than 16 bits (or names a block outside the cluster) are refused at
    compile time.

    Example::

        mask = cluster.mask_column(cluster.nctaid("x"), cluster.nctaid("y"), cluster.ctaid("x"))
    """
