"""The attention forward kernel of :mod:`numba_tma.attention` (FlashAttention's structure on Hopper
tensor cores), built per (head dimension, causal, input type) and cached.

Blocks of 384 threads take query tiles, 128 rows of one (batch, head) each: block ``b`` of a
grid of ``G`` the tiles ``b``, ``b + G``, ... (a grid of one block a tile by default; a smaller
one is a persistent launch, the rings running on from tile to tile).  Warpgroup 0 gives its
registers to the consumers (``setmaxnreg``) and its elected thread loads, per tile, the Q tile
into a 1-stage ring (once the consumers are done with the last one), then each key block's K
tile and V tile (176 keys at d 128 without a causal mask, 64 at d 256, else 128:
:func:`keys_per_block`) into two 2-stage :class:`numba_tma.pipeline.TmaPipeline` rings (K's and
V's: a K tile is given back as soon as its S is computed, a V tile once its P V is); warpgroups
1 and 2 each own 64 query rows of a tile and, per key block:

1. S = Q K^T with ``wgmma.mma_async`` (K-major Q and K tiles: ``wgmma.descriptor``);
2. the keys past the sequence's end (its last block) and, causal, past each query's own row
   (bottom-right aligned where the lengths differ, as flash-attn's: query r sees keys up to
   r + seqlen_k - seqlen_q; the blocks past the diagonal are not loaded at all) masked to -inf
   (``wgmma.mask``); the online softmax on the fragment in the log2 domain: ``wgmma.row_max``,
   the running max, ``wgmma.exp2_rows``, ``wgmma.row_sum`` into the running sum, the output
   rescaled (``wgmma.scale_rows``);
3. O += P V with P from registers (FlashAttention-3's way): ``wgmma.a_fragment`` turns each 16
   keys of S into A registers of ``wgmma.mma_async_rs`` — all eight K steps before the fence
   (registers written between the fence and the MMAs make ptxas serialise every wgmma) — with V's
   tile read MN-major (``wgmma.descriptor_mn``, ``trans_b=True``: V is given keys x D).

The three overlap as FlashAttention-3's intra-warpgroup pipeline has them: block i's S is issued,
then block i - 1's P V, and the wait is for S alone (``wait_group(1)``), so block i's softmax runs
while the tensor cores do the P V; then the wait for the P V, O rescaled, block i's P converted.
Block 0's S comes before the loop and the last P V after it.  And the two consumer warpgroups
take turns issuing their MMAs (FlashAttention-3's ping-pong: each waits at its own named barrier,
1 or 2, and arrives at the other's; the first consumer's barrier starts with its own arrival), so
one's softmax runs while the other's MMAs have the tensor cores.

At the end O / l goes to the head's own rows and columns (a last block's rows past the sequence are
not stored), and each row's log-sum-exp, ``(m + log2 l) ln 2``, where asked for.  The arrays are
2-D: (batch * heads * seq, D), or with ``bshd`` (batch * seq, heads * D), flash-attn's (batch,
seq, heads, D) order, a head's columns ``h D`` on; varlen, (total, heads * D) with sequence b's
rows from ``cu_q[b]`` to ``cu_q[b + 1]`` (``cu_k`` K's and V's), the grid sized by the longest
(a tile past a shorter sequence's end skipped).  The index arithmetic that divides is 32-bit
(a 64-bit division is a subroutine call, and ptxas serialises every wgmma of a kernel that calls
one), and the kernel is ``fastmath`` (the reciprocal of the row sums an approximate one).
"""

import functools
import math

import numba
from numba import cuda

from .. import SharedMemoryPlan, at, pipeline, sync, tma, wgmma
from ..ops import BACKEND

BM = 128                              # query rows per block (two warpgroups of 64)
STAGES = 2                            # K and V of one key block per stage
THREADS = 384
HEAD_DIMS = (64, 128, 256)
TYPES = ("bf16", "f16")
LN2 = math.log(2.0)
#: the running max before any key: finite (the kernel is fastmath, which may fold a compare with an
#: infinity away), below every score; a row whose keys are all masked keeps it, its exponents
#: exp2(-inf + 3e38) = 0, its sum 0
NO_MAX = -3.0e38


