"""The GEMM kernels' SASS, compiled on the CPU (numba-cuda's compiler): with a fused epilogue no
subroutine CALL and the HGMMAs of a K step back to back, as without one; every tile and type the
rule can choose; each activation; the cost of bias + GELU an element against a control kernel;
split-K's counter and in-kernel sum."""

import functools
import re

import pytest
from numba import cuda
from numba.cuda import types

from numba_tma import TensorMap, inspect, ops
from numba_tma.gemm import epilogues
from numba_tma.gemm.kernels import Kernel, build

pytestmark = pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")


@cuda.jit(device=True)
def _scaled(v, row, col, factor):
    return v * factor + row


@functools.lru_cache(maxsize=None)
def _sass(kernel: Kernel):
    """The SASS of ``kernel`` (compiled once a module: the control kernel serves two tests)."""
    gemm_kernel, _ = build(kernel)
    bk = kernel.bk
    maps = [TensorMap.numba_type("bfloat16", box, swizzle="128B") for box in ((128, bk), kernel.b_box(), (64, 64))]
    out = types.float32[:, :] if kernel.out_dtype == "f32" else types.uint16[:, :]
    e_args = types.Tuple((types.int64, types.int64, types.uint16[:, :], types.float32))
    sig = (*maps, out, types.float32[:, :, :], types.int32[:], types.int64, types.int64, types.int64, types.float32,
           types.int64, types.int32[:], types.int64, types.int64,
           e_args if kernel.epilogue is not None else types.UniTuple(types.int64, 1))
    return inspect.compile(gemm_kernel, sig, "sm_90a").sass


