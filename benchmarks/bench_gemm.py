"""The library's GEMM, ``numba_tma.gemm``, in its DEFAULT call (``gemm.matmul(a, b, ...)``: the
kernel, tile and split it picks by itself, a new output each call) beside cuBLAS (``torch.matmul``;
``torch._scaled_mm`` for fp8; ``torch._addmm_activation`` for bias + GELU; ``torch._grouped_mm``
and a Python loop of ``torch.matmul`` for grouped) and a Triton TMA persistent matmul (bf16 and
fp8, per-tensor and row/column scales; the plain rows), on the same inputs, in one run.

Every implementation's result is first checked against torch in float32 on the same (dequantized)
inputs: the max error / max |C| is printed, and a result over TOLERANCE is reported WRONG and not
timed.  Then the implementations are timed interleaved (``numba_tma.testing.gpu_seconds``, repeats
chosen by flops), the median of ROUNDS rounds; TFLOP/s and ratios (ours / each reference, above 1:
ours faster) are printed, one line a row, with ``gemm.explain(...)`` of the default call shortened to
one line.  The "host overhead" row times the Python call of ``gemm.matmul`` on a small seen shape on
the host (the GPU kept from being the bottleneck: batches of CALLS calls, synchronised between
batches, only the calls timed) against ``gemm.plan(a, b).launch()`` (the bare ``numba_tma.launch``
of the same kernel; target ratio <= 1.2).

    python benchmarks/bench_gemm.py [--quick] [--only SUBSTRING]... [--budget SECONDS]

``--quick``: the QUICK rows; ``--only``: the rows whose name contains the substring (repeatable);
``--budget``: stop starting rows after this many seconds (default BUDGET_S; the rows not reached are
named).  Importable without torch (``ROWS``, ``select``); torch, Triton and ``numba_tma.gemm`` are
imported by ``main``.
"""

import dataclasses
import statistics
import sys
import time

from numba import cuda

from numba_tma.testing import gpu_seconds

ROUNDS = 5
#: max error / max |C| against torch float32 above which a result is WRONG (and not timed): bf16
#: output rounding is 2**-8 of max |C| at most; fp8 adds Hopper's fp8 accumulation (about 14
#: mantissa bits when not promoted: Triton's fp8 kernel reaches 1.0e-2 at K = 8192)
TOLERANCE = {"bf16": 1e-2, "e4m3": 2e-2}
FLOPS_PER_MEASURE = 2e12          # repeats of gpu_seconds: about this many flops per measurement
MAX_REPEATS = 1000
CALLS, BATCHES = 200, 10          # host overhead: timed calls per batch (the GPU syncs between batches)
BUDGET_S = 225                    # benchmarks/gpu_run.sh gives a benchmark 240 s
EPILOGUE_SCALE = 0.5


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of the benchmark.  ``case``: "plain" (``matmul(a, b)``; fp8 with per-tensor
    scales), "bias_gelu", "epilogue", "rowwise" (fp8, a_scale (M, 1) and b_scale (1, N)),
    "grouped" (``grouped_matmul``, ``m`` rows in ``groups`` uneven groups) or "overhead"."""

    name: str
    case: str
    dtype: str
    m: int
    n: int
    k: int
    groups: int = 0


ROWS = (
    Row("bf16 8192x8192x8192", "plain", "bf16", 8192, 8192, 8192),
    Row("bf16 4096x4096x4096", "plain", "bf16", 4096, 4096, 4096),
    Row("bf16 8192x8192x1024", "plain", "bf16", 8192, 8192, 1024),
    Row("bf16 256x8192x8192 (decode)", "plain", "bf16", 256, 8192, 8192),
    Row("bf16 128x8192x8192 (decode)", "plain", "bf16", 128, 8192, 8192),
    Row("e4m3 8192x8192x8192", "plain", "e4m3", 8192, 8192, 8192),
    Row("e4m3 4096x4096x4096", "plain", "e4m3", 4096, 4096, 4096),
    Row("ragged bf16 1000x1000x1000", "plain", "bf16", 1000, 1000, 1000),
    Row("ragged bf16 4097x4096x4096", "plain", "bf16", 4097, 4096, 4096),
    Row("ragged bf16 7x4096x4096", "plain", "bf16", 7, 4096, 4096),
    Row("ragged bf16 8192x8192x8200", "plain", "bf16", 8192, 8192, 8200),
    Row("bias+gelu_tanh bf16 8192x8192x8192", "bias_gelu", "bf16", 8192, 8192, 8192),
    Row("bias+gelu_tanh bf16 4096x4096x4096", "bias_gelu", "bf16", 4096, 4096, 4096),
    Row("epilogue bf16 4096x4096x4096", "epilogue", "bf16", 4096, 4096, 4096),
    Row("e4m3 row/col scales 8192x8192x8192", "rowwise", "e4m3", 8192, 8192, 8192),
    Row("grouped bf16 8 experts 16384x4096x7168", "grouped", "bf16", 16384, 4096, 7168, 8),
    Row("grouped bf16 64 experts 16384x4096x7168", "grouped", "bf16", 16384, 4096, 7168, 64),
    Row("host overhead bf16 128x128x128", "overhead", "bf16", 128, 128, 128),
)
QUICK = ("bf16 4096x4096x4096", "e4m3 4096x4096x4096", "ragged bf16 1000x1000x1000",
         "bias+gelu_tanh bf16 4096x4096x4096", "epilogue bf16 4096x4096x4096",
         "grouped bf16 8 experts 16384x4096x7168", "host overhead bf16 128x128x128")


def select(argv):
    """The rows ``argv`` asks for (``--quick``, ``--only SUBSTRING`` repeatable: a row is kept when
    its name contains any of them), in ROWS' order."""
    rows = [r for r in ROWS if r.name in QUICK] if "--quick" in argv else list(ROWS)
    only = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--only"]
    if only:
        rows = [r for r in rows if any(s in r.name for s in only)]
    return rows


