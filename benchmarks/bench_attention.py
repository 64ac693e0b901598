"""numba_tma.attention.forward beside torch.nn.functional.scaled_dot_product_attention
(bf16 in and out), in one run on the GPU: each result checked first against SDPA in float32 on the
same inputs (max error at most 2e-2 of max |O|), then the two interleaved, the median of 5 rounds;
each shape causal and not (causal TFLOP/s count half the products); beside the default launch (a
block a query tile) a persistent one (``blocks=`` the SM count: each block looping over its tiles);
at d 128 without a mask also the kernel with 128-key blocks beside the default 176
(``keys_per_block``: the rule's data); then a
varlen batch (sequences
of 8 lengths in one (total, heads, d) array, cu_seqlens) beside a loop of SDPA calls, one a sequence
(and flash-attn's varlen call where it is importable).

    python benchmarks/bench_attention.py
"""

import statistics
import sys

from numba import cuda

from numba_tma import attention
from numba_tma.attention import call
from numba_tma.testing import gpu_seconds

ROUNDS = 5
#: batch, heads, K/V heads, seq, d: the issue's rows, with a long sequence and grouped-query heads; then
#: d 256 (built if it pays: this row says whether it does)
SHAPES = [(4, 16, 16, 4096, 128), (4, 16, 16, 4096, 64), (16, 16, 16, 1024, 128), (1, 16, 16, 16384, 128),
          (4, 32, 8, 4096, 128), (4, 16, 16, 4096, 256)]


def with_keys(n, fn):
    """``fn`` with the kernel of ``n``-key blocks (numba_tma.attention.call's rule swapped for the call)."""
    def run():
        rule = call.keys_per_block
        call.keys_per_block = lambda d, causal: n
        try:
            return fn()
        finally:
            call.keys_per_block = rule
    return run


def case(torch, batch, heads, kv_heads, seq, d, causal):
    q = torch.randn((batch, heads, seq, d), device="cuda").to(torch.bfloat16)
    k, v = (torch.randn((batch, kv_heads, seq, d), device="cuda").to(torch.bfloat16) for _ in range(2))
    gqa = {"enable_gqa": True} if kv_heads != heads else {}
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal, **gqa)
    out = torch.empty_like(q)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    fns = {"numba-tma": lambda: attention.forward(q, k, v, causal=causal, out=out, layout="bhsd"),
           "SDPA": lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa),
           "persistent": lambda: attention.forward(q, k, v, causal=causal, out=out, layout="bhsd", blocks=sms)}
    if d == 128 and not causal:
        fns["128 keys"] = with_keys(128, fns["numba-tma"])
    errors = {}
    for name, fn in fns.items():
        got = fn()
        torch.cuda.synchronize()
        result = out if name in ("numba-tma", "128 keys", "persistent") else got
        errors[name] = float((result.float() - want).abs().max() / want.abs().max())
    times = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(gpu_seconds(fn, 10))
    flops = 4.0 * batch * heads * seq * seq * d / (2 if causal else 1)      # causal: half the products
    return {name: flops / statistics.median(t) / 1e12 for name, t in times.items()}, errors


#: the varlen batch's sequence lengths (16 heads, d 128)
VARLEN = [512, 1024, 2048, 4096, 300, 3000, 1500, 7000]


def varlen_case(torch, causal, heads=16, d=128):
    lengths = torch.tensor(VARLEN, device="cuda")
    cu = torch.zeros(len(VARLEN) + 1, dtype=torch.int32, device="cuda")
    cu[1:] = torch.cumsum(lengths, 0)
    q, k, v = (torch.randn((int(cu[-1]), heads, d), device="cuda").to(torch.bfloat16) for _ in range(3))
    ends = cu.tolist()
    pieces = [slice(ends[b], ends[b + 1]) for b in range(len(VARLEN))]

    def sdpa_loop():       # each sequence (1, heads, len, d) through SDPA, into one output
        for rows in pieces:
            o = torch.nn.functional.scaled_dot_product_attention(*(x[rows].transpose(0, 1)[None] for x in (q, k, v)),
                                                                 is_causal=causal)
            out_sdpa[rows] = o[0].transpose(0, 1)

    out, out_sdpa = torch.empty_like(q), torch.empty_like(q)
    fns = {"numba-tma": lambda: attention.forward(q, k, v, causal=causal, out=out, cu_seqlens_q=cu, cu_seqlens_k=cu),
           "SDPA loop": sdpa_loop}
    try:
        from flash_attn import flash_attn_varlen_func
        m = max(VARLEN)
        fns["flash-attn"] = lambda: flash_attn_varlen_func(q, k, v, cu, cu, m, m, causal=causal)
    except ImportError:
        pass
    want = torch.empty_like(q, dtype=torch.float32)
    for rows in pieces:
        want[rows] = torch.nn.functional.scaled_dot_product_attention(
            *(x[rows].float().transpose(0, 1)[None] for x in (q, k, v)), is_causal=causal)[0].transpose(0, 1)
    errors = {}
    for name, fn in fns.items():
        got = fn()
        torch.cuda.synchronize()
        result = {"numba-tma": out, "SDPA loop": out_sdpa}.get(name, got)
        errors[name] = float((result.float() - want).abs().max() / want.abs().max())
    times = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(gpu_seconds(fn, 10))
    flops = sum(4.0 * heads * n * n * d for n in VARLEN) / (2 if causal else 1)
    return {name: flops / statistics.median(t) / 1e12 for name, t in times.items()}, errors


def main():
    import torch

    wrong = []              # rows whose result was wrong: their times printed, then the rows named, rc 1
    print(f"bench_attention: median of {ROUNDS} interleaved rounds, {cuda.get_current_device().name}; TFLOP/s "
          "(max error / max |O| against SDPA in float32)")
    for (batch, heads, kv_heads, seq, d), causal in ((shape, causal) for shape in SHAPES for causal in (False, True)):
        tflops, errors = case(torch, batch, heads, kv_heads, seq, d, causal)
        wrong += [f"{shape_words(batch, heads, kv_heads, seq, d, causal)}: {errors}"] * \
            (max(e for n, e in errors.items() if n != "SDPA") > 2e-2)
        kind = "causal" if causal else "full  "
        print(f"batch {batch:2d} heads {heads:2d}/{kv_heads:2d} seq {seq:5d} d {d:3d} {kind}  "
              + "  ".join(f"{n} {tflops[n]:6.0f} ({errors[n]:.1e})" for n in tflops)
              + f"  | ours/SDPA {tflops['numba-tma'] / tflops['SDPA']:.3f}")
    for causal in (False, True):
        tflops, errors = varlen_case(torch, causal)
        wrong += [f"varlen {'causal' if causal else 'full'}: {errors}"] * (errors["numba-tma"] > 2e-2)
        print(f"varlen {len(VARLEN)} sequences {min(VARLEN)}-{max(VARLEN)} heads 16 d 128 {'causal' if causal else 'full  '}  "
              + "  ".join(f"{n} {tflops[n]:6.0f} ({errors[n]:.1e})" for n in tflops)
              + f"  | ours/SDPA loop {tflops['numba-tma'] / tflops['SDPA loop']:.3f}")
    for line in wrong:
        print(f"WRONG RESULT (max error over 2e-2 of max |O|): {line}")
    return 1 if wrong else 0


def shape_words(batch, heads, kv_heads, seq, d, causal):
    return f"batch {batch} heads {heads}/{kv_heads} seq {seq} d {d}{' causal' if causal else ''}"


if __name__ == "__main__":
    sys.exit(main())