def keys_per_block(d, causal):
    """The keys a block's S covers (its K and V tiles' rows): FlashAttention-3's choice for H100
    (``tile_size_fwd_sm90``: 176 at d 128 without a causal mask, where the registers allow a wider
    S — O 64, S 88 and P 44 registers a thread — and fewer, longer MMAs; 128 causal, where a
    square tile keeps the diagonal in one block, and at d 64; 64 at d 256, where O takes 128
    registers a thread: with FlashAttention-3's 80 ptxas spills registers in the key loop within
    the consumers' 240 (4 stores and 8 loads a block), with 64 a store and 3 loads — 64 until a
    GPU run says whether 80's wider S pays for them; two stages of K and V beside Q take 193 KB of
    shared memory)."""
    if d == 256:
        return 64
    return 176 if d == 128 and not causal else 128


def registers(d, bn):
    """(the producer's, each consumer's) registers a thread after ``setmaxnreg`` (see :func:`build`)."""
    return (24, 240) if bn > 128 or d > 128 else (40, 232)


def _written_out(name, params, step, steps, end, namespace, start=()):
    """``def name(params)``: the lines ``start``, then ``step`` once per K step ``kk`` (a constant
    in each: a loop would index a tuple at run time, through local memory, and ``a_fragment`` takes
    only a constant step), then the lines ``end``; its globals ``namespace``."""
    lines = [*start, *(step.format(kk=kk) for kk in range(steps)), *end]
    exec(f"def {name}({params}):\n" + "".join(f"    {line}\n" for line in lines), namespace)
    return namespace[name]


