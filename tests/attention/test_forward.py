"""numba_tma.attention.forward both ways (under the simulator small, on the GPU larger), against
numpy in float64 on the same bf16 / f16 inputs: causal and not, grouped-query heads, a sequence
ending inside a block, both layouts, each row's log-sum-exp, a given output; its refusals; the
kernel's SASS; and on the GPU against torch's scaled_dot_product_attention (and the custom op)."""

import math
import re

import numba
import numpy as np
import pytest
from numba import cuda

import half_floats
from numba_tma import TensorMap, attention, inspect, ops, testing
from numba_tma.attention import kernels


def reference(q, k, v, causal, scale):
    """(O, lse) in float64 of (batch, heads, seq, d) arrays; k and v with heads // group heads."""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = scale * (q @ k.transpose(0, 1, 3, 2))
    if causal:
        seq = q.shape[2]
        s = np.where(np.arange(seq)[None, :] > np.arange(seq)[:, None], -np.inf, s)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(-1, keepdims=True)
    return (p / total) @ v, (m + np.log(total))[..., 0]


@pytest.mark.both_ways
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d, dtype", [(64, "bf16"), (128, "f16")])
def test_forward_matches_numpy(d, dtype, causal, layout):
    if testing.WAY == "simulator":
        if (d, causal, layout) != (64, True, "bshd"):
            pytest.skip("under the simulator d = 64, causal, (batch, seq, heads, d) covers the kernel (seconds "
                        "each; the rest differ in constants and offsets)")
        batch, heads, kv_heads, seq = 1, 2, 1, 200    # 2 query blocks; key blocks 1 and 2, the last one ragged
    else:
        batch, heads, kv_heads, seq = 2, 6, 2, 1000
    rng = np.random.default_rng(d + causal)
    q = half_floats.bits(2 * rng.standard_normal((batch, heads, seq, d)), dtype)       # (batch, heads, seq, d)
    k, v = (half_floats.bits(2 * rng.standard_normal((batch, kv_heads, seq, d)), dtype) for _ in range(2))
    order = (0, 2, 1, 3) if layout == "bshd" else (0, 1, 2, 3)
    arrays = [cuda.to_device(np.ascontiguousarray(x.transpose(order))) for x in (q, k, v)]
    out = cuda.to_device(np.full(arrays[0].shape, 0xFFFF, np.uint16))
    got, lse = attention.forward(*arrays, causal=causal, out=out, return_lse=True, layout=layout, dtype=dtype,
                                 softmax_scale=0.1)
    want, want_lse = reference(*(half_floats.values(x, dtype) for x in (q, k, v)), causal, 0.1)
    assert got is out
    o = half_floats.values(out.copy_to_host(), dtype).transpose(order)
    assert np.abs(o - want).max() <= 2e-2 * np.abs(want).max()
    np.testing.assert_allclose(lse.copy_to_host(), want_lse, rtol=1e-5, atol=1e-4)


@pytest.mark.both_ways
@pytest.mark.parametrize("call, error, message", [
    (lambda q, k: attention.forward(q, k, k, dtype="bf16", layout="bsdh"), ValueError,
     r"argument 'layout' must be 'bshd' \(batch, seq, heads, d\) or 'bhsd'"),
    (lambda q, k: attention.forward(q[0], k, k, dtype="bf16"), ValueError,
     r"argument 'q' must be 4-D, \(batch, seq, heads, d\); got shape \(8, 4, 64\)"),
    (lambda q, k: attention.forward(q, k[:, :4], k[:, :4], dtype="bf16"), ValueError,
     r"argument 'k' must be \(1, 8, 2, 64\): q's batch, sequence length and d"),
    (lambda q, k: attention.forward(q[..., :32], k[..., :32], k[..., :32], dtype="bf16"), ValueError,
     "argument 'q' must be contiguous"),
    (lambda q, k: attention.forward(q, q[:, :, :3], q[:, :, :3], dtype="bf16"), ValueError,
     "argument 'k' must be contiguous"),
    (lambda q, k: attention.forward(*[cuda.to_device(np.zeros((1, 8, 4, 64), np.uint8))] * 3, dtype="e4m3"), TypeError,
     "arguments 'q', 'k' and 'v' must hold bf16 or f16, all one; got 'q' e4m3"),
    (lambda q, k: attention.forward(q, k, k, dtype="bf16", out=k), ValueError,
     r"argument 'out' must be contiguous of q's shape \(1, 8, 4, 64\)"),
])
def test_refusals_name_the_argument_and_the_rule(call, error, message):
    q = cuda.to_device(np.zeros((1, 8, 4, 64), np.uint16))
    k = cuda.to_device(np.zeros((1, 8, 2, 64), np.uint16))
    with pytest.raises(error, match=message):
        call(q, k)


