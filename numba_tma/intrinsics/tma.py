"""TMA: tensor copies between global memory and shared memory (``cp.async.bulk.tensor``).

**Coordinates are innermost-first**, like the driver's ``globalDim``: for a C-ordered 2-D array
``a[row, col]``, ``coords = (col, row)`` — element offsets of the box's first element, not tile
indices.  Coordinates may be negative or run past the tensor: out-of-bounds elements are filled
(zero, or NaN with ``oob_fill``).  ``coords[0]`` times the element size must be a multiple of 16
bytes (measured on the H200: any other value kills the kernel with
``CUDA_ERROR_ILLEGAL_INSTRUCTION``, even when that edge of the box lies outside the tensor).

**Descriptors.** ``desc`` is either a :class:`numba_tma.TensorMap` (passed by value as a
``__grid_constant__`` parameter; its mode, dtype and rank are checked at compile time) or a
``uint8`` device array holding the 128 bytes (global memory, e.g. ``TensorMap.to_device()``), for
which the op first issues ``fence.proxy.tensormap::generic.acquire.sys`` as the PTX memory model
requires for a map the host wrote.
"""

from numba.cuda import types

from ._core import (I64, IntTuple, Operand, PtxOp, SharedArray, check_arch, global_address, ptx_intrinsic,
                    reject)
from .mbarrier import barrier
from .tensor_map_type import TensorMapType

__all__ = ["load", "load_im2col"]


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
        return [(global_address(context, builder, ty, val), "l")]


_ACQUIRE = "fence.proxy.tensormap::generic.acquire.sys [$0], 128;\n"
_COPY = ("cp.async.bulk.tensor.{rank}d.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes"
         " [$1], [$0, {{{coords}}}], [${bar}]{extra};")


def _copy_ptx(desc, mode, rank, offsets=0):
    """Operands in argument order: ``desc`` ``$0``, dst ``$1``, the coordinates, the im2col
    offsets (if any), the barrier."""
    coords = ", ".join(f"${2 + i}" for i in range(rank))
    extra = ", {" + ", ".join(f"${2 + rank + i}" for i in range(offsets)) + "}" if offsets else ""
    text = _COPY.format(rank=rank, mode=mode, coords=coords, bar=2 + rank + offsets, extra=extra)
    return text if isinstance(desc, TensorMapType) else _ACQUIRE + text


# A descriptor in global memory needs the tensormap acquire fence, which arrived in PTX ISA 8.3.
GLOBAL_DESCRIPTOR = PtxOp("tma (descriptor in global memory)", _ACQUIRE, min_cc=(9, 0), min_ptx=(8, 3))


def _check_map(op, desc, dst, coords, mode):
    if not isinstance(desc, TensorMapType):
        check_arch(GLOBAL_DESCRIPTOR)
        return
    if desc.mode != mode:
        raise reject(op, "desc", f"must be a {mode} map ({desc})", desc.mode)
    if len(coords) != desc.rank:
        raise reject(op, "coords", f"must have {desc.rank} entries (the rank of {desc})", len(coords))
    if dst.dtype != desc.map_dtype:
        raise reject(op, "dst", f"must have the map's dtype {desc.map_dtype} ({desc})", dst)


def _check_load(desc, dst, coords, bar):
    _check_map("tma.load", desc, dst, coords, "tiled")


_DOC_OPERANDS = """
    ``desc``: a :class:`numba_tma.TensorMap` (by value) or the 128 bytes in a ``uint8`` device array
    (that form needs PTX ISA 8.3 for its ``fence.proxy.tensormap`` acquire).
    ``dst``: C-contiguous shared array receiving the box (its element 0 is the box's first element;
    TMA needs it 128-byte aligned: ``cuda.shared.array(shape, dtype, alignment=128)``, 1024 for
    128B swizzle).  Its byte size is not checked: make it at least ``desc.box_bytes``.
    ``coords``: int32 element offsets, **innermost dimension first** (for a C-ordered 2-D array
    ``a[row, col]``: ``(col, row)``); its length is the tensor map's rank.  ``coords[0]`` times the
    element size must be a multiple of 16 bytes.
    ``bar``: the mbarrier (uint64 shared array, element 0) that receives the byte count.
"""

LOAD = PtxOp("tma.load", _COPY.format(rank="{1..5}", mode="tile", coords="c0, ...", bar="bar", extra=""),
             min_cc=(9, 0), min_ptx=(8, 0))
load = ptx_intrinsic(
    LOAD,
    [Descriptor("desc"), SharedArray("dst", what="a shared array (the tile)", contiguous=True),
     IntTuple("coords", (1, 2, 3, 4, 5)),
     barrier()],
    check=_check_load,
    template=lambda desc, dst, coords, bar: _copy_ptx(desc, "tile", len(coords)),
    doc="""Copy one box of a tensor from global memory into shared memory with TMA (tile mode).
    """ + _DOC_OPERANDS + """
    PTX (rank 2 shown; the fence only for a descriptor in global memory)::

        fence.proxy.tensormap::generic.acquire.sys [desc], 128;
        cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
            [dst], [desc, {c0, c1}], [bar];

    sm_90+, PTX ISA 8.0 (8.3 with a descriptor in global memory).  Issue from one thread, after
    ``mbarrier.arrive_expect_tx(bar, desc.box_bytes)`` (``box_bytes`` of a by-value map is a
    compile-time constant in the kernel).

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (x0, y0), bars)
        mbarrier.wait(bars, 0)
    """,
)


def _check_load_im2col(desc, dst, coords, offsets, bar):
    _check_map("tma.load_im2col", desc, dst, coords, "im2col")
    if len(offsets) != len(coords) - 2:
        raise reject("tma.load_im2col", "offsets", f"must have len(coords) - 2 = {len(coords) - 2} entries "
                     "(one per spatial dimension)", len(offsets))


LOAD_IM2COL = PtxOp(
    "tma.load_im2col",
    _COPY.format(rank="{3..5}", mode="im2col", coords="c0, ...", bar="bar", extra=", {o0, ...}"),
    min_cc=(9, 0), min_ptx=(8, 0),
)
load_im2col = ptx_intrinsic(
    LOAD_IM2COL,
    [Descriptor("desc"), SharedArray("dst", what="a shared array (the pixels x channels block)", contiguous=True),
     IntTuple("coords", (3, 4, 5)), IntTuple("offsets", (1, 2, 3), bits=16, range=(0, (1 << 16) - 1)), barrier()],
    check=_check_load_im2col,
    template=lambda desc, dst, coords, offsets, bar: _copy_ptx(desc, "im2col", len(coords), len(offsets)),
    doc="""Gather ``pixels_per_column`` pixels x ``channels_per_pixel`` channels of an N(D)(H)WC tensor
    into shared memory (im2col mode, for convolutions), from a :meth:`TensorMap.im2col` map.
    """ + _DOC_OPERANDS + """
    ``coords`` (3-5 entries: C, W, (H, (D,)) N) give the first pixel; ``offsets`` (16-bit, one per
    spatial dimension, W first) shift the filter tap inside the pixel box.

    PTX (rank 4 shown)::

        cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
            [dst], [desc, {c, w, h, n}], [bar], {ow, oh};

    sm_90+, PTX ISA 8.0 (8.3 with a descriptor in global memory).

    Example::

        tma.load_im2col(desc, block, (c0, w0, h0, n0), (dw, dh), bars)
    """,
)
