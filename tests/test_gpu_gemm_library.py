"""The library's GEMM, ``numba_tma.gemm``, on the GPU with torch: ``gemm.matmul`` and
``gemm.grouped_matmul`` checked against float64 references that torch computes on the CPU from the
same (dequantized) inputs, never with the library: every input dtype (bf16, f16, e4m3, e5m2) x
layouts of a and b (row- or column-major: torch ``.T`` views) x output dtype, ragged shapes (K not
a multiple of 8, N not a multiple of 8, M = 7), the epilogue (bias per column and per row, alpha,
beta and c, each activation, residual, a user epilogue with arguments, all at once, in the order
the API gives), fp8 scales per tensor (floats, 0-d and 1-element tensors) and per row / column,
``out=``, misaligned operands (a base 2 bytes past 16-byte alignment, a row pitch not a multiple of
16 bytes), numba and CuPy arrays, torch's current stream, grouped GEMMs (an empty group, groups
under 128 rows; the list form), refusals naming the argument, and ``explain``.

GPU + torch only (skipped without them, or while ``numba_tma.gemm`` is missing); the simulator's
tests of the library live elsewhere.  Tolerances, of max |C|: 16-bit output 2**-7 (its rounding,
with margin), float32 output from 16-bit inputs 1e-3; fp8 inputs add 1e-2 (Hopper's fp8
accumulation)."""

import importlib.util
import math
import re

import numpy as np
import pytest
from numba import cuda, float32

try:
    import torch
except ImportError:
    torch = None

HAVE_GEMM = importlib.util.find_spec("numba_tma.gemm") is not None
if HAVE_GEMM:
    from numba_tma import gemm

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.timeout(300, method="thread"),          # a test may compile a few kernel variants
    pytest.mark.skipif(torch is None, reason="needs torch"),
    pytest.mark.skipif(torch is not None and not torch.cuda.is_available(), reason="torch sees no CUDA GPU"),
    pytest.mark.skipif(not HAVE_GEMM, reason="numba_tma.gemm is not in this tree"),
]

DTYPES = ("bf16", "f16", "e4m3", "e5m2")
FP8 = ("e4m3", "e5m2")
OUT_DTYPES = ("bf16", "f16", "f32")
M, N, K = 300, 520, 200                                  # ragged: no dimension a multiple of 128


def torch_dtype(name):
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
            "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[name]


def operand(shape, dtype, layout="row", seed=0):
    """A CUDA tensor of ``shape`` and ``dtype`` (standard normal values rounded to it), row-major,
    or column-major (``layout="col"``: the ``.T`` view of a row-major tensor of the reversed shape)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tuple(shape) if layout == "row" else tuple(shape)[::-1], generator=g)
    x = x.cuda().to(torch_dtype(dtype))
    return x if layout == "row" else x.T


def f64(x):
    """A tensor's values in float64 on the CPU (fp8 and 16-bit values are exact in float32)."""
    return x.detach().float().double().cpu()


def default_out_dtype(dtype):
    return "bf16" if dtype in FP8 else dtype


def tolerance(inputs, out):
    return (1e-3 if out == "f32" else 2 ** -7) + (1e-2 if inputs in FP8 else 0.0)


def assert_close(got, want, tol, what=""):
    """``got`` (a tensor) within ``tol`` of max |want| of the float64 ``want`` everywhere (NaN fails)."""
    got = f64(got)
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)}, want {tuple(want.shape)}"
    scale = float(want.abs().max())
    error = float((got - want).abs().max())
    assert error <= tol * scale, (f"{what}: max error {error:.3g} is {error / scale:.3g} of max |C| = {scale:.3g} "
                                  f"(allowed {tol:g})")


def fp8_scales(dtype):
    return {"a_scale": 0.5, "b_scale": 0.25} if dtype in FP8 else {}


def fp8_factor(dtype):
    return 0.5 * 0.25 if dtype in FP8 else 1.0


# -- dtypes, layouts, output dtypes, shapes ---------------------------------------------------------

