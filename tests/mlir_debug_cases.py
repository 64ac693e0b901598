"""numba-cuda-mlir kernels for debug mode on that host, run by tests/test_gpu_mlir_host.py in a
child process with NUMBA_TMA_DEBUG=1 (a trap leaves the CUDA context unusable): a correct TMA copy,
then one mistake each, which must end with its message and a trap instead of a hang or a fault.

    NUMBA_TMA_DEBUG=1 python tests/mlir_debug_cases.py swizzle_alignment
"""

import sys

import numpy as np
from numba_cuda_mlir import cuda, types

from numba_tma import TensorMap
from numba_tma.mlir import at, fence, map_in_global, mbarrier, tma

CASES = {"correct": 0, "wrong_expect_tx": 1, "swizzle_alignment": 2}


@cuda.jit(chip="sm_90a")
def copy(desc, out, case):
    """A (8, 32) float32 box with 128B swizzle through a map in global memory, with the mistake ``case``."""
    bars = cuda.shared.array(1, types.uint64)
    tile = cuda.shared.array(2 * 8 * 32, types.float32, alignment=1024)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        if case == 0:
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (0, 0), bars)
        elif case == 1:                                 # expects 16 bytes more than the box brings: never completes
            mbarrier.arrive_expect_tx(bars, desc.box_bytes + 16)
            tma.load(desc, tile, (0, 0), bars)
        else:                                           # 128B swizzle into a tile 128 bytes into a 1024-aligned array
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, at(tile, 32), (0, 0), bars)
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = tile[cuda.threadIdx.x]


def main(name):
    host = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    desc = TensorMap.tiled(cuda.to_device(host), (8, 32), swizzle="128B")
    out = cuda.to_device(np.zeros(128, np.float32))
    copy[1, 128](map_in_global(desc), out, CASES[name])
    cuda.synchronize()
    rows = out.copy_to_host().reshape(4, 32)        # box rows 0-3, each one 128-byte span with its chunks swizzled
    if all(sorted(rows[r]) == host[r, :32].tolist() for r in range(4)):
        print("the tile holds the box")
    print("finished without an error")


if __name__ == "__main__":
    main(sys.argv[1])
