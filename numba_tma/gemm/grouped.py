"""``numba_tma.gemm.grouped_matmul``: the products of a mixture of experts' groups in one persistent
launch.  ``a`` (rows, K) holds the groups' rows one after another, ``offsets`` (int32, one per
group) each group's end row, ``b`` (groups, K, N) a weight matrix per group, as
``torch._grouped_mm(a, b, offs=offsets)`` takes them; the output is (rows, N).

One kernel walks the tiles of all groups (each block reads ``offsets`` on the device: no host
synchronisation, the group sizes may come from a router on the GPU).  One TMA map covers all of
``a`` and one all of ``b`` (its groups stacked: (groups * N, K) for K-major B, (groups * K, N)
row-major): a tile's rows past its group's end belong to the next group and are not stored (a
warpgroup's 64 rows inside their group go out by TMA stores, those where the group ends from
registers, bounded by the end), and its B rows past N are output columns that are not stored.
"""

import numpy as np
from numba import cuda

from .. import launch
from ..arrays import empty, operand, placeholder
from . import config as configs
from . import epilogues, staging
from .epilogue_arguments import epilogue_of
from .kernels import BM, THREADS, TILE_N, TYPES, Kernel, build
from .plans import Plan, number, out_dtype_name, output, sm_count, tma_output

CALLER = "grouped_matmul"


def _b_layout(B, k, n, bk):
    """(how the kernel reads b: "k" or "n", the 2-D array of the stacked groups, rows per group),
    or ("stage", why, None)."""
    g = B.shape[0]
    s0, s1, s2 = B.strides
    if s1 == 1 and s2 >= k and s0 == n * s2 and B.viewed((g * n, k), (s2, 1)).tma_ok():
        return "k", B.viewed((g * n, k), (s2, 1)).map_array(), n
    if s2 == 1 and s1 >= n and s0 == k * s1 and TYPES[B.dtype][0] == 2 and k % bk == 0 and \
            B.viewed((g * k, n), (s1, 1)).tma_ok():
        return "n", B.viewed((g * k, n), (s1, 1)).map_array(), k
    return "stage", "b's groups are not stacked K-major or row-major with K a multiple of the K step", None


def _own(array, name, like, stream):
    """An operand over a buffer of ours holding ``like``'s type."""
    return operand(array, name, dtype=like.dtype, stream=stream, caller=CALLER)


def grouped_matmul(a, b, offsets=None, *, out=None, bias=None, activation=None, epilogue=None, epilogue_args=(),
                   alpha=1.0, out_dtype=None, config=None, dtype=None):
    """``out[offsets[g-1]:offsets[g]] = a[offsets[g-1]:offsets[g]] @ b[g]`` for every group ``g``
    (from row 0), with :func:`matmul`'s epilogue on every row, in one launch.  ``a`` (rows, K),
    ``b`` (groups, K, N), ``offsets`` int32 (groups,): non-decreasing end rows; rows past the last
    are not written.  The list form ``grouped_matmul([a0, a1, ...], [b0, b1, ...])`` (one K and N)
    copies the groups into one ``a`` and one ``b`` first and returns the list of outputs.

    Example::

        # fragment: torch tensors on a GPU (a router's tokens sorted by expert)
        y = gemm.grouped_matmul(tokens, expert_weights, offsets, activation="silu")
    """
    return grouped_plan(a, b, offsets, out=out, bias=bias, activation=activation, epilogue=epilogue,
                        epilogue_args=epilogue_args, alpha=alpha, out_dtype=out_dtype, config=config,
                        dtype=dtype).run()


