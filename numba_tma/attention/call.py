"""The call of ``numba_tma.attention.forward``: the attention forward on the caller's arrays
(PyTorch tensors, CuPy arrays, numba device arrays; under the simulator numpy arrays too), its
arguments checked, through the kernel of :mod:`.kernels`."""

import math

import numpy as np

from .. import TensorMap, launch
from ..arrays import empty, operand, placeholder
from .kernels import BM, HEAD_DIMS, THREADS, TYPES, build

CALLER = "attention.forward"
LAYOUTS = {"bshd": "(batch, seq, heads, d)", "bhsd": "(batch, heads, seq, d)"}


def _inputs(q, k, v, dtype, layout):
    if layout not in LAYOUTS:
        raise ValueError(f"{CALLER}: argument 'layout' must be 'bshd' {LAYOUTS['bshd']} or 'bhsd' "
                         f"{LAYOUTS['bhsd']}; got {layout!r}")
    Q = operand(q, "q", dtype=dtype, caller=CALLER)
    K, V = (operand(x, name, dtype=dtype, stream=Q.stream, caller=CALLER) for x, name in ((k, "k"), (v, "v")))
    for name, X in (("q", Q), ("k", K), ("v", V)):
        if X.ndim != 4:
            raise ValueError(f"{CALLER}: argument {name!r} must be 4-D, {LAYOUTS[layout]}; got shape {X.shape}")
        if X.dtype not in TYPES or X.dtype != Q.dtype:
            raise TypeError(f"{CALLER}: arguments 'q', 'k' and 'v' must hold bf16 or f16, all one; got {name!r} "
                            f"{X.dtype} (q {Q.dtype})")
        if not X.is_contiguous:
            raise ValueError(f"{CALLER}: argument {name!r} must be contiguous in {LAYOUTS[layout]} order "
                             f"(.contiguous() in PyTorch); got strides {X.strides}")
    if K.shape != V.shape:
        raise ValueError(f"{CALLER}: arguments 'k' and 'v' must have one shape; got {K.shape} and {V.shape}")
    return Q, K, V


def forward(q, k, v, *, causal=False, softmax_scale=None, out=None, return_lse=False, layout="bshd", dtype=None):
    """``softmax(softmax_scale * q @ k^T) @ v`` for every (batch, head): ``q`` (batch, seq, heads,
    d) — flash-attn's order; ``layout="bhsd"``: (batch, heads, seq, d) — ``k`` and ``v`` the same
    with ``kv_heads`` heads dividing ``heads`` (grouped-query and multi-query attention: query head
    ``h`` reads K/V head ``h // (heads / kv_heads)``), contiguous, bf16 or f16 (numba and CuPy
    arrays hold the bits: ``dtype="bf16"``), d 64 or 128, any sequence length, one for q and k.
    ``causal``: query i attends to keys 0 to i.  ``softmax_scale`` defaults to ``1 / sqrt(d)``.
    Returns ``out`` (a new array of ``q``'s kind and shape unless given), or ``(out, lse)`` with
    ``return_lse``: each row's log-sum-exp of the scaled scores, float32 (batch, heads, seq), what
    a backward pass reads.  See docs/attention.md.

    Example::

        # fragment: torch tensors on a GPU, (batch, seq, heads, 128) bf16
        o = attention.forward(q, k, v, causal=True)
    """
    Q, K, V = _inputs(q, k, v, dtype, layout)
    bshd = layout == "bshd"
    batch, seq, heads, d = Q.shape if bshd else (Q.shape[0], Q.shape[2], Q.shape[1], Q.shape[3])
    kv_heads = K.shape[2] if bshd else K.shape[1]
    want_kv = (batch, seq, kv_heads, d) if bshd else (batch, kv_heads, seq, d)
    if tuple(K.shape) != want_kv:
        raise ValueError(f"{CALLER}: argument 'k' must be {want_kv}: q's batch, sequence length and d (sequences "
                         f"of unequal lengths are not built); got {tuple(K.shape)}")
    if d not in HEAD_DIMS:
        raise ValueError(f"{CALLER}: the head dimension d={d} must be one of {HEAD_DIMS}")
    if kv_heads == 0 or heads % kv_heads:
        raise ValueError(f"{CALLER}: k's {kv_heads} heads must divide q's {heads} (grouped-query attention)")
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
        lse, L = empty((batch, heads, seq), "f32", like=Q, name="lse")
        lse_rows = L.viewed((batch * heads * seq,), (1,)).device_array
    else:                   # an empty array (a valid address): the kernel writes none
        lse_rows = placeholder(np.float32, 1, size=0)
    if batch * heads * seq == 0:
        return (out, lse) if return_lse else out

    def two_d(X, h):        # the kernel's 2-D view: a head's columns h * d on, or its rows one after another
        return X.viewed((batch * seq, h * d), (h * d, 1)) if bshd else X.viewed((batch * h * seq, d), (d, 1))

    data_type = "bfloat16" if Q.dtype == "bf16" else "float16"
    maps = []
    for name, X, h in (("q", Q, heads), ("k", K, kv_heads), ("v", V, kv_heads)):
        view = two_d(X, h)
        why = view.why_not_tma()
        if why is not None:
            raise ValueError(f"{CALLER}: argument {name!r} cannot be read by TMA: {why}")
        maps.append(TensorMap.tiled(view.map_array(), (BM, 64), swizzle="128B", data_type=data_type))
    kernel, plan = build(d, bool(causal), Q.dtype)
    launch(kernel, batch * heads * -(-seq // BM), THREADS, *maps, two_d(O, heads).device_array, lse_rows, seq, heads,
           heads // kv_heads, int(bshd), np.float32(scale * math.log2(math.e)), shared_mem=plan.nbytes,
           stream=Q.stream)
    return (out, lse) if return_lse else out
