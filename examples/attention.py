"""A fused attention forward on Hopper tensor cores from Numba (``numba_tma.attention``,
FlashAttention's structure: docs/attention.md): O = softmax(Q K^T / sqrt(D)) V for every (batch,
head), bf16 in and out, fp32 accumulation; checked against numpy (or torch) and timed beside
``torch.nn.functional.scaled_dot_product_attention`` when PyTorch and a GPU are there.

    python examples/attention.py [BATCH HEADS SEQ [CAUSAL]]   # without a GPU: simulated, small
"""

import math
import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numpy as np
from numba import cuda

from numba_tma import attention
from numba_tma.testing import gpu_seconds


def bf16_bits(x):
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def reference(q, k, v, causal):
    """softmax(Q K^T / sqrt(d)) V of (batch, seq, heads, d) arrays, in float64."""
    q, k, v = (x.astype(np.float64).transpose(0, 2, 1, 3) for x in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.arange(s.shape[-1])[None, :] > np.arange(s.shape[-2])[:, None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return ((p / p.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3)


def main(batch=None, heads=None, seq=None, causal=0, d=128):
    batch, heads, seq = batch or (1 if SIMULATED else 4), heads or (1 if SIMULATED else 16), seq or (100 if SIMULATED else 4096)
    d = 64 if SIMULATED else d
    rng = np.random.default_rng(0)
    q, k, v = (bf16_bits(rng.standard_normal((batch, seq, heads, d))) for _ in range(3))   # flash-attn's order
    d_q, d_k, d_v = (cuda.to_device(x) for x in (q, k, v))
    out = attention.forward(d_q, d_k, d_v, causal=bool(causal), dtype="bf16")            # bf16 bits, as q
    got = bf16_values(out.copy_to_host())
    want = reference(*(bf16_values(x) for x in (q, k, v)), causal)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    ok = error <= 2e-2
    print(f"attention: batch {batch} x seq {seq} x heads {heads} x d {d}{', causal' if causal else ''}, bf16: max "
          f"error {error:.2e} of max |O|: {'PASS' if ok else 'FAIL'}")
    if not SIMULATED:
        flops = 4.0 * batch * heads * seq * seq * d / (2 if causal else 1)      # causal: half the products
        ours = flops / gpu_seconds(lambda: attention.forward(d_q, d_k, d_v, causal=bool(causal), out=out,
                                                             dtype="bf16")) / 1e12
        line = f"  numba_tma.attention: {ours:.0f} TFLOP/s"
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            tq, tk, tv = (torch.from_numpy(x.view(np.int16)).cuda().view(torch.bfloat16).transpose(1, 2)
                          for x in (q, k, v))
            theirs = flops / gpu_seconds(lambda: torch.nn.functional.scaled_dot_product_attention(
                tq, tk, tv, is_causal=bool(causal))) / 1e12
            line += f"; torch scaled_dot_product_attention: {theirs:.0f} TFLOP/s; ratio {ours / theirs:.3f}"
        print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*map(int, sys.argv[1:5])))
