"""A persistent, multi-stage TMA copy: TMA loads fill a ring of shared-memory tiles, TMA stores
write them out, and the bulk async-groups recycle the slots.  Prints a check and the bandwidth,
beside PyTorch's ``Tensor.copy_`` when PyTorch is installed.

    python examples/tma_copy_store.py [rows cols]      # without a GPU: simulated, small, no bandwidth

One thread per block drives the whole pipeline (TMA moves the data; no other thread is needed).
``at(ring, s)`` / ``at(full, s)`` name slot ``s`` of the ring and its barrier for one address
computation each (a run-time slice ``full[s:]`` would cost nine instructions).

* prologue: load the block's first STAGES tiles, each into its own slot, each on its own mbarrier;
* tile k: wait for slot k's barrier, store the slot, commit the store as a bulk async-group; then
  refill the slot of tile k-1 with tile k-1+STAGES once that older store has read it
  (``wait_group_read(1)`` leaves only the newest store reading), so a load, the newest store and
  STAGES-1 filled slots are in flight at once.
"""

import sys
import time

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from numba import cuda

from numba_tma import TensorMap, at, fence, mbarrier, tma

BOX_R, BOX_C = 64, 32          # 64 rows x 128 bytes of float32 per tile
STAGES = 4                     # 4 x 8 KiB of shared memory per block


@cuda.jit(device=True)
def next_tile(row, col, step_row, step_col, tiles_x):
    """(row, col) of the tile ``gridDim.x`` tiles on, without a division (in 32 bits)."""
    col = numba.uint32(col + step_col)
    row = numba.uint32(row + step_row)
    if col >= tiles_x:
        col = numba.uint32(col - tiles_x)
        row = numba.uint32(row + 1)
    return row, col


@cuda.jit
def copy_ring(src, dst, tiles_x, n_tiles):
    ring = cuda.shared.array((STAGES, BOX_R, BOX_C), numba.float32, alignment=128)
    full = cuda.shared.array(STAGES, numba.uint64)
    if cuda.threadIdx.x != 0:
        return
    for s in range(STAGES):
        mbarrier.init(at(full, s), 1)
    fence.mbarrier_init()
    # One thread issues everything, so its instruction count is the copy's speed limit.  Numba
    # widens integer math to 64 bits (uint32 + uint32 is uint64; range() counts in int64):
    # numba.uint32(...) around each index result lets LLVM keep it in 32 bits, the loop counts
    # with a uint32 in a while loop, and the tiles are walked by (row, col) steps instead of
    # dividing the tile number each time.  This takes the loop from 143 to 64 SASS instructions
    # per tile (benchmarks/sass_parity.py; the same loop written in CUDA C++ is 48).
    tx = numba.uint32(tiles_x)
    first, step = numba.uint32(cuda.blockIdx.x), numba.uint32(cuda.gridDim.x)
    mine = numba.uint32((numba.uint32(n_tiles) - first + step - 1) // step)   # tiles this block copies
    step_row, step_col = numba.uint32(step // tx), numba.uint32(step % tx)
    load_row, load_col = numba.uint32(first // tx), numba.uint32(first % tx)   # the next tile to load
    store_row, store_col = load_row, load_col                                    # the next tile to store
    for k in range(min(numba.uint32(STAGES), mine)):     # prologue
        mbarrier.arrive_expect_tx(at(full, k), src.box_bytes)
        tma.load(src, at(ring, k), (load_col * BOX_C, load_row * BOX_R), at(full, k))
        load_row, load_col = next_tile(load_row, load_col, step_row, step_col, tx)
    k = numba.uint32(0)
    while k < mine:
        s = numba.uint32(k % STAGES)
        mbarrier.wait(at(full, s), numba.uint32(k // STAGES) & 1)
        tma.store(dst, at(ring, s), (store_col * BOX_C, store_row * BOX_R))
        tma.commit_group()
        store_row, store_col = next_tile(store_row, store_col, step_row, step_col, tx)
        refill = numba.uint32(k + (STAGES - 1))          # the tile that reuses tile k-1's slot
        if k >= 1 and refill < mine:
            r = numba.uint32(numba.uint32(k - 1) % STAGES)
            tma.wait_group_read(1)                       # tile k-1's store has read its slot
            mbarrier.arrive_expect_tx(at(full, r), src.box_bytes)
            tma.load(src, at(ring, r), (load_col * BOX_C, load_row * BOX_R), at(full, r))
            load_row, load_col = next_tile(load_row, load_col, step_row, step_col, tx)
        k = numba.uint32(k + 1)
    tma.wait_group(0)


def tma_copy(src_map, dst_map, shape, blocks):
    tiles_x = shape[1] // BOX_C
    n_tiles = tiles_x * (shape[0] // BOX_R)
    copy_ring[blocks, 32](src_map, dst_map, tiles_x, n_tiles)


def bandwidth(run, nbytes, repeats=20):
    """GB/s moved (read + write) by ``run()``, best of ``repeats``."""
    run()
    cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return 2 * nbytes / best / 1e9


def main(rows=128 if SIMULATED else 16384, cols=64 if SIMULATED else 16384):
    if rows % BOX_R or cols % BOX_C:
        raise SystemExit(f"rows must be a multiple of {BOX_R} and cols of {BOX_C}")
    host = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    a, b = cuda.to_device(host), cuda.device_array_like(host)
    src, dst = TensorMap.tiled(a, (BOX_R, BOX_C)), TensorMap.tiled(b, (BOX_R, BOX_C))
    blocks = 2 if SIMULATED else cuda.get_current_device().MULTIPROCESSOR_COUNT * 8
    tma_copy(src, dst, host.shape, blocks)
    ok = np.array_equal(b.copy_to_host(), host)
    print(f"tma_copy_store: {rows}x{cols} float32, {blocks} persistent blocks, {STAGES} stages: "
          f"{'PASS' if ok else 'FAIL'}")
    if SIMULATED:
        return 0 if ok else 1
    ours = bandwidth(lambda: tma_copy(src, dst, host.shape, blocks), host.nbytes)
    line = f"  numba-tma TMA load -> TMA store: {ours:.0f} GB/s"
    try:
        import torch
    except ImportError:
        print(line + " (PyTorch not installed: no reference)")
    else:
        x = torch.as_tensor(a, device="cuda")
        y = torch.empty_like(x)
        theirs = bandwidth(lambda: y.copy_(x), host.nbytes)
        print(line + f"; torch copy_: {theirs:.0f} GB/s; ratio {ours / theirs:.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*map(int, sys.argv[1:3])))
