"""numpy models for the tests of numba_tma.gemm: bfloat16 and fp8 codes, written from the formats
(not by the library), and the epilogue's steps in float64."""

import math

import numpy as np


def bf16_bits(x):
    """float32 -> bfloat16 bits, rounding to nearest even."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def fp8_values(codes, kind):
    """e4m3 (bias 7, no infinities, S.1111.111 NaN) or e5m2 (bias 15) codes as float64."""
    codes = np.asarray(codes, np.int64)
    exp_bits, bias = (4, 7) if kind == "e4m3" else (5, 15)
    man_bits = 7 - exp_bits
    sign = np.where(codes >> 7, -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    normal = (1 + m / (1 << man_bits)) * np.exp2(e - bias)
    sub = (m / (1 << man_bits)) * 2.0 ** (1 - bias)
    return sign * np.where(e == 0, sub, normal)


def finite_fp8_codes(kind, rng, shape, top=None):
    """Random fp8 codes of finite values of at most ``top`` in magnitude."""
    values = fp8_values(np.arange(256), kind)
    ok = np.isfinite(values) & ~((np.arange(256) & 0x7F) == 0x7F if kind == "e4m3" else False)
    if kind == "e5m2":
        ok &= ((np.arange(256) >> 2) & 0x1F) != 0x1F
    if top is not None:
        ok &= np.abs(values) <= top
    return rng.choice(np.flatnonzero(ok).astype(np.uint8), shape)


ACTIVATIONS = {
    "relu": lambda v: np.maximum(v, 0.0),
    "gelu": lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))),
    "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))),
    "silu": lambda v: v / (1 + np.exp(-v)),
}


def relative_error(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
