"""``numba_tma.gemm.matmul``, ``plan``, ``tune`` and ``explain``: a product on the user's own
arrays, its kernel and configuration chosen (:mod:`.config`), operands TMA cannot address staged
(:mod:`.staging`), the epilogue's arguments checked (:mod:`.epilogue_arguments`) and fused
(:mod:`.epilogues`), a call seen before launched again without planning (:mod:`.calls`)."""

import functools
import numbers

import numba
import numpy as np

from .. import launch
from ..arrays import empty, operand, placeholder
from ..ops import BACKEND
from . import config as configs
from . import calls, epilogues, split_k, staging, tuning
from .epilogue_arguments import epilogue_of
from .kernels import BM, THREADS, TYPES, Kernel, build

OUT_NAMES = {"bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16", "f16": "f16", "float16": "f16",
             "half": "f16", "torch.float16": "f16", "f32": "f32", "float32": "f32", "float": "f32",
             "torch.float32": "f32"}


class Plan:
    """One call's work: its kernels' launches (staging copies first), its output and the reasons
    for each choice.  ``launch()`` runs it (again: the same arrays, the same maps), ``run()``
    launches and returns the output, ``explain()`` says what runs and why."""

    def __init__(self, title, lines, launches, out, facts=None):
        self.title, self.lines, self.launches, self.out, self.facts = title, lines, launches, out, facts
        self.again = None

    def launch(self):
        for run in self.launches:
            run()

    def run(self):
        self.launch()
        return self.out

    def explain(self):
        return "\n".join([self.title] + [f"  {line}" for line in self.lines])

    __str__ = explain


def out_dtype_name(out_dtype, name="out_dtype"):
    """``out_dtype`` (a string, numpy or torch dtype) as "bf16", "f16" or "f32"."""
    key = str(out_dtype)
    if key not in OUT_NAMES:
        raise ValueError(f"matmul: argument {name!r} must be bf16, f16 or f32 (a name, a numpy or torch dtype); "
                         f"got {out_dtype!r}")
    return OUT_NAMES[key]


SIMULATED_SMS = 2      # the simulator's device says no SM count: two blocks (the persistent loop runs)


@functools.lru_cache(maxsize=None)
def _device_name():
    from numba import cuda
    return getattr(cuda.get_current_device(), "name", "simulator")


@functools.lru_cache(maxsize=None)
def sm_count():
    """The SMs of the current device: one persistent block each."""
    from numba import cuda
    return getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", SIMULATED_SMS)


def number(name, value):
    """``value`` (the argument ``name``) as a float: a real number, not a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"matmul: argument {name!r} must be a number; got {value!r}")
    return float(value)


def _layouts(A, B, k_major_only):
    """How the kernel reads A and B: ("k", array) for A; ("k" | "n", array) for B, or a staging
    reason in place of the array."""
    a_how = A.why_not_tma() if A.row_major else 'it is not row-major'
    if a_how is not None:
        a = ("stage", a_how)
    else:
        a = ("k", A.map_array())
    bt = B.transposed()
    if B.col_major and bt.tma_ok():
        b = ("k", bt.map_array())
    elif B.row_major and not k_major_only and B.tma_ok():
        b = ("n", B.map_array())
    else:
        b = ("stage", "fp8 tiles must be K-major" if B.row_major and k_major_only else (B.why_not_tma() or 'it is neither row- nor column-major'))
    return a, b


def tma_output(O, out_dtype):
    """Whether TMA stores the output ``O`` (16-bit, rows of whole 16-byte chunks, aligned)."""
    return out_dtype in ("bf16", "f16") and O.row_major and O.tma_ok("store")


def output(out, wanted, stream, caller="matmul"):
    """The ``out`` argument's operand: its own type, or ``wanted`` where it holds raw bits."""
    try:
        return operand(out, "out", stream=stream, caller=caller)
    except TypeError:
        return operand(out, "out", dtype=wanted, stream=stream, caller=caller)