def _facts(sass):
    return {"CALL": "CALL" in sass, "HGMMA": len(re.findall(r"HGMMA\.64x256x16\.F32\.BF16", sass)),
            "gsb0, 0x1": len(re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x1", sass))}


@pytest.mark.parametrize("out", ["tma", "direct"])
def test_a_fused_epilogue_compiles_without_a_call_and_keeps_the_mmas_back_to_back(out):
    e = epilogues.Epilogue(bias=("bf16", "0, c"), activation="gelu", user=_scaled, user_args=1)
    plain = _facts(_sass(Kernel("bf16", "k", 256, 4, out=out, out_dtype="bf16" if out == "tma" else "f32")))
    fused = _facts(_sass(Kernel("bf16", "k", 256, 4, out=out, out_dtype="bf16" if out == "tma" else "f32",
                                epilogue=epilogues.compose(e))))
    assert plain == fused == {"CALL": False, "HGMMA": 4, "gsb0, 0x1": 1}


@pytest.mark.parametrize("kernel, mma", [
    (Kernel("bf16", "k", 128, 6), r"HGMMA\.64x128x16\.F32\.BF16"),
    (Kernel("bf16", "n", 128, 6, pair=True), r"HGMMA\.64x128x16\.F32\.BF16"),
    (Kernel("f16", "k", 256, 3, out="tma", out_dtype="f16"), r"HGMMA\.64x256x16\.F32\b"),
    (Kernel("e4m3", "k", 128, 6), r"QGMMA\.64x128x32\.F32\.E4M3\.E4M3"),
    (Kernel("e5m2", "k", 192, 4, out="direct", out_dtype="f32"), r"QGMMA\.64x192x32\.F32\.E5M2\.E5M2"),
    (Kernel("bf16", "n", 256, 4, grouped=True), r"HGMMA\.64x256x16\.F32\.BF16"),
], ids=["bf16-128", "bf16-kn-128-pair", "f16-f16-out", "e4m3-128", "e5m2-192", "grouped-tma-and-direct"])
def test_every_tile_and_type_compiles_without_a_call(kernel, mma):
    """Each kernel the configuration rule can choose compiles (both epilogue rounds' calls are
    valid: with one round the second names the fragment's boxes and never runs), with its four
    MMAs per K step and no subroutine call."""
    gemm_kernel, _ = build(kernel)
    dt = "float16" if kernel.dtype == "f16" else "bfloat16" if kernel.dtype == "bf16" else "uint8"
    maps = [TensorMap.numba_type(dt, box, swizzle="128B") for box in ((128, kernel.bk), kernel.b_box())]
    maps.append(TensorMap.numba_type("float16" if kernel.out_dtype == "f16" else "bfloat16", (64, 64), swizzle="128B"))
    # the output the direct stores write; else unread
    out = types.uint16[:, :] if kernel.grouped else types.float32[:, :]
    sig = (*maps, out, types.float32[:, :, :], types.int32[:], types.int64, types.int64, types.int64, types.float32,
           types.int64, types.int32[:], types.int64, types.int64, types.UniTuple(types.int64, 1))
    sass = inspect.compile(gemm_kernel, sig, "sm_90a").sass
    assert "CALL" not in sass and len(re.findall(mma, sass)) == 4, sorted(set(re.findall(r"[HQ]GMMA\S*", sass)))
    assert "ATOM.E.ADD" not in sass                        # (split-K's tile counters only)


@cuda.jit(device=True)
def _three_activations(v, row, col):
    return epilogues.relu(epilogues.gelu(epilogues.gelu_tanh(v)))


def test_each_activation_compiles_without_a_call():
    """No activation divides or calls a library routine (silu is v (1/2 + tanh(v / 2) / 2): an IEEE
    division is a subroutine call, which would serialise the kernel's wgmmas): one kernel with all
    four, silu as the epilogue's activation, the other three from a user epilogue."""
    assert set(epilogues.ACTIVATIONS) == {"relu", "gelu", "gelu_tanh", "silu"}
    e = epilogues.Epilogue(activation="silu", user=_three_activations, user_args=0)
    kernel = Kernel("bf16", "k", 256, 4, epilogue=epilogues.compose(e))
    gemm_kernel, _ = build(kernel)
    maps = [TensorMap.numba_type("bfloat16", box, swizzle="128B") for box in ((128, 64), kernel.b_box(), (64, 64))]
    sig = (*maps, types.float32[:, :], types.float32[:, :, :], types.int32[:], types.int64, types.int64, types.int64,
           types.float32, types.int64, types.int32[:], types.int64, types.int64, types.UniTuple(types.int64, 2))
    sass = inspect.compile(gemm_kernel, sig, "sm_90a").sass
    assert "CALL" not in sass and sass.count("MUFU.EX2") >= 3 * 128, sass.count("MUFU.EX2")


def _instructions(sass):
    return len(re.findall(r"^\s+/\*[0-9a-f]{4,}\*/\s", sass, re.M))


def test_bias_and_gelu_tanh_cost_few_instructions_an_element():
    """The epilogue runs while the tensor cores wait: bias (a bf16 row) + gelu_tanh over the 128
    registers of a 64 x 256 fragment adds at most 16 SASS instructions an element to the control
    kernel without an epilogue (the bias read branch-free at a clamped column, one load per column
    shared by its two rows; the tanh as a sigmoid of ex2.approx and rcp.approx: two MUFU, no
    branch).  Written before, with a branch per element, a signed 64-bit index and libdevice's
    tanhf, it added 45."""
    e = epilogues.Epilogue(bias=("bf16", "0, c"), activation="gelu_tanh")
    control = _sass(Kernel("bf16", "k", 256, 4))
    fused = _sass(Kernel("bf16", "k", 256, 4, epilogue=epilogues.compose(e)))
    per_element = (_instructions(fused) - _instructions(control)) / 128
    assert 4 < per_element <= 16, per_element
    mufu = [len(re.findall(r"MUFU\.(EX2|RCP)", sass)) for sass in (fused, control)]
    assert mufu[0] - mufu[1] == 2 * 128, mufu
    assert fused.count("BSSY") == control.count("BSSY")     # no branch region of its own


def test_split_k_sums_its_splits_in_the_kernel_without_a_call():
    """Split-K with a fused epilogue (a bias) and TMA stores: each unit's partial stored, the tile's
    counter taken by an atomic add behind a fence, the last unit's sum (its loads and adds) and the
    epilogue inlined — still no subroutine call, the MMAs of a K step back to back (the other
    epilogue steps: test_a_fused_epilogue_compiles_without_a_call_and_keeps_the_mmas_back_to_back)."""
    e = epilogues.Epilogue(bias=("bf16", "0, c"))
    sass = _sass(Kernel("bf16", "k", 256, 3, split=True, out="tma", out_dtype="bf16", epilogue=epilogues.compose(e)))
    assert _facts(sass) == {"CALL": False, "HGMMA": 4, "gsb0, 0x1": 1}
    assert "ATOM.E.ADD" in sass and "MEMBAR.SC.GPU" in sass, sorted(set(re.findall(r"\b(ATOM\S*|RED\S*|MEMBAR\S*)", sass)))
