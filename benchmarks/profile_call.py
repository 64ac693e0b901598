"""Where the host time of a ``gemm.matmul`` call on a seen shape goes (on the GPU host): cProfile of
CALLS calls of ``gemm.matmul(a, b)`` (torch tensors, 128 x 128 x 128 bf16: the GPU never the
bottleneck), the 25 functions with the most time of their own, and the time a call without the
profiler (mean of CALLS, the GPU synchronised once at the end), beside ``torch.matmul``'s.

    python benchmarks/profile_call.py [M N K]
"""
import cProfile
import io
import pstats
import sys
import time

CALLS = 2000


def main(argv):
    import torch

    from numba_tma import gemm

    m, n, k = (int(v) for v in argv[:3]) if len(argv) >= 3 else (128, 128, 128)
    a = torch.randn(m, k, device="cuda").bfloat16()
    b = torch.randn(n, k, device="cuda").bfloat16().T
    for label, fn in (("gemm.matmul", lambda: gemm.matmul(a, b)), ("torch.matmul", lambda: torch.matmul(a, b))):
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(CALLS):
            fn()
        torch.cuda.synchronize()
        print(f"{label} {m}x{n}x{k}: {(time.perf_counter() - start) / CALLS * 1e6:.1f} us a call (host)")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(CALLS):
        gemm.matmul(a, b)
    profile.disable()
    torch.cuda.synchronize()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(25)
    print(out.getvalue())


if __name__ == "__main__":
    main(sys.argv[1:])
