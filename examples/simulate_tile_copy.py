"""Debugging a TMA kernel without a GPU: load one 128B-swizzled tile under numba-cuda's CUDA
simulator and show where TMA put each element in shared memory.

    python examples/simulate_tile_copy.py      # runs simulated without a GPU, on the GPU with one

The kernel loads an 8 x 64 bfloat16 box (128-byte rows) with 128B swizzle into a uint16 tile and
copies the raw shared memory out.  Printed: the element index (row, column) each 16-byte chunk
of shared memory holds — the chunk index XOR the row bits — and a check that reading the tile
through ``tma.swizzled_index`` gives the tensor back.  See docs/simulator.md.
"""

import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from numba import cuda

from numba_tma import TensorMap, fence, mbarrier, tma

ROWS, COLS = 8, 64          # bf16: 128 bytes a row, the 128B swizzle span
ELEMENTS = ROWS * COLS      # a global, so Numba sees a compile-time constant


@cuda.jit
def load_tile(desc, raw, unswizzled):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array(ELEMENTS, numba.uint16, alignment=1024)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, desc.box_bytes)
        tma.load(desc, tile, (0, 0), bars)
    mbarrier.wait(bars, 0)
    for i in range(cuda.threadIdx.x, ELEMENTS, cuda.blockDim.x):
        raw[i] = tile[i]
        unswizzled[i // COLS, i % COLS] = tile[tma.swizzled_index(desc, i // COLS, i % COLS)]


def main():
    # element (r, c) holds r * 256 + c, so the shared memory shows where each one went
    host = (np.arange(ROWS)[:, None] * 256 + np.arange(COLS)[None, :]).astype(np.uint16)
    desc = TensorMap.tiled(cuda.to_device(host), (ROWS, COLS), swizzle="128B", data_type="bfloat16")
    raw, unswizzled = cuda.to_device(np.zeros(ROWS * COLS, np.uint16)), cuda.to_device(np.zeros_like(host))
    load_tile[1, 32](desc, raw, unswizzled)
    chunks = raw.copy_to_host().reshape(ROWS, COLS // 8, 8)[:, :, 0]     # first element of each 16-byte chunk
    print(f"{'simulated' if SIMULATED else 'GPU'}: shared memory of an {ROWS}x{COLS} bf16 tile, 128B swizzle; "
          "each 16-byte chunk shows its first element as row.column:")
    for r in range(ROWS):
        print(f"  smem row {r}: " + " ".join(f"{v >> 8}.{v & 255:02d}" for v in chunks[r]))
    ok = np.array_equal(unswizzled.copy_to_host(), host)
    print(f"simulate_tile_copy: read back through tma.swizzled_index: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
