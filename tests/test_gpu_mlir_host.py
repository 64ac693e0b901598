"""numba-tma's ops in numba-cuda-mlir kernels on the GPU (the second host, docs/second_host.md),
checked against numpy: a TMA load through the map in global memory (``numba_tma.mlir.map_in_global``:
numba-cuda-mlir 0.6 cannot pass a map by value below sm_100) into a SharedMemoryPlan carved out of
dynamic shared memory (``plan.carver()``) and a TMA store, mbarrier phases,
bulk copies and cp.async through ``at()``, a cluster of two blocks exchanging data through
distributed shared memory (numba-cuda-mlir's own cluster launch), a wgmma m64n64k16 bf16 tile
through raw descriptors with the fragment helpers on its accumulator (store, store_bf16, scale,
add, load, the row operations, store_shared_bf16), and mma.sync.  Few kernels, each covering
several ops: every compile costs seconds on the GPU machine too.  Then numba_tma.pipeline in these
kernels: a warp-specialised TMA ring (numba_tma.mlir.pipeline) carved from a plan, its states run
over more tiles than stages; and examples/gemm.py's bf16 kernel under this host.

Skipped without numba-cuda-mlir or without a GPU of compute capability 9.0 (``conftest``); a
numba-cuda-mlir that is installed but does not import fails here, saying what it lacks.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

try:
    from numba_tma.mlir import map_in_global
except ModuleNotFoundError as exc:
    if exc.name != "numba_cuda_mlir":
        raise ImportError(f"numba-cuda-mlir is installed but does not import: {exc} (it needs cuda-bindings "
                          ">= 12.9.1, cuda-core >= 0.5.1 and nvJitLink)") from exc
    pytest.skip("numba-cuda-mlir is not installed (the mlir extra)", allow_module_level=True)

from numba.cuda import types as numba_types  # noqa: E402
from numba_cuda_mlir import cuda, types  # noqa: E402

from numba_tma import (SharedMemoryPlan, TensorMap, at, bulk, cluster, cp_async, dsmem, fence, mbarrier, mma,  # noqa: E402
                       pipeline, tlx, tma, wgmma)
from numba_tma.descriptors import matrix  # noqa: E402
from numba_tma.intrinsics._core import PtxOp, SharedArray  # noqa: E402
from numba_tma.intrinsics.hosts.mlir_adapter import refresh  # noqa: E402
from numba_tma.intrinsics.hosts.mlir_host import build_mlir_intrinsic  # noqa: E402

pytestmark = pytest.mark.gpu

jit = cuda.jit(chip="sm_90a")
SPINS = 1 << 20      # per wait: a barrier that never completes sets status instead of hanging the test

# Test only: a raw wgmma descriptor's start field, (the tile's shared address >> 4) & 0x3FFF, computed
# in PTX (uint64 arithmetic in a kernel widens to int64 or float64 and would garble the descriptor).
start_field = build_mlir_intrinsic(PtxOp("test.start_field",
                                         "cvt.u64.u32 {out}, {tile}; shr.u64 {out}, {out}, 4; and.b64 {out}, {out}, 16383;",
                                         (SharedArray("tile"),), returns=numba_types.uint64, memory=False,
                                         doc="test only"))
refresh()


def device(array):
    return cuda.to_device(np.ascontiguousarray(array))


def bf16_bits(x):
    """float32 -> bfloat16 bits (exact for the small integers used here)."""
    return (np.ascontiguousarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


# -- TMA load and store, mbarrier phases -----------------------------------------------------------

TILE = 32
ORIGIN = (32, 64)     # (row, col) of the tile in the source and destination
ROUND_TRIP = SharedMemoryPlan().array("tile", (TILE, TILE), numba_types.float32).barriers("bars", 2)
carve_round_trip = ROUND_TRIP.carver()     # in dynamic shared memory: launch with ROUND_TRIP.nbytes


@jit
def tma_round_trip(src, dst, probes, status):
    """Load the tile at ORIGIN through ``src``, write 2 x + 1 into it, store it through ``dst``;
    ``probes``: a barrier's phases around two rounds of every thread's arrival.  The tile and the
    barriers are a SharedMemoryPlan carved out of dynamic shared memory (``plan.carver()``)."""
    smem = carve_round_trip()
    bars, tile = smem.bars, smem.tile
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(at(bars, 0), 1)
        mbarrier.init(at(bars, 1), cuda.blockDim.x)
        fence.mbarrier_init()
        if mbarrier.test_wait(at(bars, 1), 1):          # a fresh barrier: the phase before it counts as complete
            probes[0] = 1
        if mbarrier.test_wait(at(bars, 1), 0):          # phase 0: nobody has arrived
            probes[1] = 1
    cuda.syncthreads()
    if t == 0:
        mbarrier.arrive_expect_tx(at(bars, 0), TILE * TILE * 4)
        tma.load(src, tile, (ORIGIN[1], ORIGIN[0]), at(bars, 0))     # innermost (column) first
    done = False
    for _ in range(SPINS):
        if mbarrier.try_wait(at(bars, 0), 0):
            done = True
            break
    if not done:
        status[0] = 1
    for i in range(t, TILE * TILE, cuda.blockDim.x):
        tile[i // TILE, i % TILE] = 2 * tile[i // TILE, i % TILE] + 1
    fence.proxy_async()                                 # written by threads, read by the TMA store
    for phase in range(2):
        mbarrier.arrive(at(bars, 1))
        mbarrier.wait(at(bars, 1), phase)
    if t == 0:
        if mbarrier.test_wait(at(bars, 1), 0):          # phase 2 (parity 0): nobody arrived again
            probes[2] = 1
        if mbarrier.test_wait(at(bars, 1), 1):          # phase 1: complete
            probes[3] = 1
        tma.store(dst, tile, (ORIGIN[1], ORIGIN[0]))
        bulk.commit_group()
        bulk.wait_group(0)


def test_tma_load_store_through_maps_in_global_memory_and_mbarrier_phases():
    rng = np.random.default_rng(0)
    host = rng.integers(-100, 100, (96, 128)).astype(np.float32)
    src, dst = device(host), device(np.full_like(host, -1))
    probes, status = device(np.zeros(4, np.int32)), device(np.zeros(1, np.int32))
    src_map, dst_map = TensorMap.tiled(src, (TILE, TILE)), TensorMap.tiled(dst, (TILE, TILE))
    tma_round_trip[1, 128, None, ROUND_TRIP.nbytes](map_in_global(src_map), map_in_global(dst_map), probes, status)
    assert status.copy_to_host()[0] == 0, "the TMA load never completed its barrier"
    want = np.full_like(host, -1)
    r, c = ORIGIN
    want[r:r + TILE, c:c + TILE] = 2 * host[r:r + TILE, c:c + TILE] + 1
    np.testing.assert_array_equal(dst.copy_to_host(), want)
    assert probes.copy_to_host().tolist() == [1, 0, 0, 1]


# -- bulk copies and cp.async ----------------------------------------------------------------------

BULK = 256           # float32 moved by bulk.load (1 KiB); then 4 per thread by cp.async


@jit
def copies(src, out, status):
    """bulk.load src[:BULK] into shared memory, cp.async 16 bytes per thread of src[BULK:] into
    another buffer, bulk.store both back to out."""
    bar = cuda.shared.array(1, types.uint64)
    first = cuda.shared.array(BULK, types.float32, alignment=128)
    second = cuda.shared.array(128, types.float32, alignment=128)
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(bar, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if t == 0:
        mbarrier.arrive_expect_tx(bar, BULK * 4)
        bulk.load(first, src, BULK * 4, bar)
    cp_async.load(at(second, 4 * t), src[BULK + 4 * t:], 16, cache="cg")
    cp_async.commit_group()
    cp_async.wait_group(0)
    done = False
    for _ in range(SPINS):
        if mbarrier.try_wait(bar, 0):
            done = True
            break
    if not done:
        status[0] = 1
    fence.proxy_async()                                 # cp.async wrote through the generic proxy
    cuda.syncthreads()
    if t == 0:
        bulk.store(out, first, BULK * 4)
        bulk.store(out[BULK:], second, 128 * 4)
        bulk.commit_group()
        bulk.wait_group(0)


def test_bulk_copies_and_cp_async():
    host = np.arange(BULK + 128, dtype=np.float32) * 3 - 7
    out, status = device(np.zeros_like(host)), device(np.zeros(1, np.int32))
    copies[1, 32](device(host), out, status)
    assert status.copy_to_host()[0] == 0, "the bulk load never completed its barrier"
    np.testing.assert_array_equal(out.copy_to_host(), host)


# -- a cluster of two blocks: distributed shared memory --------------------------------------------

N = 32               # int32 each block sends its peer: 16 by st.async, 16 by one bulk shared::cluster copy


@jit
def exchange(out, status):
    """Block r sends its peer r ^ 1 the values r * 1000 + i, completing on the peer's barrier;
    out[block] = what it received, then its ctarank and nctarank."""
    inbox = cuda.shared.array(N, types.int32, alignment=16)      # st.async v4 and bulk copies: 16 bytes
    outbox = cuda.shared.array(N, types.int32, alignment=16)
    full = cuda.shared.array(1, types.uint64)
    t = cuda.threadIdx.x
    rank = cluster.ctarank()
    for i in range(t, N, cuda.blockDim.x):
        outbox[i] = rank * 1000 + i
    if t == 0:
        mbarrier.init(full, 1)
        fence.mbarrier_init()
        mbarrier.arrive_expect_tx(full, N * 4)
    fence.proxy_async()                                 # outbox written by threads, read by the bulk copy
    cluster.sync()                                      # both barriers exist before anyone sends
    if t == 0:
        peer = rank ^ 1
        for j in range(0, N // 2, 4):
            dsmem.store_async(at(inbox, j), (outbox[j], outbox[j + 1], outbox[j + 2], outbox[j + 3]), full, peer)
        dsmem.copy_async(at(inbox, N // 2), at(outbox, N // 2), N // 2 * 4, full, peer)
    done = False
    for _ in range(SPINS):
        if mbarrier.try_wait(full, 0, sem="acquire", scope="cluster"):
            done = True
            break
    if not done:
        status[0] = 1
    for i in range(t, N, cuda.blockDim.x):
        out[cuda.blockIdx.x, i] = inbox[i]
    if t == 0:
        out[cuda.blockIdx.x, N] = rank
        out[cuda.blockIdx.x, N + 1] = cluster.nctarank()
    cluster.sync()                                      # no block leaves while its peer may still write


def test_a_cluster_of_two_blocks_exchanges_through_distributed_shared_memory():
    out, status = device(np.full((2, N + 2), -1, np.int32)), device(np.zeros(1, np.int32))
    exchange[2, 64, None, 0, 2](out, status)            # numba-cuda-mlir's launch: grid, block, stream, smem, cluster
    assert status.copy_to_host()[0] == 0, "a remote write never completed the barrier"
    want = np.array([[(r ^ 1) * 1000 + i for i in range(N)] + [r, 2] for r in range(2)], np.int32)
    np.testing.assert_array_equal(out.copy_to_host(), want)


@jit
def peers_and_masks(out, masks, shapes):
    """Each block of a cluster of 4 writes its shared array, then every thread reads its neighbour
    block's through ``cluster.map_shared`` (after ``cluster.sync``); block 0's threads compute the
    multicast masks of the run-time shapes in ``shapes`` (size, cluster_x, cluster_y, row, column)."""
    mine = cuda.shared.array(64, types.int32)
    t = cuda.threadIdx.x
    rank = cluster.ctarank()
    mine[t] = rank * 100 + t
    cluster.sync()
    peer = cluster.map_shared(mine, (rank + 1) % cluster.nctarank())
    out[cuda.blockIdx.x, t] = peer[t]
    cluster.sync()                                      # no block leaves while another reads its array
    if cuda.blockIdx.x == 0 and t < shapes.shape[0]:
        size, x, y, row, column = shapes[t, 0], shapes[t, 1], shapes[t, 2], shapes[t, 3], shapes[t, 4]
        masks[t, 0] = cluster.mask_all(size)
        masks[t, 1] = cluster.mask_row(x, row)
        masks[t, 2] = cluster.mask_column(x, y, column)
    if cuda.blockIdx.x == 0 and t == 0:
        masks[shapes.shape[0], 0] = cluster.mask_all(4)  # constants, folded at compile time
        masks[shapes.shape[0], 1] = cluster.mask_row(4, 3)
        masks[shapes.shape[0], 2] = cluster.mask_column(2, 8, 1)


def test_map_shared_and_the_multicast_masks_match_numpy():
    from numba_tma import cluster_masks

    combos = [(x, y, r, c) for x, y in ((1, 16), (2, 4), (4, 4), (8, 2), (16, 1)) for r in range(16 // x)
              for c in range(x)]
    shapes = np.array([(1 + i % 16,) + combos[(7 * i) % len(combos)] for i in range(64)], np.int32)
    out, masks = device(np.full((8, 64), -1, np.int32)), device(np.zeros((len(shapes) + 1, 3), np.uint32))
    peers_and_masks[8, 64, None, 0, 4](out, masks, device(shapes))   # two clusters of 4
    want = np.array([[((b % 4 + 1) % 4) * 100 + t for t in range(64)] for b in range(8)], np.int32)
    np.testing.assert_array_equal(out.copy_to_host(), want)
    model = [(cluster_masks.mask_all(s), cluster_masks.mask_row(x, r), cluster_masks.mask_column(x, y, c))
             for s, x, y, r, c in shapes]
    model.append((cluster_masks.mask_all(4), cluster_masks.mask_row(4, 3), cluster_masks.mask_column(2, 8, 1)))
    np.testing.assert_array_equal(masks.copy_to_host(), np.array(model, np.uint32))


# -- wgmma through raw descriptors, mma.sync -------------------------------------------------------

WN = 64              # the wgmma tile: 64 x WN x 64 (four K steps of 16), A and B K-major, 128B swizzle


@jit
def wgmma_tile(map_a, map_b, high, out, c, c16, rows, staged, status):
    """out[thread, i] = accumulator register i of C = A @ B.T; ``high[k]``: descriptor bits of K
    step k for a tile at address 0 (the kernel adds the tile's address).  Then the fragment helpers:
    ``c``'s four 64 x WN blocks: C, 3 C (``add(acc, scale(acc, 2))``), C loaded back (``load``) with
    its rows scaled by 1/2 and 1/4 (``scale_rows``), ``exp2(C / 16 - max / 16)`` (``exp2_rows``);
    ``c16``: C as bfloat16 (``store_bf16``); ``rows[thread]``: the row maxima and the sums of the
    exponentials of the thread's two rows; ``staged``: C as bfloat16 in A's tile in the 128B swizzle
    (``store_shared_bf16``)."""
    # literal sizes: numba-cuda-mlir 0.6 makes an array sized by a module constant (WN * 64) dynamic
    # shared memory, silently (docs/numba_cuda_mlir_defects.md; found here, on the H200)
    ta = cuda.shared.array(64 * 64, types.uint16, alignment=1024)
    tb = cuda.shared.array(64 * 64, types.uint16, alignment=1024)       # WN x 64
    bar = cuda.shared.array(1, types.uint64)
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(bar, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if t == 0:
        mbarrier.arrive_expect_tx(bar, (64 + WN) * 64 * 2)
        tma.load(map_a, ta, (0, 0), bar)
        tma.load(map_b, tb, (0, 0), bar)
    done = False
    for _ in range(SPINS):
        if mbarrier.try_wait(bar, 0):
            done = True
            break
    if not done:
        status[0] = 1
    a, b = start_field(ta), start_field(tb)
    acc = wgmma.fence(wgmma.zeros(32))                  # WN / 2 registers (a literal: typing needs one)
    for k in range(4):
        acc = wgmma.mma_async(acc, high[k] + a, high[k] + b, k)
    wgmma.commit_group()
    acc = wgmma.wait_group(0, acc)
    for i in range(WN // 2):
        out[t, i] = acc[i]
    wgmma.store(acc, c, 0, 0)
    wgmma.store(wgmma.add(acc, wgmma.scale(acc, 2.0)), c, 0, WN)
    wgmma.store(wgmma.scale_rows(wgmma.load(c, 0, 0, 32), 0.5, 0.25), c, 0, 2 * WN)
    wgmma.store_bf16(acc, c16, 0, 0)
    m0, m1 = wgmma.row_max(acc)
    p = wgmma.exp2_rows(acc, 0.0625, m0 * 0.0625, m1 * 0.0625)
    wgmma.store(p, c, 0, 3 * WN)
    s0, s1 = wgmma.row_sum(p)
    rows[t, 0] = m0
    rows[t, 1] = m1
    rows[t, 2] = s0
    rows[t, 3] = s1
    cuda.syncthreads()                                  # every MMA has read A's tile: it stages C now
    wgmma.store_shared_bf16(acc, ta, map_a)             # the map in global memory: its layout unchecked
    cuda.syncthreads()
    for i in range(32):
        staged[32 * t + i] = ta[32 * t + i]


def accumulator_layout(n):
    """(row, col) of register i of thread t of a 64 x n float32 wgmma accumulator (PTX ISA, the
    m64nNk16 D fragment): row 16 warp + lane / 4 + 8 ((i / 2) % 2), col 8 (i / 4) + 2 (lane % 4) + i % 2."""
    t, i = np.arange(128)[:, None], np.arange(n // 2)[None, :]
    return 16 * (t // 32) + (t % 32) // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (t % 4) + i % 2


def bf16_round(x):
    """float32 -> bfloat16 bits, rounded to nearest even (``cvt.rn.bf16x2.f32``; no NaN here)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def unswizzle_128b(staged):
    """A 64 x 64 bfloat16 box from its 128B-swizzled bytes (a 128-byte row; 16-byte chunk c of row r at
    chunk c ^ (r % 8))."""
    r, col = np.arange(64)[:, None], np.arange(64)[None, :]
    offset = r * 128 + 2 * col
    return staged[(offset ^ (((offset >> 7) & 7) << 4)) // 2]


def test_wgmma_bf16_tile_through_raw_descriptors_and_the_fragment_helpers_match_numpy():
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 5, (64, 64)).astype(np.float32)
    b = rng.integers(-4, 5, (WN, 64)).astype(np.float32)            # B as N x K (K-major)
    map_a = TensorMap.tiled(device(bf16_bits(a)), (64, 64), swizzle="128B", data_type="bfloat16")
    map_b = TensorMap.tiled(device(bf16_bits(b)), (WN, 64), swizzle="128B", data_type="bfloat16")
    high = np.array([matrix.encode(0, 128, 128, row=0, k=k) for k in range(4)], np.uint64)
    out, status = device(np.full((128, WN // 2), np.nan, np.float32)), device(np.zeros(1, np.int32))
    c, c16 = device(np.full((64, 4 * WN), np.nan, np.float32)), device(np.zeros((64, WN), np.uint16))
    row_stats, staged = device(np.full((128, 4), np.nan, np.float32)), device(np.zeros(64 * 64, np.uint16))
    in_global = [map_in_global(m) for m in (map_a, map_b)]
    wgmma_tile[1, 128](*in_global, device(high), out, c, c16, row_stats, staged, status)
    assert status.copy_to_host()[0] == 0, "the TMA loads never completed their barrier"
    product = a @ b.T
    rows, cols = accumulator_layout(WN)
    np.testing.assert_array_equal(out.copy_to_host(), product[rows, cols])
    blocks = np.split(c.copy_to_host(), 4, axis=1)
    np.testing.assert_array_equal(blocks[0], product)
    np.testing.assert_array_equal(blocks[1], 3 * product)
    np.testing.assert_array_equal(blocks[2], product * np.where(np.arange(64) % 16 < 8, 0.5, 0.25)[:, None])
    maxima = product.max(axis=1, keepdims=True)
    exps = np.exp2(product / 16 - maxima / 16)
    np.testing.assert_allclose(blocks[3], exps, rtol=2 ** -20)         # ex2.approx: 2 ulp
    np.testing.assert_array_equal(c16.copy_to_host(), bf16_round(product))
    thread_rows = 16 * (np.arange(128) // 32) + (np.arange(128) % 32) // 4
    stats = row_stats.copy_to_host()
    np.testing.assert_array_equal(stats[:, :2], maxima[np.stack([thread_rows, thread_rows + 8], 1), 0])
    np.testing.assert_allclose(stats[:, 2:], exps.sum(axis=1)[np.stack([thread_rows, thread_rows + 8], 1)],
                               rtol=1e-5)
    np.testing.assert_array_equal(unswizzle_128b(staged.copy_to_host()), bf16_round(product))


@jit
def mma_product(a_in, b_in, out):
    """One warp: A (16 x 16) and B (8 x 16, N x K) through ldmatrix at at(), their m16n8k16 product."""
    sa = cuda.shared.array(256, types.uint16, alignment=128)
    sb = cuda.shared.array(128, types.uint16, alignment=128)
    lane = cuda.threadIdx.x
    for i in range(lane, 256, 32):
        sa[i] = a_in[i]
    for i in range(lane, 128, 32):
        sb[i] = b_in[i]
    cuda.syncthreads()
    m = lane // 8          # A's four 8 x 8 matrices: rows 0-7 / 8-15, K 0-7 / 8-15
    a = mma.ldmatrix(at(sa, ((m % 2) * 8 + lane % 8) * 16 + (m // 2) * 8), 4)
    b = mma.ldmatrix(at(sb, (lane % 8) * 16 + (m % 2) * 8), 2)
    acc = mma.sync(mma.zeros(), a, b)
    g, c = lane // 4, lane % 4
    out[g, 2 * c] = acc[0]
    out[g, 2 * c + 1] = acc[1]
    out[g + 8, 2 * c] = acc[2]
    out[g + 8, 2 * c + 1] = acc[3]


def test_mma_sync_bf16_m16n8k16_matches_numpy():
    rng = np.random.default_rng(2)
    a, b = rng.integers(-4, 5, (16, 16)).astype(np.float32), rng.integers(-4, 5, (8, 16)).astype(np.float32)
    out = device(np.zeros((16, 8), np.float32))
    mma_product[1, 32](device(bf16_bits(a).ravel()), device(bf16_bits(b).ravel()), out)
    np.testing.assert_array_equal(out.copy_to_host(), a @ b.T)


# -- numba_tma.pipeline: a warp-specialised TMA ring ------------------------------------------------

RING_STAGES, RING_TILES, RING_ROWS = 3, 10, 8
LOADS = pipeline.TmaPipeline(RING_STAGES, consumers=pipeline.warps(2), producer=pipeline.warps(1))
RING_PLAN = (SharedMemoryPlan().array("ring", (RING_STAGES, RING_ROWS, 32), numba_types.float32)
             .pipeline("loads", LOADS))
carve_ring = RING_PLAN.carver()


@jit
def ring_sums(src, out):
    """Warp 0 loads RING_TILES tiles of RING_ROWS x 32 through the ring (the ring elects its lane);
    warps 1 and 2 sum each tile's elements t, t + 64, ... into ``out[tile, t]``."""
    smem = carve_ring()
    ring = LOADS.create(smem.loads)
    if cuda.threadIdx.x < 32:
        p = ring.producer_state()
        for k in range(RING_TILES):
            ring.acquire(p, RING_ROWS * 32 * 4)
            ring.load(p, src, at(smem.ring, p.index), (0, k * RING_ROWS))
            p = p.advance()
        ring.tail(p)
    else:
        t = cuda.threadIdx.x - 32
        c = ring.consumer_state()
        for k in range(RING_TILES):
            ring.wait(c)
            total = types.float32(0)
            for i in range(t, RING_ROWS * 32, 64):
                total += smem.ring[c.index, i // 32, i % 32]
            out[k, t] = total
            ring.release(c)
            c = c.advance()


def test_a_warp_specialised_tma_ring_delivers_every_tile():
    host = np.arange(RING_TILES * RING_ROWS * 32, dtype=np.float32).reshape(RING_TILES * RING_ROWS, 32) % 97
    src, out = device(host), device(np.full((RING_TILES, 64), -1, np.float32))
    ring_sums[1, 96, None, RING_PLAN.nbytes](map_in_global(TensorMap.tiled(src, (RING_ROWS, 32))), out)
    tiles = host.reshape(RING_TILES, RING_ROWS * 32)
    want = np.stack([tiles[:, t::64].sum(axis=1) for t in range(64)], axis=1)
    np.testing.assert_array_equal(out.copy_to_host(), want)


# -- numba_tma.gemm's kernel source on this host ------------------------------------------------

def test_the_gemm_kernel_under_numba_cuda_mlir_matches_numpy():
    """numba_tma.gemm's kernel compiled by numba-cuda-mlir (``kernels.build(..., host="mlir")``):
    bf16, single blocks and clusters of 2 sharing B by multicast, both ring depths, TMA stores,
    launched through numba-cuda-mlir with maps in global memory typed by their layout
    (map_in_global), 256 x 256 x 128 and a ragged shape with more tiles than blocks, against numpy
    in float64 on the same bf16 inputs."""
    from numba_tma.gemm.kernels import THREADS, Kernel, build

    rng = np.random.default_rng(0)
    for (m, n, k), blocks, stages, pair in (((256, 256, 128), 2, 4, False), ((300, 520, 200), 3, 3, False),
                                            ((300, 520, 200), 4, 4, True)):
        kernel = Kernel("bf16", "k", 256, stages, pair=pair)
        gemm_kernel, plan = build(kernel, host="mlir")
        a = (rng.standard_normal((m, k)) * 8).round().astype(np.float32)
        b = (rng.standard_normal((n, k)) * 8).round().astype(np.float32)
        a_bits, b_bits = bf16_bits(a), bf16_bits(b)
        c = cuda.to_device(np.zeros((m, n), np.uint16))
        maps = [map_in_global(TensorMap.tiled(x, box, swizzle="128B", data_type="bfloat16")) for x, box in
                ((device(a_bits), (128, kernel.bk)), (device(b_bits), kernel.b_box()), (c, (64, 64)))]
        tiles_m, tiles_n = -(-m // 128), -(-n // 256)
        grid = 2 * min(blocks // 2, -(-tiles_m // 2) * tiles_n) if pair else min(blocks, tiles_m * tiles_n)
        launch(gemm_kernel, grid, THREADS, *maps, device(np.zeros((1, 1), np.uint16)),
               device(np.zeros((1, 1, 1), np.float32)), device(np.zeros(1, np.int32)), tiles_m, tiles_n, -(-k // 64),
               np.float32(1), 1, device(np.zeros(1, np.int32)), 0, 0, (0,), shared_mem=plan.nbytes,
               cluster=(2, 1, 1) if pair else (1, 1, 1))
        want = a.astype(np.float64) @ b.astype(np.float64).T
        got = (c.copy_to_host().astype(np.uint32) << 16).view(np.float32)
        assert np.abs(got - want).max() <= 1e-2 * np.abs(want).max(), (m, n, k, stages, pair)


# -- debug mode on this host: the same checks as numba-cuda's (tests/mlir_debug_cases.py) -------------

def _debug_case(case):
    """Run ``case`` of tests/mlir_debug_cases.py in a child process with debug mode on (a trap
    leaves the CUDA context unusable), as tests/test_gpu_debug.py does under numba-cuda."""
    env = dict(os.environ, NUMBA_TMA_DEBUG="1", NUMBA_TMA_DEBUG_TIMEOUT_MS="300")
    return subprocess.run([sys.executable, str(Path(__file__).with_name("mlir_debug_cases.py")), case], env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("case,messages", [
    ("wrong_expect_tx", ["numba_tma debug: mbarrier.wait: timed out after 300 ms waiting for phase parity 0 of the "
                         "mbarrier"]),
    ("swizzle_alignment", ["numba_tma debug: tma.load: argument 'dst' at 0x",
                           "is not 1024-byte aligned (a TMA tile with swizzle SWIZZLE_128B), block (0, 0, 0) thread "
                           "(0, 0, 0)"]),
])
def test_debug_mode_ends_a_mistake_with_its_message(case, messages):
    run = _debug_case(case)
    assert run.returncode != 0 and "finished without an error" not in run.stdout
    assert all(m in run.stdout for m in messages), run.stdout[-2000:] + run.stderr[-2000:]
    assert "block (0, 0, 0) thread (0, 0, 0)" in run.stdout


def test_a_correct_kernel_runs_in_debug_mode():
    run = _debug_case("correct")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "the tile holds the box" in run.stdout and "numba_tma debug" not in run.stdout, run.stdout


@jit
def _big_static(out):
    s = cuda.shared.array(10240, types.float32)   # 40 KiB of static shared memory
    s[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    out[cuda.threadIdx.x] = s[cuda.threadIdx.x] + 1.0


@cuda.jit(chip="sm_90a", launch_bounds=(128, 1))
def _at_most_128(out):
    out[cuda.threadIdx.x] = 2.0


def test_numba_tma_launch_names_the_kernels_own_limits_when_the_driver_refuses():
    """numba-cuda-mlir compiles inside its launcher: a launch the driver refuses for the kernel's
    static shared memory beside the dynamic, or for more threads than its launch bounds allow, is
    explained by numba_tma.launch with those figures; a launch that fits runs (data checked)."""
    from numba_tma import LaunchError, launch

    out = device(np.zeros(256, np.float32))
    with pytest.raises(LaunchError, match=r"shared_mem=200000: .* of which the kernel's static shared arrays take "
                                          r"(4[0-9]{4})$") as refusal:
        launch(_big_static, 1, 32, out, shared_mem=200_000)
    assert int(refusal.value.args[0].rsplit(" ", 1)[1]) >= 40960
    launch(_big_static, 1, 32, out, shared_mem=1024)
    assert np.array_equal(out.copy_to_host()[:32], np.full(32, 2.0, np.float32))
    with pytest.raises(LaunchError, match=re.escape("block=(256, 1, 1): 256 threads per block; this kernel allows "
                                                    "at most 128")):
        launch(_at_most_128, 1, 256, out)
    launch(_at_most_128, 1, 128, out)
    assert np.array_equal(out.copy_to_host()[:128], np.full(128, 2.0, np.float32))


@jit
def _tlx_barriers(out, probes):
    bars = tlx.alloc_barriers(2, 64)   # both wait for the block's 64 threads
    t = cuda.threadIdx.x
    if t == 0:
        if not mbarrier.test_wait(at(bars, 1), 0):      # phase 0 of barrier 1 incomplete: nobody has arrived
            probes[0] = 1
    cuda.syncthreads()
    tlx.barrier_arrive(bars[1:])
    done = False
    for _ in range(SPINS):
        if mbarrier.try_wait(at(bars, 1), 0):
            done = True
            break
    if t == 0:
        probes[1] = 1 if done else 0
        if not mbarrier.test_wait(at(bars, 0), 0):      # barrier 0 untouched: its phase 0 still incomplete
            probes[2] = 1
    out[t] = 2 * t + 1


def test_tlx_alloc_barriers_under_numba_cuda_mlir():
    """tlx.alloc_barriers(2, 64) on this host (numba-tma's own static shared global, returned as a
    generic array): barrier 1 completes its phase 0 when the block's 64 threads arrive (through
    bars[1:]), barrier 0 stays in phase 0.  A parity wait is true once the phase of that parity has
    completed, so on a fresh barrier ``test_wait(bar, 0)`` is False (the probes of 0878de9 expected
    True there, and the H100 read [0, 1, 0]; the numba-cuda twin, both ways:
    tests/test_pipeline.py::test_tlx_alloc_barriers_probes)."""
    out, probes = device(np.zeros(64, np.int32)), device(np.zeros(3, np.int32))
    _tlx_barriers[1, 64](out, probes)
    assert probes.copy_to_host().tolist() == [1, 1, 1]
    assert np.array_equal(out.copy_to_host(), 2 * np.arange(64, dtype=np.int32) + 1)
