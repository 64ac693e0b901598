"""numba-tma kernels a user would write, beside their peers, in one run: one table of ratios to a
1 GiB ``torch.Tensor.copy_`` measured in the same run.  Needs a GPU and PyTorch.

Rows: copy (TMA load -> TMA store, one tile per block; and a persistent multi-stage ring),
transpose (128B-swizzled tiles, TMA store of the transposed tile), row gather (bulk copies of
2 KiB rows), split-K accumulation (``tma.reduce`` add vs ``atomicAdd`` vs ``torch.sum``); peers:
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

from numba_tma import TensorMap, at, bulk, fence, mbarrier, tma

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


def make_copy_ring(dtype, box, stages, lag=1):
    """Persistent blocks, one thread driving a ring of ``stages`` tiles (examples/tma_copy_store.py);
    a slot is refilled ``lag`` tiles after its store was issued (``wait_group_read(lag)``)."""
    shape = (stages,) + box

    @cuda.jit
    def copy_ring(src, dst, tiles_x, n_tiles):
        ring = cuda.shared.array(shape, dtype, alignment=128)
        full = cuda.shared.array(stages, numba.uint64)
        if cuda.threadIdx.x != 0:
            return
        for s in range(stages):
            mbarrier.init(at(full, s), 1)
        fence.mbarrier_init()
        # 32-bit unsigned index math: the one issuing thread is the bottleneck (ncu: 17.7 cycles per
        # issued instruction, 2 warps per SM), and int64 division costs ten times the instructions
        tx = numba.uint32(tiles_x)
        first, step = numba.uint32(cuda.blockIdx.x), numba.uint32(cuda.gridDim.x)
        mine = numba.uint32((numba.uint32(n_tiles) - first + step - 1) // step)
        for k in range(min(numba.uint32(stages), mine)):
            t = numba.uint32(first + numba.uint32(k) * step)
            mbarrier.arrive_expect_tx(at(full, k), src.box_bytes)
            tma.load(src, at(ring, k), ((t % tx) * box[1], (t // tx) * box[0]), at(full, k))
        for k64 in range(mine):
            k = numba.uint32(k64)                       # range() counts in int64
            s = k % stages
            t = numba.uint32(first + k * step)   # Numba widens to 64 bits; narrowing lets LLVM divide in 32
            mbarrier.wait(at(full, s), (k // stages) & 1)
            tma.store(dst, at(ring, s), ((t % tx) * box[1], (t // tx) * box[0]))
            tma.commit_group()
            refill = k - lag + stages
            if k >= lag and refill < mine:
                r = (k - lag) % stages
                tma.wait_group_read(lag)
                t = numba.uint32(first + refill * step)
                mbarrier.arrive_expect_tx(at(full, r), src.box_bytes)
                tma.load(src, at(ring, r), ((t % tx) * box[1], (t // tx) * box[0]), at(full, r))
        tma.wait_group(0)
    return copy_ring


@cuda.jit
def simt_copy(src, dst):
    """Plain Numba: 8-byte words, 4 per thread, unsigned index math."""
    i = numba.uint64(cuda.blockIdx.x) * numba.uint64(cuda.blockDim.x * 4) + numba.uint64(cuda.threadIdx.x)
    for k in range(4):
        j = i + numba.uint64(k * cuda.blockDim.x)
        if j < src.size:
            dst[j] = src[j]


# -- transpose ---------------------------------------------------------------------------------

def make_transpose(dtype, t, k):
    """``k`` t x t tiles per block (t elements = 128 bytes per row, stacked down the rows), each
    loaded with 128B swizzle, transposed through shared memory by 256 threads into a second
    swizzled tile and stored with TMA at the swapped place."""
    shape = (k, t * t)

    @cuda.jit
    def transpose(src, dst):
        bars = cuda.shared.array(1, numba.uint64)
        a = cuda.shared.array(shape, dtype, alignment=1024)
        b = cuda.shared.array(shape, dtype, alignment=1024)
        tid = cuda.threadIdx.x
        r0, c0 = cuda.blockIdx.y * (t * k), cuda.blockIdx.x * t
        if tid == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()                                      # the barrier exists before anyone waits
        if tid == 0:
            mbarrier.arrive_expect_tx(bars, k * src.box_bytes)
            for q in range(k):
                tma.load(src, at(a, q), (c0, r0 + q * t), bars)
        mbarrier.wait(bars, 0)
        for e in range(tid, k * t * t, cuda.blockDim.x):
            q, f = numba.uint32(e) // (t * t), numba.uint32(e) % (t * t)
            i, j = f // t, f % t                                # b[q][i, j] = a[q][j, i]
            b[q, tma.swizzled_index(dst, i, j)] = a[q, tma.swizzled_index(src, j, i)]
        fence.proxy_async()
        cuda.syncthreads()
        if tid == 0:
            for q in range(k):
                tma.store(dst, at(b, q), (r0 + q * t, c0))
            tma.commit_group()
            tma.wait_group_read(0)
    return transpose


# -- row gather ---------------------------------------------------------------------------------

ROW_BYTES, LANES = 2048, 8
SLOTS = (LANES, ROW_BYTES // 2)          # one 2 KiB row of uint16 per lane


@cuda.jit
def gather_rows(table, idx, out, rows_per_block):
    """Lanes 0-7 of each block each move one 2 KiB row at a time: bulk load into their slot, bulk
    store out, the next load once the store has read the slot."""
    slots = cuda.shared.array(SLOTS, numba.uint16, alignment=128)
    bars = cuda.shared.array(LANES, numba.uint64)
    lane = cuda.threadIdx.x
    if lane >= LANES:
        return
    mbarrier.init(at(bars, lane), 1)
    fence.mbarrier_init()
    base = cuda.blockIdx.x * rows_per_block
    phase = 0
    for j in range(lane, rows_per_block, LANES):
        row = base + j
        mbarrier.arrive_expect_tx(at(bars, lane), ROW_BYTES)
        bulk.load(at(slots, lane), table[idx[row]], ROW_BYTES, at(bars, lane))
        mbarrier.wait(at(bars, lane), phase)
        phase ^= 1
        bulk.store(out[row], at(slots, lane), ROW_BYTES)
        bulk.commit_group()
        bulk.wait_group_read(0)


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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the rows to this file")
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
    for tdtype in (torch.float32, torch.bfloat16):
        tag = "fp32" if tdtype == torch.float32 else "bf16"
        x = torch.randn(N, N, device="cuda").to(tdtype)
        y = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        row(f"torch copy_ {N}^2 {tag}", median_ms(lambda: y.copy_(x)), nbytes)
        dtype = _BITS[tdtype]
        per_row = 128 // x.element_size()                       # elements in 128 bytes
        for box in ((64, per_row), (128, per_row), (256, per_row)):
            src, dst = TensorMap.tiled(x, box), TensorMap.tiled(y, box)
            kern = make_copy_tile(dtype, box)
            grid = (N // box[1], N // box[0])
            y.zero_()
            kern[grid, 32](src, dst)
            assert torch.equal(x, y), f"copy_tile {box}"
            row(f"numba-tma copy, one {box[0]}x{box[1]} tile per block {tag}",
                median_ms(lambda: kern[grid, 32](src, dst)), nbytes)
        for box, stages, per_sm, lag in (((64, per_row), 4, 8, 1), ((128, per_row), 6, 2, 1),
                                         ((128, per_row), 6, 2, 3), ((64, per_row), 8, 4, 4)):
            src, dst = TensorMap.tiled(x, box), TensorMap.tiled(y, box)
            kern = make_copy_ring(dtype, box, stages, lag)
            tiles_x = N // box[1]
            n_tiles = tiles_x * (N // box[0])
            blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * per_sm
            y.zero_()
            kern[blocks, 32](src, dst, tiles_x, n_tiles)
            assert torch.equal(x, y), f"copy_ring {box} {stages}"
            row(f"numba-tma copy, persistent ring {box[0]}x{box[1]} x{stages}, {per_sm}/SM, lag {lag} {tag}",
                median_ms(lambda: kern[blocks, 32](src, dst, tiles_x, n_tiles)), nbytes)
        x64, y64 = x.view(torch.int64), y.view(torch.int64)          # the same bytes as 8-byte words
        for box in ((32, 16), (64, 16), (128, 16)):
            kern = make_load_thread_store(box)
            src, d_y64 = TensorMap.tiled(x64, box), cuda.as_cuda_array(y64)
            grid = (x64.shape[1] // box[1], x64.shape[0] // box[0])
            y.zero_()
            kern[grid, 128](src, d_y64)
            assert torch.equal(x, y), f"load + thread stores {box}"
            row(f"numba-tma copy, TMA load {box[0]}x{box[1]} int64 + 8-byte thread stores {tag}",
                median_ms(lambda: kern[grid, 128](src, d_y64)), nbytes)
        if tdtype == torch.float32:   # the example's ring, with the 32-bit index idioms (sass_parity.py)
            src, dst = TensorMap.tiled(x, (example.BOX_R, example.BOX_C)), TensorMap.tiled(y, (example.BOX_R,
                                                                                              example.BOX_C))
            blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 8
            y.zero_()
            example.tma_copy(src, dst, (N, N), blocks)
            assert torch.equal(x, y), "examples/tma_copy_store.py"
            row("examples/tma_copy_store.py ring (64x32 x4, 8/SM, 32-bit index math) fp32",
                median_ms(lambda: example.tma_copy(src, dst, (N, N), blocks)), nbytes)
        words_x = cuda.as_cuda_array(x.view(-1).view(torch.int64))
        words_y = cuda.as_cuda_array(y.view(-1).view(torch.int64))
        y.zero_()
        simt_grid = (words_x.size + 1023) // 1024
        simt_copy[simt_grid, 256](words_x, words_y)
        assert torch.equal(x, y)
        row(f"plain Numba SIMT copy {tag}", median_ms(lambda: simt_copy[simt_grid, 256](words_x, words_y)), nbytes)
        # transpose
        t = per_row
        tx = torch.empty_like(x)
        src, dst = TensorMap.tiled(x, (t, t), swizzle="128B"), TensorMap.tiled(tx, (t, t), swizzle="128B")
        for k in (1, 4):
            kern = make_transpose(dtype, t, k)
            grid = (N // t, N // (t * k))
            tx.zero_()
            kern[grid, 256](src, dst)
            assert torch.equal(tx, x.t()), "transpose"
            row(f"numba-tma transpose, {k} {t}x{t} swizzled tiles per block {tag}",
                median_ms(lambda: kern[grid, 256](src, dst)), nbytes)
        row(f"torch .t().contiguous() {tag}", median_ms(lambda: x.t().contiguous()), nbytes)
        del x, y, tx
    # row gather: 2^18 rows of 2 KiB (bf16 x 1024) from a 2^16-row table
    table = torch.randn(1 << 16, ROW_BYTES // 2, device="cuda").to(torch.bfloat16)
    idx = torch.randint(0, table.shape[0], (1 << 18,), device="cuda", dtype=torch.int32)
    out = torch.empty(idx.numel(), table.shape[1], device="cuda", dtype=torch.bfloat16)
    t_u16, o_u16 = cuda.as_cuda_array(table.view(torch.int16)), cuda.as_cuda_array(out.view(torch.int16))
    d_idx = cuda.as_cuda_array(idx)
    per_block = 64
    gblocks = idx.numel() // per_block
    gather_rows[gblocks, 32](t_u16, d_idx, o_u16, per_block)
    assert torch.equal(out, table.index_select(0, idx.long())), "gather"
    moved = 2 * out.numel() * 2
    row("numba-tma row gather (bulk, 2 KiB rows)", median_ms(lambda: gather_rows[gblocks, 32](t_u16, d_idx, o_u16,
                                                                                           per_block)), moved)
    lidx = idx.long()
    row("torch index_select", median_ms(lambda: torch.index_select(table, 0, lidx, out=out)), moved)
    del table, out
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

    print(f"{'kernel':62s} {'ms':>8s} {'GB/s':>7s} {'ratio':>6s}")
    for name, ms, gbs, ratio in rows:
        print(f"{name:62s} {ms:8.3f} {gbs:7.0f} {ratio:6.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dict(kernel=n, ms=ms, gbs=g, ratio=r) for n, ms, g, r in rows], f, indent=1)


if __name__ == "__main__":
    main()
