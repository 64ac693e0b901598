"""A fused attention forward on Hopper tensor cores from a Numba kernel (the FlashAttention-2/3
structure): O = softmax(Q K^T / sqrt(D)) V for every (batch, head), bf16 in, fp32 accumulation,
bf16 out; checked against torch (or numpy) and timed beside
``torch.nn.functional.scaled_dot_product_attention`` when PyTorch and a GPU are there.

    python examples/attention.py [BATCH HEADS SEQ [CAUSAL]]   # without a GPU: simulated, small

Q and O are (batch * heads * seq, D) row-major bf16, K and V (batch * kv_heads * seq, D) (D = 64 or
128; any seq; kv_heads dividing heads: grouped-query attention, each K/V head serving heads /
kv_heads query heads).  Optionally each row's log-sum-exp (natural log, of the scaled scores) into
a float32 array of batch * heads * seq, what a backward pass needs.
One block of 384 threads per 128 query rows: warpgroup 0's elected thread loads the Q tile once
and the K and V tiles of each 128-key block into a 2-stage ``numba_tma.pipeline.TmaPipeline``
(K and V of one block a stage); warpgroups 1 and 2 each own 64 query rows and, per key block:

1. S = Q K^T with ``wgmma.mma_async`` (K-major Q and K tiles: ``wgmma.descriptor``);
2. the keys past the sequence's end (its last block) and, causal, past each query's own row (the
   diagonal block; the blocks above it are not loaded at all) masked to -inf (``wgmma.mask``);
   the online softmax on the fragment: ``wgmma.row_max``, the running max ``m``, P =
   ``wgmma.exp2_rows(S, log2(e) / sqrt(D), m)``, ``wgmma.row_sum`` into the running sum ``l``,
   the output accumulator rescaled by ``exp2(m_old - m)`` (``wgmma.scale_rows``);
3. O += P V with P from registers (FlashAttention-3's way): ``wgmma.a_fragment`` turns each 16
   keys of S's fragment into bf16 A registers of ``wgmma.mma_async_rs``, with V's tile read
   MN-major (``wgmma.descriptor_mn``, ``trans_b=True``: V is given keys x D), and the stage
   released.

At the end O / l is stored as bf16 (``wgmma.store_bf16``, into the head's own rows: a last block's
rows past the sequence are not stored).  Not built: the FA3 ping-pong of softmax and MMA between
warpgroups, the next S overlapped with this P V, sequences of unequal lengths in one launch.
"""

import math
import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from numba import cuda

import numba_tma
from numba_tma import SharedMemoryPlan, TensorMap, at, pipeline, tma, wgmma
from numba_tma.testing import gpu_seconds

BM, BN = 128, 128                     # query rows per block (two warpgroups of 64), keys per block
LN2 = math.log(2.0)
STAGES = 2                            # K and V of one key block per stage
THREADS = 384


