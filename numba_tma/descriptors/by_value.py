"""The object numba's launcher passes for a by-value ``TensorMap``: a cuda.core ``TensorMapDescriptor``.

cuda.core's parameter packer, which numba-cuda 0.30 launches through, takes a 128-byte by-value
argument only as a ``cuda.core.TensorMapDescriptor``, and only the driver fills one (~25 us).  The
driver copies kernel parameters when a launch is made, so a descriptor is free again as soon as
the launch call returns: each thread keeps one *twin* per kernel-argument position, made by the
driver once, and every launch writes the map's 128 bytes into the twin of its position
(:func:`argument`: one 128-byte copy, whatever the map; nothing per map, nothing when a map dies).

The first twin the driver makes is searched for its own 128 bytes (which equal
``TensorMap.bytes``): their offset inside cuda.core's object is where later launches write.  If
cuda.core ever stores them differently the search finds nothing and every launch gets a new twin
from the driver (correct, ~25 us slower), and ``tests/test_gpu_tensor_map.py`` fails saying so.
A holder that keeps prepared arguments past their launch (a graph's capture) prepares and launches
one launch at a time.  A twin belongs to the CUDA context current when it was made: when a thread's
launch moves to another device, cuda.core refuses it, and the launch paths drop the thread's twins
(:func:`forget`) and launch again.
"""

from __future__ import annotations

import ctypes
import threading

from ..numba_cuda.cuda_core import TensorMapMaker
from .errors import TensorMapError

_UNSEARCHED = object()
_offset = _UNSEARCHED             # where a twin keeps its 128 bytes (None: not found, use the driver)
_SLOTS = threading.local()        # .twins: per argument position, (twin, a writable view of its 128 bytes)


class _Pointer:
    """The minimal CUDA array cuda.core needs to see the map's memory: same address, shape and
    byte strides, dtype an unsigned int of the element width (cuda.core then takes the map's
    real data type from the explicit ``data_type``).  Works for dtypes no array library exports
    (bfloat16 through CAI, fp8)."""

    def __init__(self, address, shape, strides, element_bytes):
        self.__cuda_array_interface__ = {"shape": shape, "strides": strides, "typestr": f"<u{element_bytes}",
                                         "data": (address, False), "version": 3}


def _refuse(options, error):
    """cuda.core lacks one of the map's options (``options``: its enums)."""
    raise TensorMapError("TensorMap", f"{options['data_type'].name}, swizzle {options['swizzle'].name}",
                         f"cannot be passed by value through numba's launcher (cuda.core lacks the option: "
                         f"{error}); pass desc.to_device() instead") from None


MAKER = TensorMapMaker(_refuse)   # what makes twins (cuda.core's private _tensor_map: numba_tma.numba_cuda.cuda_core)


def _new(tmap):
    """A new twin made by :data:`MAKER` from ``tmap`` (anything with a map's ``_layout``, a
    :class:`~numba_tma.descriptors.map_layout.MapLayout`, and ``address``): everything in the
    array's order, as cuda.core takes it."""
    layout = tmap._layout
    tile = layout.tile
    element_bytes = max(1, tile.element_bits // 8)
    pointer = _Pointer(tmap.address, layout.shape, layout.strides[:-1] + (element_bytes,), element_bytes)
    options = layout.options()
    if tile.mode == "tiled":
        return MAKER.tiled(pointer, tile.box, tile.element_strides, options)
    lower, upper, channels, pixels = layout.geometry
    return MAKER.im2col(pointer, lower, upper, channels, pixels, tile.element_strides, options)


def argument(tmap, position: int):
    """The cuda.core descriptor to pass for ``tmap`` (a ``TensorMap``) as kernel argument
    ``position`` of a launch made now by this thread: that position's twin, holding ``tmap.bytes``."""
    try:
        twin, view = _SLOTS.twins[position]
    except (AttributeError, IndexError, TypeError):   # no twins yet, or none at this position
        twin = _new(tmap)
        view = _keep(twin, tmap.bytes, position)
        if view is None:   # its bytes could not be found: this twin, the driver's, for this launch only
            return twin
    view[:] = tmap.bytes
    return twin


def forget() -> None:
    """Drop this thread's twins: made in the CUDA context current at their first launch, they are
    refused (by cuda.core) in another one, after a thread moves to another device; the launch
    paths then call this and launch again, and new twins are made in the current context."""
    _SLOTS.twins = []


def _keep(twin, expected: bytes, position: int):
    """Keep ``twin`` (new from the driver, holding ``expected``) as the twin of ``position``; its
    writable view of the 128 bytes, or None where they could not be found (then each launch gets a
    new twin)."""
    if _offset is _UNSEARCHED:
        _find_offset(twin, expected)
    if _offset is None:
        return None
    twins = getattr(_SLOTS, "twins", None)
    if twins is None:
        twins = _SLOTS.twins = []
    twins.extend([None] * (position + 1 - len(twins)))
    view = memoryview((ctypes.c_char * 128).from_address(id(twin) + _offset)).cast("B")
    twins[position] = twin, view
    return view


def _find_offset(twin, expected: bytes) -> None:
    """Find ``expected`` (the twin's 128 bytes, once) inside the twin object's own memory (its
    ``object.__sizeof__``: cuda.core's object's basic size).  (The struct is 64-byte aligned within
    cuda.core's object layout, but the object itself only as Python allocates it; the launcher
    copies the bytes, so their address does not matter.)"""
    global _offset
    raw = ctypes.string_at(id(twin), object.__sizeof__(twin))
    _offset = raw.find(expected) if raw.count(expected) == 1 else None


def in_place() -> bool:
    """Whether launches write the map's bytes into a kept twin (True once the first twin was found
    to hold our bytes), rather than getting a new twin from the driver."""
    return isinstance(_offset, int)
