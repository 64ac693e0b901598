"""The call of ``numba_tma.attention.forward``: the attention forward on the caller's arrays
(PyTorch tensors, CuPy arrays, numba device arrays; under the simulator numpy arrays too), its
arguments checked, through the kernel of :mod:`.kernels`."""

import dataclasses
import math

import numpy as np

from .. import TensorMap, launch
from ..arrays import empty, operand, placeholder
from .kernels import BM, HEAD_DIMS, THREADS, TYPES, build, keys_per_block, registers

CALLER = "attention.forward"
LAYOUTS = {"bshd": "(batch, seq, heads, d)", "bhsd": "(batch, heads, seq, d)"}
VARLEN = "(total, heads, d)"
#: why a block's keys are what they are (explain's words), by (d, keys); else SQUARE
KEYS_WHY = {(128, 176): "FlashAttention-3's H100 tile at d 128 without a causal mask (a wider S, fewer MMAs)",
            (256, 64): "d 256, where O holds 128 registers a thread (80 keys spill more of them in the loop)"}
SQUARE = "a square tile, 128 queries by 128 keys (causal: the diagonal in one block)"


def _inputs(q, k, v, dtype, layout, varlen):
    if layout not in LAYOUTS:
        raise ValueError(f"{CALLER}: argument 'layout' must be 'bshd' {LAYOUTS['bshd']} or 'bhsd' "
                         f"{LAYOUTS['bhsd']}; got {layout!r}")
    if varlen and layout != "bshd":
        raise ValueError(f"{CALLER}: argument 'layout' must be 'bshd' with cu_seqlens_q and cu_seqlens_k (a varlen "
                         f"batch is (total, heads, d)); got {layout!r}")
    Q = operand(q, "q", dtype=dtype, caller=CALLER)
    K, V = (operand(x, name, dtype=dtype, stream=Q.stream, caller=CALLER) for x, name in ((k, "k"), (v, "v")))
    order = VARLEN if varlen else LAYOUTS[layout]
    for name, X in (("q", Q), ("k", K), ("v", V)):
        if X.ndim != (3 if varlen else 4):
            raise ValueError(f"{CALLER}: argument {name!r} must be {3 if varlen else 4}-D, {order}; got shape {X.shape}")
        if X.dtype not in TYPES or X.dtype != Q.dtype:
            raise TypeError(f"{CALLER}: arguments 'q', 'k' and 'v' must hold bf16 or f16, all one; got {name!r} "
                            f"{X.dtype} (q {Q.dtype})")
        if not X.is_contiguous:
            raise ValueError(f"{CALLER}: argument {name!r} must be contiguous in {order} order "
                             f"(.contiguous() in PyTorch); got strides {X.strides}")
    if K.shape != V.shape:
        raise ValueError(f"{CALLER}: arguments 'k' and 'v' must have one shape; got {K.shape} and {V.shape}")
    return Q, K, V


def _sequence_ends(cu_q, cu_k, Q, K):
    """The two varlen arguments read: (their int32 device arrays, the batch, the longest query
    sequence), each checked on the host — int32, one entry more than the batch, from 0 up (never
    down) to the rows of q and k — so a wrong one is refused, not run (both copied on the caller's
    stream, then one wait for it)."""
    arrays, copies = [], []
    for name, cu in (("cu_seqlens_q", cu_q), ("cu_seqlens_k", cu_k)):
        if cu is None:
            raise ValueError(f"{CALLER}: arguments 'cu_seqlens_q' and 'cu_seqlens_k' go together (a varlen batch); "
                             f"got {name}=None")
        C = operand(cu, name, stream=Q.stream, caller=CALLER)
        if C.dtype != "i32" or C.ndim != 1 or C.shape[0] < 2 or not C.is_contiguous:
            raise ValueError(f"{CALLER}: argument {name!r} must be a contiguous 1-D int32 array of batch + 1 >= 2 "
                             f"entries (each sequence's first row, then the total); got {C.dtype} {tuple(C.shape)}")
        arrays.append(C.device_array)
        copies.append(C.device_array.copy_to_host(stream=Q.stream))
    if Q.stream:
        Q.stream.synchronize()
    ends = [np.asarray(host) for host in copies]
    for name, host, X in (("cu_seqlens_q", ends[0], Q), ("cu_seqlens_k", ends[1], K)):
        if host[0] != 0 or np.any(np.diff(host) < 0) or host[-1] != X.shape[0]:
            raise ValueError(f"{CALLER}: argument {name!r} must rise from 0 (never falling) to {X.shape[0]}, the rows "
                             f"of {X.name!r}; got {host.tolist()[:8]}{' ...' if host.size > 8 else ''}")
    if ends[0].size != ends[1].size:
        raise ValueError(f"{CALLER}: arguments 'cu_seqlens_q' and 'cu_seqlens_k' must have one length (batch + 1); "
                         f"got {ends[0].size} and {ends[1].size}")
    return arrays, ends[0].size - 1, int(np.diff(ends[0]).max())