@pytest.mark.both_ways
def test_heads_and_head_dimensions_without_a_kernel_are_refused():
    q = cuda.to_device(np.zeros((1, 8, 3, 64), np.uint16))
    with pytest.raises(ValueError, match="k's 2 heads must divide q's 3"):
        attention.forward(q, *[cuda.to_device(np.zeros((1, 8, 2, 64), np.uint16))] * 2, dtype="bf16")
    q96 = cuda.to_device(np.zeros((1, 8, 2, 96), np.uint16))
    with pytest.raises(ValueError, match=r"the head dimension d=96 must be one of \(64, 128\)"):
        attention.forward(q96, q96, q96, dtype="bf16")


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
@pytest.mark.parametrize("d, causal, dtype", [(64, False, "bf16"), (128, True, "f16")])
def test_the_kernel_keeps_p_in_registers_and_its_mmas_unserialised(d, causal, dtype):
    """The kernel as ptxas sees it: S = Q K^T (d / 16 HGMMAs of 64 x 128) and P V from registers
    (8 of 64 x d, P's A operand a_fragment's packs), no subroutine call (ptxas would serialise
    every wgmma), no shared-memory staging of P, no local memory (d 128 causal: the most registers
    live, within the consumers' 232 of setmaxnreg), one fence and one wait per product."""
    kernel, _ = kernels.build(d, causal, dtype)
    element = "bfloat16" if dtype == "bf16" else "float16"
    maps = [TensorMap.numba_type(element, (128, 64), swizzle="128B")] * 3
    sig = (*maps, numba.uint16[:, :], numba.float32[:], numba.int64, numba.int64, numba.int64, numba.int64,
           numba.float32)
    sass = inspect.compile(kernel, sig, "sm_90a").sass
    mma = r"HGMMA\.64x{}x16\.F32" + (r"\.BF16" if dtype == "bf16" else r"\b")
    count = len(re.findall(mma.format(128), sass)) + (len(re.findall(mma.format(d), sass)) if d != 128 else 0)
    assert count == d // 16 + 8, sorted(set(re.findall(r"HGMMA\S*", sass)))
    assert "CALL" not in sass and "STL" not in sass and "LDL" not in sass and "STS" not in sass
    assert sass.count("WARPGROUP.ARRIVE") == sass.count("WARPGROUP.DEPBAR.LE") == 2


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
def test_torch_tensors_against_scaled_dot_product_attention(causal):
    torch = pytest.importorskip("torch")
    q, k, v = (torch.randn((2, 8, 777, 128), device="cuda", dtype=torch.bfloat16) for _ in range(3))
    got = attention.forward(q, k, v, causal=causal, layout="bhsd")
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    assert got.dtype == torch.bfloat16 and got.shape == q.shape
    assert float((got.float() - want).abs().max() / want.abs().max()) <= 2e-2
    assert math.isfinite(float(got.float().sum()))
    assert torch.equal(torch.ops.numba_tma.attention_forward(q, k, v, causal, None, "bhsd"), got)   # the custom op
