"""examples/gemm.py's kernels (bf16 and fp8 e4m3) checked against numpy in float64 on the same
(dequantized) inputs, on the GPU and under the simulator (both ways): ragged M, N and K, more
tiles than blocks (the persistent loop and the pipeline's states across tiles)."""

import numpy as np
import pytest
from numba import cuda

from gpu_support import import_example
from numba_tma import testing

gemm = import_example("gemm")

from test_gpu_wgmma import E4M3  # noqa: E402  (the e4m3 model, checked there against the format)


@pytest.mark.both_ways
@pytest.mark.parametrize("m, n, k, blocks", [(72, 264, 72, 1), (128, 256, 64, 1), (300, 520, 200, 3)])
def test_bf16_gemm_matches_numpy(m, n, k, blocks):
    if testing.WAY != "simulator":          # the GPU (a plain pytest run too: WAY is None there)
        m, n, k, blocks = 4 * m + 3, 3 * n + 8, 5 * k + 8, cuda.get_current_device().MULTIPROCESSOR_COUNT
    elif m != 72:
        pytest.skip("under the simulator the ragged case covers the kernel (each takes seconds there)")
    rng = np.random.default_rng(m)
    a, b = gemm.bf16_bits(rng.standard_normal((m, k))), gemm.bf16_bits(rng.standard_normal((n, k)))
    c = cuda.to_device(np.full((m, n), 0xFFFF, np.uint16))
    desc_a, desc_b, desc_c = gemm.maps(cuda.to_device(a), cuda.to_device(b), c)
    gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks)
    want = gemm.bf16_values(a).astype(np.float64) @ gemm.bf16_values(b).astype(np.float64).T
    got = gemm.bf16_values(c.copy_to_host())
    assert np.abs(got - want).max() <= 1e-2 * np.abs(want).max()
    assert np.abs(got - want).max() <= 2 ** -7 * np.abs(want).max()    # bf16 output rounding, with margin


@pytest.mark.both_ways
def test_e4m3_gemm_with_scales_matches_numpy():
    m, n, k, blocks = (70, 200, 304, 2) if testing.WAY == "simulator" else (1030, 2056, 1040, 132)
    if testing.WAY != "simulator":
        blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(7)
    codes = np.array([b for b in range(256) if np.isfinite(E4M3[b])], np.uint8)
    a, b = rng.choice(codes, (m, k)), rng.choice(codes, (n, k))
    scale = 0.03125
    c = cuda.to_device(np.zeros((m, n), np.uint16))
    desc_a, desc_b, desc_c = gemm.maps(cuda.to_device(a), cuda.to_device(b), c, "e4m3")
    gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks, "e4m3", scale)
    want = scale * (E4M3[a] @ E4M3[b].T)
    got = gemm.bf16_values(c.copy_to_host())
    # Hopper accumulates fp8 products with about 14 mantissa bits (see test_gpu_wgmma)
    assert np.abs(got - want).max() <= 1e-2 * np.abs(want).max()


@pytest.mark.both_ways
@pytest.mark.parametrize("pair", [False, True])
def test_bf16_gemm_with_b_given_k_by_n_matches_numpy(pair):
    """B as K x N row-major (its tiles MN-major: wgmma.descriptor_mn, trans_b=True), alone and in
    clusters of 2 sharing B by multicast; ragged M, N, K."""
    m, n, k, blocks = (72, 136, 72, 1) if testing.WAY == "simulator" else (1027, 776, 1032, 132)
    if testing.WAY != "simulator":
        blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT
    elif pair:
        pytest.skip("under the simulator the single-block case covers the MN-major tile (seconds each)")
    rng = np.random.default_rng(11)
    a, b = gemm.bf16_bits(rng.standard_normal((m, k))), gemm.bf16_bits(rng.standard_normal((k, n)))
    c = cuda.to_device(np.full((m, n), 0xFFFF, np.uint16))
    desc_a, desc_b, desc_c = gemm.maps(cuda.to_device(a), cuda.to_device(b), c, b_kn=True)
    gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks, pair=pair, b_kn=True)
    want = gemm.bf16_values(a).astype(np.float64) @ gemm.bf16_values(b).astype(np.float64)
    got = gemm.bf16_values(c.copy_to_host())
    assert np.abs(got - want).max() <= 2 ** -7 * np.abs(want).max()    # bf16 output rounding, with margin
