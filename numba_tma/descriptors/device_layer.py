"""What the host-side descriptors ask of the backend chosen at import (:data:`numba_tma.ops.BACKEND`:
numba-cuda's GPU, or numba-cuda's CUDA simulator, whose memory is host memory): how to read an
array.  The backend sits above the descriptors and registers its readers here, once
(:func:`register`); until then (a descriptor module imported alone) no array has a fast view and
none is host memory."""

from __future__ import annotations


class ArrayReaders:
    """``host_array(array)``: the numpy array behind ``array`` where the backend's device memory is
    host memory, else None; ``device_array_view(array)``: ``(typestr, shape, byte strides, data
    pointer)`` of the backend's own device array read from its attributes (what its
    ``__cuda_array_interface__`` says), else None."""

    __slots__ = ("host_array", "device_array_view")

    def __init__(self, host_array, device_array_view):
        self.host_array, self.device_array_view = host_array, device_array_view


def _none(array):
    return None


READERS = ArrayReaders(_none, _none)


def register(host_array, device_array_view) -> None:
    """The backend's readers (see :class:`ArrayReaders`)."""
    READERS.host_array, READERS.device_array_view = host_array, device_array_view
