"""numba-cuda 0.30's device arrays, read and made as numba_tma needs (hooks 9 and 10 of
:mod:`numba_tma.numba_cuda`).  Imported by the GPU backend only (:mod:`numba_tma.gpu`): the
simulator's device arrays are another class (:mod:`numba_tma.simulator.numba_sim`)."""

from __future__ import annotations

from numba.cuda.cudadrv.devicearray import DeviceNDArray as _DeviceNDArray

# -- 9. a numba-cuda device array's interface, read from its attributes ------------------------------

def device_array_view(array):
    """``(typestr, shape, byte strides, data pointer)`` of a numba-cuda device array (exactly a
    ``DeviceNDArray``), what its ``__cuda_array_interface__`` says (strides given even where it says
    None), read from the attributes that property reads; None for any other object."""
    if type(array) is not _DeviceNDArray:
        return None
    try:
        address = int(array.gpu_data.device_pointer)
    except AttributeError:   # as the property: no device memory behind it
        address = 0
    return array.dtype.str, array.shape, array.strides, address


# -- 10. a device array of a Numba type of numba_tma's choosing ------------------------------------

class _TypedDeviceArray(_DeviceNDArray):
    """A numba-cuda device array whose Numba type is :attr:`_type` (its views: numba-cuda's)."""

    _type = None

    @property
    def _numba_type_(self):
        return self._type or super()._numba_type_


def typed_device_array(array, numba_type):
    """A device array over ``array``'s memory (a numba-cuda ``DeviceNDArray``, C-contiguous)
    typed ``numba_type`` (a ``types.Array`` subclass of ``array``'s dtype, ndim and layout) as a
    kernel argument; it keeps that memory alive."""
    typed = _TypedDeviceArray(array.shape, array.strides, array.dtype, stream=array.stream, gpu_data=array.gpu_data)
    typed._type = numba_type
    return typed
