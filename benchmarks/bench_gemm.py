"""The GEMM of examples/gemm.py beside cuBLAS (torch.matmul; torch._scaled_mm for fp8) and a
Triton TMA persistent matmul, in one run on the GPU ("numba-tma x2": the same kernel in clusters of
2 blocks sharing their B tile by TMA multicast; "numba-tma B=KxN", bf16: B given K x N row-major,
its tiles read MN-major; "numba-tma split-K", on shapes with fewer output tiles than SMs such as
the decode-like 256 x 8192 x 8192: K split ``gemm.split_k_for`` ways, partials added into C by
TMA reduce-add, C's zeroing counted; the other numba-tma rows run unsplit, ``split_k=1``): every
result checked against torch in
float32 on the same inputs first (max error at most 1e-2 of max |C|), then the implementations
interleaved, the median of 5 rounds.

    python benchmarks/bench_gemm.py [--quick | --decode]      # --decode: the M = 256 and 128 rows only
"""

import os
import statistics
import sys

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "examples")]

from numba import cuda  # noqa: E402

import gemm  # noqa: E402
from numba_tma.testing import gpu_seconds  # noqa: E402

ROUNDS = 5
SHAPES = [("bf16", 8192, 8192, 8192), ("bf16", 4096, 4096, 4096), ("bf16", 8192, 8192, 1024),
          ("bf16", 256, 8192, 8192), ("bf16", 128, 8192, 8192), ("e4m3", 8192, 8192, 8192), ("e4m3", 4096, 4096, 4096)]


def case(torch, triton_run, kind, m, n, k, blocks):
    fp8 = kind == "e4m3"
    a = torch.randn((m, k), device="cuda")
    b = torch.randn((n, k), device="cuda")
    if fp8:
        scale_a, scale_b = a.abs().max() / 448, b.abs().max() / 448
        a, b = (a / scale_a).to(torch.float8_e4m3fn), (b / scale_b).to(torch.float8_e4m3fn)
        want = (a.float() * scale_a) @ (b.float() * scale_b).T
        raw_a, raw_b, scale = a.view(torch.uint8), b.view(torch.uint8), float(scale_a * scale_b)
    else:
        a, b = a.to(torch.bfloat16), b.to(torch.bfloat16)
        want = a.float() @ b.float().T
        raw_a, raw_b, scale = a.view(torch.int16), b.view(torch.int16), 1.0
    c = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
    desc_a, desc_b, desc_c = gemm.maps(cuda.as_cuda_array(raw_a), cuda.as_cuda_array(raw_b),
                                       cuda.as_cuda_array(c.view(torch.int16)), kind)
    fns = {"numba-tma": lambda: gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks, kind, scale, split_k=1),
           "numba-tma x2": lambda: gemm.matmul(desc_a, desc_b, desc_c, m, n, k, blocks, kind, scale, pair=True)}
    splits = gemm.split_k_for(m, n, k, blocks, kind)
    c_split = None
    if splits > 1:                               # fewer tiles than SMs: split-K (C zeroed in the call)
        c_split = torch.empty_like(c)
        split_maps = gemm.maps(cuda.as_cuda_array(raw_a), cuda.as_cuda_array(raw_b),
                               cuda.as_cuda_array(c_split.view(torch.int16)), kind)
        fns["numba-tma split-K"] = lambda: gemm.matmul(*split_maps, m, n, k, blocks, kind, scale, split_k=splits)
    c_kn = None
    if not fp8:                                  # B given K x N row-major: MN-major tiles (trans_b)
        b_kn = raw_b.T.contiguous()
        c_kn = torch.empty_like(c)
        kn_maps = gemm.maps(cuda.as_cuda_array(raw_a), cuda.as_cuda_array(b_kn),
                            cuda.as_cuda_array(c_kn.view(torch.int16)), kind, b_kn=True)
        fns["numba-tma B=KxN"] = lambda: gemm.matmul(*kn_maps, m, n, k, blocks, kind, scale, b_kn=True, split_k=1)
    if fp8:
        sa, sb = scale_a.reshape(()).float(), scale_b.reshape(()).float()
        fns["cuBLAS"] = lambda: torch._scaled_mm(a, b.T, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    else:
        fns["cuBLAS"] = lambda: torch.matmul(a, b.T, out=c_ref)
        c_ref = torch.empty_like(c)
    if triton_run is not None:
        c_tri = torch.empty_like(c)
        fns["Triton"] = lambda: triton_run(a, b, c_tri, fp8)
    errors = {}
    for name, fn in fns.items():
        try:
            got = fn()
            torch.cuda.synchronize()
        except Exception as exc:   # noqa: BLE001 - a reference that cannot run is reported, not fatal
            errors[name] = f"{type(exc).__name__}: {str(exc)[:120]}"
            continue
        result = {"numba-tma": c, "numba-tma x2": c, "numba-tma B=KxN": c_kn, "numba-tma split-K": c_split,
                  "Triton": c_tri if triton_run else None}.get(name, got if fp8 else c_ref)
        unscaled = name == "Triton" and fp8            # Triton's kernel here applies no scales
        errors[name] = float((result.float() * (scale if unscaled else 1) - want).abs().max() / want.abs().max())
    fns = {name: fn for name, fn in fns.items() if isinstance(errors[name], float)}
    times = {name: [] for name in fns}
    repeats = max(3, int(2e12 / (2 * m * n * k)))
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(gpu_seconds(fn, repeats))
    tflops = {name: 2.0 * m * n * k / statistics.median(t) / 1e12 for name, t in times.items()}
    return tflops, errors, splits


def main():
    import torch

    triton_run = gemm.triton_matmul()
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT
    shapes = SHAPES[:2] if "--quick" in sys.argv else [s for s in SHAPES if s[1] <= 256] if "--decode" in sys.argv \
        else SHAPES
    print(f"bench_gemm: median of {ROUNDS} interleaved rounds, {cuda.get_current_device().name}; TFLOP/s "
          "(max error / max |C| against torch float32)")
    for kind, m, n, k in shapes:
        tflops, errors, splits = case(torch, triton_run, kind, m, n, k, blocks)
        ours = tflops.get("numba-tma", float("nan"))
        cells = []
        for name in ("numba-tma", "numba-tma split-K", "numba-tma x2", "numba-tma B=KxN", "cuBLAS", "Triton"):
            if name in tflops:
                cells.append(f"{name} {tflops[name]:6.0f} ({errors[name]:.1e})")
            elif name in errors:
                cells.append(f"{name}: {errors[name]}")
        ratios = "  ".join(f"ours/{name} {ours / v:.3f}" for name, v in tflops.items() if name != "numba-tma")
        ratios = ratios.replace("ours/numba-tma x2", "(x2: clusters of 2 with B multicast; ours/x2)")
        ratios = ratios.replace("ours/numba-tma B=KxN", "(B=KxN: B given K x N, MN-major tiles; ours/KxN)")
        ratios = ratios.replace("ours/numba-tma split-K", f"(split-K: {splits} splits; ours/split)")
        if "numba-tma split-K" in tflops:             # the split kernel against the references too
            ratios += "  " + "  ".join(f"split/{name} {tflops['numba-tma split-K'] / tflops[name]:.3f}"
                                       for name in ("cuBLAS", "Triton") if name in tflops)
        print(f"{kind:5s} {m:5d}x{n:5d}x{k:5d}  " + "  ".join(cells) + f"  | {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
