"""One launch of each numba_tma.gemm configuration worth profiling at 8192^3 (bf16 and fp8; tiles of
128 x 256 / 192 alone and in clusters of 2 sharing B by multicast) and at the decode-like
128 x 8192 x 8192 (tiles of 128 x 128, split-K 1 and 2), for Nsight Compute on the GPU host:

    ncu --clock-control none --kernel-name regex:gemm \\
        --metrics gpu__time_duration.sum,lts__t_bytes.sum,dram__bytes_read.sum,\\
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \\
        python3 benchmarks/profile_gemm.py

The kernels run in the order printed, one launch each; arguments pick runs by name
(``python3 benchmarks/profile_gemm.py epilogue``: the plain and the bias + GELU kernels at 8192^3).
"""
import sys

import numpy as np
from numba import cuda

from numba_tma import arrays, gemm

RUNS = [("bf16", 8192, 8192, 8192, gemm.Config(cluster=1)), ("bf16", 8192, 8192, 8192, gemm.Config(cluster=2)),
        ("bf16 epilogue", 8192, 8192, 8192, gemm.Config(cluster=2)),
        ("e4m3", 8192, 8192, 8192, gemm.Config(cluster=1)), ("e4m3", 8192, 8192, 8192, gemm.Config(cluster=2)),
        ("bf16", 128, 8192, 8192, gemm.Config(tile_n=128, split_k=1)),
        ("bf16", 128, 8192, 8192, gemm.Config(tile_n=128, split_k=2))]


def main():
    rng = np.random.default_rng(0)
    for name, m, n, k, config in RUNS:
        if sys.argv[1:] and not any(word in f"{name} {config}" for word in sys.argv[1:]):
            continue
        kind = name.split()[0]
        element = np.uint16 if kind == "bf16" else np.uint8
        a = cuda.to_device(rng.integers(0, 0x38, (m, k)).astype(element))    # small finite values either way
        b_t = cuda.to_device(rng.integers(0, 0x38, (n, k)).astype(element))    # B column-major: its transpose
        b = arrays.operand(b_t, "b", dtype=kind).transposed().device_array
        epilogue = {}
        if name.endswith("epilogue"):          # bias + GELU (tanh), the fused epilogue of bench_gemm's row
            epilogue = {"bias": cuda.to_device(rng.integers(0, 0x38, n).astype(element)), "activation": "gelu_tanh"}
        call = gemm.plan(a, b, dtype=kind, config=config, **epilogue)
        print(call.explain(), flush=True)
        call.launch()
        cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
