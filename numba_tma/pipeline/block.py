"""The block's threads as a ring's steps see them, as device functions of the module's ``cuda``
(the simulator swaps a device function's global ``cuda`` for the running thread's, which a
closure's would not be): numba-cuda's here, numba-cuda-mlir's in ``numba_tma.mlir.pipeline``."""

from __future__ import annotations

from numba import cuda

from .state import device


@device
def first_thread():
    return cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0


@device
def syncthreads():
    cuda.syncthreads()


@device
def syncwarp():
    cuda.syncwarp()


@device
def laneid():
    return cuda.laneid


THREADS = (first_thread, syncthreads, syncwarp, laneid)