def budget(argv):
    return float(argv[argv.index("--budget") + 1]) if "--budget" in argv[:-1] else BUDGET_S


@cuda.jit(device=True)
def scale_plus_row_mod_3(v, r, c, scale):
    """The user epilogue of the "epilogue" row: ``value * scale + row % 3``."""
    return v * scale + r % 3


# -- the Triton peer ------------------------------------------------------------------------------

def triton_matmul():
    """The peer: a Triton TMA-descriptor persistent matmul (GROUP_M-grouped tile order, one program
    per SM), ``run(a, w, a_scale=None, b_scale=None)`` -> a new bf16 ``a @ w.T`` (``w``: N x K,
    K-major, as a torch weight; the benchmark's ``b`` is ``w.T``), times ``a_scale * b_scale`` for
    fp8: 0-d tensors (per tensor) or (M, 1) and (1, N) float32 tensors (per row and column).
    None without Triton (or torch).  (Moved here from examples/gemm.py.)"""
    try:
        import torch
        import triton
        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:
        return None

    @triton.jit
    def kernel(a_desc, b_desc, c_desc, sa_ptr, sb_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, SCALES: tl.constexpr):
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
            if SCALES == 1:                     # per tensor
                acc = acc * (tl.load(sa_ptr) * tl.load(sb_ptr))
            elif SCALES == 2:                   # per row of A, per column of B
                offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
                offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
                sa = tl.load(sa_ptr + offs_m, mask=offs_m < M, other=0.0)
                sb = tl.load(sb_ptr + offs_n, mask=offs_n < N, other=0.0)
                acc = acc * sa[:, None] * sb[None, :]
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))

    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    dummy = torch.ones(1, dtype=torch.float32, device="cuda")

    def run(a, w, a_scale=None, b_scale=None):
        fp8 = a.element_size() == 1
        bm, bn, bk = (128, 256, 128) if fp8 else (128, 256, 64)
        m, k = a.shape
        n = w.shape[0]
        c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
        descs = [TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(w, [bn, bk]),
                 TensorDescriptor.from_tensor(c, [bm, bn])]
        scales = 0 if a_scale is None else 1 if a_scale.numel() == 1 else 2
        grid = (min(sms, triton.cdiv(m, bm) * triton.cdiv(n, bn)),)
        kernel[grid](*descs, dummy if a_scale is None else a_scale, dummy if b_scale is None else b_scale,
                     m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_SMS=sms, SCALES=scales,
                     num_stages=3, num_warps=8)
        return c
    return run


# -- the rows' inputs and implementations -----------------------------------------------------------

@dataclasses.dataclass
class Case:
    """A row's implementations (name -> a call returning its result; "ours" first), the float32
    reference, its flops and the ``gemm.explain`` of the default call (or a note)."""

    fns: dict
    want: object
    flops: float
    explain: str
    missing: list = dataclasses.field(default_factory=list)   # references that could not be set up
    note: str = ""


