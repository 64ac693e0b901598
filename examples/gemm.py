"""A bf16 GEMM on Hopper tensor cores from a Numba kernel: C = A @ B^T, A M x K and B N x K
(both K-major, row-major in memory), fp32 accumulation, bf16 C; checked against torch (or numpy)
and timed beside cuBLAS (``torch.matmul``) and a Triton TMA persistent matmul when PyTorch and
Triton are installed.

    python examples/gemm.py [M N K]          # without a GPU: simulated, small
    NUMBA_TMA_HOST=mlir python examples/gemm.py [M N K]    # compiled by numba-cuda-mlir (a GPU; bf16)

The kernel is persistent (one block per SM, tiles handed out in grouped order for L2 reuse) and
warp-specialised: warpgroup 0's elected thread issues the TMA loads of A (128 rows) and B
(256 rows) tiles, one 128-byte K step wide, into a 3- or 4-stage ``numba_tma.pipeline.TmaPipeline``;
warpgroups 1 and 2 each multiply a 64 x 256 half of the 128 x 256 output tile with
``wgmma.mma_async`` (m64n256k16, four per K step, descriptors from the maps' 128B-swizzled
layout), keep one wgmma group in flight while releasing the stage before, and write their fragment
as bf16 into swizzled shared boxes that TMA stores (left in flight while the next tile's MMAs
run; see STAGES).  Ragged M, N, K: TMA fills out-of-range input with zeros and clips out-of-range output (N
and K multiples of 8: TMA's 16-byte row pitch).  ``make_gemm("e4m3")`` is the fp8 kernel: tiles
of 128 x 192 (m64n192k32), promoted every 128 of K into a float32 total (see ``KINDS``), per-tensor
scales applied to the fragment before the store.

Split-K (``matmul(..., split_k=s)``, opt-in; ``split_k=None``: ``split_k_for``'s choice; bf16
and fp8, not with ``pair``): with fewer output tiles than blocks (decode-like shapes: 256 x 8192
has 64 tiles for 132 SMs) ``split_k_for`` splits K up to 4 ways so that every (tile, split) work
unit runs in one wave.  Measured on the H200 it does not pay yet (256 x 8192 x 8192: 2 splits
1.02x the unsplit kernel; 128 x 8192 x 8192: 4 splits 0.81x; BENCHMARKS.md), so the default is
no split.  Each unit
accumulates its K steps (ragged: the splits differ by at most one) and its epilogue adds the bf16
partial into C with a TMA reduce-add (``tma.reduce(..., "add")`` on the bf16 map) instead of the
store, after ``zero_c`` zeroed C (both kernels are the call).  Adding in bf16 costs precision: see
``MAX_SPLIT_K``.
"""

import numbers
import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from _host import MLIR, cuda, jit, kernel_map, types  # NUMBA_TMA_HOST: numba-cuda or mlir

from numba_tma import SharedMemoryPlan, TensorMap, at, cluster, fence, launch, pipeline, sync, tma, wgmma
from numba_tma.testing import gpu_seconds

