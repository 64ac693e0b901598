"""TMA: tensor copies between global memory and shared memory (``cp.async.bulk.tensor``).

**Coordinates are innermost-first**, like the driver's ``globalDim``: for a C-ordered 2-D array
``a[row, col]``, ``coords = (col, row)`` — element offsets of the box's first element, not tile
indices.  Coordinates may be negative or run past the tensor: out-of-bounds elements are filled
(zero, or NaN with ``oob_fill``).

**Descriptors.** ``desc`` is either a :class:`numba_tma.TensorMap` (passed by value as a
``__grid_constant__`` parameter; its dtype, rank and box are checked at compile time) or a
``uint8`` device array holding the 128 bytes (global memory, e.g. ``TensorMap.to_device()``), for
which the op first issues ``fence.proxy.tensormap::generic.acquire.sys`` as the PTX memory model
requires for a map the host wrote.
"""

from numba.cuda import types

from ._core import I64, IntTuple, Operand, PtxOp, SharedArray, ptx_intrinsic, reject
from .mbarrier import barrier
from .tensor_map_type import TensorMapType

__all__ = ["load"]

RANKS = (1, 2, 3, 4, 5)


class Descriptor(Operand):
    """A TensorMap kernel argument (its parameter address) or a uint8 device array (``l``)."""

    def check(self, op_name, ty):
        ok = isinstance(ty, TensorMapType) or (isinstance(ty, types.Array) and ty.dtype == types.uint8)
        if not ok:
            raise reject(op_name, self.name,
                         "must be a numba_tma.TensorMap or a uint8 device array holding the 128-byte CUtensorMap", ty)

    def lower(self, context, builder, ty, val):
        if isinstance(ty, TensorMapType):
            return [(builder.ptrtoint(val, I64), "l")]
        return [(builder.ptrtoint(context.make_array(ty)(context, builder, val).data, I64), "l")]


_ACQUIRE = "fence.proxy.tensormap::generic.acquire.sys [$0], 128;\n"
_LOAD = (
    "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
    " [$1], [$0, {{{coords}}}], [${bar}];"
)


def _load_ptx(desc, dst, coords, bar):
    rank = len(coords)
    text = _LOAD.format(rank=rank, coords=", ".join(f"${2 + i}" for i in range(rank)), bar=2 + rank)
    return text if isinstance(desc, TensorMapType) else _ACQUIRE + text


def _check_load(desc, dst, coords, bar):
    if not isinstance(desc, TensorMapType):
        return
    if len(coords) != desc.rank:
        raise reject("tma.load", "coords", f"must have {desc.rank} entries (the rank of {desc})", len(coords))
    if dst.dtype != desc.map_dtype:
        raise reject("tma.load", "dst", f"must have the map's dtype {desc.map_dtype} ({desc})", dst)


LOAD = PtxOp("tma.load", _LOAD.format(rank="{1..5}", coords="c0, ...", bar="bar"), min_cc=(9, 0), min_ptx=(8, 0))
load = ptx_intrinsic(
    LOAD,
    [Descriptor("desc"), SharedArray("dst", what="a shared array (the tile)"), IntTuple("coords", RANKS), barrier()],
    check=_check_load,
    template=_load_ptx,
    doc="""Copy one box of a tensor from global memory into shared memory with TMA.

    ``desc``: a :class:`numba_tma.TensorMap` (by value) or the 128 bytes in a ``uint8`` device array.
    ``dst``: shared array receiving the box (its element 0 is the box's first element; TMA needs it
    128-byte aligned: ``cuda.shared.array(shape, dtype, alignment=128)``, 1024 for 128B swizzle).
    ``coords``: tuple of 1-5 int32 element offsets, **innermost dimension first** (for a C-ordered
    2-D array ``a[row, col]``: ``(col, row)``); its length is the tensor map's rank.
    ``coords[0]`` times the element size must be a multiple of 16 bytes (measured on the H200:
    any other value kills the kernel with ``CUDA_ERROR_ILLEGAL_INSTRUCTION``, even when that edge
    of the box lies outside the tensor).
    ``bar``: the mbarrier (uint64 shared array, element 0) that receives the byte count.

    PTX (rank 2 shown; the fence only for a descriptor in global memory)::

        fence.proxy.tensormap::generic.acquire.sys [desc], 128;
        cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
            [dst], [desc, {c0, c1}], [bar];

    sm_90+, PTX ISA 8.0.  Issue from one thread, after ``mbarrier.arrive_expect_tx(bar, desc.box_bytes)``.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, TILE * TILE * 4)
            tma.load(desc, tile, (x0, y0), bars)
        mbarrier.wait(bars, 0)
    """,
)
