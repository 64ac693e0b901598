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


ACTIVATIONS = {
    "relu": lambda v: np.maximum(v, 0.0),
    "gelu": lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))),
    "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))),
    "silu": lambda v: v / (1 + np.exp(-v)),
}


def relative_error(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
