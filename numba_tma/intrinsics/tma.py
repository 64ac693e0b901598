"""TMA: tensor copies between global memory and shared memory (``cp.async.bulk.tensor``).

**Coordinates are innermost-first**, like the driver's ``globalDim``: for a C-ordered 2-D array
``a[row, col]``, ``coords = (col, row)`` — element offsets of the box's first element, not tile
indices.  Coordinates may be negative or run past the tensor: out-of-bounds elements are filled
(zero, or NaN with ``oob_fill``).

**Descriptors.** ``desc`` is a 128-byte CUtensorMap held in a ``uint8`` device array (global
memory).  Before the copy the op issues ``fence.proxy.tensormap::generic.acquire.sys`` on it, which
the PTX memory model requires for a map the host wrote with a copy.
"""

from numba.cuda import types

from ._core import GlobalArray, IntTuple, PtxOp, SharedArray, ptx_intrinsic, reject
from .mbarrier import barrier

__all__ = ["load"]

RANKS = (1, 2, 3, 4, 5)

_ACQUIRE = "fence.proxy.tensormap::generic.acquire.sys [$0], 128;\n"
_LOAD = (
    "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
    " [$1], [$0, {{{coords}}}], [${bar}];"
)


def _load_ptx(desc, dst, coords, bar):
    rank = len(coords)
    coord_ops = ", ".join(f"${2 + i}" for i in range(rank))
    return _ACQUIRE + _LOAD.format(rank=rank, coords=coord_ops, bar=2 + rank)


def _check_desc(desc, dst, coords, bar):
    if desc.dtype != types.uint8:
        raise reject("tma.load", "desc", "must be a uint8 device array holding the 128-byte CUtensorMap", desc)


LOAD = PtxOp(
    "tma.load",
    _LOAD.format(rank="{1..5}", coords="c0, ...", bar="bar"),
    min_cc=(9, 0), min_ptx=(8, 0),
)
load = ptx_intrinsic(
    LOAD,
    [
        GlobalArray("desc", what="a uint8 device array holding the 128-byte CUtensorMap"),
        SharedArray("dst", what="a shared array (the tile)"),
        IntTuple("coords", RANKS),
        barrier(),
    ],
    check=_check_desc,
    template=_load_ptx,
    doc="""Copy one box of a tensor from global memory into shared memory with TMA.

    ``desc``: the 128-byte tensor map in a ``uint8`` device array.
    ``dst``: shared array receiving the box (its element 0 is the box's first element; TMA needs it
    128-byte aligned: ``cuda.shared.array(shape, dtype, alignment=128)``, 1024 for 128B swizzle).
    ``coords``: tuple of 1-5 int32 element offsets, **innermost dimension first** (for a C-ordered
    2-D array ``a[row, col]``: ``(col, row)``); its length is the tensor map's rank.
    ``bar``: the mbarrier (uint64 shared array, element 0) that receives the byte count.

    PTX (rank 2 shown)::

        fence.proxy.tensormap::generic.acquire.sys [desc], 128;
        cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
            [dst], [desc, {c0, c1}], [bar];

    sm_90+, PTX ISA 8.0.  Issue from one thread, after ``mbarrier.arrive_expect_tx(bar, box_bytes)``.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, TILE * TILE * 4)
            tma.load(desc, tile, (x0, y0), bars)
        mbarrier.wait(bars, 0)
    """,
)
