"""examples/gemm.py's kernels (bf16 and fp8 e4m3) checked against numpy in float64 on the same
(dequantized) inputs, on the GPU and under the simulator (both ways): ragged M, N and K, more
tiles than blocks (the persistent loop and the pipeline's states across tiles)."""

import re

import numba
import numpy as np
import pytest
from numba import cuda

import numba_tma
from gpu_support import import_example
from numba_tma import TensorMap, inspect, testing

gemm = import_example("gemm")

from test_gpu_wgmma import E4M3  # noqa: E402  (the e4m3 model, checked there against the format)


@pytest.mark.both_ways
@pytest.mark.parametrize("stages", [3, 4])
@pytest.mark.parametrize("m, n, k, blocks", [(72, 264, 72, 1), (128, 256, 64, 1), (300, 520, 200, 3)])
def test_bf16_gemm_matches_numpy(m, n, k, blocks, stages):
    """Both rings: 3 stages (the whole C tile staged at once) and 4 (the epilogue in two rounds)."""
    if testing.WAY != "simulator":          # the GPU (a plain pytest run too: WAY is None there)
        m, n, k, blocks = 4 * m + 3, 3 * n + 8, 5 * k + 8, cuda.get_current_device().MULTIPROCESSOR_COUNT
    elif m != 72 or stages != 3:
        pytest.skip("under the simulator the ragged case at 3 stages covers the kernel (each takes seconds there)")
    rng = np.random.default_rng(m)
    a, b = gemm.bf16_bits(rng.standard_normal((m, k))), gemm.bf16_bits(rng.standard_normal((n, k)))
    c = cuda.to_device(np.full((m, n), 0xFFFF, np.uint16))
    desc_a, desc_b, desc_c = gemm.maps(cuda.to_device(a), cuda.to_device(b), c)
    gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks, split_k=1, stages=stages)   # unsplit (few tiles)
    want = gemm.bf16_values(a).astype(np.float64) @ gemm.bf16_values(b).astype(np.float64).T
    got = gemm.bf16_values(c.copy_to_host())
    assert np.abs(got - want).max() <= 1e-2 * np.abs(want).max()
    assert np.abs(got - want).max() <= 2 ** -7 * np.abs(want).max()    # bf16 output rounding, with margin


@pytest.mark.both_ways
def test_e4m3_gemm_with_scales_matches_numpy():
    m, n, k, blocks = (70, 200, 256, 2) if testing.WAY == "simulator" else (1030, 2056, 1040, 132)
    if testing.WAY != "simulator":
        blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(7)
    codes = np.array([b for b in range(256) if np.isfinite(E4M3[b])], np.uint8)
    a, b = rng.choice(codes, (m, k)), rng.choice(codes, (n, k))
    scale = 0.03125
    c = cuda.to_device(np.zeros((m, n), np.uint16))
    desc_a, desc_b, desc_c = gemm.maps(cuda.to_device(a), cuda.to_device(b), c, "e4m3")
    gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks, "e4m3", scale, split_k=1)
    want = scale * (E4M3[a] @ E4M3[b].T)
    got = gemm.bf16_values(c.copy_to_host())
    # Hopper accumulates fp8 products with about 14 mantissa bits (see test_gpu_wgmma)
    assert np.abs(got - want).max() <= 1e-2 * np.abs(want).max()


@pytest.mark.both_ways
@pytest.mark.parametrize("pair", [False, True])
def test_bf16_gemm_with_b_given_k_by_n_matches_numpy(pair):
    """B as K x N row-major (its tiles MN-major: wgmma.descriptor_mn, trans_b=True), alone and in
    clusters of 2 sharing B by multicast; ragged M, N, K."""
    if testing.WAY == "simulator" and not pair:
        pytest.skip("under the simulator the clusters-of-2 case covers the MN-major tiles (seconds each)")
    m, n, k, blocks = (72, 136, 72, 1) if testing.WAY == "simulator" else (1027, 776, 1032, 132)
    if testing.WAY != "simulator":
        blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT
    elif pair:
        pytest.skip("under the simulator the single-block case covers the MN-major tile (seconds each)")
    rng = np.random.default_rng(11)
    a, b = gemm.bf16_bits(rng.standard_normal((m, k))), gemm.bf16_bits(rng.standard_normal((k, n)))
    c = cuda.to_device(np.full((m, n), 0xFFFF, np.uint16))
    desc_a, desc_b, desc_c = gemm.maps(cuda.to_device(a), cuda.to_device(b), c, b_kn=True)
    gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks, pair=pair, b_kn=True, split_k=1)
    want = gemm.bf16_values(a).astype(np.float64) @ gemm.bf16_values(b).astype(np.float64)
    got = gemm.bf16_values(c.copy_to_host())
    assert np.abs(got - want).max() <= 2 ** -7 * np.abs(want).max()    # bf16 output rounding, with margin


@pytest.mark.both_ways
@pytest.mark.parametrize("kind, split_k, b_kn", [("bf16", None, False), ("bf16", 4, False), ("e4m3", 3, False),
                                                ("bf16", 2, True)])