def _explain(gemm, a, b, **kw):
    try:
        text = gemm.explain(a, b, **kw)
    except Exception as exc:  # noqa: BLE001 - a broken explain is reported, the row goes on
        return f"explain failed: {type(exc).__name__}: {str(exc)[:80]}"
    return " ".join(str(text).split())[:160]


def _weights(torch, row, fp8):
    """A (M x K) and the weight W (N x K, K-major) of ``row``; bf16, or e4m3 with per-tensor
    float32 scales (0-d), or with ``rowwise`` (M, 1) and (1, N) scales.  ``b = W.T`` (column-major)."""
    a = torch.randn((row.m, row.k), device="cuda")
    w = torch.randn((row.n, row.k), device="cuda")
    if not fp8:
        return a.to(torch.bfloat16), w.to(torch.bfloat16), None, None
    if row.case == "rowwise":
        sa = a.abs().amax(dim=1, keepdim=True) / 448             # (M, 1)
        sw = w.abs().amax(dim=1, keepdim=True) / 448             # (N, 1): a column of b each
        a8, w8 = (a / sa).to(torch.float8_e4m3fn), (w / sw).to(torch.float8_e4m3fn)
        return a8, w8, sa.float().contiguous(), sw.T.float().contiguous()       # b_scale (1, N)
    sa, sw = a.abs().max() / 448, w.abs().max() / 448             # 0-d
    return (a / sa).to(torch.float8_e4m3fn), (w / sw).to(torch.float8_e4m3fn), sa.float(), sw.float()


def matmul_case(torch, gemm, triton_run, row):
    fp8 = row.dtype == "e4m3"
    a, w, sa, sb = _weights(torch, row, fp8)
    b = w.T                                                      # K x N, column-major (x @ W.T)
    flops = 2.0 * row.m * row.n * row.k
    if fp8:
        want = (a.float() * sa) @ (b.float() * sb)
        kw = {"a_scale": sa, "b_scale": sb}
        fns = {"ours": lambda: gemm.matmul(a, b, a_scale=sa, b_scale=sb),
               "cuBLAS": lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)}
    else:
        want = a.float() @ b.float()
        kw = {}
        fns = {"ours": lambda: gemm.matmul(a, b), "cuBLAS": lambda: torch.matmul(a, b)}
    missing = []
    if triton_run is None:
        missing.append("Triton (not installed)")
    else:
        fns["Triton"] = lambda: triton_run(a, w, sa, sb)
    return Case(fns, want, flops, _explain(gemm, a, b, **kw), missing)


def bias_gelu_case(torch, gemm, triton_run, row):
    a, w, _, _ = _weights(torch, row, False)
    b = w.T
    bias = torch.randn(row.n, device="cuda").to(torch.bfloat16)
    want = torch.nn.functional.gelu(a.float() @ b.float() + bias.float(), approximate="tanh")
    fns = {"ours": lambda: gemm.matmul(a, b, bias=bias, activation="gelu_tanh")}
    missing = []
    if hasattr(torch, "_addmm_activation"):       # cuBLASLt's fused bias + GELU (tanh) epilogue
        fns["cuBLAS"] = lambda: torch._addmm_activation(bias, a, b, use_gelu=True)
    else:
        missing.append("cuBLAS fused (torch._addmm_activation missing)")
    fns["addmm+gelu"] = lambda: torch.nn.functional.gelu(torch.addmm(bias, a, b), approximate="tanh")
    return Case(fns, want, 2.0 * row.m * row.n * row.k,
                _explain(gemm, a, b, bias=bias, activation="gelu_tanh"), missing)


def epilogue_case(torch, gemm, triton_run, row):
    a, w, _, _ = _weights(torch, row, False)
    b = w.T
    rows_mod_3 = (torch.arange(row.m, device="cuda") % 3).to(torch.float32)[:, None]
    rows_mod_3_bf16 = rows_mod_3.to(torch.bfloat16)
    want = (a.float() @ b.float()) * EPILOGUE_SCALE + rows_mod_3
    kw = {"epilogue": scale_plus_row_mod_3, "epilogue_args": (EPILOGUE_SCALE,)}
    fns = {"ours": lambda: gemm.matmul(a, b, **kw),
           "torch": lambda: torch.matmul(a, b).mul_(EPILOGUE_SCALE).add_(rows_mod_3_bf16)}
    return Case(fns, want, 2.0 * row.m * row.n * row.k, _explain(gemm, a, b, **kw))


