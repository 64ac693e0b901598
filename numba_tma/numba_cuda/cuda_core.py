"""cuda.core's private ``_tensor_map`` and ``_kernel_arg_handler``, the two names of cuda.core
numba_tma needs that cuda.core does not export (``tests/test_numba_cuda_hooks.py`` checks both).

* :class:`TensorMapMaker`: a by-value map's *twin* (``numba_tma.descriptors.by_value``), cuda.core's
  ``TensorMapDescriptor`` filled by the driver — the tiled form through the public
  ``StridedMemoryView.as_tensor_map``, the im2col form through ``TensorMapDescriptor._from_im2col``,
  each with the enums of ``_tensor_map``;
* :func:`packed_parameters`: a launch's kernel arguments packed as cuda.core's own launch packs
  them (``ParamHolder``; a CUDA graph's node re-pointed, :mod:`numba_tma.gpu.graphs`).
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=None)
def tensor_map_options(data_type, interleave, swizzle, l2_promotion, oob_fill) -> dict:
    """A map's enums (integers) as cuda.core's keyword arguments; ``ValueError`` where cuda.core
    lacks one of them."""
    from cuda.core import _tensor_map as core

    return dict(data_type=core.TensorMapDataType(int(data_type)), interleave=core.TensorMapInterleave(int(interleave)),
                swizzle=core.TensorMapSwizzle(int(swizzle)), l2_promotion=core.TensorMapL2Promotion(int(l2_promotion)),
                oob_fill=core.TensorMapOOBFill(int(oob_fill)))


class TensorMapMaker:
    """Makes twins: cuda.core's ``TensorMapDescriptor``, filled by the driver, from the map's array
    view (``pointer``: a CUDA array interface), its box or im2col corners in array order and
    ``options`` (the map's enums: ``data_type``, ``interleave``, ``swizzle``, ``l2_promotion``,
    ``oob_fill``).  ``refuse(options, error)`` raises where cuda.core lacks an option.  Tests put a
    stand-in driver in its place (``by_value.MAKER``, ``tests/fake_gpu.py``)."""

    def __init__(self, refuse):
        self._refuse = refuse

    def _options(self, options):
        try:
            return tensor_map_options(**options)
        except ValueError as error:
            self._refuse(options, error)

    def tiled(self, pointer, box, element_strides, options):
        from cuda.core.utils import StridedMemoryView

        view = StridedMemoryView.from_cuda_array_interface(pointer, stream_ptr=-1)
        return view.as_tensor_map(box, element_strides=element_strides, **self._options(options))

    def im2col(self, pointer, lower, upper, channels, pixels, element_strides, options):
        from cuda.core import _tensor_map as core
        from cuda.core.utils import StridedMemoryView

        view = StridedMemoryView.from_cuda_array_interface(pointer, stream_ptr=-1)
        return core.TensorMapDescriptor._from_im2col(view, lower, upper, channels, pixels,
                                                     element_strides=element_strides, **self._options(options))


def packed_parameters(kernelargs):
    """``kernelargs`` packed as cuda.core's launch packs them; ``.ptr`` is the ``void **`` the
    driver takes (keep the holder alive until the driver has copied them)."""
    from cuda.core._kernel_arg_handler import ParamHolder

    return ParamHolder(kernelargs)
