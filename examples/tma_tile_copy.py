"""Copy a 2-D array tile by tile through shared memory with TMA, and check it against numpy.

    python examples/tma_tile_copy.py            # needs a GPU of compute capability >= 9.0

Each block: one thread initialises an mbarrier, tells it to expect one tile's bytes, and issues a
TMA load of its tile; every thread waits on the barrier, then writes the tile to the output.
"""

import ctypes

import numba
import numpy as np
from numba import cuda

from numba_tma import fence, mbarrier, tma

ROWS, COLS = 1000, 1024          # not a multiple of the tile: the last tile row is partly outside
TILE_R, TILE_C = 64, 64          # the box, in the array's own (row, col) order


def tensor_map(array, box):
    """The 128-byte CUtensorMap for a C-ordered 2-D float32 device array, from the driver."""
    from cuda.bindings import driver as drv

    err, tmap = drv.cuTensorMapEncodeTiled(
        drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, drv.cuuint32_t(2),
        array.__cuda_array_interface__["data"][0],
        [drv.cuuint64_t(array.shape[1]), drv.cuuint64_t(array.shape[0])],  # innermost first
        [drv.cuuint64_t(array.strides[0])],                                 # bytes, rank - 1 entries
        [drv.cuuint32_t(box[1]), drv.cuuint32_t(box[0])], [drv.cuuint32_t(1)] * 2,
        drv.CUtensorMapInterleave(0), drv.CUtensorMapSwizzle(0),
        drv.CUtensorMapL2promotion(2), drv.CUtensorMapFloatOOBfill(0),
    )
    if err != drv.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuTensorMapEncodeTiled failed: {err}")
    raw = ctypes.string_at(int(tmap.getPtr()), 128)
    return cuda.to_device(np.frombuffer(raw, dtype=np.uint8).copy())


@cuda.jit
def tile_copy(desc, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((TILE_R, TILE_C), numba.float32, alignment=128)
    row0, col0 = cuda.blockIdx.y * TILE_R, cuda.blockIdx.x * TILE_C
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, TILE_R * TILE_C * 4)
        tma.load(desc, tile, (col0, row0), bars)        # coordinates innermost (column) first
    mbarrier.wait(bars, 0)
    for i in range(cuda.threadIdx.x, TILE_R * TILE_C, cuda.blockDim.x):
        r, c = row0 + i // TILE_C, col0 + i % TILE_C
        if r < out.shape[0] and c < out.shape[1]:
            out[r, c] = tile[i // TILE_C, i % TILE_C]


def main():
    host = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    src, out = cuda.to_device(host), cuda.device_array_like(host)
    grid = ((COLS + TILE_C - 1) // TILE_C, (ROWS + TILE_R - 1) // TILE_R)
    tile_copy[grid, 128](tensor_map(src, (TILE_R, TILE_C)), out)
    ok = np.array_equal(out.copy_to_host(), host)
    print(f"tma_tile_copy: {ROWS}x{COLS} float32 in {TILE_R}x{TILE_C} tiles, {grid[0] * grid[1]} blocks: "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
