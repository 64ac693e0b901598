"""A warp-specialised pipeline: one producer warp streams tiles into a ring of shared-memory slots
with TMA, four consumer warps compute on them and hand the slots back.  ``out = 2 * x + 1`` over a
float32 matrix, checked against numpy.

    python examples/warp_specialized_ring.py        # without a GPU: simulated, small

Two barriers per slot: ``full[s]`` (the producer's byte count; completes when the tile landed) and
``empty[s]`` (count = consumer warps; completes when every consumer released the slot).  Tile k
of a block uses slot ``k % STAGES`` in round ``r = k // STAGES``: consumers wait ``full`` with
parity ``r & 1``; the producer waits ``empty`` with parity ``(r & 1) ^ 1`` — in round 0 that is the
phase "before" a fresh barrier, which counts as complete, so the first STAGES loads start at once.
``at(full, s)`` / ``at(ring, s)`` name slot ``s`` for one address computation each.
"""

import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from numba import cuda

from numba_tma import TensorMap, at, fence, mbarrier, sync, tma

ROWS, COLS = 16, 32          # one tile: 16 rows x 128 bytes of float32
STAGES = 4
CONSUMERS = 4                # consumer warps; warp 0 produces
ROWS_EACH = ROWS // CONSUMERS


@cuda.jit
def twice_plus_one(src, out, n_tiles):
    full = cuda.shared.array(STAGES, numba.uint64)
    empty = cuda.shared.array(STAGES, numba.uint64)
    ring = cuda.shared.array((STAGES, ROWS, COLS), numba.float32, alignment=128)
    warp, lane = cuda.threadIdx.x // 32, cuda.threadIdx.x % 32
    tiles_x = out.shape[1] // COLS
    if cuda.threadIdx.x == 0:
        for s in range(STAGES):
            mbarrier.init(at(full, s), 1)
            mbarrier.init(at(empty, s), CONSUMERS)
        fence.mbarrier_init()
    cuda.syncthreads()
    mine = (n_tiles - cuda.blockIdx.x + cuda.gridDim.x - 1) // cuda.gridDim.x
    if warp == 0:                                        # the producer
        if sync.elect_one():
            for k in range(mine):
                s, t = k % STAGES, cuda.blockIdx.x + k * cuda.gridDim.x
                mbarrier.wait(at(empty, s), ((k // STAGES) & 1) ^ 1)
                mbarrier.arrive_expect_tx(at(full, s), src.box_bytes)
                tma.load(src, at(ring, s), ((t % tiles_x) * COLS, (t // tiles_x) * ROWS), at(full, s))
    else:                                                # the consumers
        first = (warp - 1) * ROWS_EACH
        for k in range(mine):
            s, t = k % STAGES, cuda.blockIdx.x + k * cuda.gridDim.x
            mbarrier.wait(at(full, s), (k // STAGES) & 1)
            row0, col0 = (t // tiles_x) * ROWS, (t % tiles_x) * COLS
            for r in range(first, first + ROWS_EACH):
                out[row0 + r, col0 + lane] = 2 * ring[s, r, lane] + 1
            cuda.syncwarp()
            if lane == 0:
                mbarrier.arrive(at(empty, s))            # this warp is done with the slot


def main(rows=32 if SIMULATED else 4096, cols=64 if SIMULATED else 1024):
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    out = cuda.device_array_like(x)
    src = TensorMap.tiled(cuda.to_device(x), (ROWS, COLS))
    n_tiles = (rows // ROWS) * (cols // COLS)
    blocks = 2 if SIMULATED else cuda.get_current_device().MULTIPROCESSOR_COUNT * 2
    twice_plus_one[blocks, 32 * (1 + CONSUMERS)](src, out, n_tiles)
    ok = np.array_equal(out.copy_to_host(), 2 * x + 1)
    print(f"warp_specialized_ring: {rows}x{cols} float32, {n_tiles} tiles, {STAGES}-stage ring, "
          f"{blocks} blocks: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
