"""The GEMM kernels of :mod:`numba_tma.gemm`: one persistent, warp-specialised wgmma kernel, built
per :class:`Kernel` (input type, B's major mode, tile width, ring depth, clusters, split-K,
grouped, output path, fused epilogue) and cached.

The kernel: one block of 384 threads per SM, output tiles of 128 x ``tile_n`` handed out in
grouped order (``GROUP_M`` tile rows at a time, for L2 reuse of B).  Warpgroup 0's elected thread
issues the TMA loads of A (128 rows) and B tiles, one 128-byte K step wide, into a
``numba_tma.pipeline.TmaPipeline`` ring; warpgroups 1 and 2 each multiply a 64 x ``tile_n`` half
of the output tile with ``wgmma.mma_async`` (four K steps of 32 bytes per ring stage,
descriptors from the maps' 128B-swizzled layout), keep one wgmma group in flight while releasing
the stage before, apply the fused epilogue to the fragment (``wgmma.map``) and write it out:

* ``"tma"``: as 16-bit values into swizzled shared boxes of 64 x 64 that TMA stores (left in
  flight while the next tile's MMAs run);
* ``"direct"``: from registers into the output array (``wgmma.store`` / ``store_bf16`` /
  ``store_f16``), elements outside it skipped: float32 output, an output TMA cannot address, and
  in grouped GEMMs the 64-row halves of tiles where a group ends (the rest go by TMA).

Split-K: each (tile, split) unit writes its float32 partial into a workspace and the tile's last
unit sums them in a fixed order before its epilogue and store (:mod:`.split_k`).

fp8 (e4m3, e5m2) is promoted: Hopper adds fp8 products into the accumulator with about 14
mantissa bits, so each ring stage (128 of K) goes into a fresh fragment that is then added into a
float32 total (``wgmma.add``); the two fragments take room that ``setmaxnreg`` (232 for the
consumers, 40 for the producer) makes.

Index arithmetic is 32-bit unsigned where it divides: a 64-bit division is a subroutine call,
and a call anywhere in the kernel makes ptxas serialise every wgmma.
"""

import dataclasses
import functools
import types as pytypes

import numba
from numba import cuda
from numba.cuda import types

from .. import SharedMemoryPlan, TensorMap, at, cluster, fence, pipeline, sync, tma, wgmma
from ..ops import BACKEND

BM = 128                              # output tile rows: two consumer warpgroups of 64
THREADS = 384                         # 3 warpgroups: the producer's, two consumers'
GROUP_M = 8                           # output tiles walk GROUP_M tile rows at a time (L2 reuse of B)
SHARED_BYTES = 232448                 # the opt-in dynamic shared memory of a Hopper block (227 KiB)
#: per input type: (bytes, shared element type, the wgmma dtype, TMA data type, promoted)
TYPES = {"bf16": (2, numba.uint16, "bf16", "bfloat16", False),
         "f16": (2, numba.uint16, "f16", "float16", False),
         "e4m3": (1, numba.uint8, "e4m3", None, True),
         "e5m2": (1, numba.uint8, "e5m2", None, True)}
#: the tile widths each input width offers (a consumer's fragment is 64 x tile_n)
TILE_N = {2: (256, 128), 1: (192, 128)}
OUT_TYPES = ("bf16", "f16", "f32")