def group_sizes(rows, groups, seed=0):
    """``groups`` uneven sizes summing to ``rows``: a Dirichlet draw (alpha 0.6: some groups small,
    a few maybe empty) rounded down, the remainder given to the largest; fixed seed."""
    import numpy as np

    rng = np.random.default_rng(seed + groups)
    sizes = np.floor(rng.dirichlet(np.full(groups, 0.6)) * rows).astype(np.int64)
    sizes[int(np.argmax(sizes))] += rows - int(sizes.sum())
    return [int(s) for s in sizes]


def grouped_case(torch, gemm, triton_run, row):
    import numpy as np

    sizes = group_sizes(row.m, row.groups)
    ends = np.cumsum(sizes).tolist()
    starts = [0] + ends[:-1]
    offsets = torch.tensor(ends, dtype=torch.int32, device="cuda")
    a = torch.randn((row.m, row.k), device="cuda").to(torch.bfloat16)
    # the experts' weights (groups, N, K), K-major as torch keeps them; b = their transpose
    # (groups, K, N), column-major in each group: the layout torch._grouped_mm's callers pass
    # (torchtitan's MoE: w.transpose(-2, -1)) and the one its fp8 sibling requires
    w = torch.randn((row.groups, row.n, row.k), device="cuda").to(torch.bfloat16)
    b = w.transpose(-2, -1)
    want = torch.empty((row.m, row.n), dtype=torch.float32, device="cuda")
    for g, (s, e) in enumerate(zip(starts, ends)):
        if e > s:
            want[s:e] = a[s:e].float() @ b[g].float()

    def loop():
        out = torch.empty((row.m, row.n), dtype=torch.bfloat16, device="cuda")
        for g, (s, e) in enumerate(zip(starts, ends)):
            if e > s:
                torch.matmul(a[s:e], b[g], out=out[s:e])
        return out

    fns = {"ours": lambda: gemm.grouped_matmul(a, b, offsets)}
    missing = []
    if hasattr(torch, "_grouped_mm"):
        fns["_grouped_mm"] = lambda: torch._grouped_mm(a, b, offs=offsets)
    else:
        missing.append("_grouped_mm (torch._grouped_mm missing)")
    fns["loop"] = loop
    note = f"groups {min(sizes)}..{max(sizes)} rows ({sum(1 for s in sizes if s < 128)} under 128)"
    return Case(fns, want, 2.0 * row.m * row.n * row.k, "(gemm.explain: matmul only)", missing, note)


CASES = {"plain": matmul_case, "rowwise": matmul_case, "bias_gelu": bias_gelu_case, "epilogue": epilogue_case,
         "grouped": grouped_case}


def relative_error(torch, got, want):
    return float((got.float() - want).abs().max() / want.abs().max())


def run_case(torch, case, tolerance):
    """Each implementation checked once (its error, or why it failed), then the right ones timed
    interleaved: {name: TFLOP/s}, {name: error or a message}."""
    errors, right = {}, {}
    for name, fn in case.fns.items():
        try:
            got = fn()
            torch.cuda.synchronize()
            error = relative_error(torch, got, case.want)
            del got
        except Exception as exc:  # noqa: BLE001 - an implementation that cannot run is reported, not fatal
            errors[name] = f"failed: {type(exc).__name__}: {' '.join(str(exc).split())[:120]}"
            continue
        if not error <= tolerance:               # (NaN too)
            errors[name] = f"WRONG: error {error:.2e} of max |C| > {tolerance:g}, not timed"
            continue
        errors[name], right[name] = error, fn
    repeats = max(3, min(MAX_REPEATS, int(FLOPS_PER_MEASURE / case.flops)))
    times = {name: [] for name in right}
    for _ in range(ROUNDS):
        for name, fn in right.items():
            times[name].append(gpu_seconds(fn, repeats))
    return {name: case.flops / statistics.median(t) / 1e12 for name, t in times.items()}, errors


