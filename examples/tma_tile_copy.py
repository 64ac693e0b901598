"""Copy a 2-D array tile by tile through shared memory with TMA, and check it against numpy.

    python examples/tma_tile_copy.py            # a GPU of compute capability >= 9.0, else simulated
    NUMBA_TMA_HOST=mlir python examples/tma_tile_copy.py    # compiled by numba-cuda-mlir (a GPU)

The tensor map is built by numba_tma's pure-Python encoder (``TensorMap.tiled``) and passed to
the kernel by value (under numba-cuda-mlir: in global memory, ``_host.kernel_map``).  Each block:
one thread initialises an mbarrier, tells it to expect one tile's bytes and issues the TMA load;
every thread waits on the barrier and writes the tile out.
The copy runs on a numba device array, and on a CuPy array and a PyTorch tensor when installed.
"""

import importlib.util

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numpy as np
from _host import cuda, jit, kernel_map, types  # NUMBA_TMA_HOST: numba-cuda or mlir

from numba_tma import TensorMap, fence, mbarrier, tma

ROWS, COLS = (100, 128) if SIMULATED else (1000, 1024)  # not a multiple of the tile: the last tile row is partly outside
TILE_R, TILE_C = 64, 64          # the box, in the array's own (row, col) order


@jit
def tile_copy(desc, out):
    bars = cuda.shared.array(1, types.uint64)
    tile = cuda.shared.array((TILE_R, TILE_C), types.float32, alignment=128)
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


def copy(source, host):
    desc = TensorMap.tiled(source, (TILE_R, TILE_C))
    out = cuda.device_array_like(host)
    grid = ((COLS + TILE_C - 1) // TILE_C, (ROWS + TILE_R - 1) // TILE_R)
    tile_copy[grid, 128](kernel_map(desc), out)
    return desc, np.array_equal(out.copy_to_host(), host)


def main():
    host = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    sources = {"numba": lambda: cuda.to_device(host)}
    if importlib.util.find_spec("cupy") and not SIMULATED:
        sources["cupy"] = lambda: __import__("cupy").asarray(host)
    if importlib.util.find_spec("torch") and not SIMULATED:
        sources["torch"] = lambda: __import__("torch").tensor(host, device="cuda")
    failed = 0
    for name, make in sources.items():
        desc, ok = copy(make(), host)
        failed += not ok
        print(f"tma_tile_copy [{name}]: {ROWS}x{COLS} float32, {desc!r}: {'PASS' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
