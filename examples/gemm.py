"""A GEMM with a fused epilogue from ``numba_tma.gemm`` on your own arrays: ``y = gelu(x @ w + bias)``
in bf16 on Hopper tensor cores, checked against numpy in float64 on the same inputs, and timed
beside cuBLAS (``torch._addmm_activation``: cuBLASLt's fused bias + GELU) when PyTorch is there.

    python examples/gemm.py [M N K]          # without a GPU: simulated, small

``gemm.explain`` prints which kernel the call runs and why (docs/gemm.md).  numba and CuPy arrays
have no bfloat16: their bf16 values are uint16 bits, named by ``dtype="bf16"``; torch tensors need
nothing of the kind (``gemm.matmul(x, w.T, bias=b, activation="gelu_tanh")``).
"""

import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numpy as np
from numba import cuda

from numba_tma import gemm
from numba_tma.testing import gpu_seconds


def bf16_bits(x):
    """float32 -> bfloat16 bits, rounding to nearest even."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def gelu_tanh(v):
    return 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))


def main(m=None, n=None, k=None):
    m, n, k = m or (72 if SIMULATED else 4096), n or (136 if SIMULATED else 4096), k or (72 if SIMULATED else 4096)
    rng = np.random.default_rng(0)
    x, w, bias = (bf16_bits(rng.standard_normal(s)) for s in ((m, k), (k, n), (n,)))
    x_d, w_d, bias_d = cuda.to_device(x), cuda.to_device(w), cuda.to_device(bias)
    print(gemm.explain(x_d, w_d, bias=bias_d, activation="gelu_tanh", dtype="bf16"))
    y = gemm.matmul(x_d, w_d, bias=bias_d, activation="gelu_tanh", dtype="bf16")
    want = gelu_tanh(bf16_values(x) @ bf16_values(w) + bf16_values(bias))
    error = float(np.abs(bf16_values(y.copy_to_host()) - want).max() / np.abs(want).max())
    ok = error <= 2 ** -7
    print(f"gemm: gelu(x @ w + bias), {m}x{n}x{k} bf16: max error {error:.2e} of max |y|: {'PASS' if ok else 'FAIL'}")
    if not SIMULATED:
        call = gemm.plan(x_d, w_d, bias=bias_d, activation="gelu_tanh", dtype="bf16", out=y)
        ours = 2.0 * m * n * k / gpu_seconds(call.launch) / 1e12
        line = f"  numba_tma.gemm: {ours:.0f} TFLOP/s"
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            tx, tw = (torch.from_numpy(v.view(np.int16)).cuda().view(torch.bfloat16) for v in (x, w))
            tb = torch.from_numpy(bias.view(np.int16)).cuda().view(torch.bfloat16)
            theirs = 2.0 * m * n * k / gpu_seconds(lambda: torch._addmm_activation(tb, tx, tw, use_gelu=True)) / 1e12
            line += f"; cuBLASLt bias + GELU (torch._addmm_activation): {theirs:.0f} TFLOP/s; ratio {ours / theirs:.3f}"
        print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*map(int, sys.argv[1:4])))
