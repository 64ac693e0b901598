"""numba_tma.gemm.matmul on numba device arrays, both ways (under the simulator at small sizes, on the
GPU larger and ragged), each result against numpy in float64 on the same inputs (tests/gemm/
gemm_models.py: the formats and the epilogue's steps written out); the configuration rule against
hand-worked cases; and every refusal naming its argument."""

import numpy as np
import pytest
from numba import cuda

from gemm_models import ACTIVATIONS, bf16_bits, bf16_values, relative_error
from numba_tma import gemm, testing
from numba_tma.gemm import config as configs
from numba_tma.arrays import operand

BF16_TOL = 2 ** -7          # bf16 output rounding, with margin


def shape(sim, gpu):
    return sim if testing.WAY == "simulator" else gpu


def bf16(rng, shape_):
    bits = bf16_bits(rng.standard_normal(shape_))
    return bits, bf16_values(bits)


def host(out, dtype):
    """The output's values in float64 (bf16 held as uint16 bits)."""
    values = out.copy_to_host()
    return bf16_values(values) if dtype == "bf16" else values.astype(np.float64)


def col_major(bits):
    """A column-major device array holding ``bits``' values (its transpose row-major)."""
    raw = "bf16" if bits.dtype == np.uint16 else "e4m3" if bits.dtype == np.uint8 else None
    return operand(cuda.to_device(np.ascontiguousarray(bits.T)), "b", dtype=raw).transposed().device_array


# -- data, both ways -------------------------------------------------------------------------------

@pytest.mark.both_ways
def test_bf16_with_bias_gelu_tanh_and_residual(b_layout="col"):
    m, n, k = shape((72, 136, 72), (1030, 776, 520))
    rng = np.random.default_rng(1)
    (a, av), (b, bv) = bf16(rng, (m, k)), bf16(rng, (k, n))
    (bias, biasv), (res, resv) = bf16(rng, (n,)), bf16(rng, (m, n))
    b_dev = cuda.to_device(b) if b_layout == "row" else col_major(b)
    out = gemm.matmul(cuda.to_device(a), b_dev, bias=cuda.to_device(bias), activation="gelu_tanh",
                      residual=cuda.to_device(res), dtype="bf16")
    want = ACTIVATIONS["gelu_tanh"](av @ bv + biasv) + resv
    assert relative_error(host(out, "bf16"), want) <= BF16_TOL


@pytest.mark.both_ways
def test_bf16_alpha_beta_c_relu_into_float32():
    m, n, k = shape((72, 136, 72), (700, 1000, 264))
    rng = np.random.default_rng(2)
    (a, av), (b, bv) = bf16(rng, (m, k)), bf16(rng, (k, n))
    c = rng.standard_normal((m, n)).astype(np.float32)
    out = gemm.matmul(cuda.to_device(a), cuda.to_device(b), alpha=0.5, beta=-2.0, c=cuda.to_device(c),
                      activation="relu", out_dtype="f32", dtype="bf16")        # B row-major: MN-major tiles
    want = np.maximum(0.5 * (av @ bv) - 2.0 * c, 0)
    assert out.dtype == np.float32 and relative_error(host(out, "f32"), want) <= 1e-5


@cuda.jit(device=True)
def shifted(v, row, col, shift, weights):
    return v * weights[col] + shift * (row % 3)


@pytest.mark.both_ways
def test_f16_row_bias_silu_and_a_user_epilogue():
    m, n, k = shape((72, 136, 40), (513, 264, 136))
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal((m, 1)).astype(np.float32)
    weights = rng.standard_normal(n).astype(np.float32)
    out = gemm.matmul(cuda.to_device(a), cuda.to_device(b), bias=cuda.to_device(bias), activation="silu",
                      epilogue=shifted, epilogue_args=(np.float32(0.25), cuda.to_device(weights)))
    rows = np.arange(m)[:, None]
    want = ACTIVATIONS["silu"](a.astype(np.float64) @ b.astype(np.float64) + bias) * weights + 0.25 * (rows % 3)
    assert out.dtype == np.float16 and relative_error(host(out, "f16"), want) <= 2 ** -9


# -- the configuration rule --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, m, n, k, want", [
    ("bf16", 8192, 8192, 8192, (256, 4, 2, 1)),       # 2048 wide tiles: pairs, K long: 4 stages
    ("bf16", 8192, 8192, 1024, (256, 3, 2, 1)),       # 16 K steps: 3 stages (the whole C tile staged)
    ("bf16", 256, 8192, 8192, (256, 3, 2, 2)),        # 32 pairs of wide tiles: split-K 2, 64 K steps each
    ("bf16", 128, 8192, 8192, (256, 3, 1, 4)),        # one tile row, 32 tiles: split-K 4
    ("bf16", 4097, 4096, 4096, (256, 3, 1, 1)),       # 528 tiles: 4 waves; 272 pairs: 5 waves of 66
    ("bf16", 7, 4096, 4096, (256, 3, 1, 8)),          # 16 tiles: split-K 8
    ("e4m3", 8192, 8192, 8192, (192, 4, 2, 1)),
    ("bf16", 100, 100, 100, (256, 3, 1, 1)),          # one tile, 2 K steps: no split
])
def test_the_configuration_rule(dtype, m, n, k, want):
    chosen, why = configs.choose(dtype, m, n, k, 132)
    assert (chosen.tile_n, chosen.stages, chosen.cluster, chosen.split_k) == want
    assert chosen.blocks == 132 and why


