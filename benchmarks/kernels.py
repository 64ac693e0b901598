"""The kernels of benchmarks/bench_kernels.py (and sweep_copy.py), without PyTorch, so the test
suite can run each one under the CUDA simulator against numpy (tests/test_benchmark_kernels.py).
Each is what a user would write with numba-tma; the comments say why each design was chosen
(measured in benchmarks/sweep_copy.py; figures in BENCHMARKS.md)."""

import numba
from numba import cuda

from numba_tma import SharedMemoryPlan, at, bulk, cache, fence, mbarrier, tma


# -- copy -------------------------------------------------------------------------------------

def make_copy_tile(dtype, box):
    """One tile per block: thread 0 loads it, waits, stores it."""
    @cuda.jit
    def copy_tile(src, dst):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array(box, dtype, alignment=128)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            coords = (cuda.blockIdx.x * box[1], cuda.blockIdx.y * box[0])
            mbarrier.arrive_expect_tx(bars, src.box_bytes)
            tma.load(src, tile, coords, bars)
            mbarrier.wait(bars, 0)
            tma.store(dst, tile, coords)
            tma.commit_group()
            tma.wait_group_read(0)
    return copy_tile


def make_load_thread_store(box):
    """One tile per block of 8-byte words (a map over the data viewed as int64: a copy does not
    care about the dtype): TMA load, then the block's threads store it, 8 bytes each, coalesced
    (nothing to wait for before the block exits)."""
    @cuda.jit
    def copy_tile_threads(src, dst):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array(box, numba.uint64, alignment=128)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, src.box_bytes)
            tma.load(src, tile, (cuda.blockIdx.x * box[1], cuda.blockIdx.y * box[0]), bars)
        mbarrier.wait(bars, 0)
        row0 = numba.uint32(cuda.blockIdx.y * box[0])
        col0 = numba.uint32(cuda.blockIdx.x * box[1])
        for e in range(cuda.threadIdx.x, box[0] * box[1], cuda.blockDim.x):
            r, c = numba.uint32(e) // box[1], numba.uint32(e) % box[1]
            dst[row0 + r, col0 + c] = tile[r, c]
    return copy_tile_threads