BM = 128                             # output tile rows: two consumer warpgroups of 64
SHARED_BYTES = 227 * 1024            # the dynamic shared memory of a Hopper block
#: ring stages: bf16 48 KiB a stage, fp8 40 KiB.  The epilogue stages the whole output tile (bf16
#: 64 KiB, fp8 48 KiB) where it fits beside the ring (fp8 at 4 stages, bf16 at 3); bf16 at 4 stages
#: goes through 32 KiB in two rounds, the second waiting for the first's stores to read their boxes.
#: ``matmul`` runs bf16 with 3 stages up to SHORT_K K steps, where the epilogue counts (H200, one
#: call: 8192 x 8192 x 1024 0.980 of cuBLAS against 0.946 at 4 stages; 4096^3 1.009 against 0.995),
#: and 4 above it (8192^3 1.022 against 1.007 at 3).
STAGES = {"bf16": (3, 4), "e4m3": (4,)}
SHORT_K = 64
GROUP_M = 8                          # output tiles walk GROUP_M tile rows at a time (L2 reuse of B)
THREADS = 384                        # 3 warpgroups: the producer's, two consumers'
#: per input type: (its bytes, the shared element type, the wgmma dtype, the output tile's columns
#: BN, promoted); the K step BK is one 128-byte swizzle row (64 bf16 or 128 fp8), four wgmma K steps
#: of 32 bytes.  fp8 is promoted: Hopper adds fp8 products into the accumulator with about 14
#: mantissa bits, so each K step (128 of K) goes into a fresh fragment that is then added into a
#: float32 total (DeepSeek-V3's promotion; every 2 or 4 K steps measured slower on the H200, see
#: BENCHMARKS.md); the two fragments of 64 x 192 take 192 registers, which ``setmaxnreg`` (232 for
#: the consumers, 40 for the producer) makes room for.
KINDS = {"bf16": (2, numba.uint16, "bf16", 256, False), "e4m3": (1, numba.uint8, "e4m3", 192, True)}