@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("b_layout", ["row", "col"])
@pytest.mark.parametrize("a_layout", ["row", "col"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_every_dtype_layout_and_output(dtype, a_layout, b_layout, out_dtype):
    a, b = operand((M, K), dtype, a_layout, 1), operand((K, N), dtype, b_layout, 2)
    got = gemm.matmul(a, b, out_dtype=out_dtype, **fp8_scales(dtype))
    assert isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == torch_dtype(out_dtype)
    want = fp8_factor(dtype) * (f64(a) @ f64(b))
    assert_close(got, want, tolerance(dtype, out_dtype), f"{dtype} a {a_layout} b {b_layout} -> {out_dtype}")


@pytest.mark.parametrize("b_layout", ["row", "col"])
@pytest.mark.parametrize("m, n, k", [(130, 263, 77), (7, 136, 72), (1, 24, 8)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_ragged_shapes_with_the_default_output(dtype, m, n, k, b_layout):
    """K = 77 (rows of 154 or 77 bytes), N = 263 (the output's rows of 526 bytes), M = 7 and 1: the
    default output dtype (a's for 16-bit inputs, bf16 for fp8)."""
    a, b = operand((m, k), dtype, "row", 3), operand((k, n), dtype, b_layout, 4)
    got = gemm.matmul(a, b, **fp8_scales(dtype))
    assert got.dtype == torch_dtype(default_out_dtype(dtype))
    assert_close(got, fp8_factor(dtype) * (f64(a) @ f64(b)), tolerance(dtype, default_out_dtype(dtype)),
                 f"{dtype} {m}x{n}x{k}")


def test_matmul_takes_a_torch_dtype_as_out_dtype():
    a, b = operand((M, K), "bf16", "row", 5), operand((K, N), "bf16", "col", 6)
    got = gemm.matmul(a, b, out_dtype=torch.float32)
    assert got.dtype == torch.float32
    assert_close(got, f64(a) @ f64(b), 1e-3)


def test_matmul_leaves_its_inputs_alone():
    a, b = operand((M, K), "bf16", "row", 7), operand((K, N), "bf16", "col", 8)
    a0, b0 = a.clone(), b.clone()
    gemm.matmul(a, b, bias=operand((N,), "bf16", seed=9), activation="relu")
    torch.cuda.synchronize()
    assert torch.equal(a, a0) and torch.equal(b, b0)


# -- the epilogue -----------------------------------------------------------------------------------

@cuda.jit(device=True)
def shifted(v, row, col, scale, shift):
    """A user epilogue with two arguments, using the element's row and column."""
    return v * scale + float32(row % 3) - shift * float32(col % 2)


def _gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


ACTIVATIONS = {"relu": lambda x: x.clamp(min=0), "gelu": _gelu, "gelu_tanh": _gelu_tanh,
               "silu": lambda x: x / (1 + torch.exp(-x))}
EPILOGUES = ["bias per column", "bias per row", "alpha, beta and c", "residual", "user epilogue",
             *(f"activation {name}" for name in ACTIVATIONS), "all of them"]


def epilogue_case(name, m, n):
    """(gemm.matmul's keywords, the float64 result as a function of A @ B in float64) for ``name``;
    alpha 1/16 where an activation is applied, so that its argument is about N(0, 1)."""
    bias_col, bias_row = operand((n,), "bf16", seed=11), operand((m, 1), "bf16", seed=12)
    c, residual = operand((m, n), "bf16", seed=13), operand((m, n), "bf16", seed=14)
    rows = torch.arange(m, dtype=torch.float64)[:, None]
    cols = torch.arange(n, dtype=torch.float64)[None, :]

    def user(v):
        return v * 0.5 + rows % 3 - 1.5 * (cols % 2)

    if name == "bias per column":
        return {"bias": bias_col}, lambda ab: ab + f64(bias_col)[None, :]
    if name == "bias per row":
        return {"bias": bias_row}, lambda ab: ab + f64(bias_row)
    if name == "alpha, beta and c":
        return {"alpha": 0.5, "beta": -2.0, "c": c}, lambda ab: 0.5 * ab - 2.0 * f64(c)
    if name == "residual":
        return {"residual": residual}, lambda ab: ab + f64(residual)
    if name == "user epilogue":
        return {"epilogue": shifted, "epilogue_args": (0.5, 1.5)}, user
    if name.startswith("activation "):
        act = name.split()[1]
        return ({"alpha": 1 / 16, "bias": bias_col, "activation": act},
                lambda ab: ACTIVATIONS[act](ab / 16 + f64(bias_col)[None, :]))
    assert name == "all of them"     # the order: alpha (and scales), beta c, bias, activation, residual, epilogue
    kw = {"alpha": 1 / 16, "beta": 0.5, "c": c, "bias": bias_row, "activation": "silu", "residual": residual,
          "epilogue": shifted, "epilogue_args": (0.5, 1.5)}
    return kw, lambda ab: user(ACTIVATIONS["silu"](ab / 16 + 0.5 * f64(c) + f64(bias_row)) + f64(residual))


@pytest.mark.parametrize("out_dtype", ["bf16", "f32"])
@pytest.mark.parametrize("name", EPILOGUES)
def test_matmul_epilogue(name, out_dtype):
    a, b = operand((M, K), "bf16", "row", 15), operand((K, N), "bf16", "col", 16)
    kw, reference = epilogue_case(name, M, N)
    got = gemm.matmul(a, b, out_dtype=out_dtype, **kw)
    assert got.dtype == torch_dtype(out_dtype)
    assert_close(got, reference(f64(a) @ f64(b)), tolerance("bf16", out_dtype), name)


@pytest.mark.parametrize("dtype", FP8)
def test_fp8_matmul_with_the_whole_epilogue(dtype):
    a, b = operand((M, K), dtype, "row", 17), operand((K, N), dtype, "col", 18)
    kw, reference = epilogue_case("all of them", M, N)
    got = gemm.matmul(a, b, a_scale=0.5, b_scale=0.25, **kw)
    assert got.dtype == torch.bfloat16
    assert_close(got, reference(0.125 * (f64(a) @ f64(b))), tolerance(dtype, "bf16"))


# -- fp8 scales -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["floats", "0-d tensors", "1-element tensors", "row and column"])
@pytest.mark.parametrize("dtype", FP8)
def test_fp8_scales(dtype, kind):
    a, b = operand((M, K), dtype, "row", 19), operand((K, N), dtype, "col", 20)
    g = torch.Generator().manual_seed(21)
    if kind == "floats":
        sa, sb = 0.5, 0.125
    elif kind == "0-d tensors":
        sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.125, device="cuda")
    elif kind == "1-element tensors":
        sa, sb = torch.tensor([0.5], device="cuda"), torch.tensor([0.125], device="cuda")
    else:                                  # as torch._scaled_mm takes them: (M, 1) and (1, N) float32
        sa = (torch.rand((M, 1), generator=g) + 0.25).cuda()
        sb = (torch.rand((1, N), generator=g) + 0.25).cuda()
    got = gemm.matmul(a, b, a_scale=sa, b_scale=sb)
    scale_a = f64(sa) if isinstance(sa, torch.Tensor) else sa
    scale_b = f64(sb) if isinstance(sb, torch.Tensor) else sb
    if kind == "1-element tensors":
        scale_a, scale_b = float(scale_a[0]), float(scale_b[0])
    want = (f64(a) * scale_a) @ (f64(b) * scale_b)
    assert got.dtype == torch.bfloat16
    assert_close(got, want, tolerance(dtype, "bf16"), f"{dtype} scales as {kind}")


# -- out=, misaligned operands, other array kinds, streams -----------------------------------------

@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_matmul_into_a_given_out(dtype):
    a, b = operand((M, K), dtype, "row", 22), operand((K, N), dtype, "col", 23)
    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    got = gemm.matmul(a, b, out=out, **fp8_scales(dtype))
    assert got.data_ptr() == out.data_ptr() and tuple(got.shape) == (M, N)
    assert_close(out, fp8_factor(dtype) * (f64(a) @ f64(b)), tolerance(dtype, "bf16"))


def misaligned(shape, layout, how, seed):
    """A bf16 operand of ``shape`` (``layout`` as ``operand``'s) whose base is 2 bytes past a
    16-byte boundary (``how="offset"``: a view starting one element into its allocation) or whose
    rows (columns, column-major) lie 203 elements = 406 bytes apart (``how="pitch"``: a slice)."""
    stored = tuple(shape) if layout == "row" else tuple(shape)[::-1]
    g = torch.Generator().manual_seed(seed)
    if how == "offset":
        buf = torch.randn(stored[0] * stored[1] + 1, generator=g).cuda().to(torch.bfloat16)
        x = buf[1:].view(stored)
        assert x.data_ptr() % 16 != 0
    else:
        x = torch.randn((stored[0], stored[1] + 3), generator=g).cuda().to(torch.bfloat16)[:, :stored[1]]
        assert x.stride(0) * x.element_size() % 16 != 0
    return x if layout == "row" else x.T


@pytest.mark.parametrize("how", ["offset", "pitch"])
@pytest.mark.parametrize("which", ["a", "b"])
def test_matmul_of_a_misaligned_operand(which, how):
    a = misaligned((M, K), "row", how, 24) if which == "a" else operand((M, K), "bf16", "row", 24)
    b = misaligned((K, N), "col", how, 25) if which == "b" else operand((K, N), "bf16", "col", 25)
    got = gemm.matmul(a, b, out_dtype="f32")
    assert_close(got, f64(a) @ f64(b), 1e-3, f"{which} misaligned by {how}")


@pytest.mark.parametrize("kind", ["numba", "cupy"])
def test_matmul_of_numba_and_cupy_arrays_returns_their_kind(kind):
    a, b = operand((M, K), "f16", "row", 26), operand((K, N), "f16", "col", 27)
    torch.cuda.synchronize()
    want = f64(a) @ f64(b)
    if kind == "numba":
        got = gemm.matmul(cuda.as_cuda_array(a), cuda.as_cuda_array(b))
        assert cuda.is_cuda_array(got) and hasattr(got, "copy_to_host")     # a numba device array
        host = got.copy_to_host()
    else:
        cupy = pytest.importorskip("cupy")
        got = gemm.matmul(cupy.asarray(a), cupy.asarray(b))
        assert isinstance(got, cupy.ndarray)
        host = cupy.asnumpy(got)
    assert host.dtype == np.float16 and host.shape == (M, N)
    assert_close(torch.from_numpy(host.astype(np.float64)), want, 2 ** -7, kind)


def test_matmul_runs_on_torchs_current_stream():
    """On a side stream (created non-blocking by torch) A is overwritten after a ~20 ms sleep; the
    GEMM queued after it on that stream must see the new A (on any other stream it would read the
    old one)."""
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("torch.cuda._sleep is missing")
    a, b = operand((M, K), "bf16", "row", 28), operand((K, N), "bf16", "col", 29)
    new_a = operand((M, K), "bf16", "row", 30)
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(40_000_000)
        a.copy_(new_a)
        got = gemm.matmul(a, b)
    torch.cuda.synchronize()
    assert_close(got, f64(new_a) @ f64(b), 2 ** -7, "the side stream's A")


def test_matmul_with_autotune_config():
    a, b = operand((M, K), "bf16", "row", 31), operand((K, N), "bf16", "col", 32)
    assert_close(gemm.matmul(a, b, config="autotune"), f64(a) @ f64(b), 2 ** -7, "autotuned")


def test_torch_ops_are_registered():
    a, b = operand((M, K), "bf16", "row", 33), operand((K, N), "bf16", "col", 34)
    assert_close(torch.ops.numba_tma.matmul(a, b), f64(a) @ f64(b), 2 ** -7, "torch.ops.numba_tma.matmul")
    sizes = [100, 0, 200]
    a2 = operand((sum(sizes), K), "bf16", "row", 35)
    b2 = operand((len(sizes), K, N), "bf16", "row", 36)
    offsets = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
    got = torch.ops.numba_tma.grouped_matmul(a2, b2, offsets)
    assert_close(got, grouped_reference(a2, b2, sizes), 2 ** -7, "torch.ops.numba_tma.grouped_matmul")


# -- grouped ----------------------------------------------------------------------------------------

SIZES = [130, 0, 37, 300, 1, 64]           # an empty group, groups under 128 rows, one over 256


def grouped_reference(a, b, sizes, alpha=1.0, activation=None):
    parts, start = [], 0
    for g, size in enumerate(sizes):
        part = alpha * (f64(a[start:start + size]) @ f64(b[g]))
        parts.append(ACTIVATIONS[activation](part) if activation else part)
        start += size
    return torch.cat(parts)


def grouped_operands(b_layout, seed, k=K, n=N):
    a = operand((sum(SIZES), k), "bf16", "row", seed)
    g = torch.Generator().manual_seed(seed + 1)
    if b_layout == "row":                                            # (groups, K, N) contiguous
        b = torch.randn((len(SIZES), k, n), generator=g).cuda().to(torch.bfloat16)
    else:                                                            # (groups, N, K) transposed: as MoE weights
        b = torch.randn((len(SIZES), n, k), generator=g).cuda().to(torch.bfloat16).transpose(-2, -1)
    offsets = torch.tensor(np.cumsum(SIZES), dtype=torch.int32, device="cuda")
    return a, b, offsets


@pytest.mark.parametrize("out_dtype", [None, "f32"])
@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_grouped_matmul(b_layout, out_dtype):
    a, b, offsets = grouped_operands(b_layout, 40)
    got = gemm.grouped_matmul(a, b, offsets, out_dtype=out_dtype)
    assert got.dtype == torch_dtype(out_dtype or "bf16")
    assert_close(got, grouped_reference(a, b, SIZES), tolerance("bf16", out_dtype or "bf16"), f"b {b_layout}")


def test_grouped_matmul_with_alpha_activation_and_out():
    a, b, offsets = grouped_operands("col", 42, k=77, n=264)     # K = 77: rows of 154 bytes
    out = torch.full((sum(SIZES), 264), float("nan"), dtype=torch.bfloat16, device="cuda")
    got = gemm.grouped_matmul(a, b, offsets, out=out, alpha=1 / 8, activation="gelu_tanh")
    assert got.data_ptr() == out.data_ptr()
    assert_close(out, grouped_reference(a, b, SIZES, 1 / 8, "gelu_tanh"), 2 ** -7)   # every row written


def test_grouped_matmul_with_a_user_epilogue():
    a, b, offsets = grouped_operands("row", 44)
    got = gemm.grouped_matmul(a, b, offsets, epilogue=shifted, epilogue_args=(0.5, 1.5), out_dtype="f32")
    rows = torch.arange(sum(SIZES), dtype=torch.float64)[:, None]     # the row of the whole output
    cols = torch.arange(N, dtype=torch.float64)[None, :]
    want = grouped_reference(a, b, SIZES) * 0.5 + rows % 3 - 1.5 * (cols % 2)
    assert_close(got, want, 1e-3)


def test_grouped_matmul_list_form_of_groups_of_their_own_k_or_n_is_refused():
    shapes = [(130, 72, 264), (37, 200, 136)]
    a_list = [operand((m, k), "bf16", "row", 50 + i) for i, (m, k, n) in enumerate(shapes)]
    b_list = [operand((k, n), "bf16", "row", 60 + i) for i, (m, k, n) in enumerate(shapes)]
    with pytest.raises(ValueError, match="group 1: a\\[1\\] must be"):
        gemm.grouped_matmul(a_list, b_list)


@pytest.mark.parametrize("shapes", [[(130, K, N), (37, K, N), (1, K, N)]], ids=["one K and N"])
def test_grouped_matmul_list_form(shapes):
    a_list = [operand((m, k), "bf16", "row", 50 + i) for i, (m, k, n) in enumerate(shapes)]
    b_list = [operand((k, n), "bf16", "col" if i % 2 else "row", 60 + i) for i, (m, k, n) in enumerate(shapes)]
    got = gemm.grouped_matmul(a_list, b_list)
    assert isinstance(got, list) and len(got) == len(shapes)
    for i, (x, a, b) in enumerate(zip(got, a_list, b_list)):
        assert isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16
        assert_close(x, f64(a) @ f64(b), 2 ** -7, f"group {i}")


# -- refusals ---------------------------------------------------------------------------------------

def _python_epilogue(v, row, col):
    return v


@cuda.jit
def _kernel_not_device(x):
    x[0] = 0


def refusal_calls():
    """name -> (a call that must be refused, a regex its message must match: the argument's name)."""
    a, b = operand((M, K), "bf16", "row", 70), operand((K, N), "bf16", "col", 71)
    a8, b8 = operand((M, K), "e4m3", "row", 72), operand((K, N), "e4m3", "col", 73)
    ga, gb, offsets = grouped_operands("row", 74)
    return {
        "b's rows are not a's columns": (lambda: gemm.matmul(a, operand((K + 1, N), "bf16", "col", 75)), r"\bb\b"),
        "a of 3 dimensions": (lambda: gemm.matmul(a.reshape(2, M // 2, K), b), r"\ba\b"),
        "bf16 a, f16 b": (lambda: gemm.matmul(a, b.to(torch.float16)), r"\bb\b"),
        "a on the host": (lambda: gemm.matmul(a.cpu(), b), r"\ba\b"),
        "a python function as epilogue": (lambda: gemm.matmul(a, b, epilogue=_python_epilogue), r"epilogue"),
        "a kernel as epilogue": (lambda: gemm.matmul(a, b, epilogue=_kernel_not_device), r"epilogue"),
        "bias of N + 1": (lambda: gemm.matmul(a, b, bias=operand((N + 1,), "bf16")), r"bias"),
        "bias of (M, 2)": (lambda: gemm.matmul(a, b, bias=operand((M, 2), "bf16")), r"bias"),
        "residual of (M, N - 1)": (lambda: gemm.matmul(a, b, residual=operand((M, N - 1), "bf16")), r"residual"),
        "c of (M - 1, N)": (lambda: gemm.matmul(a, b, beta=1.0, c=operand((M - 1, N), "bf16")), r"\bc\b"),
        "an unknown activation": (lambda: gemm.matmul(a, b, activation="tanh"), r"activation"),
        "out of (M, N - 1)": (lambda: gemm.matmul(a, b, out=torch.empty((M, N - 1), dtype=torch.bfloat16,
                                                                          device="cuda")), r"\bout\b"),
        "out_dtype int8": (lambda: gemm.matmul(a, b, out_dtype="int8"), r"out_dtype"),
        "a_scale of (M + 1, 1)": (lambda: gemm.matmul(a8, b8, a_scale=torch.ones((M + 1, 1), device="cuda"),
                                                      b_scale=1.0), r"a_scale"),
        "b_scale of (1, N - 1)": (lambda: gemm.matmul(a8, b8, a_scale=1.0,
                                                      b_scale=torch.ones((1, N - 1), device="cuda")), r"b_scale"),
        "grouped: offsets of groups + 1": (lambda: gemm.grouped_matmul(
            ga, gb, torch.tensor(np.cumsum(SIZES + [0]), dtype=torch.int32, device="cuda")), r"offsets"),
        "grouped: b of 2 dimensions": (lambda: gemm.grouped_matmul(ga, gb[0], offsets), r"\bb\b"),
        "grouped: lists of 2 and 3": (lambda: gemm.grouped_matmul([a, a], [b, b, b]), r"\b(a|b)\b"),
    }


REFUSALS = ["b's rows are not a's columns", "a of 3 dimensions", "bf16 a, f16 b", "a on the host",
            "a python function as epilogue", "a kernel as epilogue", "bias of N + 1", "bias of (M, 2)",
            "residual of (M, N - 1)", "c of (M - 1, N)", "an unknown activation", "out of (M, N - 1)",
            "out_dtype int8", "a_scale of (M + 1, 1)", "b_scale of (1, N - 1)", "grouped: offsets of groups + 1",
            "grouped: b of 2 dimensions", "grouped: lists of 2 and 3"]


@pytest.mark.parametrize("name", REFUSALS)
def test_refusals_name_the_argument(name):
    calls = refusal_calls()
    assert set(calls) == set(REFUSALS)
    call, match = calls[name]
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# -- explain ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["bf16", "e4m3"])
def test_explain_names_the_tile(dtype):
    a, b = operand((M, K), dtype, "row", 80), operand((K, N), dtype, "col", 81)
    text = gemm.explain(a, b, **fp8_scales(dtype))
    assert isinstance(text, str) and text.strip()
    assert re.search(r"tile", text, re.IGNORECASE), text
    assert re.search(r"\d+\s*[x×]\s*\d+", text), text            # e.g. 128x256
    kw, _ = epilogue_case("all of them", M, N)                         # the same keywords as matmul
    assert gemm.explain(a, b, out_dtype="f32", **fp8_scales(dtype), **kw).strip()