def make_dynamic_ring(dtype, box, stages, evict_first=False):
    """The ring with tiles handed out at run time (one ``atomicAdd`` on a global counter per tile)
    instead of a fixed grid stride, so a fast SM takes more tiles, as the hardware's block
    scheduler does for one-tile-per-block kernels.  ``counter`` (2 uint32, zero) is reset by the
    block that finishes last.  ``evict_first``: loads and stores carry an L2 evict-first policy."""
    plan = SharedMemoryPlan().array("ring", (stages,) + box, dtype).barriers("full", stages)
    carve = plan.carver()

    @cuda.jit
    def dynamic_ring(src, dst, tiles_x, n_tiles, counter):
        smem = carve()
        tile_of = cuda.shared.array(stages, numba.uint32)
        if cuda.threadIdx.x != 0:
            return
        for s in range(stages):
            mbarrier.init(at(smem.full, s), 1)
        fence.mbarrier_init()
        tx, n = numba.uint32(tiles_x), numba.uint32(n_tiles)
        loaded = numba.uint32(0)
        while loaded < stages:
            t = cuda.atomic.add(counter, 0, numba.uint32(1))
            if t >= n:
                break
            tile_of[loaded] = t
            mbarrier.arrive_expect_tx(at(smem.full, loaded), src.box_bytes)
            if evict_first:
                tma.load(src, at(smem.ring, loaded), ((t % tx) * box[1], (t // tx) * box[0]), at(smem.full, loaded),
                         cache_hint=cache.policy("evict_first"))
            else:
                tma.load(src, at(smem.ring, loaded), ((t % tx) * box[1], (t // tx) * box[0]), at(smem.full, loaded))
            loaded = numba.uint32(loaded + 1)
        more = loaded == stages
        k = numba.uint32(0)
        nxt = numba.uint32(0)
        while k < loaded:
            s = numba.uint32(k % stages)
            if k >= 1 and more:
                nxt = cuda.atomic.add(counter, 0, numba.uint32(1))   # its latency overlaps the wait
            mbarrier.wait(at(smem.full, s), numba.uint32(k // stages) & 1)
            t = tile_of[s]
            if evict_first:
                tma.store(dst, at(smem.ring, s), ((t % tx) * box[1], (t // tx) * box[0]),
                          cache_hint=cache.policy("evict_first"))
            else:
                tma.store(dst, at(smem.ring, s), ((t % tx) * box[1], (t // tx) * box[0]))
            tma.commit_group()
            if k >= 1 and more:
                if nxt < n:
                    r = numba.uint32(numba.uint32(k - 1) % stages)
                    tma.wait_group_read(1)
                    tile_of[r] = nxt
                    mbarrier.arrive_expect_tx(at(smem.full, r), src.box_bytes)
                    if evict_first:
                        tma.load(src, at(smem.ring, r), ((nxt % tx) * box[1], (nxt // tx) * box[0]),
                                 at(smem.full, r), cache_hint=cache.policy("evict_first"))
                    else:
                        tma.load(src, at(smem.ring, r), ((nxt % tx) * box[1], (nxt // tx) * box[0]),
                                 at(smem.full, r))
                    loaded = numba.uint32(loaded + 1)
                else:
                    more = False
            k = numba.uint32(k + 1)
        tma.wait_group(0)
        if cuda.atomic.add(counter, 1, numba.uint32(1)) == cuda.gridDim.x - 1:   # the last block out
            counter[0] = 0
            counter[1] = 0

    return dynamic_ring, plan.nbytes


@cuda.jit
def simt_copy(src, dst):
    """Plain Numba: 8-byte words, 4 per thread, unsigned index math."""
    i = numba.uint64(cuda.blockIdx.x) * numba.uint64(cuda.blockDim.x * 4) + numba.uint64(cuda.threadIdx.x)
    for k in range(4):
        j = i + numba.uint64(k * cuda.blockDim.x)
        if j < src.size:
            dst[j] = src[j]


# -- transpose ---------------------------------------------------------------------------------

TRANSPOSE_GROUP = 8                        # make_transpose_wide: tiles down a column before the next


def make_transpose_wide(pairs, threads=256, group=8):
    """One tile per block with 256-byte rows on both sides and no swizzle: fp32 64x64 tiles, or
    bf16 128x128 tiles seen as 128 rows x 64 words, each lane reading two words (rows 2q, 2q+1)
    and writing two (rows 2p, 2p+1), swapping their 16-bit halves.
    A warp walks a 32x32 block of (row, column) along its diagonals: lane ``l`` takes column
    ``l`` and row ``(l + k) % 32`` in step ``k``, so its reads (one row, 32 columns) and its writes
    (32 rows, one column each, rotated) hit 32 distinct banks without a swizzle.  The grid is 1-D,
    walked ``group`` tiles down a column of tiles before the next column, so the blocks running at
    once read and write runs of ``group`` x 256 bytes per row (DRAM pages), not 256 bytes (arguments:
    ``src``, ``dst``, ``tiles_x`` = tiles across the source).  Returns the kernel and its dynamic
    shared memory."""
    rows = 128 if pairs else 64                      # rows of a tile (64 words wide)
    warps = threads // 32
    plan = (SharedMemoryPlan().array("a", (rows * 64,), numba.uint32).array("b", (rows * 64,), numba.uint32)
            .barriers("bar", 1))
    carve = plan.carver()

    @cuda.jit
    def transpose_wide(src, dst, tiles_x):
        smem = carve()
        a, b, bars = smem.a, smem.b, smem.bar
        tid = numba.uint32(cuda.threadIdx.x)
        warp, lane = tid >> 5, tid & 31
        bid, tx = numba.uint32(cuda.blockIdx.x), numba.uint32(tiles_x)
        band = numba.uint32(bid // numba.uint32(group * tx))            # a band of `group` tile rows
        within = numba.uint32(bid - band * numba.uint32(group * tx))
        r0 = numba.uint32(band * group + within % group) * numba.uint32(rows)
        c0 = numba.uint32(within // group) * numba.uint32(64)
        if tid == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if tid == 0:
            mbarrier.arrive_expect_tx(bars, src.box_bytes)
            tma.load(src, a, (c0, r0), bars)
        mbarrier.wait(bars, 0)
        task = warp
        while task < 128:                           # 4 blocks of 32x32 x 32 diagonals
            sub, k = task >> 5, task & 31
            i = ((sub >> 1) << 5) | lane            # a's column (word)
            j = ((sub & 1) << 5) | ((lane + k) & 31)    # a's row (pairs: row pair)
            if pairs:
                x, y = a[(j << 7) | i], a[(((j << 1) | 1) << 6) | i]
                b[(i << 7) | j] = (x & 0xFFFF) | (y << 16)
                b[(((i << 1) | 1) << 6) | j] = (x >> 16) | (y & 0xFFFF0000)
            else:
                b[(i << 6) | j] = a[(j << 6) | i]
            task = numba.uint32(task + warps)
        fence.proxy_async()
        cuda.syncthreads()
        if tid == 0:
            if pairs:
                tma.store(dst, b, (r0 >> 1, c0 << 1))
            else:
                tma.store(dst, b, (r0, c0))
            tma.commit_group()
            tma.wait_group_read(0)

    return transpose_wide, plan.nbytes


# -- row gather ---------------------------------------------------------------------------------

ROW_BYTES = 2048
GATHER_LANES, GATHER_DEPTH, GATHER_ROWS = 8, 2, 2          # best of sweep_copy.py's gathers


def make_bulk_ring(chunk_bytes, depth, lanes, gather):
    """``lanes`` threads per block each run a ring of ``depth`` slots of ``chunk_bytes``: bulk load
    a row (``idx[j]`` of ``src`` when ``gather``, else row ``j``), bulk store it to row ``j``, refill
    the previous row's slot once its store has read it."""
    elems = chunk_bytes // 2
    plan = SharedMemoryPlan().array("slots", (lanes * depth, elems), numba.uint16).barriers("full", lanes * depth)
    carve = plan.carver()

    @cuda.jit
    def bulk_ring(src, idx, dst, n_rows):
        smem = carve()
        lane = numba.uint32(cuda.threadIdx.x)
        if lane >= lanes:
            return
        base = numba.uint32(lane * depth)
        for s in range(depth):
            mbarrier.init(at(smem.full, base + s), 1)
        fence.mbarrier_init()
        first = numba.uint32(numba.uint32(cuda.blockIdx.x) * lanes + lane)
        step = numba.uint32(numba.uint32(cuda.gridDim.x) * lanes)
        mine = numba.uint32((numba.uint32(n_rows) - first + step - 1) // step) if first < n_rows else numba.uint32(0)
        for k in range(min(numba.uint32(depth), mine)):
            j = numba.uint32(first + numba.uint32(k) * step)
            mbarrier.arrive_expect_tx(at(smem.full, base + k), chunk_bytes)
            bulk.load(at(smem.slots, base + k), src[idx[j] if gather else j], chunk_bytes, at(smem.full, base + k))
        k = numba.uint32(0)
        while k < mine:
            s = numba.uint32(k % depth)
            mbarrier.wait(at(smem.full, base + s), numba.uint32(k // depth) & 1)
            bulk.store(dst[numba.uint32(first + k * step)], at(smem.slots, base + s), chunk_bytes)
            bulk.commit_group()
            refill = numba.uint32(k + depth - 1)
            if k >= 1 and refill < mine:
                r = numba.uint32(numba.uint32(k - 1) % depth)
                bulk.wait_group_read(1)
                j = numba.uint32(first + refill * step)
                mbarrier.arrive_expect_tx(at(smem.full, base + r), chunk_bytes)
                bulk.load(at(smem.slots, base + r), src[idx[j] if gather else j], chunk_bytes, at(smem.full, base + r))
            k = numba.uint32(k + 1)
        bulk.wait_group(0)

    return bulk_ring, plan.nbytes


# -- im2col materialisation --------------------------------------------------------------------

def make_im2col_columns(pixels, channels=64):
    """The column matrix of a 3x3, padding-1 convolution over an NHWC tensor: block ``b`` builds
    rows ``b*pixels ..`` (output pixels, W fastest) of all 9 taps.  It issues the 9 im2col loads
    at once (tap (dh, dw) = the im2col offsets), each on its own barrier, then TMA-stores each tap's
    ``pixels x channels`` tile into columns ``tap*channels ..`` as it lands.  Returns the kernel
    and its dynamic shared memory."""
    plan = SharedMemoryPlan().array("taps", (9, pixels, channels), numba.uint16).barriers("full", 9)
    carve = plan.carver()

    @cuda.jit
    def im2col_columns(image, columns, width, plane):
        smem = carve()
        if cuda.threadIdx.x != 0:
            return
        for t in range(9):
            mbarrier.init(at(smem.full, t), 1)
        fence.mbarrier_init()
        m0 = numba.uint32(numba.uint32(cuda.blockIdx.x) * pixels)
        n = numba.uint32(m0 // numba.uint32(plane))
        rest = numba.uint32(m0 - n * numba.uint32(plane))
        h = numba.uint32(rest // numba.uint32(width))
        w = numba.uint32(rest - h * numba.uint32(width))
        for t in range(9):                       # the base pixel starts at the padding: (h - 1, w - 1)
            mbarrier.arrive_expect_tx(at(smem.full, t), image.box_bytes)
            tma.load_im2col(image, at(smem.taps, t), (0, numba.int32(w) - 1, numba.int32(h) - 1, n),
                            (t % 3, t // 3), at(smem.full, t))
        for t in range(9):
            mbarrier.wait(at(smem.full, t), 0)
            tma.store(columns, at(smem.taps, t), (t * channels, m0))
        tma.commit_group()
        tma.wait_group_read(0)

    return im2col_columns, plan.nbytes


# -- split-K ---------------------------------------------------------------------------------

SPLIT_BOX = (64, 64)


@cuda.jit
def split_k_tma(parts, c, m):
    """Block (x, y, k) reduces tile (y, x) of partial k into C with one TMA reduce-add."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array(SPLIT_BOX, numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
        x, y = cuda.blockIdx.x * SPLIT_BOX[1], cuda.blockIdx.y * SPLIT_BOX[0]
        mbarrier.arrive_expect_tx(bars, parts.box_bytes)
        tma.load(parts, tile, (x, cuda.blockIdx.z * m + y), bars)
        mbarrier.wait(bars, 0)
        tma.reduce(c, tile, (x, y), "add")
        tma.commit_group()
        tma.wait_group_read(0)


@cuda.jit
def split_k_atomic(parts, c):
    k = cuda.blockIdx.z
    r = cuda.blockIdx.y
    for col in range(cuda.threadIdx.x, c.shape[1], cuda.blockDim.x):
        cuda.atomic.add(c, (r, col), parts[k, r, col])
