"""numba_tma.attention.forward beside torch.nn.functional.scaled_dot_product_attention
(bf16 in and out), in one run on the GPU: each result checked first against SDPA in float32 on the
same inputs (max error at most 2e-2 of max |O|), then the two interleaved, the median of 5 rounds;
each shape causal and not (causal TFLOP/s count half the products).

    python benchmarks/bench_attention.py
"""

import statistics
import sys

from numba import cuda

from numba_tma import attention
from numba_tma.testing import gpu_seconds

ROUNDS = 5
#: batch, heads, K/V heads, seq, d: the issue's rows, with a long sequence and grouped-query heads
SHAPES = [(4, 16, 16, 4096, 128), (4, 16, 16, 4096, 64), (16, 16, 16, 1024, 128), (1, 16, 16, 16384, 128),
          (4, 32, 8, 4096, 128)]


def case(torch, batch, heads, kv_heads, seq, d, causal):
    q = torch.randn((batch, heads, seq, d), device="cuda").to(torch.bfloat16)
    k, v = (torch.randn((batch, kv_heads, seq, d), device="cuda").to(torch.bfloat16) for _ in range(2))
    gqa = {"enable_gqa": True} if kv_heads != heads else {}
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal, **gqa)
    out = torch.empty_like(q)
    fns = {"numba-tma": lambda: attention.forward(q, k, v, causal=causal, out=out, layout="bhsd"),
           "SDPA": lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)}
    errors = {}
    for name, fn in fns.items():
        got = fn()
        torch.cuda.synchronize()
        result = out if name == "numba-tma" else got
        errors[name] = float((result.float() - want).abs().max() / want.abs().max())
    times = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(gpu_seconds(fn, 10))
    flops = 4.0 * batch * heads * seq * seq * d / (2 if causal else 1)      # causal: half the products
    return {name: flops / statistics.median(t) / 1e12 for name, t in times.items()}, errors


def main():
    import torch

    print(f"bench_attention: median of {ROUNDS} interleaved rounds, {cuda.get_current_device().name}; TFLOP/s "
          "(max error / max |O| against SDPA in float32)")
    for (batch, heads, kv_heads, seq, d), causal in ((shape, causal) for shape in SHAPES for causal in (False, True)):
        tflops, errors = case(torch, batch, heads, kv_heads, seq, d, causal)
        assert errors["numba-tma"] <= 2e-2, errors
        kind = "causal" if causal else "full  "
        print(f"batch {batch:2d} heads {heads:2d}/{kv_heads:2d} seq {seq:5d} d {d:3d} {kind}  "
              + "  ".join(f"{n} {tflops[n]:6.0f} ({errors[n]:.1e})" for n in tflops)
              + f"  | ours/SDPA {tflops['numba-tma'] / tflops['SDPA']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