def make_attention(d, causal):
    """The kernel and its shared-memory plan for head dimension ``d`` (64 or 128), causal or not."""
    boxes = d // 64                   # 128B swizzle: a box row is 64 bf16, D takes `boxes` of them
    stage_bytes = 2 * boxes * BN * 128
    o_regs, s_regs = d // 2, BN // 2                          # constants of the kernel (wgmma.zeros needs them)
    ring_config = pipeline.TmaPipeline(STAGES, consumers=pipeline.warpgroups(2), reads="wgmma")
    q_config = pipeline.TmaPipeline(1, consumers=pipeline.warpgroups(2), reads="wgmma")
    plan = (SharedMemoryPlan()
            .array("q", (boxes, BM, 64), numba.uint16, swizzle="128B")
            .array("k", (STAGES * boxes, BN, 64), numba.uint16, swizzle="128B")
            .array("v", (STAGES * boxes, BN, 64), numba.uint16, swizzle="128B")
            .pipeline("ring", ring_config).pipeline("q_ring", q_config))
    carve = plan.carver()

    # fastmath: the reciprocal of the row sums an approximate one (an IEEE division is a subroutine
    # call, and ptxas serialises every wgmma of a kernel that calls one: C7509)
    @cuda.jit(**({} if SIMULATED else {"launch_bounds": (THREADS, 1), "fastmath": True}))
    def attention(desc_q, desc_k, desc_v, out, lse, seq, heads, group, bshd, scale_log2):
        smem = carve()
        ring = ring_config.create(smem.ring)
        q_ring = q_config.create(smem.q_ring)
        warpgroup = cuda.threadIdx.x // 128
        # 32-bit: a 64-bit division is a subroutine call, and ptxas serialises every wgmma of a
        # kernel that calls one ("C7509 ... due to the presence of Extern calls")
        blocks_per_head = numba.uint32((seq + BM - 1) // BM)
        head = numba.uint32(cuda.blockIdx.x) // blocks_per_head          # batch x heads + head
        q_block = numba.uint32(cuda.blockIdx.x) - head * blocks_per_head
        kv_head = head // numba.uint32(group)                            # (GQA: a K/V head a group)
        if bshd:    # (batch, seq, heads, d): a sequence's rows b * seq on, a head's columns h * d on
            batch = head // numba.uint32(heads)
            row0, col0 = batch * seq, (head - batch * heads) * d
            kv_row0, kv_col0 = row0, (kv_head - batch * (numba.uint32(heads) // numba.uint32(group))) * d
        else:       # (batch, heads, seq, d): a head's rows one after another
            row0, col0, kv_row0, kv_col0 = head * seq, numba.int64(0), kv_head * seq, numba.int64(0)
        q_row = row0 + q_block * BM
        n_kv = (seq + BN - 1) // BN                            # key blocks: causal, up to the diagonal's
        if causal:
            n_kv = min(n_kv, q_block + 1)
        if warpgroup == 0:                                     # the producer
            wgmma.setmaxnreg(40, "dec")                        # its registers to the consumers (40 + 2 x 232)
            if cuda.threadIdx.x == 0:
                q = q_ring.producer_state()
                q_ring.prime(q, boxes * BM * 128)
                for j in range(boxes):
                    tma.load(desc_q, at(smem.q, j), (col0 + 64 * j, q_row), q_ring.full(q))
                p = ring.producer_state()
                for i in range(n_kv):
                    ring.acquire(p, stage_bytes)
                    for j in range(boxes):
                        kv = (kv_col0 + 64 * j, kv_row0 + i * BN)
                        tma.load(desc_k, at(smem.k, boxes * p.index + j), kv, ring.full(p))
                        tma.load(desc_v, at(smem.v, boxes * p.index + j), kv, ring.full(p))
                    p = p.advance()
        else:                                                  # the consumers: 64 query rows each
            wgmma.setmaxnreg(232, "inc")                       # S, O and P's registers without spilling
            half = warpgroup - 1
            q_ring.wait(q_ring.consumer_state())
            c = ring.consumer_state()
            o = wgmma.zeros(o_regs)
            m0 = m1 = numba.float32(-math.inf)               # the running max (log2 domain) and sum
            l0 = l1 = numba.float32(0)
            for i in range(n_kv):
                ring.wait(c)
                s = wgmma.zeros(s_regs)
                s = wgmma.fence(s)
                for box in range(boxes):                       # S = Q K^T, 4 K steps a box of D
                    for kk in range(4):                        # (loops of 4: unrolled, so ptxas keeps
                        s = wgmma.mma_async(                   # the MMAs in flight together)
                            s, wgmma.descriptor(at(smem.q, box), desc_q, kk, 64 * half),
                            wgmma.descriptor(at(smem.k, boxes * c.index + box), desc_k, kk, 0), box + kk)
                wgmma.commit_group()
                s = wgmma.wait_group(0, s)
                if (i + 1) * BN > seq or (causal and i == q_block):   # the keys' end, the diagonal block
                    s = wgmma.mask(s, q_block * BM + 64 * half, i * BN, seq, 0 if causal else seq, -math.inf)
                x0, x1 = wgmma.row_max(s)                      # the online softmax, in the log2 domain
                n0, n1 = max(m0, x0 * scale_log2), max(m1, x1 * scale_log2)
                s = wgmma.exp2_rows(s, scale_log2, n0, n1)
                r0, r1 = math.exp2(m0 - n0), math.exp2(m1 - n1)
                t0, t1 = wgmma.row_sum(s)
                l0, l1 = l0 * r0 + t0, l1 * r1 + t1
                m0, m1 = n0, n1
                o = wgmma.scale_rows(o, r0, r1)
                # O += P V: P's 16 keys a K step from registers (a_fragment: its K step a constant,
                # so the 8 steps of 128 keys written out), all converted before the fence (ptxas
                # serialises wgmmas whose input registers are written between them), V given
                # keys x D: MN-major
                p0, p1, p2, p3 = (wgmma.a_fragment(s, 0), wgmma.a_fragment(s, 1), wgmma.a_fragment(s, 2),
                                  wgmma.a_fragment(s, 3))
                p4, p5, p6, p7 = (wgmma.a_fragment(s, 4), wgmma.a_fragment(s, 5), wgmma.a_fragment(s, 6),
                                  wgmma.a_fragment(s, 7))
                v = at(smem.v, boxes * c.index)
                o = wgmma.fence(o)
                o = wgmma.mma_async_rs(o, p0, wgmma.descriptor_mn(v, desc_v, 0, 0), 1, trans_b=True)
                o = wgmma.mma_async_rs(o, p1, wgmma.descriptor_mn(v, desc_v, 1, 0), 1, trans_b=True)
                o = wgmma.mma_async_rs(o, p2, wgmma.descriptor_mn(v, desc_v, 2, 0), 1, trans_b=True)
                o = wgmma.mma_async_rs(o, p3, wgmma.descriptor_mn(v, desc_v, 3, 0), 1, trans_b=True)
                o = wgmma.mma_async_rs(o, p4, wgmma.descriptor_mn(v, desc_v, 4, 0), 1, trans_b=True)
                o = wgmma.mma_async_rs(o, p5, wgmma.descriptor_mn(v, desc_v, 5, 0), 1, trans_b=True)
                o = wgmma.mma_async_rs(o, p6, wgmma.descriptor_mn(v, desc_v, 6, 0), 1, trans_b=True)
                o = wgmma.mma_async_rs(o, p7, wgmma.descriptor_mn(v, desc_v, 7, 0), 1, trans_b=True)
                wgmma.commit_group()
                o = wgmma.wait_group(0, o)
                ring.release(c)
                c = c.advance()
            o = wgmma.scale_rows(o, numba.float32(1) / l0, numba.float32(1) / l1)
            wgmma.store_bf16(o, out[row0:row0 + seq, col0:col0 + d], q_block * BM + 64 * half, 0)   # this head's
            rows = lse[head * seq:head * seq + seq]            # (none asked for: an empty array)
            lane = cuda.threadIdx.x % 32
            r = q_block * BM + 64 * half + 16 * ((cuda.threadIdx.x % 128) // 32) + lane // 4
            if lane % 4 == 0 and r < rows.shape[0]:           # one lane of the quad sharing the row
                rows[r] = (m0 + math.log2(l0)) * LN2           # natural log of the row's sum of exp(scale s)
            if lane % 4 == 0 and r + 8 < rows.shape[0]:
                rows[r + 8] = (m1 + math.log2(l1)) * LN2

    return attention, plan


KERNELS = {(d, causal): make_attention(d, causal) for d in (64, 128) for causal in (False, True)}


def maps(q, k, v):
    """TMA maps of Q (boxes of 128 rows x 64), K and V (128 keys x 64), bf16 bits, 128B-swizzled."""
    options = {"swizzle": "128B", "data_type": "bfloat16"}
    return (TensorMap.tiled(q, (BM, 64), **options), TensorMap.tiled(k, (BN, 64), **options),
            TensorMap.tiled(v, (BN, 64), **options))


_NO_LSE = {}


def forward(descs, out, heads, seq, d, causal=False, group=1, lse=None, batch=1, bshd=False):
    """O for ``batch`` x ``heads`` sequences of ``seq`` rows of ``d``; ``causal``: each query
    attends to the keys up to its own position; ``group``: query heads per K/V head (K and V hold
    ``heads / group`` heads); ``lse``: a float32 device array of ``batch * heads * seq`` (batch,
    head, row) for each row's log-sum-exp, or None.  The arrays (and the maps' of Q, K, V): 2-D,
    (batch * heads * seq, d), or with ``bshd`` (batch * seq, heads * d): flash-attn's (batch, seq,
    heads, d) order."""
    if (d, bool(causal)) not in KERNELS or seq < 1:
        raise ValueError(f"attention: d={d} must be 64 or 128, and seq={seq} at least 1")
    if group < 1 or heads % group:
        raise ValueError(f"attention: group={group} must divide heads={heads} (query heads per K/V head)")
    rows = batch * heads * seq
    if lse is None:
        lse = _NO_LSE.setdefault("lse", cuda.device_array(0, np.float32))
    elif lse.shape != (rows,) or lse.dtype != np.float32:
        raise ValueError(f"attention: lse must be float32 of shape ({rows},); got {lse.dtype} {lse.shape}")
    kernel, plan = KERNELS[d, bool(causal)]
    numba_tma.launch(kernel, batch * heads * -(-seq // BM), THREADS, *descs, out, lse, seq, heads, group, int(bshd),
                     numba.float32(math.log2(math.e) / math.sqrt(d)), shared_mem=plan.nbytes)


def bf16_bits(x):
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def reference(q, k, v, heads, seq, d, causal=False, group=1):
    """(softmax(Q K^T / sqrt(d)) V, each row's log-sum-exp) per sequence (causal: keys up to the
    query's row; ``group`` query heads a K/V head), in float64."""
    q = q.reshape(heads, seq, d).astype(np.float64)
    k, v = (np.repeat(x.reshape(heads // group, seq, d).astype(np.float64), group, axis=0) for x in (k, v))
    s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
    if causal:
        s = np.where(np.arange(seq)[None, :] > np.arange(seq)[:, None], -np.inf, s)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(-1, keepdims=True)
    return ((p / total) @ v).reshape(heads * seq, d), (m + np.log(total)).reshape(heads * seq)


def main(batch=None, heads=None, seq=None, causal=0, d=128):
    batch, heads, seq = batch or (1 if SIMULATED else 4), heads or (1 if SIMULATED else 16), seq or (128 if SIMULATED else 4096)
    if SIMULATED:
        d = 64
    rows = batch * heads * seq
    rng = np.random.default_rng(0)
    q, k, v = (bf16_bits(rng.standard_normal((rows, d))) for _ in range(3))
    d_q, d_k, d_v = (cuda.to_device(x) for x in (q, k, v))
    out = cuda.device_array((rows, d), np.uint16)
    descs = maps(d_q, d_k, d_v)
    forward(descs, out, batch * heads, seq, d, causal)
    got = bf16_values(out.copy_to_host())
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or SIMULATED:
        want = reference(bf16_values(q), bf16_values(k), bf16_values(v), batch * heads, seq, d, causal)[0]
    else:
        tq, tk, tv = (torch.from_numpy(x.view(np.int16)).cuda().view(torch.bfloat16).reshape(batch, heads, seq, d)
                      for x in (q, k, v))
        want = torch.nn.functional.scaled_dot_product_attention(tq.float(), tk.float(), tv.float(),
                                                                is_causal=bool(causal))
        want = want.reshape(rows, d).cpu().numpy()
    error = float(np.abs(got - want).max() / np.abs(want).max())
    ok = error <= 2e-2
    print(f"attention: batch {batch} x heads {heads} x seq {seq} x d {d}{', causal' if causal else ''}, bf16: max error "
          f"{error:.2e} of max |O|: {'PASS' if ok else 'FAIL'}")
    if not SIMULATED:
        flops = 4.0 * batch * heads * seq * seq * d / (2 if causal else 1)      # causal: half the products
        ours = flops / gpu_seconds(lambda: forward(descs, out, batch * heads, seq, d, causal)) / 1e12
        line = f"  numba-tma: {ours:.0f} TFLOP/s"
        if torch is not None:
            theirs = flops / gpu_seconds(lambda: torch.nn.functional.scaled_dot_product_attention(
                tq, tk, tv, is_causal=bool(causal))) / 1e12
            line += f"; torch scaled_dot_product_attention: {theirs:.0f} TFLOP/s; ratio {ours / theirs:.3f}"
        print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*map(int, sys.argv[1:5])))
