"""The first slice on the GPU: mbarrier phases and TMA tile loads of rank 1-5 against numpy."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import TensorMap, fence, mbarrier, tma

from gpu_support import TILE_C, TILE_R, bounded_wait, on_device, tile_copy

pytestmark = pytest.mark.gpu

THREADS = 128


@cuda.jit
def phases_kernel(result, status):
    bars = cuda.shared.array(1, numba.uint64)
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(bars, THREADS)
        fence.mbarrier_init()
    cuda.syncthreads()
    result[t, 0] = mbarrier.test_wait(bars, 0)  # nobody has arrived: phase 0 incomplete
    result[t, 1] = mbarrier.test_wait(bars, 1)  # a fresh barrier reports the phase before 0 done
    cuda.syncthreads()
    mbarrier.arrive(bars)
    bounded_wait(bars, 0, status)
    result[t, 2] = mbarrier.try_wait(bars, 0)
    result[t, 3] = mbarrier.test_wait(bars, 1)  # phase 1 has not completed yet
    cuda.syncthreads()
    mbarrier.arrive(bars)
    mbarrier.wait(bars, 1)
    result[t, 4] = mbarrier.test_wait(bars, 1)


def test_mbarrier_phases():
    result = cuda.to_device(np.full((THREADS, 5), 7, np.int32))
    status = cuda.to_device(np.zeros(1, np.int32))
    phases_kernel[1, THREADS](result, status)
    assert status.copy_to_host()[0] == 0, "barrier never completed"
    np.testing.assert_array_equal(result.copy_to_host(), np.tile([0, 1, 1, 0, 1], (THREADS, 1)))


def driver_map(array, box):
    """The slice's descriptor: encoded by cuTensorMapEncodeTiled, in global memory."""
    return on_device(TensorMap.tiled(array, box).driver_bytes())


@pytest.mark.parametrize("shape", [(256, 192), (100, 72)], ids=["exact", "ragged-edge"])
def test_tma_2d_tile_copy(shape):
    host = np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(tile_copy(driver_map(cuda.to_device(host), (TILE_R, TILE_C)), shape), host)


def test_tma_negative_coordinates_fill_zero():
    """A box that starts before the tensor: the out-of-bounds part is zero-filled."""
    host = np.arange(1, 64 * 128 + 1, dtype=np.float32).reshape(64, 128)
    got = tile_copy(driver_map(cuda.to_device(host), (TILE_R, TILE_C)), (TILE_R, TILE_C), origin=(-4, -8))
    expect = np.zeros((TILE_R, TILE_C), np.float32)
    expect[4:, 8:] = host[: TILE_R - 4, : TILE_C - 8]
    np.testing.assert_array_equal(got, expect)


def _rank_kernel(rank):
    shape = (4,) * (rank - 1) + (8,)
    nelem = 4 ** (rank - 1) * 8
    origin = (0,) * rank

    @cuda.jit
    def kernel(desc, out, status):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array(shape, numba.float32, alignment=128)
        flat = tile.reshape(nelem)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, nelem * 4)
            tma.load(desc, tile, origin, bars)
        bounded_wait(bars, 0, status)
        for i in range(cuda.threadIdx.x, nelem, cuda.blockDim.x):
            out[i] = flat[i]

    return kernel, shape


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_tma_load_every_rank(rank):
    kernel, box = _rank_kernel(rank)
    # rows of 12 floats keep every global stride a multiple of 16 bytes, as TMA requires
    host = np.random.default_rng(rank).random([b + 3 for b in box[:-1]] + [12]).astype(np.float32)
    out = cuda.to_device(np.zeros(int(np.prod(box)), np.float32))
    status = cuda.to_device(np.zeros(1, np.int32))
    kernel[1, THREADS](driver_map(cuda.to_device(host), box), out, status)
    assert status.copy_to_host()[0] == 0
    np.testing.assert_array_equal(out.copy_to_host().reshape(box), host[tuple(slice(0, b) for b in box)])