def test_split_k_gemm_matches_numpy(kind, split_k, b_kn):
    """Split-K (fewer output tiles than blocks): each (tile, split) unit adds its bf16 partial into
    C (prefilled with NaN: zeroed by the call) with TMA reduce-add; ragged M, N, K and ragged K
    steps per split.  ``None``: the split ``matmul`` picks (``split_k_for``); 4 splits of 64 tiles
    on the GPU: 256 units for 132 blocks (the persistent loop across units); fp8; B given K x N."""
    if testing.WAY == "simulator":
        if (kind, split_k, b_kn) != ("bf16", None, False):
            pytest.skip("under the simulator the automatic bf16 split covers the kernel (seconds each)")
        m, n, k, blocks = 72, 136, 200, 2           # 1 tile, 4 K steps: 2 splits of 2
    else:
        blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT
        m, n, k = {None: (200, 8200, 8200), 4: (250, 8136, 6000), 3: (130, 4104, 4112), 2: (250, 4104, 4104)}[split_k]
    if split_k is None:                              # split_k_for's choice, asked for
        assert gemm.split_k_for(m, n, k, blocks, kind) == 2
    rng = np.random.default_rng(13)
    if kind == "e4m3":
        codes = np.array([b for b in range(256) if np.isfinite(E4M3[b])], np.uint8)
        a, b, scale = rng.choice(codes, (m, k)), rng.choice(codes, (n, k)), 0.03125
        want = scale * (E4M3[a] @ E4M3[b].T)
    else:
        a, b, scale = gemm.bf16_bits(rng.standard_normal((m, k))), gemm.bf16_bits(rng.standard_normal((n, k))), 1.0
        want = gemm.bf16_values(a).astype(np.float64) @ gemm.bf16_values(b).astype(np.float64).T
        if b_kn:
            b = np.ascontiguousarray(b.T)           # K x N row-major
    c = cuda.to_device(np.full((m, n), 0xFFFF, np.uint16))
    desc_a, desc_b, desc_c = gemm.maps(cuda.to_device(a), cuda.to_device(b), c, kind, b_kn=b_kn)
    gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks, kind, scale, b_kn=b_kn, split_k=split_k)
    got = gemm.bf16_values(c.copy_to_host())
    assert np.abs(got - want).max() <= 1e-2 * np.abs(want).max()


@pytest.mark.parametrize("split_k, error, match", [
    (0, ValueError, r"split_k=0: it must be at least 1"), (-2, ValueError, r"split_k=-2: it must be at least 1"),
    (2.0, TypeError, r"split_k must be an int"), (True, TypeError, r"split_k must be an int"),
    (4, ValueError, r"split_k=4 is more splits than K steps: K=192 is 3 step\(s\) of 64"),
    (5, ValueError, r"split_k=5 is more splits than K steps"),
])
def test_split_k_refuses_bad_values(split_k, error, match):
    with pytest.raises(error, match=match):         # refused before anything is launched
        gemm.matmul(None, None, None, 256, 8192, 192, 132, split_k=split_k)


@pytest.mark.skipif(numba_tma.ops.SIMULATOR, reason="compiles the kernel (numba-cuda's compiler, not the simulator)")
def test_gemm_kernel_issues_its_wgmmas_back_to_back():
    """No subroutine call in the kernel (a 64-bit division is one: ``range`` with a run-time step,
    or ``//`` on int64): with one, ptxas serialises every wgmma (C7509), a
    ``WARPGROUP.DEPBAR.LE gsb0, 0x0`` before each HGMMA; without, the main loop waits once per K
    step leaving one group in flight (``gsb0, 0x1``), and once (``0x0``) after it."""
    kernel, _, bk, bn = gemm.GEMMS["bf16", False, False, False, 4]
    maps = (TensorMap.numba_type("bfloat16", box, swizzle="128B") for box in ((128, bk), (bn // 2, bk), (64, 64)))
    sass = inspect.compile(kernel, (*maps, *[numba.int64] * 3, numba.float32, numba.int64), "sm_90a").sass
    assert "CALL" not in sass
    assert len(re.findall(r"HGMMA\.64x256x16\.F32\.BF16", sass)) == 4
    assert len(re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x1", sass)) == 1
    assert len(re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x0", sass)) == 1


def test_matmul_refuses_a_ring_depth_it_was_not_built_with():
    with pytest.raises(ValueError, match=r"stages=5: the bf16 kernel is built with 3 or 4 stages"):
        gemm.matmul(None, None, None, 256, 256, 256, 132, stages=5)
    with pytest.raises(ValueError, match=r"stages=3: the e4m3 kernel is built with 4 stages"):
        gemm.matmul(None, None, None, 256, 256, 256, 132, "e4m3", stages=3)
    assert [gemm.stages_for("bf16", k) for k in (1024, 4096, 4097, 8192)] == [3, 3, 4, 4]
    assert gemm.stages_for("e4m3", 1024) == 4


def test_split_k_refuses_too_many_splits_and_pairs():
    with pytest.raises(ValueError, match=r"split_k=8: at most 4"):
        gemm.matmul(None, None, None, 256, 8192, 8192, 132, split_k=8)
    with pytest.raises(ValueError, match=r"split_k=2 with pair=True"):
        gemm.matmul(None, None, None, 256, 8192, 8192, 132, pair=True, split_k=2)
    assert [gemm.split_k_for(m, 8192, k, 132) for m, k in ((256, 8192), (128, 8192), (1024, 8192), (256, 192))] == \
        [2, 4, 1, 1]
