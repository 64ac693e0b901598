"""A persistent, multi-stage TMA copy: TMA loads fill a ring of shared-memory tiles, TMA stores
write them out, and the bulk async-groups recycle the slots.  Prints a check and the bandwidth,
beside PyTorch's ``Tensor.copy_`` when PyTorch is installed.

    python examples/tma_copy_store.py [rows cols]      # without a GPU: simulated, small, no bandwidth
    NUMBA_TMA_HOST=mlir python examples/tma_copy_store.py    # compiled by numba-cuda-mlir (a GPU)

One thread per block drives the whole pipeline (TMA moves the data; no other thread is needed).
``at(ring, s)`` / ``at(full, s)`` name slot ``s`` of the ring and its barrier for one address
computation each (a run-time slice ``full[s:]`` would cost nine instructions).

* the ring is a ``numba_tma.pipeline.TmaPipeline`` whose stages the loading thread itself
  consumes (``consumers=same_thread()``: no ``empty`` barriers), and the stores are a
  ``TmaStorePipeline(2)``: a slot is refilled once at most the newest store still reads;
* tiles are handed out at run time by a counter in global memory (one ``atomicAdd`` per tile), not
  by a fixed grid stride: SMs do not all move data equally fast, and with a fixed share each the
  copy waits for the slowest (on an H200 a fixed grid stride reached 0.94 of ``torch`` ``copy_``,
  the counter 0.99, the same as the hardware's own scheduling of one-tile-per-block kernels);
* prologue: load the first STAGES tiles the block is given, each into its own slot, each on its
  own mbarrier, remembering which tile each slot holds;
* tile k: wait for slot k's barrier, store the slot, commit the store as a bulk async-group; then
  refill the slot of tile k-1 with the next tile from the counter once that older store has read
  it (``wait_group_read(1)`` leaves only the newest store reading);
* tiles of 16 rows x 1 KiB: wide rows are what TMA moves best (8 KiB tiles of 128-byte rows
  reach ~0.94 however they are pipelined), and 6 of them (96 KiB) need dynamic shared memory,
  which ``SharedMemoryPlan`` carves into typed pieces.

The same kernel runs under numba-cuda-mlir (``NUMBA_TMA_HOST=mlir``; ``_host`` picks the
compiler, the families, the plan's carver and the launch, docs/second_host.md).
"""

import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from _host import cuda, jit, kernel_map, types  # NUMBA_TMA_HOST: numba-cuda or mlir

from numba_tma import SharedMemoryPlan, TensorMap, at, launch, pipeline, tma
from numba_tma.testing import gpu_seconds

BOX_R, BOX_C = 16, 256         # 16 rows x 1 KiB of float32 per tile
STAGES = 6                     # 6 x 16 KiB of shared memory per block
PER_SM = 2                     # persistent blocks per SM

LOADS = pipeline.TmaPipeline(STAGES, consumers=pipeline.same_thread())
STORES = pipeline.TmaStorePipeline(2)      # refill tile k-1's slot once tile k's store is the only one reading
plan = (SharedMemoryPlan().array("ring", (STAGES, BOX_R, BOX_C), numba.float32)
        .array("tile_of", (STAGES,), numba.uint32)          # the tile each slot holds
        .pipeline("loads", LOADS))
carve = plan.carver()
TILE_BYTES = BOX_R * BOX_C * 4


