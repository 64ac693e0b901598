"""numba-tma kernels a user would write, beside their peers, in one run: one table of ratios to a
1 GiB ``torch.Tensor.copy_`` measured in the same run.  Needs a GPU and PyTorch.

Rows: copy (TMA load -> TMA store, one tile per block; and a persistent multi-stage ring whose
tiles come from a global counter), transpose (128B-swizzled tiles of 32-bit words, bank-conflict
free; bf16 as pairs; TMA store of the transposed tile), row gather (many short-lived blocks, each
lane a 2-slot ring of 2 KiB bulk copies), im2col materialisation (a 3x3 convolution's column
matrix from TMA im2col loads, against ``torch.nn.functional.unfold`` and a memcpy of the bytes
written), split-K accumulation (``tma.reduce`` add vs ``atomicAdd`` vs ``torch.sum``); peers:
torch ``copy_``, ``.t().contiguous()``, ``index_select``, ``sum``, and a plain Numba SIMT copy.
Every output is checked against torch before timing.  Times: median of ``REPEATS`` runs (CUDA
events, warm-up excluded, each run queued behind a GPU sleep so host launch time is excluded).

    python benchmarks/bench_kernels.py [--json out.json]
"""

import argparse
import json
import pathlib
import sys

import numba
import numpy as np
import torch
from numba import cuda
from numba.cuda import types

import numba_tma
from numba_tma import SharedMemoryPlan, TensorMap, at, bulk, cache, fence, mbarrier, tma

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "examples"))
import tma_copy_store as example  # noqa: E402

REPEATS = 20
N = 16384                                  # copy / transpose: N x N
_BITS = {torch.float32: types.float32, torch.bfloat16: types.uint16}
SLEEP_CYCLES = 4_000_000                   # ~2 ms of GPU sleep before each timed run


def median_ms(run):
    """Median GPU time of ``run()`` in ms.  Each timed run is queued behind a GPU sleep, so the
    stream is busy while the host records the start event and launches: the host's launch time
    (20-40 us for a Numba launch, a few us for torch's) is not counted as kernel time."""
    run()
    cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, stop = cuda.event(), cuda.event()
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(cuda.event_elapsed_time(start, stop))
    return float(np.median(times))


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

def _sw128(row, word):
    """Word offset of (row, word) in a 128B-swizzled tile of 32-word rows: the 16-byte chunk index
    XOR the row's low 3 bits."""
    return row * 32 + ((((word >> 2) ^ (row & 7)) << 2) | (word & 3))


_sw = cuda.jit(device=True)(_sw128)
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


