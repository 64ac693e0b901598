"""Design sweep behind the copy, transpose and gather kernels of bench_kernels.py: every variant
in one run, as ratios to a 1 GiB ``torch.Tensor.copy_`` measured in the same run, so the fastest
design (and the reason the others lose) is measured rather than guessed.  Needs a GPU and PyTorch.

    python benchmarks/sweep_copy.py [--json out.json] [--only copy|ring|dynamic|bulk|gather|transpose]

Variants: one tile per block (box shapes from 8 KiB to 32 KiB, rows of 128 B to 1 KiB); the
persistent TMA ring with a fixed grid stride (tile, stages, rings per block, blocks per SM, refill
lag; dynamic shared memory past 48 KB), split into a producer and a consumer thread, and with
tiles from a global counter (with and without an evict-first L2 policy); 1-D bulk-copy rings over
contiguous chunks; row gathers with a pipeline per lane, persistent or in many short blocks;
transposes through 128B-swizzled 32x32-word tiles, through unswizzled 64x64-word tiles (one per
block, in grouped order, or a persistent pipelined ring).  BENCHMARKS.md has the results.  Times come from
``bench_kernels.median_ms``, which starts each timed run behind a GPU sleep so the host's launch
time is not counted.
"""

import argparse
import json
import pathlib
import sys

import numba
import numpy as np
import torch
from numba import cuda

import numba_tma
from numba_tma import SharedMemoryPlan, TensorMap, at, fence, mbarrier, tma

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from bench_kernels import N, median_ms  # noqa: E402
from kernels import make_bulk_ring, make_copy_tile, make_dynamic_ring, make_transpose_wide  # noqa: E402


def _sw128(row, word):
    """Word offset of (row, word) in a 128B-swizzled tile of 32-word rows: the 16-byte chunk index
    XOR the row's low 3 bits."""
    return row * 32 + ((((word >> 2) ^ (row & 7)) << 2) | (word & 3))


_sw = cuda.jit(device=True)(_sw128)