@functools.lru_cache(maxsize=None)
def build(d, causal, dtype, bn):
    """(the kernel, its shared-memory plan) for head dimension ``d`` (64, 128 or 256), ``causal`` or
    not, ``dtype`` "bf16" or "f16" inputs and output, ``bn`` keys a block (the call's
    :func:`keys_per_block`: one cache entry a kernel).  Its arguments: ``(desc_q, desc_k, desc_v, out, lse, cu_q, cu_k,
    seq_q, seq_k, heads, group, bshd, tiles, scale_log2)`` — the maps of the 2-D Q, K, V (boxes of 128
    rows, ``bn`` for K and V, x 64, 128B-swizzled), the 2-D output, the float32 log-sum-exp array
    (batch x heads x seq_q, varlen heads x total; empty: none), the int32 cumulative sequence ends
    of a varlen batch (batch + 1 each; empty: not varlen), the sequence lengths (varlen: the
    longest query sequence; seq_k unread), the query heads, the query heads a K/V head serves,
    the layout flag, the query tiles (batch x heads x query blocks of the longest sequence: block
    ``b`` of a grid of ``G`` takes tiles ``b``, ``b + G``, ...) and the softmax scale times log2(e)."""
    boxes = d // 64                   # 128B swizzle: a box row is 64 16-bit elements, D takes `boxes`
    tile_bytes = boxes * bn * 128     # one K or V tile
    steps = bn // 16                  # P V's K steps
    o_regs, s_regs = d // 2, bn // 2                          # constants of the kernel (wgmma.zeros needs them)
    # the block holds 384 x 168 registers at launch (launch_bounds (384, 1)); setmaxnreg moves them
    # between the warpgroups and an inc waits until a dec has freed enough, so the three must sum to
    # it exactly or less — 128 (40 + 2 x 232) = 128 (24 + 2 x 240) = 384 x 168 (more: the consumers'
    # inc waits forever).  240 where S is 176 keys wide or O 256 columns (no local memory in the
    # loop), else 232 (none at all).
    producer_regs, consumer_regs = registers(d, bn)
    f16 = dtype == "f16"
    kv_config = pipeline.TmaPipeline(STAGES, consumers=pipeline.warpgroups(2), reads="wgmma")
    q_config = pipeline.TmaPipeline(1, consumers=pipeline.warpgroups(2), reads="wgmma")
    plan = (SharedMemoryPlan()
            .array("q", (boxes, BM, 64), numba.uint16, swizzle="128B")
            .array("k", (STAGES * boxes, bn, 64), numba.uint16, swizzle="128B")
            .array("v", (STAGES * boxes, bn, 64), numba.uint16, swizzle="128B")
            .pipeline("k_ring", kv_config).pipeline("v_ring", kv_config).pipeline("q_ring", q_config))
    carve = plan.carver()

    @BACKEND.device_function
    def scores(q, k, tile, desc_q, desc_k, half):
        """S = Q K^T of this warpgroup's 64 rows and the ``bn`` keys of the K tile at ``k[tile]``, issued and
        committed (one group): ``boxes`` x 4 K steps, unrolled loops of constants, so ptxas keeps
        the MMAs in flight together."""
        s = wgmma.zeros(s_regs)
        s = wgmma.fence(s)
        for box in range(boxes):
            for kk in range(4):
                s = wgmma.mma_async(s, wgmma.descriptor(at(q, box), desc_q, kk, 64 * half),
                                    wgmma.descriptor(at(k, tile + box), desc_k, kk, 0), box + kk, dtype=dtype)
        wgmma.commit_group()
        return s

    @BACKEND.device_function
    def probabilities(s, i, m0, m1, first, half, len_k, diagonal, scale_log2):
        """Key block ``i``'s S of this warpgroup's rows masked where it must be — the keys past
        the sequence's end, causal past each row's diagonal — then the online softmax's step in
        the log2 domain: ``(P, n0, n1, t0, t1)``, P = exp2(S scale - n) with n the running max
        taken over this block too, t its row sums."""
        if (i + 1) * bn > len_k or (causal and (i + 1) * bn - 1 - first > diagonal):
            s = wgmma.mask(s, first + 64 * half, i * bn, len_k, diagonal if causal else len_k, -math.inf)
        x0, x1 = wgmma.row_max(s)
        n0, n1 = max(m0, x0 * scale_log2), max(m1, x1 * scale_log2)
        s = wgmma.exp2_rows(s, scale_log2, n0, n1)
        t0, t1 = wgmma.row_sum(s)
        return s, n0, n1, t0, t1

    # P's K steps of 16 keys as A registers, then O += P V with them (V's tile ``v`` read MN-major:
    # trans_b), issued and committed as one group; all converted before the fence (registers written
    # between the fence and the MMAs make ptxas serialise every wgmma)
    namespace = {"wgmma": wgmma, "dtype": dtype}
    fragments = BACKEND.device_function(_written_out(
        "fragments", "p", "a{kk} = wgmma.a_fragment(p, {kk}, dtype)", steps,
        ["return (" + ", ".join(f"a{kk}" for kk in range(steps)) + ",)"], namespace))
    accumulate = BACKEND.device_function(_written_out(
        "accumulate", "o, ps, v, desc_v",
        "o = wgmma.mma_async_rs(o, ps[{kk}], wgmma.descriptor_mn(v, desc_v, {kk}, 0), 1, dtype=dtype, trans_b=True)",
        steps, ["wgmma.commit_group()", "return o"], namespace, start=["o = wgmma.fence(o)"]))

    @BACKEND.device_function
    def tile_of(t, cu_q, cu_k, seq_q, seq_k, heads, group, bshd, out_rows):
        """Query tile ``t``'s facts: ``(skip, first, row0, kv_row0, len_q, len_k, col0, kv_col0,
        lse0, n_kv, diagonal)`` — the tiles of a head one after another (causal, the longest, with
        the most keys, first), its sequence's rows and columns in the 2-D arrays, its key blocks;
        ``skip``: a varlen tile past a shorter sequence's end."""
        blocks_per_head = numba.uint32((seq_q + BM - 1) // BM)
        head = numba.uint32(t) // blocks_per_head                        # batch x heads + head
        q_block = numba.uint32(t) - head * blocks_per_head
        if causal:                                     # the longest blocks (the most keys) start first
            q_block = blocks_per_head - 1 - q_block
        batch = head // numba.uint32(heads)
        h = numba.uint32(head - batch * numba.uint32(heads))
        kv_h = h // numba.uint32(group)                                  # (a K/V head a group of query heads)
        if cu_q.shape[0] > 0:   # varlen: sequence `batch` the rows cu[batch] to cu[batch + 1] of (total, heads d)
            row0, kv_row0 = numba.int64(cu_q[batch]), numba.int64(cu_k[batch])
            len_q, len_k = numba.int64(cu_q[batch + 1]) - row0, numba.int64(cu_k[batch + 1]) - kv_row0
            col0, kv_col0 = numba.int64(h * d), numba.int64(kv_h * d)
            lse0 = numba.int64(h) * out_rows + row0                       # lse (heads, total)
        elif bshd:  # (batch, seq, heads, d): a sequence's rows b * seq on, a head's columns h * d on
            row0, kv_row0, len_q, len_k = numba.int64(batch * seq_q), numba.int64(batch * seq_k), seq_q, seq_k
            col0, kv_col0 = numba.int64(h * d), numba.int64(kv_h * d)
            lse0 = numba.int64(head * seq_q)                              # lse (batch, heads, seq)
        else:       # (batch, heads, seq, d): a head's rows one after another
            row0, len_q, len_k = numba.int64(head * seq_q), seq_q, seq_k
            kv_row0 = numba.int64((head // numba.uint32(group)) * seq_k)
            col0, kv_col0 = numba.int64(0), numba.int64(0)
            lse0 = numba.int64(head * seq_q)
        first = numba.int64(q_block) * BM                      # this tile's first query row, its sequence's
        n_kv = (len_k + bn - 1) // bn                          # key blocks: causal, up to the last one a row sees
        diagonal = len_k - len_q                               # causal: query r sees keys up to r + diagonal
        if causal:
            last = first + BM - 1 + diagonal                   # (bottom-right aligned, as flash-attn's)
            n_kv = min(n_kv, last // bn + 1) if last >= 0 else 0
        return first >= len_q, first, row0, kv_row0, len_q, len_k, col0, kv_col0, lse0, n_kv, diagonal

    def attention(desc_q, desc_k, desc_v, out, lse, cu_q, cu_k, seq_q, seq_k, heads, group, bshd, tiles,
                  scale_log2):
        warpgroup = cuda.threadIdx.x // 128
        smem = carve()
        k_ring, v_ring = kv_config.create(smem.k_ring), kv_config.create(smem.v_ring)
        q_ring = q_config.create(smem.q_ring)
        out_rows = numba.int64(out.shape[0])
        # this block's tiles: its index, then a grid's step on (a while loop: a range's trip count is a
        # 64-bit division, a subroutine call)
        first_tile, step, n_tiles = numba.uint32(cuda.blockIdx.x), numba.uint32(cuda.gridDim.x), numba.uint32(tiles)
        if warpgroup == 0:                                     # the producer
            wgmma.setmaxnreg(producer_regs, "dec")             # its registers to the consumers
            if cuda.threadIdx.x == 0:
                pq, pk, pv = q_ring.producer_state(), k_ring.producer_state(), v_ring.producer_state()
                t = first_tile
                while t < n_tiles:
                    skip, first, row0, kv_row0, _, _, col0, kv_col0, _, n_kv, _ = tile_of(
                        t, cu_q, cu_k, seq_q, seq_k, heads, group, bshd, out_rows)
                    t += step
                    if skip:
                        continue
                    q_ring.acquire(pq, boxes * BM * 128)       # (once the consumers are done with the last Q)
                    for j in range(boxes):
                        tma.load(desc_q, at(smem.q, j), (col0 + 64 * j, row0 + first), q_ring.full(pq))
                    pq = pq.advance()
                    for i in range(n_kv):                      # K and V of each block, in the consumers' order
                        k_ring.acquire(pk, tile_bytes)
                        for j in range(boxes):
                            tma.load(desc_k, at(smem.k, boxes * pk.index + j), (kv_col0 + 64 * j, kv_row0 + i * bn),
                                     k_ring.full(pk))
                        v_ring.acquire(pv, tile_bytes)
                        for j in range(boxes):
                            tma.load(desc_v, at(smem.v, boxes * pv.index + j), (kv_col0 + 64 * j, kv_row0 + i * bn),
                                     v_ring.full(pv))
                        pk, pv = pk.advance(), pv.advance()
        else:                                                  # the consumers: 64 query rows each
            wgmma.setmaxnreg(consumer_regs, "inc")             # S, O and P's registers without spilling
            half = warpgroup - 1
            cq, ck, cv = q_ring.consumer_state(), k_ring.consumer_state(), v_ring.consumer_state()
            q = smem.q
            if half == 0:                                      # the turns at the tensor cores: the first
                sync.named_barrier_arrive(1, 256)              # consumer's first (ping-pong)
            t = first_tile
            while t < n_tiles:
                skip, first, row0, _, len_q, len_k, col0, _, lse0, n_kv, diagonal = tile_of(
                    t, cu_q, cu_k, seq_q, seq_k, heads, group, bshd, out_rows)
                t += step
                if skip:
                    continue
                q_ring.wait(cq)
                o = wgmma.zeros(o_regs)
                m0 = m1 = numba.float32(NO_MAX)              # the running max (log2 domain) and sum
                l0 = l1 = numba.float32(0)
                if n_kv > 0:
                    k_ring.wait(ck)                            # block 0: S, its softmax, P
                    sync.named_barrier_sync(1 + half, 256)     # this warpgroup's turn ...
                    s = scores(q, smem.k, boxes * ck.index, desc_q, desc_k, half)
                    sync.named_barrier_arrive(2 - half, 256)   # ... then the other's
                    s = wgmma.wait_group(0, s)
                    k_ring.release(ck)
                    ck = ck.advance()
                    s, m0, m1, l0, l1 = probabilities(s, 0, m0, m1, first, half, len_k, diagonal, scale_log2)
                    ps = fragments(s)
                    for i in range(1, n_kv):                   # block i's S on the tensor cores with
                        k_ring.wait(ck)                        # block i - 1's P V, then i's softmax
                        v_ring.wait(cv)                        # under that P V
                        sync.named_barrier_sync(1 + half, 256)
                        s = scores(q, smem.k, boxes * ck.index, desc_q, desc_k, half)
                        o = accumulate(o, ps, at(smem.v, boxes * cv.index), desc_v)
                        sync.named_barrier_arrive(2 - half, 256)
                        s = wgmma.wait_group(1, s)             # S done; P V may still run
                        k_ring.release(ck)
                        ck = ck.advance()
                        s, n0, n1, t0, t1 = probabilities(s, i, m0, m1, first, half, len_k, diagonal, scale_log2)
                        r0, r1 = math.exp2(m0 - n0), math.exp2(m1 - n1)
                        l0, l1 = l0 * r0 + t0, l1 * r1 + t1
                        m0, m1 = n0, n1
                        o = wgmma.wait_group(0, o)             # P V done: V's stage free, O rescaled
                        v_ring.release(cv)
                        cv = cv.advance()
                        o = wgmma.scale_rows(o, r0, r1)
                        ps = fragments(s)
                q_ring.release(cq)                             # every S of the tile done: Q's stage free
                cq = cq.advance()                              # (the next tile's Q loads under this P V)
                if n_kv > 0:
                    v_ring.wait(cv)                            # the last block's P V
                    o = wgmma.wait_group(0, accumulate(o, ps, at(smem.v, boxes * cv.index), desc_v))
                    v_ring.release(cv)
                    cv = cv.advance()
                # a row that saw no key (causal, more queries than keys): l = 0, its output 0 and its lse -inf
                o = wgmma.scale_rows(o, numba.float32(1) / l0 if l0 > 0 else numba.float32(0),
                                     numba.float32(1) / l1 if l1 > 0 else numba.float32(0))
                mine = out[row0:row0 + len_q, col0:col0 + d]   # this head's rows and columns
                if f16:
                    wgmma.store_f16(o, mine, first + 64 * half, 0)
                else:
                    wgmma.store_bf16(o, mine, first + 64 * half, 0)
                rows = lse[lse0:lse0 + len_q]                  # (none asked for: an empty array)
                lane = cuda.threadIdx.x % 32
                r = first + 64 * half + 16 * ((cuda.threadIdx.x % 128) // 32) + lane // 4
                if lane % 4 == 0 and r < rows.shape[0]:       # one lane of the quad sharing the row
                    rows[r] = (m0 + math.log2(l0)) * LN2 if l0 > 0 else -math.inf   # ln of the row's sum of exp(scale s)
                if lane % 4 == 0 and r + 8 < rows.shape[0]:
                    rows[r + 8] = (m1 + math.log2(l1)) * LN2 if l1 > 0 else -math.inf

    return cuda.jit(**BACKEND.compile_options({"launch_bounds": (THREADS, 1), "fastmath": True}))(attention), plan
