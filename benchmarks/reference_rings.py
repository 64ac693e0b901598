"""The rings of the examples as they were written by hand before ``numba_tma.pipeline``, frozen:
the references the pipeline examples are measured against (``benchmarks/bench_pipeline.py``,
the same H200 run) and compared with in SASS (``tests/test_pipeline.py``).  Do not edit them:
they are what "the cost of the hand-written ring" means.

* ``twice_plus_one``: ``examples/warp_specialized_ring.py`` (a producer warp, 4 consumer warps);
* ``copy_ring``: ``examples/tma_copy_store.py`` (one thread: TMA loads -> TMA stores);
* ``multicast_sum``: ``examples/cluster_multicast.py`` (a cluster's blocks share a multicast ring).
"""

import numba
from numba import cuda

from numba_tma import SharedMemoryPlan, at, cluster, fence, mbarrier, sync, tma

# -- warp_specialized_ring.py ----------------------------------------------------------------------
ROWS, COLS = 16, 32
STAGES = 4
CONSUMERS = 4
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


# -- tma_copy_store.py -------------------------------------------------------------------------------
COPY_BOX_R, COPY_BOX_C = 16, 256
COPY_STAGES = 6
copy_plan = (SharedMemoryPlan().array("ring", (COPY_STAGES, COPY_BOX_R, COPY_BOX_C), numba.float32)
             .barriers("full", COPY_STAGES))
copy_carve = copy_plan.carver()


@cuda.jit(device=True, inline=True)
def corner(t, tiles_x):
    """(x, y) coordinates of tile ``t``: one 32-bit division (``t % tiles_x`` would be a second)."""
    row = numba.uint32(t // tiles_x)
    return numba.uint32(t - row * tiles_x) * COPY_BOX_C, row * COPY_BOX_R


@cuda.jit
def copy_ring(src, dst, tiles_x, n_tiles, counter):
    smem = copy_carve()
    tile_of = cuda.shared.array(COPY_STAGES, numba.uint32)      # the tile each slot holds
    if cuda.threadIdx.x != 0:
        return
    for s in range(COPY_STAGES):
        mbarrier.init(at(smem.full, s), 1)
    fence.mbarrier_init()
    # One thread issues everything, so its instruction count matters.  Numba widens integer math to
    # 64 bits (uint32 + uint32 is uint64; range() counts in int64): numba.uint32(...) around each
    # index result lets LLVM keep it in 32 bits, and the loops count with a uint32 in a while loop.
    tx, n = numba.uint32(tiles_x), numba.uint32(n_tiles)
    loaded = numba.uint32(0)
    while loaded < COPY_STAGES:                                  # prologue
        t = cuda.atomic.add(counter, 0, numba.uint32(1))
        if t >= n:
            break
        tile_of[loaded] = t
        mbarrier.arrive_expect_tx(at(smem.full, loaded), src.box_bytes)
        tma.load(src, at(smem.ring, loaded), corner(t, tx), at(smem.full, loaded))
        loaded = numba.uint32(loaded + 1)
    more = loaded == COPY_STAGES                                 # the counter may still have tiles
    k = numba.uint32(0)
    nxt = numba.uint32(0)
    while k < loaded:
        s = numba.uint32(k % COPY_STAGES)
        if k >= 1 and more:
            nxt = cuda.atomic.add(counter, 0, numba.uint32(1))   # asked early: its latency hides in the wait
        mbarrier.wait(at(smem.full, s), numba.uint32(k // COPY_STAGES) & 1)
        t = tile_of[s]
        tma.store(dst, at(smem.ring, s), corner(t, tx))
        tma.commit_group()
        if k >= 1 and more:
            if nxt < n:
                r = numba.uint32(numba.uint32(k - 1) % COPY_STAGES)     # tile k-1's slot
                tma.wait_group_read(1)                            # tile k-1's store has read it
                tile_of[r] = nxt
                mbarrier.arrive_expect_tx(at(smem.full, r), src.box_bytes)
                tma.load(src, at(smem.ring, r), corner(nxt, tx), at(smem.full, r))
                loaded = numba.uint32(loaded + 1)
            else:
                more = False
        k = numba.uint32(k + 1)
    tma.wait_group(0)
    if cuda.atomic.add(counter, 1, numba.uint32(1)) == cuda.gridDim.x - 1:
        counter[0] = 0                                      # the last block out resets the counter
        counter[1] = 0


# -- cluster_multicast.py ------------------------------------------------------------------------------
MC_ROWS = MC_COLS = 64
MC_STAGES = 4
MC_K = 64                        # tiles every block reads (the example on the GPU)
MC_THREADS = 128
MC_PER_THREAD = MC_ROWS * MC_COLS // MC_THREADS
mc_plan = (SharedMemoryPlan().array("ring", (MC_STAGES, MC_ROWS, MC_COLS), numba.float32)
           .barriers("full", MC_STAGES).barriers("empty", MC_STAGES))
mc_carve = mc_plan.carver()


@cuda.jit(device=True)
def accumulate(acc, tile):
    for k in range(MC_PER_THREAD):
        e = cuda.threadIdx.x + k * MC_THREADS
        acc[k] += tile[e // MC_COLS, e % MC_COLS]


@cuda.jit
def multicast_sum(desc, out):
    s = mc_carve()
    tid, rank, n = cuda.threadIdx.x, cluster.ctarank(), cluster.nctarank()
    rows = MC_ROWS // n                                          # this block's slice of each tile
    if tid == 0:
        for i in range(MC_STAGES):
            mbarrier.init(at(s.full, i), 1)
            mbarrier.init(at(s.empty, i), n)                  # one arrival from every block
        fence.mbarrier_init()
    cluster.sync()                                            # every block's barriers exist
    if tid == 0:
        for i in range(MC_STAGES):
            mbarrier.arrive_expect_tx(at(s.full, i), MC_ROWS * MC_COLS * 4)      # the whole tile arrives
            tma.load(desc, at(s.ring[i], rank * rows), (0, i * MC_ROWS + rank * rows), at(s.full, i),
                     multicast=cluster.mask_all(n))
    acc = cuda.local.array(MC_PER_THREAD, numba.float32)
    for k in range(MC_PER_THREAD):
        acc[k] = 0
    for i in range(MC_K):
        stage, phase = i % MC_STAGES, (i // MC_STAGES) & 1
        mbarrier.wait(at(s.full, stage), phase)
        accumulate(acc, s.ring[stage])
        cuda.syncthreads()
        if tid == 0:
            for q in range(n):                                # "I have read stage s" to every block
                mbarrier.arrive_remote(at(s.empty, stage), q)
            # refill the stage read one step ago: by now every block has usually read it too, so
            # this wait rarely stalls (waiting for the stage just read would put the blocks in
            # lock-step, one cluster round trip per tile)
            j = i - 1
            if j >= 0 and j + MC_STAGES < MC_K:
                prev = j % MC_STAGES
                mbarrier.wait(at(s.empty, prev), (j // MC_STAGES) & 1, sem="acquire", scope="cluster")
                mbarrier.arrive_expect_tx(at(s.full, prev), MC_ROWS * MC_COLS * 4)
                tma.load(desc, at(s.ring[prev], rank * rows), (0, (j + MC_STAGES) * MC_ROWS + rank * rows),
                         at(s.full, prev), multicast=cluster.mask_all(n))
    for k in range(MC_PER_THREAD):
        out[cuda.blockIdx.x, cuda.threadIdx.x + k * MC_THREADS] = acc[k]
    cluster.sync()                                            # no block leaves while others signal it