@jit(device=True, inline=True)
def corner(t, tiles_x):
    """(x, y) coordinates of tile ``t``: one 32-bit division (``t % tiles_x`` would be a second)."""
    row = types.uint32(t // tiles_x)
    return types.uint32(t - row * tiles_x) * BOX_C, row * BOX_R


@jit
def copy_ring(src, dst, tiles_x, n_tiles, counter):
    smem = carve()
    ring = LOADS.create(smem.loads)
    tile_of = smem.tile_of
    if cuda.threadIdx.x != 0:
        return
    # One thread issues everything, so its instruction count matters.  Numba widens integer math to
    # 64 bits (uint32 + uint32 is uint64; range() counts in int64): types.uint32(...) around each
    # index result lets LLVM keep it in 32 bits, and the loops count with a uint32 in a while loop.
    tx, n = types.uint32(tiles_x), types.uint32(n_tiles)
    p = ring.producer_state()
    loaded = types.uint32(0)
    while loaded < STAGES:                                  # prologue
        t = cuda.atomic.add(counter, 0, types.uint32(1))
        if t >= n:
            break
        tile_of[p.index] = t
        ring.acquire(p, TILE_BYTES)
        tma.load(src, at(smem.ring, p.index), corner(t, tx), ring.full(p))
        p = p.advance()
        loaded = types.uint32(loaded + 1)
    more = loaded == STAGES                                 # the counter may still have tiles
    c = ring.consumer_state()
    k = types.uint32(0)
    nxt = types.uint32(0)
    while k < loaded:
        if k >= 1 and more:
            nxt = cuda.atomic.add(counter, 0, types.uint32(1))   # asked early: its latency hides in the wait
        ring.wait(c)
        tma.store(dst, at(smem.ring, c.index), corner(tile_of[c.index], tx))
        STORES.commit()
        if k >= 1 and more:
            if nxt < n:
                STORES.acquire()                                  # tile k-1's store has read slot p
                tile_of[p.index] = nxt
                ring.acquire(p, TILE_BYTES)
                tma.load(src, at(smem.ring, p.index), corner(nxt, tx), ring.full(p))
                p = p.advance()
                loaded = types.uint32(loaded + 1)
            else:
                more = False
        c = c.advance()
        k = types.uint32(k + 1)
    STORES.tail()
    if cuda.atomic.add(counter, 1, types.uint32(1)) == cuda.gridDim.x - 1:
        counter[0] = 0                                      # the last block out resets the counter
        counter[1] = 0


def maps(a, b):
    """The source and destination maps of a copy from ``a`` to ``b`` (2-D float32), as the kernel
    takes them (``_host.kernel_map``)."""
    return kernel_map(TensorMap.tiled(a, (BOX_R, BOX_C))), kernel_map(TensorMap.tiled(b, (BOX_R, BOX_C)))


def tma_copy(src_map, dst_map, shape, counter, blocks):
    """Copy with ``blocks`` persistent blocks; ``counter``: 2 uint32 on the device, zero (the kernel
    leaves them zero)."""
    tiles_x = shape[1] // BOX_C
    n_tiles = tiles_x * (shape[0] // BOX_R)
    launch(copy_ring, blocks, 32, src_map, dst_map, tiles_x, n_tiles, counter, shared_mem=plan.nbytes)


def bandwidth(run, nbytes):
    """GB/s moved (read + write) by ``run()`` (:func:`numba_tma.testing.gpu_seconds`)."""
    return 2 * nbytes / gpu_seconds(run) / 1e9


def main(rows=64 if SIMULATED else 16384, cols=512 if SIMULATED else 16384):
    if rows % BOX_R or cols % BOX_C:
        raise SystemExit(f"rows must be a multiple of {BOX_R} and cols of {BOX_C}")
    host = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    a, b = cuda.to_device(host), cuda.device_array_like(host)
    src, dst = maps(a, b)
    counter = cuda.to_device(np.zeros(2, np.uint32))
    blocks = 3 if SIMULATED else cuda.get_current_device().MULTIPROCESSOR_COUNT * PER_SM
    tma_copy(src, dst, host.shape, counter, blocks)
    ok = np.array_equal(b.copy_to_host(), host) and not counter.copy_to_host().any()
    print(f"tma_copy_store: {rows}x{cols} float32, {blocks} persistent blocks, "
          f"{STAGES} stages: "
          f"{'PASS' if ok else 'FAIL'}")
    if SIMULATED:
        return 0 if ok else 1
    ours = bandwidth(lambda: tma_copy(src, dst, host.shape, counter, blocks), host.nbytes)
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