def plot(path, sms, counter, sizes=(1024, 2048, 4096, 8192, 16384)):
    """GB/s against matrix size for the fp32 copy (the example's ring, torch ``copy_``) and
    transpose (ours, torch ``.t().contiguous()``), measured now, drawn to ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = {"numba-tma copy (examples/tma_copy_store.py)": [], "torch copy_": [],
              "numba-tma transpose": [], "torch .t().contiguous()": []}
    kern, shared = make_transpose_wide(False, group=TRANSPOSE_GROUP)
    for n in sizes:
        x = torch.randn(n, n, device="cuda")
        y, tx = torch.empty_like(x), torch.empty_like(x)
        nbytes = 2 * x.numel() * 4
        src, dst = example.maps(x, y)
        blocks = sms * example.PER_SM
        example.tma_copy(src, dst, x.shape, counter, blocks)
        assert torch.equal(x, y)
        t_src = TensorMap.tiled(x.view(torch.int32), (64, 64))
        t_dst = TensorMap.tiled(tx.view(torch.int32), (64, 64))
        tiles = n // 64
        numba_tma.launch(kern, tiles * tiles, 256, t_src, t_dst, tiles, shared_mem=shared)
        assert torch.equal(tx, x.t())
        for name, run in (("numba-tma copy (examples/tma_copy_store.py)",
                           lambda: example.tma_copy(src, dst, x.shape, counter, blocks)),
                          ("torch copy_", lambda: y.copy_(x)),
                          ("numba-tma transpose", lambda: numba_tma.launch(kern, tiles * tiles, 256, t_src, t_dst,
                                                                           tiles, shared_mem=shared)),
                          ("torch .t().contiguous()", lambda: x.t().contiguous())):
            curves[name].append(nbytes / median_ms(run) / 1e6)
        del x, y, tx
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, values in curves.items():
        ax.plot([n * n * 4 / 2**20 for n in sizes], values, marker="o", label=name,
                linestyle="-" if "numba" in name else "--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("matrix size, MiB (fp32, square)")
    ax.set_ylabel("GB/s (read + write)")
    ax.set_title(f"{torch.cuda.get_device_name()}: copy and transpose")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}: " + "; ".join(f"{k}: " + ", ".join(f"{v:.0f}" for v in vals) for k, vals in curves.items()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--png", help="also plot bandwidth against size (copy, transpose; ours and torch) to this file")
    args = ap.parse_args(argv)
    rows = []
    gib = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    gib_out = torch.empty_like(gib)
    base_ms = median_ms(lambda: gib_out.copy_(gib))
    base_gbs = 2 * gib.numel() * 4 / base_ms / 1e6

    def row(name, ms, nbytes):
        gbs = nbytes / ms / 1e6
        rows.append((name, ms, gbs, gbs / base_gbs))

    rows.append(("torch copy_ 1 GiB fp32 (baseline)", base_ms, base_gbs, 1.0))
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    counter = cuda.to_device(np.zeros(2, np.uint32))            # the dynamic rings' tile counter
    for tdtype in (torch.float32, torch.bfloat16):
        tag = "fp32" if tdtype == torch.float32 else "bf16"
        x = torch.randn(N, N, device="cuda").to(tdtype)
        y = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        row(f"torch copy_ {N}^2 {tag}", median_ms(lambda: y.copy_(x)), nbytes)
        dtype = _BITS[tdtype]
        size = x.element_size()
        cols = min(256, 1024 // size)                           # rows of up to 1 KiB (a box dim is <= 256)
        r16, r32 = 16384 // (cols * size), 32768 // (cols * size)
        for box in ((64, 128 // size), (r16, cols), (r32, cols)):    # 8 KiB of 128-byte rows; 16 / 32 KiB
            src, dst = TensorMap.tiled(x, box), TensorMap.tiled(y, box)
            kern = make_copy_tile(dtype, box)
            grid = (N // box[1], N // box[0])
            y.zero_()
            kern[grid, 32](src, dst)
            assert torch.equal(x, y), f"copy_tile {box}"
            row(f"numba-tma copy, one {box[0]}x{box[1]} tile per block {tag}",
                median_ms(lambda: kern[grid, 32](src, dst)), nbytes)
        for box, stages, per_sm in (((r16, cols), 6, 2), ((r32, cols), 6, 1)):
            src, dst = TensorMap.tiled(x, box), TensorMap.tiled(y, box)
            kern, shared = make_dynamic_ring(dtype, box, stages)
            tiles_x = N // box[1]
            n_tiles = tiles_x * (N // box[0])
            y.zero_()
            numba_tma.launch(kern, sms * per_sm, 32, src, dst, tiles_x, n_tiles, counter, shared_mem=shared)
            assert torch.equal(x, y), f"dynamic ring {box} {stages}"
            row(f"numba-tma copy, persistent ring {box[0]}x{box[1]} x{stages}, {per_sm}/SM, tile counter {tag}",
                median_ms(lambda: numba_tma.launch(kern, sms * per_sm, 32, src, dst, tiles_x, n_tiles, counter,
                                                   shared_mem=shared)), nbytes)
        if tdtype == torch.float32:   # the example (examples/tma_copy_store.py)
            src, dst = example.maps(x, y)
            blocks = sms * example.PER_SM
            y.zero_()
            example.tma_copy(src, dst, x.shape, counter, blocks)
            assert torch.equal(x, y), "examples/tma_copy_store.py"
            row(f"examples/tma_copy_store.py ({example.BOX_R}x{example.BOX_C} x{example.STAGES}, "
                f"{example.PER_SM}/SM) fp32", median_ms(lambda: example.tma_copy(src, dst, x.shape, counter, blocks)),
                nbytes)
        x64, y64 = x.view(torch.int64), y.view(torch.int64)          # the same bytes as 8-byte words
        for box in ((32, 16), (64, 16)):
            kern = make_load_thread_store(box)
            src, d_y64 = TensorMap.tiled(x64, box), cuda.as_cuda_array(y64)
            grid = (x64.shape[1] // box[1], x64.shape[0] // box[0])
            y.zero_()
            kern[grid, 128](src, d_y64)
            assert torch.equal(x, y), f"load + thread stores {box}"
            row(f"numba-tma copy, TMA load {box[0]}x{box[1]} int64 + 8-byte thread stores {tag}",
                median_ms(lambda: kern[grid, 128](src, d_y64)), nbytes)
        words_x = cuda.as_cuda_array(x.view(-1).view(torch.int64))
        words_y = cuda.as_cuda_array(y.view(-1).view(torch.int64))
        y.zero_()
        simt_grid = (words_x.size + 1023) // 1024
        simt_copy[simt_grid, 256](words_x, words_y)
        assert torch.equal(x, y)
        row(f"plain Numba SIMT copy {tag}", median_ms(lambda: simt_copy[simt_grid, 256](words_x, words_y)), nbytes)
        # transpose, through 32-bit words (bf16: pairs of elements), 256-byte rows both ways
        pairs = tdtype == torch.bfloat16
        tx = torch.empty_like(x)
        w_x, w_t = x.view(torch.int32), tx.view(torch.int32)
        tile_rows = 128 if pairs else 64
        src, dst = TensorMap.tiled(w_x, (tile_rows, 64)), TensorMap.tiled(w_t, (tile_rows, 64))
        kern, shared = make_transpose_wide(pairs, group=TRANSPOSE_GROUP)
        tiles_x, blocks = w_x.shape[1] // 64, (w_x.shape[1] // 64) * (N // tile_rows)
        tx.zero_()
        numba_tma.launch(kern, blocks, 256, src, dst, tiles_x, shared_mem=shared)
        assert torch.equal(tx, x.t()), "transpose"
        row(f"numba-tma transpose, {tile_rows}x64-word tiles, groups of {TRANSPOSE_GROUP} {tag}",
            median_ms(lambda: numba_tma.launch(kern, blocks, 256, src, dst, tiles_x, shared_mem=shared)), nbytes)
        row(f"torch .t().contiguous() {tag}", median_ms(lambda: x.t().contiguous()), nbytes)
        del x, y, tx
    # row gather: 2^18 rows of 2 KiB (bf16 x 1024) from a 2^16-row table
    table = torch.randn(1 << 16, ROW_BYTES // 2, device="cuda").to(torch.bfloat16)
    idx = torch.randint(0, table.shape[0], (1 << 18,), device="cuda", dtype=torch.int32)
    out = torch.empty(idx.numel(), table.shape[1], device="cuda", dtype=torch.bfloat16)
    t_u16, o_u16 = cuda.as_cuda_array(table.view(torch.int16)), cuda.as_cuda_array(out.view(torch.int16))
    d_idx = cuda.as_cuda_array(idx)
    gather, shared = make_bulk_ring(ROW_BYTES, GATHER_DEPTH, GATHER_LANES, True)
    gblocks = idx.numel() // (GATHER_LANES * GATHER_ROWS)      # short-lived blocks: the scheduler balances SMs
    numba_tma.launch(gather, gblocks, 32, t_u16, d_idx, o_u16, idx.numel(), shared_mem=shared)
    assert torch.equal(out, table.index_select(0, idx.long())), "gather"
    moved = 2 * out.numel() * 2
    row(f"numba-tma row gather (bulk, {GATHER_LANES} lanes x {GATHER_DEPTH} slots, {GATHER_ROWS} rows each)",
        median_ms(lambda: numba_tma.launch(gather, gblocks, 32, t_u16, d_idx, o_u16, idx.numel(), shared_mem=shared)),
        moved)
    lidx = idx.long()
    row("torch index_select", median_ms(lambda: torch.index_select(table, 0, lidx, out=out)), moved)
    del table, out
    # im2col materialisation: 3x3 convolution, padding 1, NHWC fp16 32 x 56 x 56 x 64
    batch, hw, ch = 32, 56, 64
    image = torch.randn(batch, hw, hw, ch, device="cuda").to(torch.float16)
    m = batch * hw * hw
    columns = torch.empty(m, 9 * ch, device="cuda", dtype=torch.float16)
    want = torch.nn.functional.unfold(image.permute(0, 3, 1, 2), 3, padding=1)           # (N, C*9, L)
    written = columns.numel() * 2
    for pixels in (64, 128):
        kern, shared = make_im2col_columns(pixels, ch)
        img_map = TensorMap.im2col(image, (-1, -1), (-1, -1), ch, pixels)
        col_map = TensorMap.tiled(columns, (pixels, ch))
        columns.zero_()
        numba_tma.launch(kern, m // pixels, 32, img_map, col_map, hw, hw * hw, shared_mem=shared)
        got = columns.view(batch, hw * hw, 9, ch).permute(0, 3, 2, 1).reshape(batch, ch * 9, hw * hw)
        assert torch.equal(got, want), f"im2col {pixels}"
        row(f"numba-tma im2col 3x3 columns ({pixels} pixels x 9 taps per block), bytes written",
            median_ms(lambda: numba_tma.launch(kern, m // pixels, 32, img_map, col_map, hw, hw * hw,
                                               shared_mem=shared)), written)
    flat = columns.view(-1)
    twin = torch.empty_like(flat)
    row("torch copy_ of the column matrix's bytes, bytes written", median_ms(lambda: twin.copy_(flat)), written)
    nchw = image.permute(0, 3, 1, 2)
    row("torch.nn.functional.unfold, bytes written", median_ms(lambda: torch.nn.functional.unfold(nchw, 3, padding=1)),
        written)
    del image, columns, want, flat, twin
    # split-K: 8 partial 4096 x 4096 fp32 matrices into C
    k_parts, m = 8, 4096
    parts = torch.randn(k_parts, m, m, device="cuda")
    c = torch.zeros(m, m, device="cuda")
    pmap = TensorMap.tiled(parts.view(k_parts * m, m), SPLIT_BOX)
    cmap = TensorMap.tiled(c, SPLIT_BOX)
    grid = (m // SPLIT_BOX[1], m // SPLIT_BOX[0], k_parts)
    split_k_tma[grid, 32](pmap, cmap, m)
    want = parts.sum(0)
    assert torch.allclose(c, want, rtol=1e-5, atol=1e-4), "split-K TMA"
    nbytes = parts.numel() * 4 + c.numel() * 4
    row("numba-tma split-K, tma.reduce add", median_ms(lambda: split_k_tma[grid, 32](pmap, cmap, m)), nbytes)
    d_parts, d_c = cuda.as_cuda_array(parts), cuda.as_cuda_array(c)
    c.zero_()
    split_k_atomic[(1, m, k_parts), 256](d_parts, d_c)
    assert torch.allclose(c, want, rtol=1e-5, atol=1e-4), "split-K atomic"
    row("Numba split-K, atomicAdd", median_ms(lambda: split_k_atomic[(1, m, k_parts), 256](d_parts, d_c)), nbytes)
    row("torch sum(0)", median_ms(lambda: torch.sum(parts, 0, out=c)), nbytes)

    if args.png:
        plot(args.png, sms, counter)
    print(f"{'kernel':62s} {'ms':>8s} {'GB/s':>7s} {'ratio':>6s}")
    for name, ms, gbs, ratio in rows:
        print(f"{name:62s} {ms:8.3f} {gbs:7.0f} {ratio:6.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dict(kernel=n, ms=ms, gbs=g, ratio=r) for n, ms, g, r in rows], f, indent=1)


if __name__ == "__main__":
    main()
