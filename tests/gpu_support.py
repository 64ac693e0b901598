"""Helpers for GPU tests: a driver-encoded tensor map and a barrier wait that cannot hang."""

import ctypes

import numpy as np
from numba import cuda

from numba_tma import mbarrier

DRIVER_DTYPE = {np.dtype(np.float32): 7, np.dtype(np.float64): 8, np.dtype(np.float16): 6,
                np.dtype(np.uint8): 0, np.dtype(np.uint16): 1, np.dtype(np.uint32): 2, np.dtype(np.int32): 3}


def driver_tensor_map(array, box):
    """128-byte CUtensorMap for a C-ordered device ``array`` with ``box`` in array order, encoded by
    ``cuTensorMapEncodeTiled``, copied to a uint8 device array."""
    from cuda.bindings import driver as drv

    rank = array.ndim
    itemsize = array.dtype.itemsize
    dims = [array.shape[rank - 1 - i] for i in range(rank)]
    # cuda-bindings passes an empty list as NULL, which the driver rejects even for rank 1 (where it
    # reads no stride): give it one unused entry.
    strides = [array.strides[rank - 1 - i] for i in range(1, rank)] or [0]
    err, tmap = drv.cuTensorMapEncodeTiled(
        drv.CUtensorMapDataType(DRIVER_DTYPE[array.dtype]), drv.cuuint32_t(rank),
        array.__cuda_array_interface__["data"][0],
        [drv.cuuint64_t(d) for d in dims], [drv.cuuint64_t(s) for s in strides],
        [drv.cuuint32_t(b) for b in reversed(box)], [drv.cuuint32_t(1)] * rank,
        drv.CUtensorMapInterleave(0), drv.CUtensorMapSwizzle(0),
        drv.CUtensorMapL2promotion(2), drv.CUtensorMapFloatOOBfill(0),
    )
    assert err == drv.CUresult.CUDA_SUCCESS, (err, itemsize)
    raw = ctypes.string_at(int(tmap.getPtr()), 128)
    return cuda.to_device(np.frombuffer(raw, dtype=np.uint8).copy())


WAIT_SPINS = 1 << 20


@cuda.jit(device=True)
def bounded_wait(bars, phase, status):
    """Wait for ``phase`` like ``mbarrier.wait`` but give up after WAIT_SPINS tries and record the
    failure in ``status[0]``, so a barrier that never completes fails the test instead of hanging."""
    for _ in range(WAIT_SPINS):
        if mbarrier.try_wait(bars, phase):
            return
    status[0] = 1


__all__ = ["driver_tensor_map", "bounded_wait"]
