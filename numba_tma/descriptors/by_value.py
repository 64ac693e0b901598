"""The object numba's launcher passes for a by-value ``TensorMap``: a cuda.core ``TensorMapDescriptor``.

cuda.core's parameter packer, which numba-cuda 0.30 launches through, takes a 128-byte by-value
argument only as a ``cuda.core.TensorMapDescriptor``, and only the driver fills one.  So a
``TensorMap`` launched with numba's own syntax carries a driver-made twin of its ``bytes`` (the GPU
suite checks, for every map it builds, that the kernel receives exactly ``TensorMap.bytes``).

Making a twin through the driver costs ~25 us.  Twins are therefore recycled per layout: when a
``TensorMap`` is garbage-collected (its ``__del__``) its twin goes back to a pool, and the next map of the same layout
re-points it (cuLaunchKernel copies parameters when it is called, so a twin is free again as soon
as the launch returns).

Re-pointing through cuda.core's ``replace_address`` costs ~8 us (a memory view, then the driver)
to change 8 bytes we already know.  So the first twin the driver makes is searched for its own
128 bytes (which equal ``TensorMap.bytes``): their offset inside cuda.core's object is where
later re-pointing writes the new address directly.  If cuda.core ever stores them differently the
search finds nothing and ``replace_address`` is used, and ``tests/test_gpu_tensor_map.py`` fails
saying so.
"""

from __future__ import annotations

import ctypes
import functools

from .enums import TYPE_INFO
from .errors import TensorMapError

POOL_LIMIT = 64                   # twins kept per layout
_POOLS: dict[bytes, list] = {}    # layout (descriptor bytes 8..127) -> free twins
_UNSEARCHED = object()
_offset = _UNSEARCHED             # where a twin keeps its 128 bytes (None: not found, use the driver)


class _Pointer:
    """The minimal CUDA array cuda.core needs to see the map's memory: same address, shape and
    byte strides, dtype an unsigned int of the element width (cuda.core then takes the map's
    real data type from the explicit ``data_type``).  Works for dtypes no array library exports
    (bfloat16 through CAI, fp8)."""

    def __init__(self, address, shape, strides, element_bytes):
        self.__cuda_array_interface__ = {"shape": shape, "strides": strides, "typestr": f"<u{element_bytes}",
                                         "data": (address, False), "version": 3}


@functools.lru_cache(maxsize=None)
def _core_options(data_type, interleave, swizzle, l2_promotion, oob_fill):
    from cuda.core import _tensor_map as core

    try:
        return dict(data_type=core.TensorMapDataType(int(data_type)),
                    interleave=core.TensorMapInterleave(int(interleave)),
                    swizzle=core.TensorMapSwizzle(int(swizzle)),
                    l2_promotion=core.TensorMapL2Promotion(int(l2_promotion)),
                    oob_fill=core.TensorMapOOBFill(int(oob_fill)))
    except ValueError as exc:
        raise TensorMapError("TensorMap", f"{data_type.name}, swizzle {swizzle.name}",
                             f"cannot be passed by value through numba's launcher (cuda.core lacks the option: "
                             f"{exc}); pass desc.to_device() instead") from None


def _pointer(tmap):
    p = tmap._params
    element_bytes = max(1, TYPE_INFO[p["data_type"]].bits // 8)
    shape = tuple(reversed(p["global_dim"]))
    strides = tuple(reversed(p["global_strides"])) + (element_bytes,)
    return _Pointer(tmap.address, shape, strides, element_bytes)


def _new(tmap):
    from cuda.core import _tensor_map as core
    from cuda.core.utils import StridedMemoryView

    p = tmap._params
    options = _core_options(p["data_type"], p["interleave"], p["swizzle"], p["l2_promotion"], p["oob_fill"])
    view = StridedMemoryView.from_cuda_array_interface(_pointer(tmap), stream_ptr=-1)
    estrides = p["element_strides"] and tuple(reversed(p["element_strides"]))
    if tmap.mode == "tiled":
        return view.as_tensor_map(tuple(reversed(p["box_dim"])), element_strides=estrides, **options)
    return core.TensorMapDescriptor._from_im2col(
        view, tuple(reversed(p["pixel_box_lower_corner"])), tuple(reversed(p["pixel_box_upper_corner"])),
        p["channels_per_pixel"], p["pixels_per_column"], element_strides=estrides, **options)


def descriptor(tmap, pool):
    """A cuda.core ``TensorMapDescriptor`` equal to ``tmap.bytes``: a recycled twin from ``pool``
    (:func:`pool_of` the map's layout) re-pointed at ``tmap``'s address, else a new one from the
    driver.  The map gives it back (:func:`release`) when it is collected."""
    try:
        twin = pool.pop()
    except IndexError:
        twin = _new(tmap)
        if _offset is _UNSEARCHED:
            _find_offset(twin, tmap.bytes)
    else:
        repoint(twin, tmap)
    return twin


def pool_of(tmap) -> list:
    """The free twins of ``tmap``'s layout."""
    layout = tmap.bytes[8:]
    pool = _POOLS.get(layout)
    if pool is None:
        pool = _POOLS[layout] = []
    return pool


def _find_offset(twin, expected: bytes) -> None:
    """Find ``expected`` (the twin's 128 bytes, once) inside the twin object.  (The struct is
    64-byte aligned within cuda.core's object layout, but the object itself only as Python
    allocates it; the launcher copies the bytes, so their address does not matter.)"""
    global _offset
    raw = ctypes.string_at(id(twin), type(twin).__basicsize__)
    _offset = raw.find(expected) if raw.count(expected) == 1 else None


def fast_repoint() -> bool:
    """Whether twins are re-pointed by writing their address bytes (True once the first twin
    was found to hold our bytes), rather than through the driver."""
    return isinstance(_offset, int)


def repoint(twin, tmap) -> None:
    """Give ``twin`` the address of ``tmap``: its bytes 0-7 written in place, or
    ``cuTensorMapReplaceAddress`` through cuda.core (before the first search, or if it failed)."""
    if isinstance(_offset, int):
        ctypes.memmove(id(twin) + _offset, tmap.bytes, 8)
    else:
        twin.replace_address(_pointer(tmap))


def release(pool, twin) -> None:
    """``twin`` free again (its map was collected; the launches that took it have copied it)."""
    if len(pool) < POOL_LIMIT:
        pool.append(twin)
