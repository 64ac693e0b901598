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

import numpy as np
import torch
from numba import cuda
from numba.cuda import types

import numba_tma
from numba_tma import TensorMap

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "examples"))
import tma_copy_store as example  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from kernels import (GATHER_DEPTH, GATHER_LANES, GATHER_ROWS, ROW_BYTES, SPLIT_BOX,  # noqa: E402
                     TRANSPOSE_GROUP, make_bulk_ring, make_copy_tile, make_dynamic_ring, make_im2col_columns,
                     make_load_thread_store, make_transpose_wide, simt_copy, split_k_atomic, split_k_tma)

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