def _list_form(a, b, dtype, keywords):
    """The list form: the groups copied into one ``a`` and one stacked K-major ``b``."""
    if not isinstance(b, (list, tuple)) or len(b) != len(a) or not a:
        raise ValueError("grouped_matmul: argument 'b' must be a list of one matrix per matrix of 'a' (and 'a' not "
                         "empty)")
    A = [operand(x, f"a[{i}]", dtype=dtype, caller=CALLER) for i, x in enumerate(a)]
    stream = A[0].stream
    B = [operand(x, f"b[{i}]", dtype=dtype, stream=stream, caller=CALLER) for i, x in enumerate(b)]
    k, n = B[0].shape if len(B[0].shape) == 2 else (None, None)
    for i, (x, y) in enumerate(zip(A, B)):
        if len(x.shape) != 2 or len(y.shape) != 2 or x.shape[1] != k or tuple(y.shape) != (k, n) or \
                x.dtype != A[0].dtype or y.dtype != A[0].dtype:
            raise ValueError(f"grouped_matmul: group {i}: a[{i}] must be (rows, {k}) and b[{i}] ({k}, {n}), all of "
                             f"one type; got {tuple(x.shape)} {x.dtype} and {tuple(y.shape)} {y.dtype}")
    ends = np.cumsum([x.shape[0] for x in A]).astype(np.int32)
    bits = A[0].device_array.dtype
    k_pad = staging.padded_cols(k, bits.itemsize)
    a_all = staging.buffer_of((int(ends[-1]), k_pad), bits, stream)
    b_all = staging.buffer_of((len(B) * n, k_pad), bits, stream)
    copies = []
    for i, (x, y) in enumerate(zip(A, B)):
        copies.append((x.device_array, a_all[int(ends[i]) - x.shape[0]:int(ends[i])]))
        copies.append((y.transposed().device_array, b_all[i * n:(i + 1) * n]))
    a_op = _own(a_all, "a", A[0], stream).viewed((int(ends[-1]), k), (k_pad, 1))
    b_op = _own(b_all, "b", A[0], stream).viewed((len(B), k, n), (n * k_pad, 1, k_pad))
    offsets = operand(cuda.to_device(ends, stream=stream), "offsets", stream=stream, caller=CALLER)
    p = _plan(a_op, b_op, offsets, stream, like=A[0], **keywords)
    launches = [lambda s=s, d=d: staging.copy(s, d, stream) for s, d in copies] + p.launches
    outs = [p.out[int(e) - x.shape[0]:int(e)] for e, x in zip(ends, A)]
    return Plan(p.title + f" (the {len(A)} groups copied into one a and one b first)", p.lines, launches, outs)


def grouped_plan(a, b, offsets=None, *, out=None, bias=None, activation=None, epilogue=None, epilogue_args=(),
                 alpha=1.0, out_dtype=None, config=None, dtype=None):
    """The :class:`.matmul.Plan` of ``grouped_matmul(...)`` (same arguments), checked, not launched."""
    keywords = dict(out=out, bias=bias, activation=activation, epilogue=epilogue, epilogue_args=epilogue_args,
                    alpha=alpha, config=config)
    if isinstance(a, (list, tuple)):
        if out is not None or offsets is not None:
            raise ValueError("grouped_matmul: arguments 'offsets' and 'out' must be None with lists of groups (their "
                             "rows say where each group ends)")
        keywords.pop("out")
        return _list_form(a, b, dtype, dict(keywords, out=None, out_dtype=out_dtype))
    A = operand(a, "a", dtype=dtype, caller=CALLER)
    if offsets is None:
        raise ValueError("grouped_matmul: argument 'offsets' is needed: the int32 end row of each group")
    return _plan(A, operand(b, "b", dtype=dtype, stream=A.stream, caller=CALLER),
                 operand(offsets, "offsets", stream=A.stream, caller=CALLER), A.stream, out_dtype=out_dtype, like=A,
                 **keywords)