@jit(device=True, inline=True)
def tile_of(t, tiles_m, tiles_n):
    """Output tile ``t`` as (tile row, tile column), GROUP_M tile rows at a time.  In 32-bit
    unsigned arithmetic: a 64-bit division is a subroutine call, and a call anywhere in the kernel
    makes ptxas serialise every wgmma (``C7509``: each HGMMA waits for the one before)."""
    u32 = types.uint32      # (every product and difference cut back to 32 bits: Numba computes in 64)
    per_group = u32(GROUP_M * tiles_n)
    group = u32(t) // per_group
    first = u32(group * GROUP_M)
    rows = u32(min(u32(tiles_m) - first, GROUP_M))
    within = u32(u32(t) - group * per_group)
    return types.int64(first + within % rows), types.int64(within // rows)


@jit(device=True, inline=True)
def work_unit(u, n_tiles, k_tiles, splits):
    """Split-K work unit ``u`` as (output tile, first K step, K steps): units ``[s * n_tiles,
    (s + 1) * n_tiles)`` take split ``s`` of every tile (the tiles of one split side by side, so
    blocks running together share A and B in L2), K steps ``[s * k_tiles // splits, (s + 1) *
    k_tiles // splits)`` (ragged: the splits differ by at most one step).  The divisions are 32-bit
    unsigned (LLVM narrows them; a 64-bit one is a subroutine call)."""
    s = types.int64(types.uint32(u) // types.uint32(n_tiles))
    lo = types.int64(types.uint32(s * k_tiles) // types.uint32(splits))
    hi = types.int64(types.uint32((s + 1) * k_tiles) // types.uint32(splits))
    return u - s * n_tiles, lo, hi - lo


def tile_k_n(kind):
    """(K step, output tile columns) of ``kind``'s kernel."""
    return 128 // KINDS[kind][0], KINDS[kind][3]


def make_gemm(kind, pair=False, b_kn=False, split=False, stages=4):
    """The kernel, its shared-memory plan and K step for inputs of ``kind`` ("bf16" or "e4m3").
    ``pair``: clusters of 2 blocks computing vertically adjacent tiles, which share their B tile:
    each block loads half of it with TMA multicast into both (B crosses from L2 once per pair).
    ``b_kn`` (bf16): B given K x N row-major; its tile is 4 boxes of (64 K rows, 64 N), read
    MN-major (``wgmma.descriptor_mn``, ``trans_b=True``).  ``split`` (not with ``pair``): split-K,
    the kernel's ``splits`` argument: work units (tile, split) (``work_unit``) each accumulate
    their share of K and add it, rounded to bf16, into C with TMA reduce-add (C zeroed before).
    ``stages``: the ring's depth (see STAGES)."""
    _, element, mma_dtype, _, promote = KINDS[kind]
    bk, BN = tile_k_n(kind)
    stage_bytes = (BM + BN) * 128
    regs = BN // 2                                  # a consumer's fragment of 64 x BN
    n_boxes = BN // 64                              # 64-column boxes of C a consumer stores per tile
    b_boxes = BN // 64 if b_kn else 2               # B boxes per stage: (bk, 64) given K x N, (128, bk) given N x K
    mine = b_boxes // 2 if pair else b_boxes        # the boxes of B each block loads
    ring_config = pipeline.TmaPipeline(stages, consumers=pipeline.warpgroups(2), cluster=pair, reads="wgmma")
    whole = stages * stage_bytes + 2 * n_boxes * 8192 + 1024 <= SHARED_BYTES   # C's whole tile staged at once
    staged = n_boxes if whole else 2                # a consumer's staging boxes (64 x 64 bf16)
    plan = (SharedMemoryPlan()
            .array("a", (stages, BM, bk), element, swizzle="128B")
            .array("b", (b_boxes * stages,) + ((bk, 64) if b_kn else (BN // 2, bk)), element, swizzle="128B")
            .array("c", (2 * staged, 64, 64), numba.uint16, swizzle="128B")
            .pipeline("ring", ring_config))
    rounds, first_boxes, last_boxes = (1, n_boxes, 1) if whole else (2, 2, n_boxes - 2)   # the epilogue's
    carve = plan.carver()
    blocks_per_tile_row = 2 if pair else 1

    # one block of 384 threads per SM: ptxas may then give each thread 168 registers (the
    # simulator's cuda.jit takes no launch_bounds)
    @jit(**({} if SIMULATED else {"launch_bounds": (THREADS, 1)}))
    def gemm(desc_a, desc_b, desc_c, tiles_m, tiles_n, k_tiles, scale, splits):
        smem = carve()
        ring = ring_config.create(smem.ring)
        warpgroup = cuda.threadIdx.x // 128
        rank = cluster.ctarank() if pair else 0
        rows_of_tiles = (tiles_m + blocks_per_tile_row - 1) // blocks_per_tile_row   # tile rows (pairs of them)
        first, step = cuda.blockIdx.x // blocks_per_tile_row, cuda.gridDim.x // blocks_per_tile_row
        n_tiles = rows_of_tiles * tiles_n
        n_units = n_tiles * splits if split else n_tiles       # (splits is 1 unless split)
        if warpgroup == 0:                                     # the producer
            if promote:
                wgmma.setmaxnreg(40, "dec")
            if cuda.threadIdx.x == 0:
                p = ring.producer_state()
                u = first
                while u < n_units:                             # (a while: range's trip count divides in 64 bits)
                    if split:
                        t, k_first, k_steps = work_unit(u, n_tiles, k_tiles, splits)
                    else:
                        t, k_first, k_steps = u, 0, k_tiles
                    mp, n = tile_of(t, rows_of_tiles, tiles_n)
                    m = mp * blocks_per_tile_row + rank
                    for j in range(k_steps):
                        k = k_first + j                        # the K step loaded
                        ring.acquire(p, stage_bytes)
                        tma.load(desc_a, at(smem.a, p.index), (k * bk, m * BM), ring.full(p))
                        if b_kn:                               # boxes of (bk K rows, 64 N); a pair: half each
                            for j in range(rank * mine, (rank + 1) * mine):
                                if pair:
                                    tma.load(desc_b, at(smem.b, b_boxes * p.index + j), (n * BN + 64 * j, k * bk),
                                             ring.full(p), multicast=cluster.mask_all(2))
                                else:
                                    tma.load(desc_b, at(smem.b, b_boxes * p.index + j), (n * BN + 64 * j, k * bk),
                                             ring.full(p))
                        elif pair:                             # this block's half of B, into both blocks
                            tma.load(desc_b, at(smem.b, 2 * p.index + rank), (k * bk, n * BN + rank * (BN // 2)),
                                     ring.full(p), multicast=cluster.mask_all(2))
                        else:
                            tma.load(desc_b, at(smem.b, 2 * p.index), (k * bk, n * BN), ring.full(p))
                            tma.load(desc_b, at(smem.b, 2 * p.index + 1), (k * bk, n * BN + BN // 2), ring.full(p))
                        p = p.advance()
                    u += step
                if pair:
                    ring.tail(p)                               # the other block released every stage
        else:                                                  # the consumers: rows 64 * half of the tile
            if promote:
                wgmma.setmaxnreg(232, "inc")
            half = warpgroup - 1
            leader = cuda.threadIdx.x % 128 == 0
            c_state = ring.consumer_state()
            u = first
            while u < n_units:
                if split:
                    t, k_first, k_steps = work_unit(u, n_tiles, k_tiles, splits)
                else:
                    t, k_first, k_steps = u, 0, k_tiles
                mp, n = tile_of(t, rows_of_tiles, tiles_n)
                m = mp * blocks_per_tile_row + rank
                acc = wgmma.zeros(regs)
                partial = wgmma.zeros(regs)                    # fp8: the K steps since the last promotion
                previous = c_state
                for k in range(k_steps):                       # k: the unit's own K steps (scale_d 0 first)
                    ring.wait(c_state)
                    a_tile, b_tile = at(smem.a, c_state.index), at(smem.b, b_boxes * c_state.index)
                    if promote:                                # a fresh partial (scale_d 0 on its first MMA)
                        partial = wgmma.fence(partial)
                        for kk in range(4):
                            partial = wgmma.mma_async(partial, wgmma.descriptor(a_tile, desc_a, kk, 64 * half),
                                                      wgmma.descriptor(b_tile, desc_b, kk, 0), kk, dtype=mma_dtype)
                        wgmma.commit_group()
                        partial = wgmma.wait_group(0, partial)  # done: the stage is free, the partial
                        ring.release(c_state)                  # goes into the float32 total
                        acc = wgmma.add(acc, partial)
                    else:
                        acc = wgmma.fence(acc)
                        for kk in range(4):
                            if b_kn:
                                acc = wgmma.mma_async(acc, wgmma.descriptor(a_tile, desc_a, kk, 64 * half),
                                                      wgmma.descriptor_mn(b_tile, desc_b, kk, 0), k + kk,
                                                      dtype=mma_dtype, trans_b=True)
                            else:
                                acc = wgmma.mma_async(acc, wgmma.descriptor(a_tile, desc_a, kk, 64 * half),
                                                      wgmma.descriptor(b_tile, desc_b, kk, 0), k + kk,
                                                      dtype=mma_dtype)
                        wgmma.commit_group()
                        acc = wgmma.wait_group(1, acc)         # the MMAs of K step k - 1 are done:
                        if k > 0:
                            ring.release(previous)             # their stage can be refilled
                    previous = c_state
                    c_state = c_state.advance()
                if not promote:
                    acc = wgmma.wait_group(0, acc)
                    ring.release(previous)
                if scale != 1:
                    acc = wgmma.scale(acc, scale)
                # the epilogue: the fragment as bf16 into this warpgroup's staging boxes (once the TMA
                # stores before have read them), then TMA stores (split-K: reduce-adds) left in flight
                # while the next tile's MMAs run; all boxes at once when they fit beside the ring, else
                # in two rounds (128 columns, then the rest) through two boxes
                for rnd in range(rounds):
                    if leader:
                        tma.wait_group_read(0)
                    sync.named_barrier_sync(1 + half, 128)
                    if rnd == 0:
                        wgmma.store_shared_bf16(acc, at(smem.c, staged * half), desc_c, 0, first_boxes)
                    else:
                        wgmma.store_shared_bf16(acc, at(smem.c, staged * half), desc_c, 2, last_boxes)
                    fence.proxy_async()
                    sync.named_barrier_sync(1 + half, 128)
                    if leader:
                        for box in range(first_boxes if rnd == 0 else last_boxes):
                            corner = (n * BN + 128 * rnd + 64 * box, m * BM + 64 * half)
                            if split:
                                tma.reduce(desc_c, at(smem.c, staged * half + box), corner, "add")
                            else:
                                tma.store(desc_c, at(smem.c, staged * half + box), corner)
                        tma.commit_group()
                u += step
            if leader:
                tma.wait_group(0)

    return gemm, plan, bk, BN


GEMMS = {(kind, pair, b_kn, split, stages): make_gemm(kind, pair, b_kn, split, stages)
         for kind in KINDS for pair in (False, True) for b_kn in ((False, True) if kind == "bf16" else (False,))
         for split in ((False,) if pair else (False, True)) for stages in STAGES[kind]}


def stages_for(kind, k):
    """The ring stages ``matmul`` runs ``kind`` with for a K of ``k`` (see STAGES)."""
    choices = STAGES[kind]
    return choices[0] if -(-k // tile_k_n(kind)[0]) <= SHORT_K else choices[-1]

#: split-K: at most 4 splits, each at least 2 K steps.  Each split's partial is rounded to bf16 and
#: TMA reduce-adds it into C in bf16 (every add rounded): in a numpy model of exactly that
#: (128 x 512 x 8192, normal inputs) the max error is 4.4e-3 of max |C| at 2 splits, 6.4e-3 at 4,
#: 9.5e-3 at 8 and 1.07e-2 at 16, against 2.6e-3 unsplit; the example's check is 1e-2.
MAX_SPLIT_K = 4
MIN_SPLIT_STEPS = 2

ZERO_PLAN = SharedMemoryPlan().array("box", (64, 64), numba.uint16, swizzle="128B")
_zero_carve = ZERO_PLAN.carver()


@jit
def zero_c(desc_c, boxes_m, boxes_n):
    """C (the map's M x N bf16, boxes of 64 x 64) zeroed by TMA stores of a zeroed shared box,
    before a split-K GEMM adds into it (the map is all it needs)."""
    box = _zero_carve().box
    for i in range(cuda.threadIdx.x, 64 * 64, cuda.blockDim.x):
        box[i // 64, i % 64] = 0
    fence.proxy_async()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        for b in range(cuda.blockIdx.x, boxes_m * boxes_n, cuda.gridDim.x):
            tma.store(desc_c, box, (64 * (b % boxes_n), 64 * (b // boxes_n)))
        tma.commit_group()
        tma.wait_group(0)


def maps(a, b, c, kind="bf16", b_kn=False):
    """TMA maps of A (M x K) and B (N x K; ``b_kn``: K x N), bf16 bits (uint16) or e4m3 bytes
    (uint8), 128B-swizzled boxes of 128 rows and half a B tile by one K step (B given K x N: one K
    step of rows by 64 columns); and of C (M x N bf16 bits), boxes of 64 x 64."""
    bk, bn = tile_k_n(kind)
    options = {"data_type": "bfloat16"} if kind == "bf16" else {}
    return tuple(kernel_map(m) for m in (TensorMap.tiled(a, (BM, bk), swizzle="128B", **options),
                                         TensorMap.tiled(b, (bk, 64) if b_kn else (bn // 2, bk), swizzle="128B", **options),
                                         TensorMap.tiled(c, (64, 64), swizzle="128B", data_type="bfloat16")))


def split_k_for(m, n, k, blocks, kind="bf16"):
    """The split-K ``matmul`` picks by itself: 1 when the output tiles fill the ``blocks``, else the
    most splits that keep every (tile, split) unit in one wave (``blocks // tiles``), at most
    MAX_SPLIT_K and with at least MIN_SPLIT_STEPS K steps each."""
    bk, bn = tile_k_n(kind)
    tiles = -(-m // BM) * -(-n // bn)
    if tiles >= blocks:
        return 1
    return max(1, min(blocks // tiles, MAX_SPLIT_K, -(-k // bk) // MIN_SPLIT_STEPS))


def _checked_split(split_k, k, bk, pair):
    if isinstance(split_k, bool) or not isinstance(split_k, numbers.Integral):
        raise TypeError(f"matmul: split_k must be an int (the number of K splits) or None (chosen by "
                        f"split_k_for), not {split_k!r}")
    split_k, k_tiles = int(split_k), -(-k // bk)
    if split_k < 1:
        raise ValueError(f"matmul: split_k={split_k}: it must be at least 1 (1: no split)")
    if split_k > k_tiles:
        raise ValueError(f"matmul: split_k={split_k} is more splits than K steps: K={k} is {k_tiles} step(s) of "
                         f"{bk}, and every split takes at least one")
    if split_k > MAX_SPLIT_K:
        raise ValueError(f"matmul: split_k={split_k}: at most {MAX_SPLIT_K} (each split's partial is added "
                         f"into C in bf16; more splits lose precision, see MAX_SPLIT_K)")
    if pair and split_k > 1:
        raise ValueError(f"matmul: split_k={split_k} with pair=True: split-K runs without clusters (pair=False)")
    return split_k


def matmul(desc_a, desc_b, desc_c, m, n, k, blocks, kind="bf16", scale=1.0, pair=False, b_kn=False, split_k=1,
           stages=None):
    """C = scale * A @ B^T (``b_kn``: scale * A @ B, B given K x N) into the map ``desc_c``'s M x N
    bf16 array, ``blocks`` persistent blocks (``pair``: in clusters of 2 sharing B by multicast).
    ``split_k``: K split that many ways (1, the default, to MAX_SPLIT_K, at most the K steps; None:
    the ``split_k_for`` choice, 1 with ``pair``); above 1, C is zeroed (``zero_c``) and each (tile,
    split) adds its bf16 partial into it by TMA reduce-add, both kernels part of the call.
    ``stages``: the ring's depth, one of ``STAGES[kind]`` (None: ``stages_for``'s choice)."""
    bk = tile_k_n(kind)[0]
    if stages is None:
        stages = stages_for(kind, k)
    elif stages not in STAGES[kind]:
        raise ValueError(f"matmul: stages={stages!r}: the {kind} kernel is built with {' or '.join(map(str, STAGES[kind]))} "
                         f"stages (STAGES)")
    split_k = (1 if pair else split_k_for(m, n, k, blocks, kind)) if split_k is None else \
        _checked_split(split_k, k, bk, pair)
    gemm, plan, bk, bn = GEMMS[kind, pair, b_kn, split_k > 1, stages]
    tiles_m, tiles_n = -(-m // BM), -(-n // bn)
    if split_k > 1:
        boxes_m, boxes_n = -(-m // 64), -(-n // 64)
        launch(zero_c, min(blocks, boxes_m * boxes_n), 128, desc_c, boxes_m, boxes_n, shared_mem=ZERO_PLAN.nbytes)
    grid = min(blocks, tiles_m * tiles_n * split_k) if not pair else 2 * min(blocks // 2, -(-tiles_m // 2) * tiles_n)
    launch(gemm, grid, THREADS, desc_a, desc_b, desc_c, tiles_m, tiles_n, -(-k // bk), np.float32(scale), split_k,
           shared_mem=plan.nbytes, cluster=(2, 1, 1) if pair else (1, 1, 1))


def bf16_bits(x):
    """float32 -> bfloat16 bits, rounding to nearest even."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def triton_matmul():
    """The peer: a Triton TMA-descriptor persistent matmul (C = A @ B^T, B given N x K), ``run(a, b, c,
    fp8)`` on torch tensors; None without Triton."""
    try:
        import triton
        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:
        return None

    @triton.jit
    def kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
        num_m, num_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
        k_tiles, num_tiles = tl.cdiv(K, BLOCK_K), num_m * num_n
        per_group = GROUP_M * num_n
        for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=True):
            first = (tile // per_group) * GROUP_M
            rows = min(num_m - first, GROUP_M)
            pid_m = first + (tile % per_group) % rows
            pid_n = (tile % per_group) // rows
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for ki in range(k_tiles):
                a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
                b = b_desc.load([pid_n * BLOCK_N, ki * BLOCK_K])
                acc = tl.dot(a, b.T, acc)
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))

    def run(a, b, c, fp8):
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
        bm, bn, bk = (128, 256, 128) if fp8 else (128, 256, 64)
        descs = [TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bn, bk]),
                 TensorDescriptor.from_tensor(c, [bm, bn])]
        m, k = a.shape
        n = b.shape[0]
        grid = (min(sms, triton.cdiv(m, bm) * triton.cdiv(n, bn)),)
        kernel[grid](*descs, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_SMS=sms,
                     num_stages=3, num_warps=8)
    return run


def main(m=None, n=None, k=None):
    m, n, k = (m or (72 if SIMULATED else 4096)), (n or (264 if SIMULATED else 4096)), (k or (72 if SIMULATED else 4096))
    rng = np.random.default_rng(0)
    a_bits, b_bits = bf16_bits(rng.standard_normal((m, k))), bf16_bits(rng.standard_normal((n, k)))
    d_a, d_b = cuda.to_device(a_bits), cuda.to_device(b_bits)
    c = cuda.device_array((m, n), np.uint16)
    desc_a, desc_b, desc_c = maps(d_a, d_b, c)
    blocks = 2 if SIMULATED else cuda.get_current_device().MULTIPROCESSOR_COUNT
    results = []
    # the simulator runs the clusters-of-2 kernel only (tests/test_gpu_gemm.py checks both ways)
    pairs = (True,) if SIMULATED else (False, True)
    for pair in pairs:
        c.copy_to_device(np.zeros((m, n), np.uint16))
        matmul(desc_a, desc_b, desc_c, m, n, k, blocks, pair=pair)
        results.append(bf16_values(c.copy_to_host()))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or SIMULATED:
        want = bf16_values(a_bits).astype(np.float64) @ bf16_values(b_bits).astype(np.float64).T
    else:
        ta = torch.from_numpy(a_bits.view(np.int16)).cuda().view(torch.bfloat16)
        tb = torch.from_numpy(b_bits.view(np.int16)).cuda().view(torch.bfloat16)
        want = (ta.float() @ tb.float().T).cpu().numpy()
    error = max(float(np.abs(got - want).max() / np.abs(want).max()) for got in results)
    ok = error <= 1e-2
    print(f"gemm: {m}x{n}x{k} bf16 -> bf16, {blocks} persistent blocks ({'in' if SIMULATED else 'alone and in'} pairs "
          "sharing B by multicast): "
          f"max error {error:.2e} of max |C|: "
          f"{'PASS' if ok else 'FAIL'}")
    if not SIMULATED:
        flops = 2.0 * m * n * k
        ours = flops / gpu_seconds(lambda: matmul(desc_a, desc_b, desc_c, m, n, k, blocks)) / 1e12
        paired = flops / gpu_seconds(lambda: matmul(desc_a, desc_b, desc_c, m, n, k, blocks, pair=True)) / 1e12
        line = f"  numba-tma wgmma: {ours:.0f} TFLOP/s (clusters of 2, B multicast: {paired:.0f})"
        if torch is not None:
            out = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
            theirs = flops / gpu_seconds(lambda: torch.matmul(ta, tb.T, out=out)) / 1e12
            line += f"; cuBLAS (torch.matmul): {theirs:.0f} TFLOP/s; ratio {ours / theirs:.3f}"
            triton_run = triton_matmul()
            if triton_run is not None:
                triton_run(ta, tb, out, False)
                assert float((out.float() - torch.from_numpy(want).cuda()).abs().max()) <= 1e-2 * float(np.abs(want).max())
                tri = flops / gpu_seconds(lambda: triton_run(ta, tb, out, False)) / 1e12
                line += f"; Triton TMA persistent matmul: {tri:.0f} TFLOP/s; ratio {ours / tri:.3f}"
        print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*map(int, sys.argv[1:4])))