def format_row(row, case, tflops, errors):
    cells = []
    for name in case.fns:
        if name in tflops:
            cells.append(f"{name} {tflops[name]:6.0f} ({errors[name]:.1e})")
        else:
            cells.append(f"{name}: {errors[name]}")
    cells += [f"{m}: n/a" for m in case.missing]
    ours = tflops.get("ours")
    ratios = "  ".join(f"ours/{name} {ours / v:.3f}" for name, v in tflops.items()
                       if name != "ours" and ours is not None) or "no ratio"
    note = f"  [{case.note}]" if case.note else ""
    return f"{row.name:40s} " + "  ".join(cells) + f"  | {ratios}{note}\n{'':40s} kernel: {case.explain}"


# -- host overhead ------------------------------------------------------------------------------------

def host_seconds(fn, synchronize, calls=CALLS, batches=BATCHES):
    """Seconds of host time per call of ``fn``: ``batches`` batches of ``calls`` calls, the GPU
    synchronised before each batch (so the launch queue never fills and the GPU is not the
    bottleneck), only the calls timed."""
    fn()
    total = 0.0
    for _ in range(batches):
        synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        total += time.perf_counter() - start
    synchronize()
    return total / (calls * batches)


def overhead_row(torch, gemm, row):
    a, w, _, _ = _weights(torch, row, False)
    b = w.T
    want = a.float() @ b.float()
    out = torch.empty((row.m, row.n), dtype=torch.bfloat16, device="cuda")
    fns = {"matmul(a, b)": lambda: gemm.matmul(a, b), "matmul(a, b, out=)": lambda: gemm.matmul(a, b, out=out),
           "torch.matmul": lambda: torch.matmul(a, b)}
    notes = []
    for name in ("matmul(a, b)", "matmul(a, b, out=)"):
        try:
            error = relative_error(torch, fns[name](), want)
        except Exception as exc:  # noqa: BLE001
            notes.append(f"{name} failed: {type(exc).__name__}: {str(exc)[:100]}")
            del fns[name]
            continue
        if not error <= TOLERANCE["bf16"]:
            notes.append(f"{name} WRONG: error {error:.2e}, not timed")
            del fns[name]
    try:
        plan = gemm.plan(a, b)
        fns["plan.launch()"] = plan.launch
        plan.launch()
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - gemm.plan missing or failing: said, the rest timed
        notes.append(f"gemm.plan(a, b).launch() unavailable: {type(exc).__name__}: {str(exc)[:100]}")
        fns.pop("plan.launch()", None)
    times = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(host_seconds(fn, torch.cuda.synchronize))
    us = {name: statistics.median(t) * 1e6 for name, t in times.items()}
    cells = "  ".join(f"{name} {v:.2f} us" for name, v in us.items())
    launch = us.get("plan.launch()")
    ratios = "  ".join(f"{name}/launch {us[name] / launch:.2f}" for name in ("matmul(a, b)", "matmul(a, b, out=)")
                       if launch and name in us)
    ratios = f"{ratios} (target <= 1.2)" if ratios else "no ratio"
    return (f"{row.name:40s} host time per call: {cells}  | {ratios}" + "".join(f"; {n}" for n in notes)
            + f"\n{'':40s} kernel: {_explain(gemm, a, b)}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rows = select(argv)
    try:
        import torch
    except ImportError:
        print("bench_gemm: needs torch (with CUDA)")
        return 1
    try:
        from numba_tma import gemm
    except ImportError as exc:
        print(f"bench_gemm: numba_tma.gemm is not importable: {exc}")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False          # the float32 references in float32
    torch.manual_seed(0)
    triton_run = triton_matmul()
    deadline = time.monotonic() + budget(argv)
    print(f"bench_gemm: the default gemm.matmul call; median of {ROUNDS} interleaved rounds, "
          f"{torch.cuda.get_device_name()}; TFLOP/s (max error / max |C| against torch float32)"
          + ("" if triton_run else "; Triton not installed: no Triton column"))
    for i, row in enumerate(rows):
        if time.monotonic() > deadline:
            print(f"bench_gemm: budget spent; not run: {', '.join(r.name for r in rows[i:])}")
            break
        try:
            if row.case == "overhead":
                print(overhead_row(torch, gemm, row), flush=True)
                continue
            case = CASES[row.case](torch, gemm, triton_run, row)
            tflops, errors = run_case(torch, case, TOLERANCE[row.dtype])
            print(format_row(row, case, tflops, errors), flush=True)
        except Exception as exc:  # noqa: BLE001 - a row that cannot be set up is reported, the run goes on
            print(f"{row.name:40s} failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}", flush=True)
        finally:
            case = None
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
