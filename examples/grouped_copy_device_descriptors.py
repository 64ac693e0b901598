"""A grouped copy with descriptors edited on the device: one kernel copies eight matrices of
different shapes, each block retargeting one template descriptor at its own matrix — the pattern a
grouped GEMM uses when the problems are only known on the device.

    python examples/grouped_copy_device_descriptors.py      # without a GPU: simulated, 3 matrices

Block g: copy the by-value template map into shared memory, replace its address, dimensions and
row pitch (``tensormap.replace_*``), publish it to its slot of a global descriptor buffer
(``tensormap.cp_fenceproxy``, the whole warp), acquire it for TMA
(``fence.proxy_tensormap_acquire``), then TMA-load every tile of matrix g through it and store it
to the output with ordinary stores.  Checked against numpy.
"""

import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from numba import cuda

from numba_tma import TensorMap, fence, mbarrier, tensormap, tma

ROWS, COLS = 8, 32            # the tile (rows, columns) of float32


@cuda.jit
def grouped_copy(template, descs, addresses, heights, widths, outs, offsets):
    g = cuda.blockIdx.x
    edited = cuda.shared.array(128, numba.uint8, alignment=128)
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((ROWS, COLS), numba.float32, alignment=128)
    mine = descs[g * 128:(g + 1) * 128]
    if cuda.threadIdx.x == 0:
        tensormap.copy(edited, template)
        tensormap.replace_global_address(edited, addresses[g])
        tensormap.replace_global_dim(edited, 0, widths[g])           # innermost first
        tensormap.replace_global_dim(edited, 1, heights[g])
        tensormap.replace_global_stride(edited, 0, widths[g] * 4)    # the row pitch, bytes
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x < 32:
        tensormap.cp_fenceproxy(mine, edited)                        # all of warp 0
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        fence.proxy_tensormap_acquire(mine)
    phase = 0
    for row0 in range(0, heights[g], ROWS):
        for col0 in range(0, widths[g], COLS):
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(bars, ROWS * COLS * 4)
                tma.load(mine, tile, (col0, row0), bars)
            mbarrier.wait(bars, phase)
            phase ^= 1
            for i in range(cuda.threadIdx.x, ROWS * COLS, cuda.blockDim.x):
                r, c = row0 + i // COLS, col0 + i % COLS
                if r < heights[g] and c < widths[g]:
                    outs[offsets[g] + r * widths[g] + c] = tile[i // COLS, i % COLS]
            cuda.syncthreads()                                       # the tile is free again


def main():
    rng = np.random.default_rng(0)
    shapes = [(8 * (3 + g), 32 + 16 * (g % 4)) for g in range(3 if SIMULATED else 8)]  # rows of 128-208 bytes
    mats = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    devs = [cuda.to_device(m) for m in mats]
    template = TensorMap.tiled(devs[0], (ROWS, COLS))
    sizes = [m.size for m in mats]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    outs = cuda.device_array(sum(sizes), np.float32)
    grouped_copy[len(mats), 128](template, cuda.device_array(128 * len(mats), np.uint8),
                                 np.array([TensorMap.tiled(d, (ROWS, COLS)).address for d in devs], np.uint64),
                                 np.array([s[0] for s in shapes], np.int32), np.array([s[1] for s in shapes], np.int32),
                                 outs, offsets)
    got = outs.copy_to_host()
    ok = all(np.array_equal(got[o:o + m.size].reshape(m.shape), m) for o, m in zip(offsets, mats))
    print(f"grouped_copy_device_descriptors: {len(mats)} matrices {shapes[0]} .. {shapes[-1]}, one descriptor "
          f"retargeted per block: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
