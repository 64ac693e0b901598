"""TMA: tensor copies between global memory and shared memory (``cp.async.bulk.tensor``).

**Coordinates are innermost-first**, like the driver's ``globalDim``: for a C-ordered 2-D array
``a[row, col]``, ``coords = (col, row)`` — element offsets of the box's first element, not tile
indices.  Coordinates may be negative or run past the tensor: out-of-bounds elements are filled
(zero, or NaN with ``oob_fill``).  ``coords[0]`` times the element size must be a multiple of 16
bytes (measured on the H200: any other value kills the kernel with
``CUDA_ERROR_ILLEGAL_INSTRUCTION``, even when that edge of the box lies outside the tensor); a
constant ``coords[0]`` that breaks it is refused at compile time.

**Descriptors.** ``desc`` is either a :class:`numba_tma.TensorMap` (passed by value as a
``__grid_constant__`` parameter; its mode, rank and element width are checked at compile time) or a
``uint8`` device array holding the 128 bytes (global memory, e.g. ``TensorMap.to_device()``), for
which the op first issues ``fence.proxy.tensormap::generic.acquire.sys`` as the PTX memory model
requires for a map the host wrote.

**Element types.** TMA moves bits.  The shared-memory tile may have any dtype of the map's element
width — a bfloat16 or fp16 map fills a ``uint16`` / ``int16`` / ``float16`` tile, an fp8 map a
``uint8`` tile, a TF32 map a ``float32`` one — and the kernel reads the same bytes reinterpreted
(numba-cuda has no shared arrays of bfloat16 or fp8).  Packed sub-byte maps (sm_100) fill a
``uint8`` tile.
"""

from numba.cuda import types

from ._core import (I64, IntTuple, Operand, PtxOp, Requirement, Sample, SharedArray, check_arch, exported,
                    global_address, literal, reject)
from .mbarrier import barrier
from .tensor_map_type import TensorMapType


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


# A descriptor in global memory needs the tensormap acquire fence, which arrived in PTX ISA 8.3.
GLOBAL_DESCRIPTOR = Requirement((9, 0), (8, 3))
_ACQUIRE = "fence.proxy.tensormap::generic.acquire.sys [{desc}], 128;\n"
# im2col offsets are 16, 8 and 5 bits wide for 3-, 4- and 5-D maps (PTX ISA, cp.async.bulk.tensor)
IM2COL_OFFSET_BITS = {3: 16, 4: 8, 5: 5}


def _element_bits(dtype):
    return getattr(dtype, "bitwidth", None)


def _check_map(op, desc, tile_arg, tile, coords, mode):
    """The rules a map argument imposes on the call (a global-memory map is only known at run time)."""
    if not isinstance(desc, TensorMapType):
        check_arch(f"{op} (descriptor in global memory)", GLOBAL_DESCRIPTOR)
        return
    if desc.mode != mode:
        raise reject(op, "desc", f"must be a {mode} map ({desc})", desc.mode)
    if len(coords) != desc.rank:
        raise reject(op, "coords", f"must have {desc.rank} entries (the rank of {desc})", len(coords))
    want = max(desc.element_bits, 8)   # packed sub-byte maps fill bytes
    if _element_bits(tile.dtype) != want:
        raise reject(op, tile_arg, f"must have {want}-bit elements like the map ({desc}); any dtype of that width "
                     "is accepted and holds the same bytes", tile)
    first = literal(coords[0])
    if mode == "tiled" and isinstance(first, int) and (first * desc.element_bits) % 128:
        raise reject(op, "coords[0]", f"times the element size ({desc.element_bits // 8} bytes) must be a multiple "
                     "of 16 bytes (the H200 faults otherwise)", first)


def _fields(desc, coords, **_):
    return {"rank": len(coords), "acquire": "" if isinstance(desc, TensorMapType) else _ACQUIRE}


