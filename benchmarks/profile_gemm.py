"""One launch of each GEMM variant of examples/gemm.py at 8192^3 (bf16 and fp8; alone and in
clusters of 2 sharing B by multicast), for Nsight Compute to profile on the GPU host:

    ncu --clock-control none --kernel-name regex:gemm \\
        --metrics gpu__time_duration.sum,lts__t_bytes.sum,dram__bytes_read.sum,\\
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \\
        python3 benchmarks/profile_gemm.py

The kernels run in the order printed, one launch each.
"""
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "examples")]

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import gemm  # noqa: E402

M = N = K = 8192


def main():
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(0)
    for kind, element in (("bf16", np.uint16), ("e4m3", np.uint8)):
        a = cuda.to_device(rng.integers(0, 0x38, (M, K)).astype(element))    # small finite values either way
        b = cuda.to_device(rng.integers(0, 0x38, (N, K)).astype(element))
        c = cuda.device_array((M, N), np.uint16)
        maps = gemm.maps(a, b, c, kind)
        for pair in (False, True):
            print(f"{kind} {'clusters of 2, B multicast' if pair else 'alone'}", flush=True)
            gemm.matmul(*maps, M, N, K, blocks, kind, pair=pair)
            cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
