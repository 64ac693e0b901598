"""examples/attention.py's kernel checked against a float64 numpy softmax(Q K^T / sqrt(d)) V, on
the GPU and under the simulator (both ways): several heads and query blocks, several key blocks
(the ring's states, the online softmax's rescaling across blocks), a sequence ending inside a
block (its keys masked, its rows not stored past the head's end), causal and not, d = 64 and 128;
and the kernel's SASS."""

import re

import numba
import numpy as np
import pytest
from numba import cuda

from gpu_support import import_example
from numba_tma import TensorMap, inspect, ops, testing

attention = import_example("attention")


@pytest.mark.both_ways
@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [64, 128])
def test_attention_matches_numpy(d, causal, layout):
    """O and each row's log-sum-exp against float64 numpy: grouped-query (query heads sharing a
    K/V head), a sequence ending inside a block, arrays (batch, heads, seq, d) or flash-attn's
    (batch, seq, heads, d)."""
    if testing.WAY == "simulator":
        if d == 128 or not causal or layout == "bhsd":
            pytest.skip("under the simulator d = 64, causal, (batch, seq, heads, d) covers the kernel (seconds "
                        "each; the rest differ in constants and offsets)")
        batch, heads, group, seq = 1, 2, 2, 200   # 2 query blocks; key blocks 1 and 2, the last one ragged
    else:
        batch, heads, group, seq = 2, 6, 3, 1000
    rng = np.random.default_rng(d)
    q = attention.bf16_bits(2 * rng.standard_normal((batch, heads, seq, d)))
    k, v = (attention.bf16_bits(2 * rng.standard_normal((batch, heads // group, seq, d))) for _ in range(2))
    if layout == "bshd":                          # the kernel's 2-D views: (batch * seq, heads * d)
        q2, k2, v2 = (np.ascontiguousarray(x.transpose(0, 2, 1, 3)).reshape(batch * seq, -1) for x in (q, k, v))
    else:
        q2, k2, v2 = (x.reshape(-1, d) for x in (q, k, v))
    out = cuda.to_device(np.full((q2.shape[0] + 7, q2.shape[1]), 0xFFFF, np.uint16))   # 7 rows past the end
    lse = cuda.to_device(np.full(batch * heads * seq, np.nan, np.float32))
    descs = attention.maps(cuda.to_device(q2), cuda.to_device(k2), cuda.to_device(v2))
    attention.forward(descs, out[:q2.shape[0]], heads, seq, d, causal, group, lse, batch, layout == "bshd")
    want, want_lse = attention.reference(*(attention.bf16_values(x).reshape(-1, d) for x in (q, k, v)),
                                         batch * heads, seq, d, causal, group)
    got = attention.bf16_values(out.copy_to_host()[:q2.shape[0]])
    if layout == "bshd":
        got = got.reshape(batch, seq, heads, d).transpose(0, 2, 1, 3)
    assert np.abs(got.reshape(-1, d) - want).max() <= 2e-2 * np.abs(want).max()
    assert (out.copy_to_host()[q2.shape[0]:] == 0xFFFF).all()                   # nothing stored past the end
    np.testing.assert_allclose(lse.copy_to_host(), want_lse, rtol=1e-5, atol=1e-4)


def test_refusals_name_the_argument():
    with pytest.raises(ValueError, match="d=96 must be 64 or 128, and seq=200 at least 1"):
        attention.forward(None, None, 1, 200, 96)
    with pytest.raises(ValueError, match=r"group=3 must divide heads=4 \(query heads per K/V head\)"):
        attention.forward(None, None, 4, 200, 64, group=3)


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
@pytest.mark.parametrize("d, causal", [(64, False), (128, True)])
def test_the_kernel_keeps_p_in_registers_and_its_mmas_unserialised(d, causal):
    """The kernel as ptxas sees it: S = Q K^T (d / 16 HGMMAs of 64 x 128) and P V from registers
    (8 of 64 x d, P's A operand a_fragment's packs: 32 F2FP a key block), no subroutine call
    (ptxas would serialise every wgmma), no shared-memory staging of P, no local memory, and the
    MMAs of each product issued back to back (d = 128 causal: the most registers live, S, O, P
    and the mask's, within the consumers' 232 of setmaxnreg)."""
    kernel, _ = attention.KERNELS[d, causal]
    maps = [TensorMap.numba_type("bfloat16", (128, 64), swizzle="128B")] * 3
    sig = (*maps, numba.uint16[:, :], numba.float32[:], numba.int64, numba.int64, numba.int64, numba.int64,
           numba.float32)
    sass = inspect.compile(kernel, sig, "sm_90a").sass
    s_mma, pv_mma = r"HGMMA\.64x128x16\.F32\.BF16", rf"HGMMA\.64x{d}x16\.F32\.BF16"
    count = len(re.findall(s_mma, sass)) + (len(re.findall(pv_mma, sass)) if d != 128 else 0)
    assert count == d // 16 + 8, sorted(set(re.findall(r"HGMMA\S*", sass)))
    assert "CALL" not in sass and "STL" not in sass and "LDL" not in sass and "STS" not in sass
    assert sass.count("F2FP.BF16.F32.PACK_AB") >= 32
    # one fence and one wait for S's MMAs, one each for P V's: ptxas did not serialise them (a
    # conversion between the fence and the MMAs would add a wait after every MMA)
    assert sass.count("WARPGROUP.ARRIVE") == sass.count("WARPGROUP.DEPBAR.LE") == 2
