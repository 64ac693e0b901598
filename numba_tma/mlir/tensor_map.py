"""``TensorMap`` arguments of numba-cuda-mlir kernels, typed by their layout as under numba-cuda.

* :func:`map_in_global` (sm_90 and newer): the map's 128 bytes in a device array, typed
  :class:`~numba_tma.intrinsics.hosts.mlir_host.MapInGlobal` — passed as a ``uint8`` array, its type
  keyed on the map's ``TileLayout``, so ``wgmma.descriptor``, ``descriptor_mn``,
  ``store_shared_bf16`` and a ring's ``acquire(state, desc)`` read the swizzle and box from it, and
  the ops check it as numba-cuda checks a by-value map (the same words);
  :func:`map_in_global_type` is that type, to compile with;
* :func:`map_type` (sm_100 and newer): a by-value map, a ``__grid_constant__`` parameter.
  numba-cuda-mlir 0.6 drops those below sm_100, so an op given one on sm_90 is refused, naming
  that defect (:func:`numba_tma.intrinsics.hosts.mlir_host.check_by_value_maps`).

Both have the compile-time attributes ``desc.box_bytes``, ``desc.smem_bytes`` and ``desc.swizzle``."""

import functools

import numpy as np

from ..descriptors.enums import SWIZZLE_BYTES
from ..descriptors.tensor_map import TensorMap as HostTensorMap
from ..descriptors.tile_layout import TileLayout
from ..intrinsics.hosts.mlir_adapter import cuda, overload_attribute, register_typeof
from ..intrinsics.hosts.mlir_host import MapInGlobal, TensorMap

__all__ = ["GlobalMap", "map_in_global", "map_in_global_type", "map_type"]


def map_type(dtype, box, mode="tiled", rank=None, box_bytes=None, swizzle="none", store_overrun=0) -> TensorMap:
    """The numba-cuda-mlir type of a by-value map argument (sm_100 and newer), as
    ``TensorMap.numba_type`` gives numba-cuda's: ``map_type("float32", (64, 64))``.

    Example::

        # fragment: the caller's kernel (docs/second_host.md compiles one)
        inspect.compile(kernel, (map_type("float32", (32, 32)), types.float32[::1]), "sm_100a", host="mlir")
    """
    return TensorMap(TileLayout.describe(dtype, box, mode, rank, box_bytes, swizzle, store_overrun))


def map_in_global_type(dtype, box, mode="tiled", rank=None, box_bytes=None, swizzle="none",
                       store_overrun=0) -> MapInGlobal:
    """The numba-cuda-mlir type of :func:`map_in_global`'s value for maps of this layout (the
    arguments of ``TensorMap.numba_type``).

    Example::

        # fragment: the caller's kernel (docs/second_host.md compiles one)
        inspect.compile(kernel, (map_in_global_type("bfloat16", (64, 64), swizzle="128B"), ...), "sm_90a", host="mlir")
    """
    return MapInGlobal(TileLayout.describe(dtype, box, mode, rank, box_bytes, swizzle, store_overrun))


class GlobalMap:
    """A map's 128 bytes in a numba-cuda-mlir device array (``array``) and its ``layout``: launched
    as that array (its ``__cuda_array_interface__``), typed ``MapInGlobal(layout)``.  One subclass
    per layout (:func:`_global_map_class`): numba-cuda-mlir's launcher reuses an argument's type by
    its Python class and array shape, which would not tell two layouts apart."""

    layout = None

    def __init__(self, array):
        self.array = array

    @property
    def __cuda_array_interface__(self):
        return self.array.__cuda_array_interface__

    def __repr__(self):
        return f"map_in_global(TensorMap[{self.layout}])"


@functools.lru_cache(maxsize=None)
def _global_map_class(layout):
    return type("GlobalMap", (GlobalMap,), {"layout": layout, "__module__": __name__})


register_typeof(GlobalMap, lambda value: MapInGlobal(value.layout))
# a numba_tma.TensorMap itself: by value (sm_100 and newer; on sm_90 its ops refuse it, naming defect 3),
# passed by numba-cuda-mlir's launcher through TensorMap.__tma_descriptor_c_api__
register_typeof(HostTensorMap, lambda value: TensorMap(value.layout))


def map_in_global(tmap) -> GlobalMap:
    """``tmap``'s 128 bytes in a numba-cuda-mlir device array, typed by its layout: how a
    ``TensorMap`` reaches a numba-cuda-mlir kernel on sm_90 (0.6 drops by-value maps below sm_100,
    docs/second_host.md).  ``TensorMap.to_device()`` is numba-cuda's array, which numba-cuda-mlir
    cannot type.

    Example::

        # fragment: a launch on a GPU (numba-cuda-mlir has no simulator)
        kernel[1, 128](map_in_global(desc), out)
    """
    return _global_map_class(tmap.layout)(cuda.to_device(np.frombuffer(tmap.bytes, dtype=np.uint8)))


def _constant(name, value_of):
    """``desc.<name>``: the compile-time constant ``value_of(layout)`` (no attribute where ``None``)."""
    def typer(desc):
        value = value_of(desc.tile_layout if isinstance(desc, MapInGlobal) else desc.layout)
        if value is not None:
            return lambda desc: value
    for type_class in (TensorMap, MapInGlobal):
        overload_attribute(type_class, name)(typer)


_constant("box_bytes", lambda layout: layout.box_bytes)
_constant("smem_bytes", lambda layout: layout.smem_bytes)
_constant("swizzle", lambda layout: SWIZZLE_BYTES.get(layout.swizzle))