@dataclasses.dataclass
class Plan:
    """A call of :func:`forward` checked and decided (its output allocated): the kernel, its
    launch and its arguments, and what was chosen, in words (:meth:`explain`)."""

    kernel: object
    grid: int
    args: tuple
    shared_mem: int
    stream: object
    result: object           # what forward returns: out, or (out, lse)
    title: str
    lines: list

    def launch(self):
        if self.grid:        # (no query row, or no head: nothing to compute)
            launch(self.kernel, self.grid, THREADS, *self.args, shared_mem=self.shared_mem, stream=self.stream)
        return self.result

    def explain(self):
        return "\n".join([self.title] + [f"  {line}" for line in self.lines])

    __str__ = explain


def forward(q, k, v, *, causal=False, softmax_scale=None, cu_seqlens_q=None, cu_seqlens_k=None, out=None,
            return_lse=False, layout="bshd", dtype=None, blocks=None):
    """``softmax(softmax_scale * q @ k^T) @ v`` for every (batch, head): ``q`` (batch, seqlen_q,
    heads, d) — flash-attn's order; ``layout="bhsd"``: (batch, heads, seqlen_q, d) — ``k`` and
    ``v`` the same with ``seqlen_k`` keys and ``kv_heads`` heads dividing ``heads`` (grouped-query
    and multi-query attention: query head ``h`` reads K/V head ``h // (heads / kv_heads)``),
    contiguous, bf16 or f16 (numba and CuPy arrays hold the bits: ``dtype="bf16"``), d 64, 128 or 256,
    any sequence lengths.  A varlen batch: ``q`` (total_q, heads, d), ``k`` and ``v`` (total_k,
    kv_heads, d), sequence ``b`` the rows ``cu_seqlens_q[b]`` to ``cu_seqlens_q[b + 1]`` of q
    (``cu_seqlens_k``: of k and v), int32.  ``causal``: query ``i`` attends to keys up to ``i +
    seqlen_k - seqlen_q`` (flash-attn's bottom-right alignment; keys 0 to i for equal lengths).
    ``softmax_scale`` defaults to ``1 / sqrt(d)``.  Returns ``out`` (a new array of ``q``'s kind
    and shape unless given), or ``(out, lse)`` with ``return_lse``: each row's log-sum-exp of the
    scaled scores, float32 (batch, heads, seqlen_q), varlen (heads, total_q), what a backward pass
    reads.  A row that sees no key (causal, more queries than keys) gets 0 and lse -inf.
    ``blocks``: the blocks of the launch, each taking the query tiles (128 rows of one head) its
    index, plus the launch's blocks, plus ..., gives it: None (the default), one block a tile; an
    int >= 1, say the device's SM count, a persistent launch (a block's next Q and K loading while it
    finishes a tile).  See docs/attention.md.

    Example::

        # fragment: torch tensors on a GPU, (batch, seq, heads, 128) bf16
        o = attention.forward(q, k, v, causal=True)
    """
    return plan(q, k, v, causal=causal, softmax_scale=softmax_scale, cu_seqlens_q=cu_seqlens_q,
                cu_seqlens_k=cu_seqlens_k, out=out, return_lse=return_lse, layout=layout, dtype=dtype,
                blocks=blocks).launch()


def explain(q, k, v, **keywords):
    """What ``forward(q, k, v, **keywords)`` runs and why, in words (nothing is launched; the
    output is allocated if not given, a varlen batch's sequence ends read).

    Example::

        # fragment: torch tensors on a GPU
        print(attention.explain(q, k, v, causal=True))
    """
    return plan(q, k, v, **keywords).explain()