@dataclasses.dataclass(frozen=True)
class Kernel:
    """What one compiled kernel is (the cache key of :func:`build`).

    ``dtype``: the inputs' type; ``b_major``: ``"k"`` (B held N x K, K contiguous: a
    column-major K x N ``b``) or ``"n"`` (B held K x N row-major; 16-bit types); ``tile_n``: the
    output tile's columns; ``stages``: the ring's depth; ``pair``: clusters of 2 blocks computing
    vertically adjacent tiles, each loading half of their shared B tile by multicast; ``split``:
    split-K work units (:mod:`.split_k`); ``grouped``: a grouped GEMM (tiles over the groups of rows
    given by device offsets); ``out``: ``"tma"`` or ``"direct"`` (grouped with ``"tma"``: TMA
    stores where a warpgroup's 64 rows lie inside their group, stores from registers at a
    group's end); ``out_dtype``: ``"bf16"``,
    ``"f16"`` or ``"f32"``; ``epilogue``: a device function ``(value, row, col, args) -> value``
    applied to every element (None: none)."""
    dtype: str
    b_major: str
    tile_n: int
    stages: int
    pair: bool = False
    split: bool = False
    grouped: bool = False
    out: str = "tma"
    out_dtype: str = "bf16"
    epilogue: object = None

    @property
    def bk(self):
        """The K step of a ring stage: one 128-byte swizzle row."""
        return 128 // TYPES[self.dtype][0]

    @property
    def stage_bytes(self):
        return (BM + self.tile_n) * 128

    @property
    def c_boxes(self):
        """64-column boxes of the output a consumer stores per tile."""
        return self.tile_n // 64

    def shared_bytes(self, staged):
        """Shared memory of the ring and of ``staged`` output boxes (64 x 64 16-bit) per consumer,
        with room for the ring's barriers and alignment."""
        return self.stages * self.stage_bytes + 2 * staged * 8192 + 2048

    @property
    def whole_c(self):
        """Whether the whole output tile is staged at once beside the ring (else two rounds)."""
        return self.shared_bytes(self.c_boxes) <= SHARED_BYTES

    @property
    def staged_boxes(self):
        """The output boxes a consumer stages: the whole tile's, or 2 (two rounds)."""
        return self.c_boxes if self.whole_c else 2

    def b_box(self):
        """B's TMA box: (K step rows, 64) held K x N, (tile_n / 2, K step) held N x K."""
        return (self.bk, 64) if self.b_major == "n" else (self.tile_n // 2, self.bk)

    def maps(self, a, b, c=None):
        """The TMA maps this kernel reads: of ``a`` (M x K) and ``b`` (as :meth:`b_box` says), in
        128B-swizzled boxes of one K step, and of the output ``c`` (64 x 64 16-bit boxes; None:
        the kernel stores none by TMA, and ``a``'s map stands in for it)."""
        data_type = {} if TYPES[self.dtype][3] is None else {"data_type": TYPES[self.dtype][3]}
        desc_a = TensorMap.tiled(a, (BM, self.bk), swizzle="128B", **data_type)
        desc_b = TensorMap.tiled(b, self.b_box(), swizzle="128B", **data_type)
        desc_c = desc_a if c is None else TensorMap.tiled(
            c, (64, 64), swizzle="128B", data_type="bfloat16" if self.out_dtype == "bf16" else "float16")
        return desc_a, desc_b, desc_c


def fits(dtype, tile_n, stages):
    """Whether a ring of ``stages`` and the output staging fit in a block's shared memory."""
    k = Kernel(dtype, "k", tile_n, stages)
    return k.shared_bytes(k.staged_boxes) <= SHARED_BYTES


@functools.lru_cache(maxsize=None)
def compiler(host="numba-cuda"):
    """``(cuda, types, jit)`` of the host that compiles the kernels: numba-cuda (the library's
    host), or numba-cuda-mlir (``build(..., host="mlir")``: the same kernel source, for the
    hosts' tests; its maps go in global memory, ``numba_tma.mlir.map_in_global``)."""
    if host == "numba-cuda":
        return cuda, types, cuda.jit
    if host != "mlir":
        raise ValueError(f"gemm kernels: host must be 'numba-cuda' or 'mlir'; got {host!r}")
    from numba_cuda_mlir import cuda as mlir_cuda
    from numba_cuda_mlir import types as mlir_types

    try:
        major, minor = mlir_cuda.get_current_device().compute_capability
    except Exception:        # noqa: BLE001 - no GPU: compiled for Hopper (numba_tma.inspect)
        major, minor = 9, 0
    return mlir_cuda, mlir_types, functools.partial(mlir_cuda.jit, chip=f"sm_{major}{minor}a")


@functools.lru_cache(maxsize=None)
def helpers(host="numba-cuda"):
    """The kernel's device functions on ``host``: ``tile_of``, ``work_unit``, ``group_units``,
    ``group_tile``."""
    cuda, types, jit = compiler(host)

    @jit(device=True, inline=True)
    def tile_of(t, tiles_m, tiles_n):
        """Output tile ``t`` as (tile row, tile column), GROUP_M tile rows at a time, in 32-bit
        unsigned arithmetic."""
        u32 = types.uint32
        per_group = u32(GROUP_M * tiles_n)
        group = u32(t) // per_group
        first = u32(group * GROUP_M)
        rows = u32(min(u32(tiles_m) - first, GROUP_M))
        within = u32(u32(t) - group * per_group)
        return types.int64(first + within % rows), types.int64(within // rows)

    @jit(device=True, inline=True)
    def work_unit(u, n_tiles, k_tiles, splits):
        """Split-K work unit ``u`` as (output tile, first K step, K steps, split): units ``[s * n_tiles,
        (s + 1) * n_tiles)`` take split ``s`` of every tile, K steps ``[s * k_tiles // splits,
        (s + 1) * k_tiles // splits)`` (the splits differ by at most one step)."""
        s = types.int64(types.uint32(u) // types.uint32(n_tiles))
        lo = types.int64(types.uint32(s * k_tiles) // types.uint32(splits))
        hi = types.int64(types.uint32((s + 1) * k_tiles) // types.uint32(splits))
        return u - s * n_tiles, lo, hi - lo, s

    @jit(device=True, inline=True)
    def group_units(offsets, n_groups, tiles_n):
        """The output tiles of all groups: group ``g`` holds rows ``[offsets[g - 1], offsets[g])``."""
        total = types.int64(0)
        start = types.int64(0)
        for g in range(n_groups):
            end = max(types.int64(offsets[g]), start)    # (offsets that fall back: an empty group)
            total += ((end - start + BM - 1) >> 7) * tiles_n
            start = end
        return total

    @jit(device=True, inline=True)
    def group_tile(u, offsets, n_groups, tiles_n):
        """Tile ``u`` of a grouped GEMM as (group, its first row, its end row, the tile's row, the
        tile's column): tiles numbered group after group, GROUP_M tile rows at a time in each."""
        start = types.int64(0)
        base = types.int64(0)
        for g in range(n_groups):
            end = max(types.int64(offsets[g]), start)
            tiles_m = (end - start + BM - 1) >> 7
            if u < base + tiles_m * tiles_n:
                mt, nt = tile_of(u - base, tiles_m, tiles_n)
                return types.int64(g), start, end, mt, nt
            base += tiles_m * tiles_n
            start = end
        return types.int64(n_groups), start, start, types.int64(0), types.int64(0)

    return tile_of, work_unit, group_units, group_tile


def plan_of(k: Kernel):
    """The shared-memory plan of kernel ``k``: A and B ring tiles, output staging boxes, the ring."""
    element = TYPES[k.dtype][1]
    b_boxes = k.c_boxes if k.b_major == "n" else 2
    staged = k.staged_boxes if k.out == "tma" else 0
    ring = pipeline.TmaPipeline(k.stages, consumers=pipeline.warpgroups(2), cluster=k.pair, reads="wgmma")
    plan = (SharedMemoryPlan()
            .array("a", (k.stages, BM, k.bk), element, swizzle="128B")
            .array("b", (b_boxes * k.stages,) + k.b_box(), element, swizzle="128B"))
    if staged:
        plan = plan.array("c", (2 * staged, 64, 64), numba.uint16, swizzle="128B")
    if k.split:                         # per consumer: whether its unit counted last (split_k)
        plan = plan.array("last", (2,), numba.int32)
    return plan.pipeline("ring", ring), ring, b_boxes, staged


@functools.lru_cache(maxsize=None)
def build(k: Kernel, host="numba-cuda"):
    """(the kernel, its shared-memory plan) of ``k``, compiled lazily by numba-cuda on first launch.

    Its arguments: ``(desc_a, desc_b, desc_c, out, work, counters, tiles_m, tiles_n, k_tiles,
    scale, splits, offsets, n_groups, b_rows, epilogue_args)`` — the maps of A (M x K), B and C;
    ``out`` the output array of the direct path; ``work`` the (splits, M, N) float32 workspace and
    ``counters`` the zeroed int32 counters (2 a tile) of split-K; the tile counts; ``scale`` a
    float32 applied to the accumulator before the epilogue; ``splits`` K's splits (split-K); ``offsets`` / ``n_groups``
    the groups' end rows (grouped); ``b_rows`` B's rows per group in its map (grouped: N held
    N x K, K held K x N); ``epilogue_args`` the tuple the epilogue takes."""
    if k.out not in ("tma", "direct") or (k.split and k.grouped):
        raise ValueError(f"gemm kernels: out is 'tma' or 'direct', and split-K takes no groups; got {k}")
    host_cuda, types, jit = compiler(host)
    tile_of, work_unit, group_units, group_tile = helpers(host)
    if host != "numba-cuda" and (k.epilogue is not None or k.split):
        raise ValueError("gemm kernels: a fused epilogue (wgmma.map) and split-K are compiled by numba-cuda only")
    _, _, mma_dtype, _, promote = TYPES[k.dtype]
    plan, ring_config, b_boxes, staged = plan_of(k)
    bk, BN, pair, split, grouped, b_kn = k.bk, k.tile_n, k.pair, k.split, k.grouped, k.b_major == "n"
    stage_bytes, regs, n_boxes = k.stage_bytes, k.tile_n // 2, k.c_boxes
    mine = b_boxes // 2 if pair else b_boxes             # the boxes of B each block loads
    # the epilogue's rounds: all boxes at once, or 2 boxes then the rest (the second round's call
    # is compiled either way: with one round it names the fragment's boxes, and never runs)
    rounds, first_boxes, last_first, last_boxes = (1, n_boxes, 0, n_boxes) if k.whole_c else (2, 2, 2, n_boxes - 2)
    tma_out, out_dtype, epilogue = k.out == "tma", k.out_dtype, k.epilogue
    has_epilogue = epilogue is not None
    f16_out = out_dtype == "f16"
    carve = plan.carver()
    per_tile_row = 2 if pair else 1

    @jit(device=True, inline=True)
    def unit(u, offsets, n_groups, tiles_n, n_tiles, rows_of_tiles, k_tiles, splits, rank, b_rows):
        """Work unit ``u`` as (its first row of A and of the output, its tile column, first K step,
        K steps, the end row of its group (grouped), its B rows' start in B's map (grouped), its
        split (split-K))."""
        if grouped:
            g, row0, end, mt, n = group_tile(u, offsets, n_groups, tiles_n)
            return row0 + mt * BM, n, types.int64(0), k_tiles, end, g * b_rows, types.int64(0)
        if split:
            t, k_first, k_steps, s = work_unit(u, n_tiles, k_tiles, splits)
        else:
            t, k_first, k_steps, s = u, types.int64(0), k_tiles, types.int64(0)
        mp, n = tile_of(t, rows_of_tiles, tiles_n)
        return (mp * per_tile_row + rank) * BM, n, k_first, k_steps, types.int64(0), types.int64(0), s

    def gemm(desc_a, desc_b, desc_c, out, work, counters, tiles_m, tiles_n, k_tiles, scale, splits, offsets,
             n_groups, b_rows, epilogue_args):
        smem = carve()
        ring = ring_config.create(smem.ring)
        warpgroup = cuda.threadIdx.x // 128
        rank = cluster.ctarank() if pair else 0
        rows_of_tiles = (tiles_m + per_tile_row - 1) // per_tile_row      # tile rows (pairs of them)
        first, step = cuda.blockIdx.x // per_tile_row, cuda.gridDim.x // per_tile_row
        n_tiles = rows_of_tiles * tiles_n
        if grouped:
            n_units = group_units(offsets, n_groups, tiles_n)
        else:
            n_units = n_tiles * splits if split else n_tiles
        if warpgroup == 0:                                                 # the producer
            if promote:
                wgmma.setmaxnreg(40, "dec")
            if cuda.threadIdx.x == 0:
                p = ring.producer_state()
                u = first
                while u < n_units:              # (a while: range's trip count divides in 64 bits)
                    a_row, n, k_first, k_steps, _, b_base, _ = unit(u, offsets, n_groups, tiles_n, n_tiles,
                                                                    rows_of_tiles, k_tiles, splits, rank, b_rows)
                    for j in range(k_steps):
                        kk = k_first + j
                        ring.acquire(p, stage_bytes)
                        tma.load(desc_a, at(smem.a, p.index), (kk * bk, a_row), ring.full(p))
                        if b_kn:                # boxes of (bk K rows, 64 N); a pair: half each
                            for box in range(rank * mine, (rank + 1) * mine):
                                if pair:
                                    tma.load(desc_b, at(smem.b, b_boxes * p.index + box),
                                             (n * BN + 64 * box, b_base + kk * bk), ring.full(p),
                                             multicast=cluster.mask_all(2))
                                else:
                                    tma.load(desc_b, at(smem.b, b_boxes * p.index + box),
                                             (n * BN + 64 * box, b_base + kk * bk), ring.full(p))
                        elif pair:              # this block's half of B, into both blocks
                            tma.load(desc_b, at(smem.b, 2 * p.index + rank), (kk * bk, n * BN + rank * (BN // 2)),
                                     ring.full(p), multicast=cluster.mask_all(2))
                        else:
                            tma.load(desc_b, at(smem.b, 2 * p.index), (kk * bk, b_base + n * BN), ring.full(p))
                            tma.load(desc_b, at(smem.b, 2 * p.index + 1), (kk * bk, b_base + n * BN + BN // 2),
                                     ring.full(p))
                        p = p.advance()
                    u += step
                if pair:
                    ring.tail(p)                # the other block released every stage
        else:                                   # the consumers: rows 64 * half of the tile
            if promote:
                wgmma.setmaxnreg(232, "inc")
            half = warpgroup - 1
            leader = cuda.threadIdx.x % 128 == 0
            c_state = ring.consumer_state()
            u = first
            while u < n_units:
                out_row, n, k_first, k_steps, end, _, s = unit(u, offsets, n_groups, tiles_n, n_tiles, rows_of_tiles,
                                                               k_tiles, splits, rank, b_rows)
                acc = wgmma.zeros(regs)
                partial = wgmma.zeros(regs)     # fp8: the K steps since the last promotion
                previous = c_state
                row = out_row + 64 * half
                # grouped: a warpgroup whose 64 rows all lie past its group's end (the last tile of
                # a group of 64 rows or fewer past a multiple of 128) multiplies nothing, so the
                # other warpgroup's MMAs have the tensor cores to themselves; it still waits for
                # and releases each stage, and stores nothing
                idle = grouped and row >= end
                for kk in range(k_steps):       # the unit's own K steps (scale_d 0 first)
                    ring.wait(c_state)
                    a_tile, b_tile = at(smem.a, c_state.index), at(smem.b, b_boxes * c_state.index)
                    if idle:
                        ring.release(c_state)
                    elif promote:               # a fresh partial (scale_d 0 on its first MMA)
                        partial = wgmma.fence(partial)
                        for q in range(4):
                            partial = wgmma.mma_async(partial, wgmma.descriptor(a_tile, desc_a, q, 64 * half),
                                                      wgmma.descriptor(b_tile, desc_b, q, 0), q, dtype=mma_dtype)
                        wgmma.commit_group()
                        partial = wgmma.wait_group(0, partial)
                        ring.release(c_state)
                        acc = wgmma.add(acc, partial)
                    else:
                        acc = wgmma.fence(acc)
                        for q in range(4):
                            if b_kn:
                                acc = wgmma.mma_async(acc, wgmma.descriptor(a_tile, desc_a, q, 64 * half),
                                                      wgmma.descriptor_mn(b_tile, desc_b, q, 0), kk + q,
                                                      dtype=mma_dtype, trans_b=True)
                            else:
                                acc = wgmma.mma_async(acc, wgmma.descriptor(a_tile, desc_a, q, 64 * half),
                                                      wgmma.descriptor(b_tile, desc_b, q, 0), kk + q,
                                                      dtype=mma_dtype)
                        wgmma.commit_group()
                        acc = wgmma.wait_group(1, acc)      # the MMAs of the K step before are done:
                        if kk > 0:
                            ring.release(previous)          # their stage can be refilled
                    previous = c_state
                    c_state = c_state.advance()
                if not promote:
                    acc = wgmma.wait_group(0, acc)
                    if k_steps > 0 and not idle:    # (a split of no K steps: zeros, nothing waited)
                        ring.release(previous)
                if idle:
                    u += step
                    continue
                if split:
                    # this split's partial into its plane, then counted in the tile half's counter
                    # (fenced: the unit counting last reads every plane); the last sums them all
                    wgmma.store(acc, work[s], row, n * BN)
                    cuda.threadfence()
                    sync.named_barrier_sync(1 + half, 128)
                    counter = 2 * (types.int64(types.uint32(row) // types.uint32(BM)) * tiles_n + n) + half
                    if leader:
                        last = cuda.atomic.add(counters, counter, 1) == splits - 1
                        if last:
                            counters[counter] = 0       # zero again for the next launch
                        smem.last[half] = 1 if last else 0
                    sync.named_barrier_sync(1 + half, 128)
                    if smem.last[half] == 0:
                        u += step
                        continue
                    cuda.threadfence()
                    total = wgmma.zeros(regs)   # the splits in a fixed order, this one's from registers
                    for t in range(splits):
                        part = acc if t == s else wgmma.load(work[t], row, n * BN, regs)
                        total = wgmma.add(total, part)
                    acc = total
                if scale != 1:
                    acc = wgmma.scale(acc, scale)
                if has_epilogue:
                    acc = wgmma.map(acc, epilogue, row, n * BN, epilogue_args)
                # (grouped with TMA stores: a warpgroup's 64 rows past its group's end, which TMA
                # would write into the next group, go from registers, bounded by the end)
                if not tma_out or (grouped and row + 64 > end):
                    target = out[:end] if grouped else out
                    if out_dtype == "f32":
                        wgmma.store(acc, target, row, n * BN)
                    elif f16_out:
                        wgmma.store_f16(acc, target, row, n * BN)
                    else:
                        wgmma.store_bf16(acc, target, row, n * BN)
                else:
                    # the fragment as 16-bit values into this warpgroup's staging boxes (once the
                    # TMA stores before have read them), then TMA stores left in flight; all boxes at once when they fit beside the ring, else in two
                    # rounds (128 columns, then the rest) through two boxes
                    for rnd in range(rounds):
                        if leader:
                            tma.wait_group_read(0)
                        sync.named_barrier_sync(1 + half, 128)
                        if f16_out:
                            if rnd == 0:
                                wgmma.store_shared_f16(acc, at(smem.c, staged * half), desc_c, 0, first_boxes)
                            else:
                                wgmma.store_shared_f16(acc, at(smem.c, staged * half), desc_c, last_first, last_boxes)
                        elif rnd == 0:
                            wgmma.store_shared_bf16(acc, at(smem.c, staged * half), desc_c, 0, first_boxes)
                        else:
                            wgmma.store_shared_bf16(acc, at(smem.c, staged * half), desc_c, last_first, last_boxes)
                        fence.proxy_async()
                        sync.named_barrier_sync(1 + half, 128)
                        if leader:
                            for box in range(first_boxes if rnd == 0 else last_boxes):
                                tma.store(desc_c, at(smem.c, staged * half + box), (n * BN + 128 * rnd + 64 * box, row))
                            tma.commit_group()
                u += step
            if leader and tma_out:
                tma.wait_group(0)

    if host != "numba-cuda":     # the same code reading the host's cuda and types (globals: the simulator swaps them)
        gemm = pytypes.FunctionType(gemm.__code__, dict(gemm.__globals__, cuda=host_cuda),
                                    gemm.__name__, gemm.__defaults__, gemm.__closure__)
    options = {"launch_bounds": (THREADS, 1)}           # one block per SM: up to 168 registers a thread
    return jit(**(options if host != "numba-cuda" else BACKEND.compile_options(options)))(gemm), plan