load = PtxOp(
    "tma.load",
    "{acquire}cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
    " [{dst}], [{desc}, {{{coords}}}], [{bar}];",
    (Descriptor("desc"), SharedArray("dst", what="a shared array (the tile)", contiguous=True),
     IntTuple("coords", (1, 2, 3, 4, 5)), barrier()),
    check=lambda desc, dst, coords, bar: _check_map("tma.load", desc, "dst", dst, coords, "tiled"),
    fields=lambda cc, desc, coords, **_: _fields(desc, coords),
    doc_fields={"rank": 2, "acquire": _ACQUIRE},
    tlx=("tlx.async_descriptor_load", "cute.nvgpu.cpasync.CopyBulkTensorTileG2SOp", "cuda::ptx::cp_async_bulk_tensor"),
    samples=tuple(Sample(f"tma.load(desc, smem, {tuple(range(r))}, bar)", f"UTMALDG.{r}D", {"rank": r})
                  for r in range(1, 6)),
    doc="""Copy one box of a tensor from global memory into shared memory with TMA (tile mode).

    ``desc``: a :class:`numba_tma.TensorMap` (by value) or the 128 bytes in a ``uint8`` device array
    (that form needs PTX ISA 8.3 for its ``fence.proxy.tensormap`` acquire, shown first below).
    ``dst``: C-contiguous shared array receiving the box, of any dtype of the map's element width
    (its element 0 is the box's first element; TMA needs it 128-byte aligned:
    ``cuda.shared.array(shape, dtype, alignment=128)``, 1024 for 128B swizzle).  Its byte size is
    not checked: make it at least ``desc.box_bytes``.
    ``coords``: int32 element offsets, **innermost dimension first** (for a C-ordered 2-D array
    ``a[row, col]``: ``(col, row)``); its length is the tensor map's rank.  ``coords[0]`` times the
    element size must be a multiple of 16 bytes.
    ``bar``: the mbarrier (uint64 shared array, element 0) that receives the byte count.
    Issue from one thread, after ``mbarrier.arrive_expect_tx(bar, desc.box_bytes)``.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (x0, y0), bars)
        mbarrier.wait(bars, 0)
    """,
).intrinsic()


def _check_load_im2col(desc, dst, coords, offsets, bar):
    _check_map("tma.load_im2col", desc, "dst", dst, coords, "im2col")
    if len(offsets) != len(coords) - 2:
        raise reject("tma.load_im2col", "offsets", f"must have len(coords) - 2 = {len(coords) - 2} entries "
                     "(one per spatial dimension)", len(offsets))
    bits = IM2COL_OFFSET_BITS[len(coords)]
    for i, t in enumerate(offsets):
        value = literal(t)
        if isinstance(value, int) and not 0 <= value < (1 << bits):
            raise reject("tma.load_im2col", f"offsets[{i}]", f"must be in [0, {(1 << bits) - 1}] for a "
                         f"{len(coords)}-D map ({bits}-bit offsets)", value)


load_im2col = PtxOp(
    "tma.load_im2col",
    "{acquire}cp.async.bulk.tensor.{rank}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
    " [{dst}], [{desc}, {{{coords}}}], [{bar}], {{{offsets}}};",
    (Descriptor("desc"), SharedArray("dst", what="a shared array (the pixels x channels block)", contiguous=True),
     IntTuple("coords", (3, 4, 5)),
     IntTuple("offsets", (1, 2, 3), bits=16, range=(-(1 << 31), (1 << 31) - 1)),  # width: by rank, in the check
     barrier()),
    check=_check_load_im2col,
    fields=lambda cc, desc, coords, **_: _fields(desc, coords),
    doc_fields={"rank": 4, "acquire": "", "coords": "c, w, h, n", "offsets": "ow, oh"},
    tlx=("tlx.async_descriptor_load (im2col)", "cute.nvgpu.cpasync.CopyBulkTensorIm2ColG2SOp",
         "cuda::ptx::cp_async_bulk_tensor (im2col)"),
    samples=tuple(Sample(f"tma.load_im2col(desc, smem, {tuple(range(r))}, {tuple(range(1, r - 1))}, bar)",
                         f"UTMALDG.{r}D.IM2COL", {"rank": r}) for r in range(3, 6)),
    doc="""Gather ``pixels_per_column`` pixels x ``channels_per_pixel`` channels of an N(D)(H)WC tensor
    into shared memory (im2col mode, for convolutions), from a :meth:`TensorMap.im2col` map.

    ``desc``, ``dst`` and ``bar`` as for :func:`load`.  ``coords`` (3-5 entries: C, W, (H, (D,)) N)
    give the first pixel; ``offsets`` (one per spatial dimension, W first) shift the filter tap
    inside the pixel box: each is 16 bits wide for a 3-D map, 8 bits for 4-D and 5 bits for 5-D
    (constants outside are refused at compile time).

    Example::

        tma.load_im2col(desc, block, (c0, w0, h0, n0), (dw, dh), bars)
    """,
).intrinsic()

__all__ = exported("tma")