def plan(q, k, v, *, causal=False, softmax_scale=None, cu_seqlens_q=None, cu_seqlens_k=None, out=None,
         return_lse=False, layout="bshd", dtype=None, blocks=None):
    """:func:`forward`'s arguments checked, its kernel and launch chosen, its output allocated: a
    :class:`Plan` (``.launch()`` runs it, ``.explain()`` says what it is)."""
    varlen = cu_seqlens_q is not None or cu_seqlens_k is not None
    if blocks is not None and (isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 1):
        raise ValueError(f"{CALLER}: argument 'blocks' must be None (a block a query tile) or an int >= 1 (blocks "
                         f"looping over the tiles); got {blocks!r}")
    Q, K, V = _inputs(q, k, v, dtype, layout, varlen)
    bshd = layout == "bshd"
    if varlen:
        (cu_q, cu_k), batch, seq_q = _sequence_ends(cu_seqlens_q, cu_seqlens_k, Q, K)
        (total_q, heads, d), (total_k, kv_heads) = Q.shape, K.shape[:2]
        seq_k = 0                   # (each sequence's own, from cu_k)
        want_kv = (total_k, kv_heads, d)
        lse_shape, rows_q, rows_k = (heads, total_q), total_q, total_k
    else:
        batch, seq_q, heads, d = Q.shape if bshd else (Q.shape[0], Q.shape[2], Q.shape[1], Q.shape[3])
        seq_k, kv_heads = (K.shape[1], K.shape[2]) if bshd else (K.shape[2], K.shape[1])
        want_kv = (batch, seq_k, kv_heads, d) if bshd else (batch, kv_heads, seq_k, d)
        lse_shape, rows_q, rows_k = (batch, heads, seq_q), batch * seq_q, batch * seq_k
        cu_q = cu_k = placeholder(np.int32, 1, size=0)
    if tuple(K.shape) != want_kv:
        raise ValueError(f"{CALLER}: argument 'k' must be {want_kv}: q's batch and d, any number of keys, heads dividing q's "
                         f"({heads}); got {tuple(K.shape)}")
    if d not in HEAD_DIMS:
        raise ValueError(f"{CALLER}: the head dimension d={d} must be one of {HEAD_DIMS}")
    if kv_heads == 0 or heads % kv_heads:
        raise ValueError(f"{CALLER}: k's {kv_heads} heads must divide q's {heads} (grouped-query attention)")
    if rows_k == 0 and rows_q > 0 and heads > 0:
        raise ValueError(f"{CALLER}: argument 'k' must hold at least one key (its sequence length is 0)")
    scale = 1 / math.sqrt(d) if softmax_scale is None else float(softmax_scale)
    if out is None:
        out, O = empty(Q.shape, Q.dtype, like=Q)
    else:
        O = operand(out, "out", dtype=Q.dtype, stream=Q.stream, caller=CALLER)
        if tuple(O.shape) != tuple(Q.shape) or not O.is_contiguous:
            raise ValueError(f"{CALLER}: argument 'out' must be contiguous of q's shape {tuple(Q.shape)}; got "
                             f"{tuple(O.shape)}")
    lse = None
    if return_lse:
        lse, L = empty(lse_shape, "f32", like=Q, name="lse")
        lse_rows = L.viewed((math.prod(lse_shape),), (1,)).device_array
    else:                   # an empty array (a valid address): the kernel writes none
        lse_rows = placeholder(np.float32, 1, size=0)
    result = (out, lse) if return_lse else out
    tiles = batch * heads * -(-seq_q // BM)
    title = (f"{CALLER}: {'causal' if causal else 'full'} attention, {Q.dtype}, d {d}, {heads} query heads on "
             f"{kv_heads} K/V heads, " + (f"a varlen batch of {batch} sequences (the longest {seq_q} queries)"
                                         if varlen else f"batch {batch}, {seq_q} queries, {seq_k} keys")
             + f", layout {layout}")
    if rows_q * heads == 0:
        return Plan(None, 0, (), 0, Q.stream, result, title, ["nothing to compute: no query row or no head"])

    def two_d(X, h, rows):  # the kernel's 2-D view: a head's columns h * d on, or its rows one after another
        return X.viewed((rows, h * d), (h * d, 1)) if bshd else X.viewed((rows * h, d), (d, 1))

    data_type = "bfloat16" if Q.dtype == "bf16" else "float16"
    bn = keys_per_block(d, bool(causal))
    maps = []
    for name, X, h, rows, box in (("q", Q, heads, rows_q, BM), ("k", K, kv_heads, rows_k, bn),
                                  ("v", V, kv_heads, rows_k, bn)):
        view = two_d(X, h, rows)
        why = view.why_not_tma()
        if why is not None:
            raise ValueError(f"{CALLER}: argument {name!r} cannot be read by TMA: {why}")
        maps.append(TensorMap.tiled(view.map_array(), (box, 64), swizzle="128B", data_type=data_type))
    kernel, shared = build(d, bool(causal), Q.dtype, bn)
    grid = blocks or tiles
    producer_regs, consumer_regs = registers(d, bn)
    lines = [f"{tiles} query tiles of {BM} rows ({'the sequences' if varlen else 'batch'} x heads x "
             f"{-(-seq_q // BM)} blocks{' of the longest; a tile past a shorter sequence skipped' if varlen else ''})"
             + ("; the tiles with the most keys first" if causal else ""),
             f"{bn} keys a block: {KEYS_WHY.get((d, bn), SQUARE)}",
             f"K and V in 2-stage TMA rings, Q in one; {shared.nbytes} bytes of shared memory",
             f"384 threads a block: a producer warpgroup (setmaxnreg {producer_regs}) and two consumer "
             f"warpgroups (setmaxnreg {consumer_regs}) of 64 rows each, taking turns at the tensor cores",
             f"{grid} blocks: " + ("one a tile (blocks=n: n blocks looping over the tiles)" if blocks is None else
                                   f"block b taking tiles b, b + {grid}, ... (blocks={blocks}: a persistent launch)")]
    args = (*maps, two_d(O, heads, rows_q).device_array, lse_rows, cu_q, cu_k, seq_q, seq_k, heads, heads // kv_heads,
            int(bshd), tiles, np.float32(scale * math.log2(math.e)))
    return Plan(kernel, grid, args, shared.nbytes, Q.stream, result, title, lines)