def test_given_fields_win_and_are_checked():
    chosen, _ = configs.choose("bf16", 8192, 8192, 8192, 132,
                               given=gemm.Config(tile_n=128, cluster=1))
    assert (chosen.tile_n, chosen.cluster) == (128, 1)
    for config, words in [(gemm.Config(tile_n=192), "config.tile_n=192: bf16 kernels have tiles of 256 or 128"),
                          (gemm.Config(stages=9), "config.stages=9: from 2 to 4"),
                          (gemm.Config(cluster=4), "config.cluster=4: 1 or 2"),
                          (gemm.Config(split_k=9), "config.split_k=9: from 1 to 8"),
                          (gemm.Config(blocks=True), "config.blocks must be an int")]:
        with pytest.raises((ValueError, TypeError), match=words.replace("(", r"\(").replace(")", r"\)")):
            configs.check("bf16", config)
    with pytest.raises(TypeError, match="argument 'config' must be a numba_tma.gemm.Config"):
        configs.check("bf16", {"tile_n": 128})


# -- refusals ------------------------------------------------------------------------------------------

def _python_function(v, r, c):
    return v


@pytest.mark.both_ways
def test_refusals_name_the_argument_and_the_rule():
    rng = np.random.default_rng(8)
    a, b = cuda.to_device(bf16(rng, (64, 32))[0]), cuda.to_device(bf16(rng, (32, 48))[0])
    f16 = cuda.to_device(np.zeros((64, 32), np.float16))
    cases = [
        (dict(a=a, b=cuda.to_device(bf16(rng, (40, 48))[0])), ValueError, "argument 'b' must have a's 32 columns"),
        (dict(a=f16, b=cuda.to_device(np.zeros((32, 48), np.float32)), dtype=None), TypeError,
         "argument 'b' must hold bf16, f16, e4m3 or e5m2 values; got f32"),
        (dict(a=a, b=b, bias=cuda.to_device(np.zeros(47, np.float32))), ValueError, "argument 'bias' must have shape"),
        (dict(a=a, b=b, activation="tanh"), ValueError, "argument 'activation' must be None or one of relu"),
        (dict(a=a, b=b, beta=1.0), ValueError, "argument 'c' is needed with beta=1.0"),
        (dict(a=a, b=b, epilogue=_python_function), TypeError, "argument 'epilogue' must be a device function"),
        (dict(a=a, b=b, epilogue_args=(1,)), ValueError, "argument 'epilogue_args' is given without"),
        (dict(a=a, b=b, out_dtype="f64"), ValueError, "argument 'out_dtype' must be bf16, f16 or f32"),
        (dict(a=a, b=b, out=cuda.to_device(np.zeros((64, 47), np.float32))), ValueError,
         r"argument 'out' must have shape \(64, 48\)"),
        (dict(a=a, b=b, alpha="2"), TypeError, "argument 'alpha' must be a number"),
        (dict(a=cuda.to_device(np.zeros((64, 0), np.uint16)), b=cuda.to_device(np.zeros((0, 48), np.uint16))),
         ValueError, "argument 'a' must have at least one column"),
    ]
    for keywords, error, words in cases:
        keywords.setdefault("dtype", "bf16")
        with pytest.raises(error, match=words):
            gemm.matmul(keywords.pop("a"), keywords.pop("b"), **{k: v for k, v in keywords.items() if v is not None})
    with pytest.raises(TypeError, match="argument 'a' holds raw '<u2' bits: say what they are with dtype="):
        gemm.matmul(a, b)


@pytest.mark.both_ways
def test_split_k_sums_the_splits_in_their_order():
    """Split-K, 3 splits of one K step each, whose partials of element (0, 0) are 2^26, 1 and
    -2^26: the documented order (split 0 first) gives (2^26 + 1) - 2^26 = 0 in float32 (2^26 + 1
    rounds to 2^26), any other order 1 — whichever split counts last, the same bits."""
    m, n, k = 72, 136, 192
    a, b = np.zeros((m, k), np.float32), np.zeros((k, n), np.float32)
    a[0, [0, 64, 128]], b[[0, 64, 128], 0] = (2.0 ** 13, 1.0, -(2.0 ** 13)), (2.0 ** 13, 1.0, 2.0 ** 13)
    a[1:, :] = 1.0                                        # every other element: a plain sum (exact)
    b[:, 1:] = 0.5
    got = gemm.matmul(cuda.to_device(bf16_bits(a)), cuda.to_device(bf16_bits(b)), out_dtype="f32", dtype="bf16",
                      config=gemm.Config(split_k=3, tile_n=128))
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    want[0, 0] = 0.0                                      # the fixed order's float32 sum, not float64's 1
    np.testing.assert_array_equal(host(got, "f32"), want)
