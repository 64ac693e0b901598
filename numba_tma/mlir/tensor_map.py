"""By-value ``TensorMap`` arguments of numba-cuda-mlir kernels, on sm_100 and newer: their type
(:func:`map_type`, a :class:`numba_tma.intrinsics.mlir_host.TensorMap`) and its compile-time
attributes ``desc.box_bytes``, ``desc.smem_bytes`` and ``desc.swizzle``, as under numba-cuda.

numba-cuda-mlir 0.6 drops ``__grid_constant__`` parameters below sm_100, so an op given such a map
on sm_90 is refused, naming that defect (:func:`numba_tma.intrinsics.mlir_host.check_by_value_maps`);
there the map goes in global memory (:func:`numba_tma.mlir.map_in_global`)."""

from ..descriptors.enums import SWIZZLE_BYTES
from ..descriptors.tile_layout import TileLayout
from ..intrinsics.mlir_adapter import overload_attribute
from ..intrinsics.mlir_host import TensorMap

__all__ = ["map_type"]


def map_type(dtype, box, mode="tiled", rank=None, box_bytes=None, swizzle="none", store_overrun=0) -> TensorMap:
    """The numba-cuda-mlir type of a by-value map argument (sm_100 and newer), as
    ``TensorMap.numba_type`` gives numba-cuda's: ``map_type("float32", (64, 64))``.

    Example::

        inspect.compile(kernel, (map_type("float32", (32, 32)), types.float32[::1]), "sm_100a", host="mlir")
    """
    return TensorMap(TileLayout.describe(dtype, box, mode, rank, box_bytes, swizzle, store_overrun))


def _constant(name, value_of):
    """``desc.<name>``: the compile-time constant ``value_of(layout)`` (no attribute where ``None``)."""
    def typer(desc):
        value = value_of(desc.layout)
        if value is not None:
            return lambda desc: value
    overload_attribute(TensorMap, name)(typer)


_constant("box_bytes", lambda layout: layout.box_bytes)
_constant("smem_bytes", lambda layout: layout.smem_bytes)
_constant("swizzle", lambda layout: SWIZZLE_BYTES.get(layout.swizzle))