def plan(a, b, *, out=None, bias=None, activation=None, epilogue=None, epilogue_args=(), alpha=1.0, beta=0.0, c=None,
         residual=None, out_dtype=None, a_scale=None, b_scale=None, config=None, dtype=None):
    """The :class:`Plan` of ``matmul(a, b, ...)`` (same arguments), checked and built, not launched."""
    A = operand(a, "a", dtype=dtype)
    stream = A.stream
    B = operand(b, "b", dtype=dtype, stream=stream)
    for op in (A, B):
        if len(op.shape) != 2:
            raise ValueError(f"matmul: argument {op.name!r} must be 2-D; got {len(op.shape)} dimensions")
        if op.dtype not in TYPES:
            raise TypeError(f"matmul: argument {op.name!r} must hold bf16, f16, e4m3 or e5m2 values; got {op.dtype}")
    (m, k), (k2, n) = A.shape, B.shape
    if k2 != k:
        raise ValueError(f"matmul: argument 'b' must have a's {k} columns as rows (a is {m} x {k}); b is {k2} x {n}")
    if A.dtype != B.dtype:
        raise TypeError(f"matmul: arguments 'a' and 'b' must hold one type; got {A.dtype} and {B.dtype}")
    if k == 0:
        raise ValueError("matmul: argument 'a' must have at least one column (K >= 1)")
    dtype = A.dtype
    alpha, beta = number("alpha", alpha), number("beta", beta)
    out_dtype = out_dtype_name(out_dtype) if out_dtype is not None else None
    O = None if out is None else output(out, out_dtype or ("bf16" if TYPES[dtype][0] == 1 else dtype), stream)
    if out_dtype is None:
        out_dtype = O.dtype if O is not None else "bf16" if TYPES[dtype][0] == 1 else dtype
    e, e_args, factor = epilogue_of(m, n, stream, "f16" if dtype == "f16" else "bf16", bias=bias, activation=activation, epilogue=epilogue,
                                    epilogue_args=epilogue_args, beta=beta, c=c, residual=residual,
                                    a_scale=a_scale, b_scale=b_scale)
    scale = alpha * factor
    if out is None:
        out, O = empty((m, n), out_dtype, like=A)
    else:
        if tuple(O.shape) != (m, n):
            raise ValueError(f"matmul: argument 'out' must have shape ({m}, {n}); got {tuple(O.shape)}")
        if O.dtype != out_dtype:
            raise TypeError(f"matmul: argument 'out' must hold {out_dtype} values (out_dtype); got {O.dtype}")
    title = f"numba_tma.gemm.matmul: {m} x {n} x {k}, {dtype} inputs -> {out_dtype}"
    if m == 0 or n == 0:
        return Plan(title, ["an empty output: nothing runs"], [], out)
    lines, launches = [], []
    (a_how, a_arr), (b_how, b_arr) = _layouts(A, B, TYPES[dtype][0] == 1)
    if a_how == "stage":
        lines.append(f"A: staged into a padded row-major copy ({a_arr}): one extra read and write of A")
        a_arr, a_how = staging.stage(A.device_array, stream, launches), "k"
    else:
        lines.append("A: row-major, read by TMA as K-major tiles")
    if b_how == "stage":
        lines.append(f"B: staged into a padded K-major copy of b.T ({b_arr}): one extra read and write of B")
        b_arr, b_how = staging.stage(B.transposed().device_array, stream, launches), "k"
    else:
        lines.append("B: column-major, read by TMA as K-major tiles" if b_how == "k" else
                     "B: row-major, read by TMA as MN-major tiles (wgmma trans_b)")
    tma_out = tma_output(O, out_dtype)
    no_epilogue = e.empty()
    sms = sm_count()
    facts = {"dtype": dtype, "m": m, "n": n, "k": k,
             "key": {"device": _device_name(), "dtype": dtype, "m": m, "n": n, "k": k, "b_how": b_how,
                     "out_dtype": out_dtype, "tma_out": tma_out, "no_epilogue": no_epilogue}}
    if isinstance(config, str) and config == "autotune":
        keywords = dict(out=out, bias=bias, activation=activation, epilogue=epilogue, epilogue_args=epilogue_args,
                        alpha=alpha, beta=beta, c=c, residual=residual, out_dtype=out_dtype, a_scale=a_scale,
                        b_scale=b_scale, dtype=dtype)
        config = tuning.tuned(tuning.key(**facts["key"]), lambda: autotune(a, b, **keywords))
        lines.append("config: autotuned (" + ", ".join(f"{k}={v}" for k, v in config.fields().items()
                                                       if v is not None) + ")")
    given = configs.Config() if config is None else config
    configs.check(dtype, given)
    chosen, why = configs.choose(dtype, m, n, k, sms, given=given)
    bk = 128 // TYPES[dtype][0]
    split = chosen.split_k > 1
    kern = Kernel(dtype, b_how, chosen.tile_n, chosen.stages, pair=chosen.cluster == 2, split=split,
                  out="tma" if tma_out else "direct", out_dtype=out_dtype,
                  epilogue=None if no_epilogue else epilogues.compose(e))
    gemm, smem_plan = build(kern)
    desc_a, desc_b, desc_c = kern.maps(a_arr, b_arr, O.map_array() if tma_out else None)
    out_arr = placeholder(np.float32) if tma_out else O.device_array
    tiles_m, tiles_n, k_tiles = -(-m // BM), -(-n // chosen.tile_n), -(-k // bk)
    if split:                   # the splits' float32 partials, summed in the kernel by each tile's last (split_k)
        work_arr = empty((chosen.split_k, m, n), "f32", like=A, name="workspace")[1].device_array
        counters = split_k.counters(2 * (tiles_m + 1) * tiles_n, stream)
    else:
        work_arr, counters = placeholder(np.float32, 3), placeholder(np.int32, 1)
    blocks = chosen.blocks
    if kern.pair:
        grid = 2 * max(1, min(blocks // 2, -(-tiles_m // 2) * tiles_n * chosen.split_k))
    else:
        grid = min(blocks, tiles_m * tiles_n * chosen.split_k)
    args = (desc_a, desc_b, desc_c, out_arr, work_arr, counters, tiles_m, tiles_n, k_tiles, np.float32(scale),
            chosen.split_k, placeholder(np.int32, 1), 0, 0, e_args)
    cluster = (2, 1, 1) if kern.pair else (1, 1, 1)
    launches.append(lambda: launch(gemm, grid, THREADS, *args, shared_mem=smem_plan.nbytes, cluster=cluster,
                                   stream=stream))
    mma_k = 16 if TYPES[dtype][0] == 2 else 32
    lines.append(f"kernel: persistent warp-specialised wgmma, tile 128x{chosen.tile_n}x{bk} (m64n{chosen.tile_n}"
                 f"k{mma_k}, two consumer warpgroups), {chosen.stages}-stage TMA ring, "
                 f"{'clusters of 2 sharing B by TMA multicast' if kern.pair else 'no clusters'}, "
                 f"split-K {chosen.split_k}, {configs.counted(grid, 'block')} of {THREADS} threads for "
                 f"{configs.counted(tiles_m * tiles_n, 'tile')}")
    if not no_epilogue:
        lines.append(f"epilogue (fused, on the accumulator): {e.steps()}")
    if scale != 1:
        lines.append(f"scale: the accumulator times {scale:g} (alpha and per-tensor scales)")
    if split:
        lines.append(f"split-K: each split's float32 partial into a ({chosen.split_k}, M, N) workspace; each "
                     "tile's last split sums them in a fixed order (split 0 first), then the epilogue, in the "
                     "same launch")
    lines.append("output: TMA stores of 64 x 64 swizzled boxes" if tma_out else
                 "output: stored from registers (" + ("float32 output" if out_dtype == "f32" else
                                                     "TMA cannot store to it: " + (O.why_not_tma("store") or
                                                                                   "it is not row-major"))
                 + ")")
    lines.append("chosen: " + ("; ".join(why) if why else "as config= says"))
    made = Plan(title, lines, launches, out, facts)
    if not any(line.startswith(("A: staged", "B: staged")) for line in lines):
        made.again = calls.Again(args, gemm, grid, smem_plan.nbytes, cluster, stream, tma_out, chosen.split_k,
                                 (m, n), out_dtype, A)
    return made


def matmul(a, b, *, out=None, bias=None, activation=None, epilogue=None, epilogue_args=(), alpha=1.0, beta=0.0,
           c=None, residual=None, out_dtype=None, a_scale=None, b_scale=None, config=None, dtype=None):
    """``a @ b`` with a fused epilogue, on the caller's arrays (PyTorch tensors, CuPy arrays,
    numba device arrays; on PyTorch's current stream for torch tensors).  See docs/gemm.md.

    ``a`` (M x K) and ``b`` (K x N): bf16, f16, fp8 e4m3 or e5m2, each row- or column-major (any
    other layout, a misaligned base or a row pitch TMA cannot use is staged: ``explain`` says so).
    The element (row, col) of the result is ``alpha * (a @ b) * a_scale * b_scale``, plus
    ``beta * c``, plus ``bias``, through ``activation`` (relu, gelu, gelu_tanh, silu), plus
    ``residual``, through ``epilogue(value, row, col, *epilogue_args)``, cast to ``out_dtype``
    (bf16, f16 or f32; default: the inputs' 16-bit type, bf16 for fp8).  ``config``: a
    :class:`Config` (its set fields win), "autotune", or None (chosen).  ``dtype``: the inputs'
    type where their arrays hold raw bits (numba and CuPy arrays have no bfloat16 or fp8: uint16
    bits with ``dtype="bf16"``, uint8 with ``"e4m3"`` / ``"e5m2"``).  Returns ``out`` (a new array
    of ``a``'s kind unless given; bf16 in numba and CuPy arrays as uint16 bits).

    Example::

        # fragment: torch tensors on a GPU
        y = gemm.matmul(x, w.T, bias=b, activation="gelu_tanh")     # gelu(x @ w.T + b), bf16
    """
    keywords = dict(bias=bias, activation=activation, epilogue=epilogue, epilogue_args=epilogue_args, alpha=alpha,
                    beta=beta, c=c, residual=residual, out_dtype=out_dtype, a_scale=a_scale, b_scale=b_scale,
                    config=config, dtype=dtype)
    seen = calls.call_key(a, b, out, keywords)
    if seen is not None:
        a_address, b_address, out_address, key = seen
        again = calls.SEEN.get(key)
        if again is not None:
            calls.SEEN.move_to_end(key)
            return again.run(a_address, b_address, out, out_address)
    made = plan(a, b, out=out, **keywords)
    if seen is not None and made.again is not None:
        calls.remember(seen[3], made.again)
    return made.run()


def autotune(a, b, *, seconds=None, **keywords):
    """Time ``matmul(a, b, **keywords)`` under each candidate configuration (``seconds(fn)`` times
    a launch; default :func:`numba_tma.testing.gpu_seconds`), remember the fastest for the call's
    device, types and shape class (:mod:`.tuning`: ``config="autotune"`` reuses it) and return
    it, a :class:`Config`."""
    from ..testing import gpu_seconds

    keywords.pop("config", None)
    facts = plan(a, b, **keywords).facts
    return tuning.fastest(facts, lambda candidate: plan(a, b, config=candidate, **keywords),
                            seconds or gpu_seconds)


def explain(a, b, **keywords):
    """What ``matmul(a, b, **keywords)`` runs and why, in words (nothing is launched; the output
    is allocated if not given)."""
    return plan(a, b, **keywords).explain()
