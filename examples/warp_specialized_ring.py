"""A warp-specialised pipeline: one producer warp streams tiles into a ring of shared-memory slots
with TMA, four consumer warps compute on them and hand the slots back.  ``out = 2 * x + 1`` over a
float32 matrix, checked against numpy; on a GPU it also prints its bandwidth.

    python examples/warp_specialized_ring.py        # without a GPU: simulated, small
    NUMBA_TMA_HOST=mlir python examples/warp_specialized_ring.py    # compiled by numba-cuda-mlir (a GPU)

The ring is a ``numba_tma.pipeline.TmaPipeline``: ``create`` initialises its barriers (``full`` and
``empty`` per stage, with the counts the configuration implies) and publishes them; the producer
``acquire``s a stage (waits until the consumers released it, expects the map's bytes) and loads
into it; each consumer warp ``wait``s for the stage, reads it and ``release``s it (one lane
arrives, after ``__syncwarp``).  The states ``p`` and ``c`` carry ``(index, phase)``; nothing here
counts phases or bytes by hand (``benchmarks/reference_rings.py`` keeps the hand-written ring
this replaced, and ``benchmarks/bench_pipeline.py`` times both in one run).

The same kernel runs under numba-cuda-mlir (``NUMBA_TMA_HOST=mlir``; ``_host`` picks the
compiler, the families and the plan's carver, docs/second_host.md).
"""

import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from _host import cuda, jit, kernel_map  # NUMBA_TMA_HOST: numba-cuda or mlir

from numba_tma import SharedMemoryPlan, TensorMap, at, pipeline, sync, tma
from numba_tma.testing import gpu_seconds

ROWS, COLS = 16, 32          # one tile: 16 rows x 128 bytes of float32
STAGES = 4
CONSUMERS = 4                # consumer warps; warp 0 produces
ROWS_EACH = ROWS // CONSUMERS

RING = pipeline.TmaPipeline(STAGES, consumers=pipeline.warps(CONSUMERS))
plan = SharedMemoryPlan().array("tiles", (STAGES, ROWS, COLS), numba.float32).pipeline("ring", RING)
carve = plan.carver()
TILE_BYTES = ROWS * COLS * 4


@jit
def twice_plus_one(src, out, n_tiles):
    smem = carve()
    ring = RING.create(smem.ring)
    warp, lane = cuda.threadIdx.x // 32, cuda.threadIdx.x % 32
    tiles_x = out.shape[1] // COLS
    mine = (n_tiles - cuda.blockIdx.x + cuda.gridDim.x - 1) // cuda.gridDim.x
    if warp == 0:                                        # the producer
        if sync.elect_one():
            p = ring.producer_state()
            for k in range(mine):
                t = cuda.blockIdx.x + k * cuda.gridDim.x
                ring.acquire(p, TILE_BYTES)
                tma.load(src, at(smem.tiles, p.index), ((t % tiles_x) * COLS, (t // tiles_x) * ROWS), ring.full(p))
                p = p.advance()
    else:                                                # the consumers
        first = (warp - 1) * ROWS_EACH
        c = ring.consumer_state()
        for k in range(mine):
            t = cuda.blockIdx.x + k * cuda.gridDim.x
            ring.wait(c)
            row0, col0 = (t // tiles_x) * ROWS, (t % tiles_x) * COLS
            for r in range(first, first + ROWS_EACH):
                out[row0 + r, col0 + lane] = 2 * smem.tiles[c.index, r, lane] + 1
            ring.release(c)                              # this warp is done with the stage
            c = c.advance()


def run(src, out, n_tiles, blocks):
    twice_plus_one[blocks, 32 * (1 + CONSUMERS), 0, plan.nbytes](src, out, n_tiles)


def main(rows=32 if SIMULATED else 8192, cols=64 if SIMULATED else 4096):
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    out = cuda.device_array_like(x)
    src = kernel_map(TensorMap.tiled(cuda.to_device(x), (ROWS, COLS)))
    n_tiles = (rows // ROWS) * (cols // COLS)
    blocks = 2 if SIMULATED else cuda.get_current_device().MULTIPROCESSOR_COUNT * 2
    run(src, out, n_tiles, blocks)
    ok = np.array_equal(out.copy_to_host(), 2 * x + 1)
    print(f"warp_specialized_ring: {rows}x{cols} float32, {n_tiles} tiles, {STAGES}-stage ring, "
          f"{blocks} blocks: {'PASS' if ok else 'FAIL'}")
    if not SIMULATED:
        gbs = 2 * x.nbytes / gpu_seconds(lambda: run(src, out, n_tiles, blocks)) / 1e9
        print(f"  {gbs:.0f} GB/s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
