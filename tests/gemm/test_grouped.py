"""numba_tma.gemm.grouped_matmul both ways against numpy in float64 (an empty group, groups smaller
than a tile, B K-major and row-major, the list form) and its refusals."""

import numpy as np
import pytest
from numba import cuda

from gemm_models import ACTIVATIONS, bf16_bits, bf16_values, relative_error
from numba_tma import gemm, testing
from numba_tma.arrays import operand

BF16_TOL = 2 ** -7


def sizes():
    return [40, 0, 3, 130, 1] if testing.WAY == "simulator" else [700, 0, 37, 1300, 1, 128]


@pytest.mark.both_ways
@pytest.mark.parametrize("b_layout", ["k", "n"])
def test_grouped_matmul_matches_numpy_group_by_group(b_layout):
    groups = sizes()
    k, n = (64, 136) if testing.WAY == "simulator" else (512, 776)
    rng = np.random.default_rng(9)
    a = bf16_bits(rng.standard_normal((sum(groups), k)))
    w = bf16_bits(rng.standard_normal((len(groups), n, k) if b_layout == "k" else (len(groups), k, n)))
    b_dev = cuda.to_device(w)
    if b_layout == "k":                                    # (groups, K, N) with K contiguous: W transposed
        g, rows_, cols_ = w.shape
        b_dev = operand(b_dev, "b", dtype="bf16").viewed((g, cols_, rows_), (rows_ * cols_, 1, cols_)).device_array
    offsets = np.cumsum(groups).astype(np.int32)
    bias = bf16_bits(rng.standard_normal(n))
    out = gemm.grouped_matmul(cuda.to_device(a), b_dev, cuda.to_device(offsets), bias=cuda.to_device(bias),
                              activation="silu", dtype="bf16")
    assert "grouped" in gemm.grouped_plan(cuda.to_device(a), b_dev, cuda.to_device(offsets), dtype="bf16").explain()
    got, start = bf16_values(out.copy_to_host()), 0
    wv = bf16_values(w)
    for g, rows in enumerate(groups):
        b_g = wv[g].T if b_layout == "k" else wv[g]
        want = ACTIVATIONS["silu"](bf16_values(a[start:start + rows]) @ b_g + bf16_values(bias))
        if rows:
            assert relative_error(got[start:start + rows], want) <= BF16_TOL, f"group {g}"
        start += rows


@pytest.mark.both_ways
def test_the_list_form_copies_the_groups_into_one_launch():
    k, n = (40, 72) if testing.WAY == "simulator" else (200, 264)
    rows = [30, 1, 70] if testing.WAY == "simulator" else [300, 1, 700]
    rng = np.random.default_rng(10)
    a = [bf16_bits(rng.standard_normal((r, k))) for r in rows]
    b = [bf16_bits(rng.standard_normal((k, n))) for _ in rows]
    outs = gemm.grouped_matmul([cuda.to_device(x) for x in a], [cuda.to_device(y) for y in b], dtype="bf16")
    assert len(outs) == len(rows)
    for x, y, o in zip(a, b, outs):
        assert relative_error(bf16_values(o.copy_to_host()), bf16_values(x) @ bf16_values(y)) <= BF16_TOL


@pytest.mark.both_ways
def test_grouped_refusals_name_the_argument():
    a = cuda.to_device(np.zeros((10, 16), np.uint16))
    b = cuda.to_device(np.zeros((2, 16, 24), np.uint16))
    with pytest.raises(TypeError, match="argument 'offsets' has an unsupported dtype '<i8'"):
        gemm.grouped_matmul(a, b, cuda.to_device(np.array([4, 10], np.int64)), dtype="bf16")
    for args, words in [((a, b, cuda.to_device(np.array([10], np.int32))), r"argument 'offsets' must be int32 of "
                                                                            r"shape \(2,\)"),
                        ((a, cuda.to_device(np.zeros((2, 8, 24), np.uint16)), cuda.to_device(np.array([4, 10], np.int32))),
                         r"argument 'b' must be \(groups, 16, N\)"),
                        ((a, cuda.to_device(np.zeros((16, 24), np.uint16)), cuda.to_device(np.array([10], np.int32))),
                         "argument 'b' must be 3-D")]:
        with pytest.raises(ValueError, match=words):
            gemm.grouped_matmul(*args, dtype="bf16")
    with pytest.raises(ValueError, match="arguments 'offsets' and 'out' must be None with lists"):
        gemm.grouped_matmul([a], [a], cuda.to_device(np.array([10], np.int32)), dtype="bf16")
