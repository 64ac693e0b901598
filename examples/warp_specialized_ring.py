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

Under numba-cuda-mlir (``NUMBA_TMA_HOST=mlir``) the pipeline and ``SharedMemoryPlan`` do not exist
yet (docs/second_host.md), so the same ring runs written by hand (``twice_plus_one_by_hand``):
its barriers, states and byte counts are what ``TmaPipeline`` derives, spelled out, in static
shared memory (8 KiB).
"""

import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from _host import MLIR, at, cuda, fence, jit, kernel_map, mbarrier, sync, tma, types  # NUMBA_TMA_HOST

from numba_tma import SharedMemoryPlan, TensorMap, pipeline
from numba_tma.testing import gpu_seconds

ROWS, COLS = 16, 32          # one tile: 16 rows x 128 bytes of float32
STAGES = 4
CONSUMERS = 4                # consumer warps; warp 0 produces
ROWS_EACH = ROWS // CONSUMERS

RING = pipeline.TmaPipeline(STAGES, consumers=pipeline.warps(CONSUMERS))
plan = SharedMemoryPlan().array("tiles", (STAGES, ROWS, COLS), numba.float32).pipeline("ring", RING)
carve = plan.carver()


@cuda.jit
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
                ring.acquire(p, src)
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


@jit
def twice_plus_one_by_hand(src, out, n_tiles):
    """``twice_plus_one`` with the ring spelled out: ``full[s]`` (one arrival and the tile's bytes),
    ``empty[s]`` (one arrival per consumer warp), states ``(index, phase)``, the producer's from phase 1."""
    tiles = cuda.shared.array((STAGES, ROWS, COLS), types.float32, alignment=128)
    full = cuda.shared.array(STAGES, types.uint64)
    empty = cuda.shared.array(STAGES, types.uint64)
    warp, lane = cuda.threadIdx.x // 32, cuda.threadIdx.x % 32
    if cuda.threadIdx.x == 0:
        for s in range(STAGES):
            mbarrier.init(at(full, s), 1)
            mbarrier.init(at(empty, s), CONSUMERS)
        fence.mbarrier_init()
    cuda.syncthreads()
    tiles_x = out.shape[1] // COLS
    mine = (n_tiles - cuda.blockIdx.x + cuda.gridDim.x - 1) // cuda.gridDim.x
    if warp == 0:                                        # the producer
        if sync.elect_one():
            index, phase = 0, 1
            for k in range(mine):
                t = cuda.blockIdx.x + k * cuda.gridDim.x
                mbarrier.wait(at(empty, index), phase)
                mbarrier.arrive_expect_tx(at(full, index), ROWS * COLS * 4)
                tma.load(src, at(tiles, index), ((t % tiles_x) * COLS, (t // tiles_x) * ROWS), at(full, index))
                index += 1
                if index == STAGES:
                    index, phase = 0, phase ^ 1
    else:                                                # the consumers
        first = (warp - 1) * ROWS_EACH
        index, phase = 0, 0
        for k in range(mine):
            t = cuda.blockIdx.x + k * cuda.gridDim.x
            mbarrier.wait(at(full, index), phase)
            row0, col0 = (t // tiles_x) * ROWS, (t % tiles_x) * COLS
            for r in range(first, first + ROWS_EACH):
                out[row0 + r, col0 + lane] = 2 * tiles[index, r, lane] + 1
            cuda.syncwarp()
            if lane == 0:
                mbarrier.arrive(at(empty, index))        # this warp is done with the stage
            index += 1
            if index == STAGES:
                index, phase = 0, phase ^ 1


def run(kernel, src, out, n_tiles, blocks, shared_mem):
    kernel[blocks, 32 * (1 + CONSUMERS), 0, shared_mem](src, out, n_tiles)


def main(rows=32 if SIMULATED else 8192, cols=64 if SIMULATED else 4096):
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    out = cuda.device_array_like(x)
    src = kernel_map(TensorMap.tiled(cuda.to_device(x), (ROWS, COLS)))
    n_tiles = (rows // ROWS) * (cols // COLS)
    blocks = 2 if SIMULATED else cuda.get_current_device().MULTIPROCESSOR_COUNT * 2
    kernel, shared_mem = (twice_plus_one_by_hand, 0) if MLIR else (twice_plus_one, plan.nbytes)
    run(kernel, src, out, n_tiles, blocks, shared_mem)
    ok = np.array_equal(out.copy_to_host(), 2 * x + 1)
    print(f"warp_specialized_ring: {rows}x{cols} float32, {n_tiles} tiles, {STAGES}-stage ring, "
          f"{blocks} blocks: {'PASS' if ok else 'FAIL'}")
    if not SIMULATED:
        gbs = 2 * x.nbytes / gpu_seconds(lambda: run(kernel, src, out, n_tiles, blocks, shared_mem)) / 1e9
        print(f"  {gbs:.0f} GB/s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
