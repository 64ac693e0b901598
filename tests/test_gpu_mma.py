"""mma.sync, ldmatrix and stmatrix checked against numpy, on the GPU and under the simulator
(both ways): one warp, a 16 x 16 bf16 A and a 16 x 8 B (stored N x K) through ldmatrix, the
m16n8k16 product, and stmatrix writing fragments back in place (plain and transposed)."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import mma

from test_gpu_wgmma import bf16_bits


@cuda.jit
def product(a_in, b_in, out, repeat):
    sa = cuda.shared.array((16, 16), numba.uint16, alignment=128)
    sb = cuda.shared.array((8, 16), numba.uint16, alignment=128)    # B stored N x K
    lane = cuda.threadIdx.x
    for i in range(lane, 256, 32):
        sa[i // 16, i % 16] = a_in[i // 16, i % 16]
    for i in range(lane, 128, 32):
        sb[i // 16, i % 16] = b_in[i // 16, i % 16]
    cuda.syncthreads()
    m = lane // 8          # A's four 8 x 8 matrices: rows 0-7 / 8-15, K 0-7 / 8-15
    a = mma.ldmatrix(sa[(m % 2) * 8 + lane % 8, (m // 2) * 8:], 4)
    b = mma.ldmatrix(sb[lane % 8, (m % 2) * 8:], 2)
    acc = mma.zeros()
    for _ in range(repeat):
        acc = mma.sync(acc, a, b)
    g, t = lane // 4, lane % 4
    out[g, 2 * t], out[g, 2 * t + 1], out[g + 8, 2 * t], out[g + 8, 2 * t + 1] = acc[0], acc[1], acc[2], acc[3]


@pytest.mark.both_ways
@pytest.mark.parametrize("repeat", [1, 3])
def test_bf16_m16n8k16_matches_numpy(repeat):
    rng = np.random.default_rng(repeat)
    a, b = rng.integers(-4, 5, (16, 16)).astype(np.float32), rng.integers(-4, 5, (8, 16)).astype(np.float32)
    out = cuda.to_device(np.zeros((16, 8), np.float32))
    product[1, 32](cuda.to_device(bf16_bits(a)), cuda.to_device(bf16_bits(b)), out, repeat)
    np.testing.assert_array_equal(out.copy_to_host(), repeat * (a @ b.T))


def _round_trip(trans):
    @cuda.jit
    def kernel(src, dst):
        tile = cuda.shared.array((32, 8), numba.uint16, alignment=128)
        back = cuda.shared.array((32, 8), numba.uint16, alignment=128)
        lane = cuda.threadIdx.x
        for i in range(lane, 256, 32):
            tile[i // 8, i % 8] = src[i // 8, i % 8]
        cuda.syncthreads()
        regs = mma.ldmatrix(tile[lane:], 4, trans)
        mma.stmatrix(back[lane:], regs, trans)
        cuda.syncwarp()
        for i in range(lane, 256, 32):
            dst[i // 8, i % 8] = back[i // 8, i % 8]
    return kernel


@cuda.jit
def fragments_of(src, regs_out):
    tile = cuda.shared.array((32, 8), numba.uint16, alignment=128)
    lane = cuda.threadIdx.x
    for i in range(lane, 256, 32):
        tile[i // 8, i % 8] = src[i // 8, i % 8]
    cuda.syncthreads()
    regs = mma.ldmatrix(tile[lane:], 4)
    for i in range(4):
        regs_out[lane, i] = regs[i]


@pytest.mark.both_ways
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_writes_back_what_ldmatrix_read(trans):
    src = np.arange(256, dtype=np.uint16).reshape(32, 8) * 7 + 1
    dst = cuda.to_device(np.zeros((32, 8), np.uint16))
    _round_trip(trans)[1, 32](cuda.to_device(src), dst)
    np.testing.assert_array_equal(dst.copy_to_host(), src)


@pytest.mark.both_ways
def test_ldmatrix_fragment_layout():
    """Register i of lane l: row l // 4 of matrix i, elements 2 (l % 4) (low half) and + 1."""
    src = np.arange(256, dtype=np.uint16).reshape(32, 8)
    regs = cuda.to_device(np.zeros((32, 4), np.uint32))
    fragments_of[1, 32](cuda.to_device(src), regs)
    lane, i = np.arange(32)[:, None], np.arange(4)[None, :]
    row, col = 8 * i + lane // 4, 2 * (lane % 4)
    want = src[row, col].astype(np.uint32) | src[row, col + 1].astype(np.uint32) << 16
    np.testing.assert_array_equal(regs.copy_to_host(), want)
