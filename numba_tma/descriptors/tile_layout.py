"""``TileLayout``: what a kernel knows about a map at compile time, as one value both sides use.

The host states it where a map's arguments are checked (``desc.layout``:
:mod:`numba_tma.descriptors.map_layout`), or from a description (:meth:`TileLayout.describe`, for
compiling without an array); the map's Numba type is keyed on it
(:class:`numba_tma.intrinsics.tensor_map_type.TensorMapType`), so ops check boxes, swizzles and
element widths at compile time against the same facts the simulator and ``viz`` read from the map.

>>> from numba_tma.descriptors.tile_layout import TileLayout
>>> layout = TileLayout.describe("float16", (64, 32), swizzle="128B")
>>> layout.box_bytes, layout.smem_bytes, layout.swizzle_bytes     # 32 halfs = 64 B rows, 128 B apart
(4096, 8192, 128)

This module imports nothing of the device side: the Numba type of a layout comes from the function
the device layer registers (:func:`register_kernel_type`), which ``import numba_tma`` does, and so
does the device array ``TensorMap.to_device()`` gives, typed by the layout (:func:`register_device_map`).
"""

from __future__ import annotations

import dataclasses

from .enums import SWIZZLE_BYTES, TYPE_INFO, DataType, Mode, Swizzle, coerce, smem_row_bytes
from .errors import TensorMapError
from .validate import MAX_BOX_BYTES, RANGES, RANK, _in_range, _int
from .validate import _ints as _int_list

# numpy / array-library dtype names -> driver data type
DTYPES = {
    "uint8": DataType.UINT8, "uint16": DataType.UINT16, "uint32": DataType.UINT32,
    "int32": DataType.INT32, "uint64": DataType.UINT64, "int64": DataType.INT64,
    "float16": DataType.FLOAT16, "float32": DataType.FLOAT32, "float64": DataType.FLOAT64,
    "bfloat16": DataType.BFLOAT16,
    # TMA moves bits: signed 8/16-bit data travels as the unsigned type of the same width
    "int8": DataType.UINT8, "int16": DataType.UINT16,
    # 8-bit floats (PyTorch, ml_dtypes) have no TMA data type of their own: they travel as bytes
    **dict.fromkeys(("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"),
                    DataType.UINT8),
}