def make_ring(dtype, box, stages, rings, lag):
    """``rings`` warps per block, lane 0 of each driving its own ring of ``stages`` tiles (one
    issuing thread per ring), tiles walked by a grid stride over ``gridDim.x * rings`` rings."""
    plan = SharedMemoryPlan().array("ring", (rings * stages,) + box, dtype).barriers("full", rings * stages)
    carve = plan.carver()

    @cuda.jit
    def ring_copy(src, dst, tiles_x, n_tiles):
        smem = carve()
        lane = cuda.threadIdx.x % 32
        w = numba.uint32(cuda.threadIdx.x // 32)
        if lane != 0:
            return
        base = numba.uint32(w * stages)
        for s in range(stages):
            mbarrier.init(at(smem.full, base + s), 1)
        fence.mbarrier_init()
        tx = numba.uint32(tiles_x)
        first = numba.uint32(numba.uint32(cuda.blockIdx.x) * rings + w)
        step = numba.uint32(numba.uint32(cuda.gridDim.x) * rings)
        mine = numba.uint32((numba.uint32(n_tiles) - first + step - 1) // step) if first < n_tiles else numba.uint32(0)
        for k in range(min(numba.uint32(stages), mine)):
            t = numba.uint32(first + numba.uint32(k) * step)
            mbarrier.arrive_expect_tx(at(smem.full, base + k), src.box_bytes)
            tma.load(src, at(smem.ring, base + k), ((t % tx) * box[1], (t // tx) * box[0]), at(smem.full, base + k))
        k = numba.uint32(0)
        while k < mine:
            s = numba.uint32(k % stages)
            t = numba.uint32(first + k * step)
            mbarrier.wait(at(smem.full, base + s), numba.uint32(k // stages) & 1)
            tma.store(dst, at(smem.ring, base + s), ((t % tx) * box[1], (t // tx) * box[0]))
            tma.commit_group()
            refill = numba.uint32(k + stages - lag)
            if k >= lag and refill < mine:
                r = numba.uint32(numba.uint32(k - lag) % stages)
                tma.wait_group_read(lag)
                t = numba.uint32(first + refill * step)
                mbarrier.arrive_expect_tx(at(smem.full, base + r), src.box_bytes)
                tma.load(src, at(smem.ring, base + r), ((t % tx) * box[1], (t // tx) * box[0]),
                         at(smem.full, base + r))
            k = numba.uint32(k + 1)
        tma.wait_group(0)

    return ring_copy, plan.nbytes


def make_split_ring(dtype, box, stages):
    """One producer thread (warp 0) loads, one consumer thread (warp 1) stores; ``full``/``empty``
    barriers per slot; the consumer frees slot k-1 once its store has read it."""
    plan = (SharedMemoryPlan().array("ring", (stages,) + box, dtype).barriers("full", stages)
            .barriers("empty", stages))
    carve = plan.carver()

    @cuda.jit
    def split_copy(src, dst, tiles_x, n_tiles):
        smem = carve()
        tid = cuda.threadIdx.x
        if tid == 0:
            for s in range(stages):
                mbarrier.init(at(smem.full, s), 1)
                mbarrier.init(at(smem.empty, s), 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        tx = numba.uint32(tiles_x)
        first, step = numba.uint32(cuda.blockIdx.x), numba.uint32(cuda.gridDim.x)
        mine = numba.uint32((numba.uint32(n_tiles) - first + step - 1) // step)
        if tid == 0:
            k = numba.uint32(0)
            while k < mine:
                s = numba.uint32(k % stages)
                mbarrier.wait(at(smem.empty, s), (numba.uint32(k // stages) & 1) ^ 1)
                t = numba.uint32(first + k * step)
                mbarrier.arrive_expect_tx(at(smem.full, s), src.box_bytes)
                tma.load(src, at(smem.ring, s), ((t % tx) * box[1], (t // tx) * box[0]), at(smem.full, s))
                k = numba.uint32(k + 1)
        elif tid == 32:
            k = numba.uint32(0)
            while k < mine:
                s = numba.uint32(k % stages)
                mbarrier.wait(at(smem.full, s), numba.uint32(k // stages) & 1)
                t = numba.uint32(first + k * step)
                tma.store(dst, at(smem.ring, s), ((t % tx) * box[1], (t // tx) * box[0]))
                tma.commit_group()
                if k >= 1:
                    tma.wait_group_read(1)
                    mbarrier.arrive(at(smem.empty, numba.uint32(numba.uint32(k - 1) % stages)))
                k = numba.uint32(k + 1)
            tma.wait_group(0)

    return split_copy, plan.nbytes


def make_transpose_words(kr, kc, pairs, threads=256):
    """A block transposes ``kr`` x ``kc`` tiles of 32-bit words (a region of ``kr`` tiles down and
    ``kc`` across), 128B swizzle, ``threads`` threads; returns the kernel and its dynamic shared
    memory.  ``pairs=False``: fp32 32x32 tiles, one element per lane.  ``pairs=True``: bf16 64x64
    tiles seen as 64 rows x 32 words; each lane reads two words (rows 2q, 2q+1) and writes two
    (rows 2p, 2p+1), swapping the 16-bit halves.  Lanes take the elements of two diagonal 4x4
    blocks, so that reads and writes hit 32 distinct banks (swizzled rows)."""
    rows, tiles, warps = (64 if pairs else 32), kr * kc, threads // 32
    plan = (SharedMemoryPlan().array("a", (tiles, rows * 32), numba.uint32, swizzle="128B")
            .array("b", (tiles, rows * 32), numba.uint32, swizzle="128B").barriers("bar", 1))
    carve = plan.carver()

    @cuda.jit
    def transpose_words(src, dst):
        smem = carve()
        a, b, bars = smem.a, smem.b, smem.bar
        tid = numba.uint32(cuda.threadIdx.x)
        warp, lane = tid >> 5, tid & 31
        hi = lane >> 4
        r0 = numba.uint32(cuda.blockIdx.y) * numba.uint32(rows * kr)       # rows of the source
        c0 = numba.uint32(cuda.blockIdx.x) * numba.uint32(32 * kc)         # words of the source
        if tid == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if tid == 0:
            mbarrier.arrive_expect_tx(bars, tiles * src.box_bytes)
            for q in range(tiles):
                tma.load(src, at(a, q), (c0 + numba.uint32((q % kc) * 32), r0 + numba.uint32((q // kc) * rows)),
                         bars)
        mbarrier.wait(bars, 0)
        task = warp
        while task < tiles * 32:
            q, u = task >> 5, task & 31
            bi, bj = ((u >> 3) << 1) ^ hi, (u & 7) ^ hi
            i, j = (bi << 2) | (lane & 3), (bj << 2) | ((lane >> 2) & 3)
            if pairs:     # i = p (word of a), j = q' (row pair of a)
                x, y = a[q, _sw(j << 1, i)], a[q, _sw((j << 1) | 1, i)]
                b[q, _sw(i << 1, j)] = (x & 0xFFFF) | (y << 16)
                b[q, _sw((i << 1) | 1, j)] = (x >> 16) | (y & 0xFFFF0000)
            else:
                b[q, _sw(i, j)] = a[q, _sw(j, i)]
            task = numba.uint32(task + warps)
        fence.proxy_async()
        cuda.syncthreads()
        if tid == 0:
            for q in range(tiles):
                r, c = r0 + numba.uint32((q // kc) * rows), c0 + numba.uint32((q % kc) * 32)
                if pairs:
                    tma.store(dst, at(b, q), (r >> 1, c << 1))
                else:
                    tma.store(dst, at(b, q), (r, c))
            tma.commit_group()
            tma.wait_group_read(0)

    return transpose_words, plan.nbytes


def make_transpose_ring(pairs, stages=3, threads=256):
    """The wide transpose, persistent and pipelined: thread 0 keeps ``stages`` source tiles loading
    (tiles from a global counter, as in the copy ring) while all threads transpose the oldest into
    one of two output tiles, whose TMA store then runs behind the next tile's shuffle.  Arguments:
    ``src``, ``dst``, ``tiles_x``, ``n_tiles``, ``counter`` (2 uint32, zero; reset by the last
    block).  Returns the kernel and its dynamic shared memory."""
    rows = 128 if pairs else 64
    warps = threads // 32
    plan = (SharedMemoryPlan().array("a", (stages, rows * 64), numba.uint32).array("b", (2, rows * 64), numba.uint32)
            .barriers("full", stages))
    carve = plan.carver()

    @cuda.jit
    def transpose_ring(src, dst, tiles_x, n_tiles, counter):
        smem = carve()
        tile_of = cuda.shared.array(stages, numba.uint32)
        more = cuda.shared.array(1, numba.uint32)          # tiles loaded so far by this block
        a, b = smem.a, smem.b
        tid = numba.uint32(cuda.threadIdx.x)
        warp, lane = tid >> 5, tid & 31
        tx, n = numba.uint32(tiles_x), numba.uint32(n_tiles)
        if tid == 0:
            for s in range(stages):
                mbarrier.init(at(smem.full, s), 1)
            fence.mbarrier_init()
            loaded = numba.uint32(0)
            while loaded < stages:
                t = cuda.atomic.add(counter, 0, numba.uint32(1))
                if t >= n:
                    break
                tile_of[loaded] = t
                mbarrier.arrive_expect_tx(at(smem.full, loaded), src.box_bytes)
                tma.load(src, at(a, loaded), ((t % tx) * 64, (t // tx) * rows), at(smem.full, loaded))
                loaded = numba.uint32(loaded + 1)
            more[0] = loaded
        cuda.syncthreads()
        k = numba.uint32(0)
        while k < more[0]:
            s, o = numba.uint32(k % stages), k & 1
            mbarrier.wait(at(smem.full, s), numba.uint32(k // stages) & 1)
            t = tile_of[s]
            task = warp
            while task < 128:                               # as in make_transpose_wide
                sub, d = task >> 5, task & 31
                i = ((sub >> 1) << 5) | lane
                j = ((sub & 1) << 5) | ((lane + d) & 31)
                if pairs:
                    x, y = a[s, (j << 7) | i], a[s, (((j << 1) | 1) << 6) | i]
                    b[o, (i << 7) | j] = (x & 0xFFFF) | (y << 16)
                    b[o, (((i << 1) | 1) << 6) | j] = (x >> 16) | (y & 0xFFFF0000)
                else:
                    b[o, (i << 6) | j] = a[s, (j << 6) | i]
                task = numba.uint32(task + warps)
            fence.proxy_async()
            cuda.syncthreads()                              # b[o] written, a[s] read by everyone
            if tid == 0:
                r0, c0 = (t // tx) * rows, (t % tx) * 64
                if pairs:
                    tma.store(dst, at(b, o), (r0 >> 1, c0 << 1))
                else:
                    tma.store(dst, at(b, o), (r0, c0))
                tma.commit_group()
                if more[0] == k + stages:                   # the counter may have another tile for a[s]
                    nxt = cuda.atomic.add(counter, 0, numba.uint32(1))
                    if nxt < n:
                        tile_of[s] = nxt
                        mbarrier.arrive_expect_tx(at(smem.full, s), src.box_bytes)
                        tma.load(src, at(a, s), ((nxt % tx) * 64, (nxt // tx) * rows), at(smem.full, s))
                        more[0] = more[0] + 1
                tma.wait_group_read(1)                      # b[o ^ 1] is free for the next tile
            cuda.syncthreads()
            k = numba.uint32(k + 1)
        if tid == 0:
            tma.wait_group(0)
            if cuda.atomic.add(counter, 1, numba.uint32(1)) == cuda.gridDim.x - 1:
                counter[0] = 0
                counter[1] = 0

    return transpose_ring, plan.nbytes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--only", choices=("copy", "ring", "dynamic", "bulk", "gather", "transpose"))
    args = ap.parse_args(argv)
    results = []
    gib = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    gib_out = torch.empty_like(gib)
    base_ms = median_ms(lambda: gib_out.copy_(gib))
    base_gbs = 2 * gib.numel() * 4 / base_ms / 1e6
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT

    def row(name, run, nbytes, check):
        try:
            run()
            cuda.synchronize()
            ok = check()
            ms = median_ms(run)
        except Exception as exc:                          # a variant the device refuses: say so, go on
            print(f"{name}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            return
        gbs = nbytes / ms / 1e6
        results.append(dict(kernel=name, ms=ms, gbs=gbs, ratio=gbs / base_gbs, ok=bool(ok)))
        print(f"{name:70s} {ms:8.3f} {gbs:7.0f} {gbs / base_gbs:6.3f} {'' if ok else 'WRONG'}", flush=True)

    print(f"torch copy_ 1 GiB fp32: {base_ms:.3f} ms, {base_gbs:.0f} GB/s", flush=True)
    x = torch.randn(N, N, device="cuda")
    y = torch.empty_like(x)
    nbytes = 2 * x.numel() * 4
    row("torch copy_ 16384^2 fp32", lambda: y.copy_(x), nbytes, lambda: True)
    if args.only in (None, "copy"):
        for box in ((64, 32), (128, 32), (256, 32), (32, 64), (64, 64), (128, 64), (16, 128), (32, 128),
                    (64, 128), (8, 256), (16, 256), (32, 256)):
            src, dst = TensorMap.tiled(x, box), TensorMap.tiled(y, box)
            kern = make_copy_tile(numba.float32, box)
            grid = (N // box[1], N // box[0])
            y.zero_()
            row(f"tile {box[0]}x{box[1]}", lambda: kern[grid, 32](src, dst), nbytes, lambda: torch.equal(x, y))
    if args.only in (None, "ring"):
        for box, stages, rings, per_sm, lag in (
                ((64, 32), 4, 1, 8, 1), ((128, 32), 6, 1, 2, 1), ((32, 256), 6, 1, 1, 1), ((32, 256), 3, 1, 2, 1),
                ((16, 256), 6, 1, 2, 1), ((16, 256), 3, 4, 1, 1), ((32, 128), 3, 4, 1, 1), ((32, 128), 4, 2, 2, 1),
                ((64, 64), 3, 4, 1, 1), ((16, 256), 12, 1, 1, 2), ((32, 256), 6, 1, 1, 2), ((8, 256), 6, 4, 1, 2),
                ((64, 128), 3, 1, 2, 1), ((64, 128), 6, 1, 1, 2)):
            src, dst = TensorMap.tiled(x, box), TensorMap.tiled(y, box)
            kern, shared = make_ring(numba.float32, box, stages, rings, lag)
            tiles_x = N // box[1]
            n_tiles = tiles_x * (N // box[0])
            blocks = sms * per_sm
            y.zero_()
            row(f"ring {box[0]}x{box[1]} x{stages}, {rings} rings/block, {per_sm}/SM, lag {lag} ({shared} B)",
                lambda: numba_tma.launch(kern, blocks, 32 * rings, src, dst, tiles_x, n_tiles, shared_mem=shared),
                nbytes, lambda: torch.equal(x, y))
        for box, stages, per_sm in (((32, 256), 6, 1), ((16, 256), 8, 1), ((32, 128), 6, 2), ((64, 32), 6, 4)):
            src, dst = TensorMap.tiled(x, box), TensorMap.tiled(y, box)
            kern, shared = make_split_ring(numba.float32, box, stages)
            tiles_x = N // box[1]
            n_tiles = tiles_x * (N // box[0])
            y.zero_()
            row(f"split ring {box[0]}x{box[1]} x{stages}, {per_sm}/SM ({shared} B)",
                lambda: numba_tma.launch(kern, sms * per_sm, 64, src, dst, tiles_x, n_tiles, shared_mem=shared),
                nbytes, lambda: torch.equal(x, y))
    if args.only in (None, "dynamic"):
        counter = cuda.to_device(np.zeros(2, np.uint32))
        for box, stages, per_sm, hint in (((16, 256), 6, 2, None), ((16, 256), 6, 2, "evict_first"),
                                          ((32, 256), 6, 1, "evict_first"), ((16, 256), 4, 3, None),
                                          ((16, 256), 8, 1, None), ((8, 256), 12, 2, None), ((16, 256), 3, 4, None),
                                          ((16, 256), 6, 2, None)):
            src, dst = TensorMap.tiled(x, box), TensorMap.tiled(y, box)
            kern, shared = make_dynamic_ring(numba.float32, box, stages, hint is not None)
            tiles_x = N // box[1]
            n_tiles = tiles_x * (N // box[0])
            y.zero_()
            row(f"dynamic ring {box[0]}x{box[1]} x{stages}, {per_sm}/SM, hint {hint} ({shared} B)",
                lambda: numba_tma.launch(kern, sms * per_sm, 32, src, dst, tiles_x, n_tiles, counter,
                                         shared_mem=shared), nbytes, lambda: torch.equal(x, y))
    if args.only in (None, "transpose"):
        for tdtype, pairs in ((torch.float32, False), (torch.bfloat16, True)):
            xs = x if tdtype == torch.float32 else torch.randn(N, N, device="cuda").to(tdtype)
            tx = torch.empty_like(xs)
            w_x, w_t = xs.view(torch.int32), tx.view(torch.int32)
            tile_rows = 64 if pairs else 32
            src = TensorMap.tiled(w_x, (tile_rows, 32), swizzle="128B")
            dst = TensorMap.tiled(w_t, (tile_rows, 32), swizzle="128B")
            for kr, kc, threads in ((2, 2, 256),):
                kern, shared = make_transpose_words(kr, kc, pairs, threads)
                grid = (w_x.shape[1] // (32 * kc), N // (tile_rows * kr))
                tx.zero_()
                row(f"transpose {'bf16 pairs' if pairs else 'fp32'}, {kr}x{kc} tiles, {threads} threads ({shared} B)",
                    lambda: numba_tma.launch(kern, grid, threads, src, dst, shared_mem=shared),
                    nbytes if not pairs else nbytes // 2, lambda: torch.equal(tx, xs.t()))
            rows_wide = 128 if pairs else 64
            wsrc, wdst = TensorMap.tiled(w_x, (rows_wide, 64)), TensorMap.tiled(w_t, (rows_wide, 64))
            for threads, group in ((256, 1),):
                kern, shared = make_transpose_wide(pairs, threads, group)
                tiles_x, blocks = w_x.shape[1] // 64, (w_x.shape[1] // 64) * (N // rows_wide)
                tx.zero_()
                row(f"transpose wide {'bf16 pairs' if pairs else 'fp32'}, {threads} threads, group {group} ({shared} B)",
                    lambda: numba_tma.launch(kern, blocks, threads, wsrc, wdst, tiles_x, shared_mem=shared),
                    nbytes if not pairs else nbytes // 2, lambda: torch.equal(tx, xs.t()))
            counter = cuda.to_device(np.zeros(2, np.uint32))
            for stages, per_sm, threads in ((2, 1, 256), (3, 1, 512), (3, 2, 256), (2, 2, 256), (4, 1, 512)):
                kern, shared = make_transpose_ring(pairs, stages, threads)
                tiles_x, n_tiles = w_x.shape[1] // 64, (w_x.shape[1] // 64) * (N // rows_wide)
                tx.zero_()
                row(f"transpose ring {'bf16 pairs' if pairs else 'fp32'}, {stages} stages, {per_sm}/SM, {threads} threads "
                    f"({shared} B)", lambda: numba_tma.launch(kern, sms * per_sm, threads, wsrc, wdst, tiles_x, n_tiles,
                                                              counter, shared_mem=shared),
                    nbytes if not pairs else nbytes // 2, lambda: torch.equal(tx, xs.t()))
            del tx
    if args.only in (None, "bulk"):
        for chunk, depth, lanes, per_sm in ((4096, 4, 4, 2), (8192, 4, 4, 1), (16384, 4, 2, 1), (16384, 6, 1, 2),
                                            (32768, 3, 2, 1), (2048, 4, 16, 1), (2048, 2, 32, 1)):
            flat_x = cuda.as_cuda_array(x.view(-1).view(torch.int16).view(-1, chunk // 2))
            flat_y = cuda.as_cuda_array(y.view(-1).view(torch.int16).view(-1, chunk // 2))
            idx = cuda.device_array(1, np.int32)
            kern, shared = make_bulk_ring(chunk, depth, lanes, False)
            y.zero_()
            row(f"bulk ring {chunk} B x{depth}, {lanes} lanes, {per_sm}/SM ({shared} B)",
                lambda: numba_tma.launch(kern, sms * per_sm, 32, flat_x, idx, flat_y, flat_x.shape[0],
                                         shared_mem=shared), nbytes, lambda: torch.equal(x, y))
    if args.only in (None, "gather"):
        del x, y
        table = torch.randn(1 << 16, 1024, device="cuda").to(torch.bfloat16)
        idx = torch.randint(0, table.shape[0], (1 << 18,), device="cuda", dtype=torch.int32)
        out = torch.empty(idx.numel(), table.shape[1], device="cuda", dtype=torch.bfloat16)
        t16, o16 = cuda.as_cuda_array(table.view(torch.int16)), cuda.as_cuda_array(out.view(torch.int16))
        d_idx = cuda.as_cuda_array(idx)
        moved = 2 * out.numel() * 2
        want = table.index_select(0, idx.long())
        lidx = idx.long()
        row("torch index_select", lambda: torch.index_select(table, 0, lidx, out=out), moved, lambda: True)
        for depth, lanes, per_sm in ((2, 8, 8), (3, 16, 4), (2, 16, 4), (2, 8, 12)):
            kern, shared = make_bulk_ring(2048, depth, lanes, True)
            out.zero_()
            row(f"gather ring 2 KiB x{depth}, {lanes} lanes, {per_sm}/SM ({shared} B)",
                lambda: numba_tma.launch(kern, sms * per_sm, 32, t16, d_idx, o16, idx.numel(), shared_mem=shared),
                moved, lambda: torch.equal(out, want))
        for depth, lanes, per_lane in ((2, 8, 4), (2, 4, 8), (2, 8, 2), (2, 4, 4), (2, 16, 4), (2, 16, 2), (3, 8, 6),
                                       (2, 32, 2), (2, 2, 8), (2, 8, 4), (2, 4, 8)):
            kern, shared = make_bulk_ring(2048, depth, lanes, True)     # many short-lived blocks: the hardware
            blocks = idx.numel() // (lanes * per_lane)                  # scheduler balances the SMs
            out.zero_()
            row(f"gather blocks 2 KiB x{depth}, {lanes} lanes, {per_lane} rows each ({shared} B)",
                lambda: numba_tma.launch(kern, blocks, 32, t16, d_idx, o16, idx.numel(), shared_mem=shared),
                moved, lambda: torch.equal(out, want))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