def _plan(A, B, O_, stream, *, out, bias, activation, epilogue, epilogue_args, alpha, out_dtype, config, like):
    if len(A.shape) != 2:
        raise ValueError(f"grouped_matmul: argument 'a' must be 2-D (rows, K); got {len(A.shape)} dimensions")
    if len(B.shape) != 3:
        raise ValueError(f"grouped_matmul: argument 'b' must be 3-D (groups, K, N); got {len(B.shape)} dimensions")
    for op in (A, B):
        if op.dtype not in TYPES:
            raise TypeError(f"grouped_matmul: argument {op.name!r} must hold bf16, f16, e4m3 or e5m2 values; "
                            f"got {op.dtype}")
    if A.dtype != B.dtype:
        raise TypeError(f"grouped_matmul: arguments 'a' and 'b' must hold one type; got {A.dtype} and {B.dtype}")
    rows, k = A.shape
    groups, k2, n = B.shape
    if k2 != k:
        raise ValueError(f"grouped_matmul: argument 'b' must be (groups, {k}, N): a's {k} columns as rows; got "
                         f"{tuple(B.shape)}")
    if O_.dtype != "i32" or tuple(O_.shape) != (groups,):
        raise ValueError(f"grouped_matmul: argument 'offsets' must be int32 of shape ({groups},) (b's groups); got "
                         f"{O_.dtype} {tuple(O_.shape)}")
    if k == 0:
        raise ValueError("grouped_matmul: argument 'a' must have at least one column (K >= 1)")
    dtype = A.dtype
    out_dtype = out_dtype_name(out_dtype) if out_dtype is not None else \
        "bf16" if TYPES[dtype][0] == 1 else dtype
    e, e_args, factor = epilogue_of(rows, n, stream, "f16" if dtype == "f16" else "bf16", bias=bias, activation=activation, epilogue=epilogue,
                                    epilogue_args=epilogue_args, beta=0.0, c=None, residual=None, a_scale=None,
                                    b_scale=None)
    scale = number("alpha", alpha) * factor
    if out is None:
        out, O = empty((rows, n), out_dtype, like=like)
    else:
        O = output(out, out_dtype, stream, CALLER)
        if tuple(O.shape) != (rows, n) or O.dtype != out_dtype:
            raise ValueError(f"grouped_matmul: argument 'out' must be {out_dtype} of shape ({rows}, {n}); got "
                             f"{O.dtype} {tuple(O.shape)}")
    title = f"numba_tma.gemm.grouped_matmul: {groups} groups of up to {rows} rows x {n} x {k}, {dtype} -> {out_dtype}"
    if rows == 0 or n == 0 or groups == 0:
        return Plan(title, ["an empty output: nothing runs"], [], out)
    bk = 128 // TYPES[dtype][0]
    lines, launches = [], []
    if not (A.row_major and A.tma_ok()):
        lines.append(f"a: staged into a padded row-major copy ({A.why_not_tma() or 'it is not row-major'})")
        a_arr = staging.stage(A.device_array, stream, launches)
    else:
        a_arr = A.map_array()
    b_how, b_arr, b_rows = _b_layout(B, k, n, bk)
    if b_how == "stage":
        lines.append(f"b: staged into a stacked K-major copy ({b_arr})")
        b_bits = B.device_array
        b_arr = staging.buffer_of((groups * n, staging.padded_cols(k, b_bits.dtype.itemsize)), b_bits.dtype, stream)
        for g in range(groups):
            src, dst = B.viewed((n, k), B.strides[:0:-1], g * B.strides[0]).device_array, b_arr[g * n:(g + 1) * n]
            launches.append(lambda src=src, dst=dst: staging.copy(src, dst, stream))
        b_how, b_rows = "k", n
    else:
        lines.append("b: read by TMA as " + ("K-major tiles" if b_how == "k" else "MN-major tiles (wgmma trans_b)"))
    given = configs.Config() if config is None else config
    configs.check(dtype, given)
    if given.cluster == 2 or (given.split_k or 1) > 1:
        raise ValueError("grouped_matmul: config.cluster and config.split_k must be 1 (or None) for grouped GEMMs")
    sms = sm_count()
    tile_n = given.tile_n or TILE_N[TYPES[dtype][0]][0]
    stages = given.stages or configs.stages_for(dtype, tile_n, -(-k // bk))
    tma_out = tma_output(O, out_dtype)
    kern = Kernel(dtype, b_how, tile_n, stages, grouped=True, out="tma" if tma_out else "direct",
                  out_dtype=out_dtype, epilogue=None if e.empty() else epilogues.compose(e))
    gemm, smem_plan = build(kern)
    desc_a, desc_b, desc_c = kern.maps(a_arr, b_arr, O.map_array() if tma_out else None)
    tiles_n = -(-n // tile_n)
    most_tiles = (-(-rows // BM) + groups) * tiles_n
    grid = min(given.blocks or sms, most_tiles)
    out_arr = O.device_array
    args = (desc_a, desc_b, desc_c, out_arr, placeholder(np.float32, 3), placeholder(np.int32, 1), 0, tiles_n,
            -(-k // bk), np.float32(scale), 1, O_.device_array, groups, b_rows, e_args)
    launches.append(lambda: launch(gemm, grid, THREADS, *args, shared_mem=smem_plan.nbytes, stream=stream))
    lines.append(f"kernel: persistent warp-specialised wgmma over the groups' tiles (offsets read on the device), "
                 f"tile 128x{tile_n}x{bk}, {stages}-stage TMA ring, {grid} blocks of {THREADS} threads; "
                 + ("output by TMA stores where a tile's 64-row half lies inside its group, from registers "
                    "(bounded by the group's end row) where a group ends" if tma_out else
                    "output stored from registers, bounded by each group's end row"))
    if not e.empty():
        lines.append(f"epilogue (fused): {e.steps()}")
    return Plan(title, lines, launches, out)
