"""The data behind ``numba_tma.gemm.config``'s rule: each configuration of ``gemm.matmul``'s kernel on
the shapes where the rule has a choice to make (tile width, ring depth, clusters, split-K), timed
as the default call is (``gemm.matmul(a, b, config=...)`` on torch tensors, back to back; for the
smallest shapes the host's time bounds it), beside cuBLAS, in one run.  Each result is checked
against torch in float32 first (a wrong one is reported and not timed).

    python benchmarks/sweep_gemm.py [--budget SECONDS] [--only SUBSTRING]

Prints one line a configuration: TFLOP/s, the ratio to cuBLAS, and ``*`` on the one the default
rule picks.
"""

import dataclasses
import itertools
import sys
import time

SHAPES = [("bf16", 8192, 8192, 1024), ("bf16", 4096, 4096, 4096), ("bf16", 256, 8192, 8192),
          ("bf16", 128, 8192, 8192), ("e4m3", 4096, 4096, 4096), ("bf16", 4097, 4096, 4096),
          ("bf16", 1000, 1000, 1000), ("bf16", 7, 4096, 4096)]


def candidates(gemm, dtype, m, n, k):
    from numba_tma.gemm import config as configs
    from numba_tma.gemm.kernels import TILE_N, TYPES

    k_steps = -(-k // (128 // TYPES[dtype][0]))
    for tile_n, cluster, split in itertools.product(TILE_N[TYPES[dtype][0]], (1, 2), (1, 2, 4, 8)):
        if (cluster == 2 and m <= 128) or split * 2 > k_steps:
            continue
        units = -(-m // 128) // cluster * -(-n // tile_n) * split
        if split > 1 and units > 2 * 132:
            continue
        chosen = configs.stages_for(dtype, tile_n, -(-k_steps // split))
        both = split == 1 and tile_n == TILE_N[TYPES[dtype][0]][0]     # the ring's depth: 3 or 4 on wide tiles
        for stages in sorted({chosen, 3, 4} if both else {chosen}):
            if configs.fits(dtype, tile_n, stages):
                yield gemm.Config(tile_n=tile_n, stages=stages, cluster=cluster, split_k=split)


def main(argv):
    import torch

    from numba_tma import gemm
    from numba_tma.gemm import config as configs
    from numba_tma.testing import gpu_seconds

    deadline = time.monotonic() + (float(argv[argv.index("--budget") + 1]) if "--budget" in argv[:-1] else 240)
    only = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--only"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"sweep_gemm: {torch.cuda.get_device_name(0)}; TFLOP/s of gemm.matmul(a, b, config=...) (* the default)")
    for dtype, m, n, k in SHAPES:
        name = f"{dtype} {m}x{n}x{k}"
        if only and not any(s in name for s in only):
            continue
        torch.manual_seed(0)
        a32, b32 = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
        if dtype == "bf16":
            a, b = a32.bfloat16(), b32.bfloat16().T
            ref = lambda: torch.matmul(a, b)              # noqa: E731
        else:
            a, b = a32.to(torch.float8_e4m3fn), b32.to(torch.float8_e4m3fn).T
            one = torch.ones((), device="cuda")
            ref = lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)   # noqa: E731
        want = a.float() @ b.float()
        flops = 2 * m * n * k
        repeats = max(5, min(200, int(2e12 / flops)))
        cublas = flops / gpu_seconds(ref, repeats) / 1e12
        default, _ = configs.choose(dtype, m, n, k, sms)
        print(f"{name}: cuBLAS {cublas:.0f}")
        for config in candidates(gemm, dtype, m, n, k):
            if time.monotonic() > deadline:
                print("SKIPPED (out of time):", name, config)
                return
            try:
                got = gemm.matmul(a, b, config=config)
                err = float((got.float() - want).abs().max() / want.abs().max())
                if err > 2e-2:
                    print(f"  {config} WRONG (error {err:.1e})")
                    continue
                tflops = flops / gpu_seconds(lambda: gemm.matmul(a, b, config=config), repeats) / 1e12
            except Exception as exc:  # noqa: BLE001 - a sweep reports and goes on
                print(f"  {config} FAILED: {type(exc).__name__}: {str(exc)[:160]}")
                continue
            mark = "*" if dataclasses.replace(default, blocks=None) == config else " "
            print(f" {mark}tile {config.tile_n} stages {config.stages} cluster {config.cluster} split {config.split_k}: "
                  f"{tflops:.0f} ({tflops / cublas:.3f} of cuBLAS)")


if __name__ == "__main__":
    main(sys.argv[1:])