@dataclasses.dataclass(frozen=True)
class TileLayout:
    """A map's compile-time facts: ``dtype`` (the array's dtype name, and the TMA type where another
    was chosen: ``"float32 as TFLOAT32"``), ``data_type`` (the TMA type's name, ``"BFLOAT16"``),
    ``element_bits`` (the width TMA moves per element), ``rank``, ``box`` (the array's order;
    ``(pixels_per_column, channels_per_pixel)`` for im2col), ``mode`` (``"tiled"`` or ``"im2col"``),
    ``swizzle`` (its name), ``box_bytes`` (what one full load delivers; ``None`` for interleaved
    maps, where it is not established), ``element_strides`` (the array's order, as given to
    ``TensorMap.tiled``; ``None`` for all ones) and ``store_overrun`` (the bytes a store crossing
    the end of a row would write past it, 0 when none or opted in: :mod:`numba_tma.descriptors.edge`)."""

    dtype: str
    data_type: str
    element_bits: int
    rank: int
    box: tuple
    mode: str
    swizzle: str = "NONE"
    box_bytes: int | None = None
    element_strides: tuple | None = None
    store_overrun: int = 0

    def __post_init__(self):
        object.__setattr__(self, "box", tuple(self.box))
        strides = self.element_strides
        object.__setattr__(self, "element_strides", None if strides is None or set(strides) == {1} else tuple(strides))

    @property
    def swizzle_bytes(self) -> int | None:
        """The swizzle span in bytes (0, 32, 64 or 128); ``None`` for the interleaved 32B swizzle forms."""
        return SWIZZLE_BYTES.get(self.swizzle)

    @property
    def smem_bytes(self) -> int | None:
        """The shared memory one full box spans: ``box_bytes``, or more with a swizzle wider than the
        box's rows (rows lie the span apart; measured on the H200); ``None`` when ``box_bytes`` is."""
        span = SWIZZLE_BYTES.get(self.swizzle, 0)
        if self.box_bytes is None or not span or self.mode != "tiled":
            return self.box_bytes
        inner = self.box[-1] * (max(self.element_bits, 8) // 8)    # dimension 0's element stride is ignored
        return self.box_bytes // inner * smem_row_bytes(inner, span)

    def __str__(self):
        extra = "" if self.swizzle == "NONE" else f", swizzle={self.swizzle}"
        extra += "" if self.element_strides is None else f", element_strides={self.element_strides}"
        extra += f", store_overrun={self.store_overrun}" if self.store_overrun else ""
        return f"{self.dtype}, rank={self.rank}, box={self.box}, {self.mode}{extra}"

    @staticmethod
    def describe(dtype, box, mode="tiled", rank=None, box_bytes=None, swizzle="none",
                 store_overrun=0) -> "TileLayout":
        """The layout of a map not built yet, checked as a map's would be (``TensorMap.numba_type``)."""
        name = dtype_name(dtype)
        swizzle = coerce(Swizzle, swizzle, "swizzle").name
        if not isinstance(mode, str) or mode not in ("tiled", "im2col"):
            raise TensorMapError("mode", mode, "must be 'tiled' or 'im2col'")
        box, rank = _geometry(box, mode, rank)
        data_type = DTYPES[name]
        if box_bytes is None:
            box_bytes = TYPE_INFO[data_type].bits // 8
            for b in box:
                box_bytes *= b
        else:
            box_bytes = _int("box_bytes", box_bytes)
            _in_range("box_bytes", box_bytes, limits=(1, MAX_BOX_BYTES))
        store_overrun = _int("store_overrun", store_overrun)
        _in_range("store_overrun", store_overrun, limits=(0, 15))
        return TileLayout(name, data_type.name, TYPE_INFO[data_type].bits, rank, box, mode, swizzle, box_bytes,
                          None, store_overrun)


def dtype_name(dtype) -> str:
    """``"float32"`` / ``np.float32`` / a numba type -> the name TensorMap uses, checked."""
    name = str(dtype)
    if name not in DTYPES and dtype is not None:  # numpy would read None as float64
        import numpy as np

        try:
            name = np.dtype(dtype).name
        except (TypeError, ValueError):
            pass
    if name not in DTYPES:
        raise TensorMapError("dtype", dtype, f"must be one of {sorted(DTYPES)}")
    return name


def _geometry(box, mode, rank):
    """``describe``'s ``box`` and ``rank``, checked as a map's would be."""
    box = tuple(_int_list("box", box))
    rank = None if rank is None else _int("rank", rank)
    lo, hi = RANK[Mode[mode.upper()]]
    if mode == "im2col":
        if len(box) != 2:
            raise TensorMapError("box", box, "must be (pixels_per_column, channels_per_pixel) for an im2col map")
        limits = (RANGES["pixels_per_column"], RANGES["channels_per_pixel"])
        if rank is None or not lo <= rank <= hi:
            raise TensorMapError("rank", rank, f"an im2col map needs the tensor's rank, {lo} to {hi}")
    else:
        if not lo <= len(box) <= hi:
            raise TensorMapError("box", box, f"must have {lo} to {hi} entries, one per array dimension")
        limits = (RANGES["box_dim"],) * len(box)
        rank = len(box) if rank is None else rank
        if rank != len(box):
            raise TensorMapError("rank", rank, f"a tiled map's rank is len(box) = {len(box)}")
    for i, (b, limit) in enumerate(zip(box, limits)):
        _in_range("box", b, i, limit)
    return box, rank


_KERNEL_TYPE = []     # the device layer's TileLayout -> Numba type function, once registered


def register_kernel_type(factory):
    """Called once by :mod:`numba_tma.intrinsics.tensor_map_type`: how a layout becomes the Numba
    type of a map argument (so this host layer needs no import of the device side)."""
    _KERNEL_TYPE[:] = [factory]


def kernel_type(layout: TileLayout):
    """The Numba type of map arguments with ``layout`` (one per layout)."""
    if not _KERNEL_TYPE:
        raise RuntimeError("numba_tma: the Numba type of a TensorMap needs numba_tma's device layer: import numba_tma")
    return _KERNEL_TYPE[0](layout)


_DEVICE_MAP = []      # the device layer's (128 bytes, layout) -> TensorMap.to_device()'s array, once registered


def register_device_map(maker):
    """Called by the device layer (numba-cuda's, and under the CUDA simulator the simulator's, which
    comes after it): how ``TensorMap.to_device()`` puts a map's 128 bytes (a numpy ``uint8`` array)
    in a device array whose Numba type carries the map's ``layout``: ``maker(data, layout)``."""
    _DEVICE_MAP[:] = [maker]


def device_map(data, layout: TileLayout):
    """``data`` (a map's 128 bytes) in a device array typed by ``layout`` (``TensorMap.to_device``)."""
    if not _DEVICE_MAP:
        raise RuntimeError("numba_tma: TensorMap.to_device needs numba_tma's device layer: import numba_tma")
    return _DEVICE_MAP[0](data, layout)
