"""Small kernels, one per op, shared by the CPU assembly tests and the GPU tests."""

import numba
from numba import cuda

from numba_tma import fence, mbarrier, tma

U64_OUT = (numba.uint64[::1],)


def mbarrier_init(out):
    bars = cuda.shared.array(2, numba.uint64)
    mbarrier.init(bars[1:], 1)
    out[0] = bars[1]


def mbarrier_arrive(out):
    bars = cuda.shared.array(1, numba.uint64)
    mbarrier.arrive(bars)


def mbarrier_arrive_expect_tx(out):
    bars = cuda.shared.array(1, numba.uint64)
    mbarrier.arrive_expect_tx(bars, 4096)


def mbarrier_try_wait(out):
    bars = cuda.shared.array(1, numba.uint64)
    out[0] = mbarrier.try_wait(bars, 0)


def mbarrier_test_wait(out):
    bars = cuda.shared.array(1, numba.uint64)
    out[0] = mbarrier.test_wait(bars, 1)


def mbarrier_wait(out):
    bars = cuda.shared.array(1, numba.uint64)
    mbarrier.wait(bars, out[0])


def fence_mbarrier_init(out):
    bars = cuda.shared.array(1, numba.uint64)
    mbarrier.init(bars, 1)
    fence.mbarrier_init()
    out[0] = bars[0]


def fence_proxy_async(out):
    fence.proxy_async()


def tma_load_kernel(rank):
    """A kernel issuing one ``rank``-D TMA tile load from a descriptor in global memory."""
    shape = (8,) * rank
    first = (0,) * rank

    def kernel(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array(shape, numba.float32, alignment=128)
        coords = (1, 2, 3, 4, 5)[:rank]
        tma.load(desc, tile, coords, bars)
        out[0] = tile[first]

    return kernel


TMA_SIG = (numba.uint8[::1], numba.float32[::1])


def tma_load_im2col_kernel(rank):
    """A kernel issuing one rank-D im2col TMA load from a descriptor in global memory."""
    offsets = (1, 2, 3)[: rank - 2]
    coords = (0, 1, 2, 3, 4)[:rank]

    def kernel(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        block = cuda.shared.array(1024, numba.float32, alignment=128)
        tma.load_im2col(desc, block, coords, offsets, bars)
        out[0] = block[0]

    return kernel
