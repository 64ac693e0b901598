"""examples/attention.py's kernel checked against a float64 numpy softmax(Q K^T / sqrt(d)) V, on
the GPU and under the simulator (both ways): several heads and query blocks, several key blocks
(the ring's states, the online softmax's rescaling across blocks), d = 64 and 128."""

import re

import numba
import numpy as np
import pytest
from numba import cuda

from gpu_support import import_example
from numba_tma import TensorMap, inspect, ops, testing

attention = import_example("attention")


@pytest.mark.both_ways
@pytest.mark.parametrize("d", [64, 128])
def test_attention_matches_numpy(d):
    if testing.WAY == "simulator":
        if d == 128:
            pytest.skip("under the simulator d = 64 covers the kernel (seconds each)")
        heads, seq = 1, 256
    else:
        heads, seq = 3, 1024
    rng = np.random.default_rng(d)
    q, k, v = (attention.bf16_bits(2 * rng.standard_normal((heads * seq, d))) for _ in range(3))
    out = cuda.to_device(np.full((heads * seq, d), 0xFFFF, np.uint16))
    descs = attention.maps(cuda.to_device(q), cuda.to_device(k), cuda.to_device(v))
    attention.forward(descs, out, heads, seq, d)
    want = attention.reference(*(attention.bf16_values(x) for x in (q, k, v)), heads, seq, d)
    got = attention.bf16_values(out.copy_to_host())
    assert np.abs(got - want).max() <= 2e-2 * np.abs(want).max()


def test_a_sequence_not_a_multiple_of_the_key_block_is_refused():
    with pytest.raises(ValueError, match="seq=200 must be a multiple of 128"):
        attention.forward(None, None, 1, 200, 64)


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
@pytest.mark.parametrize("d", [64, 128])
def test_the_kernel_keeps_p_in_registers_and_its_mmas_unserialised(d):
    """The kernel as ptxas sees it: S = Q K^T (d / 16 HGMMAs of 64 x 128) and P V from registers
    (8 of 64 x d, P's A operand a_fragment's packs: 32 F2FP a key block), no subroutine call
    (ptxas would serialise every wgmma), no shared-memory staging of P, no local memory, and the
    MMAs of each product issued back to back."""
    kernel, _ = attention.KERNELS[d]
    maps = [TensorMap.numba_type("bfloat16", (128, 64), swizzle="128B")] * 3
    sig = (*maps, numba.uint16[:, :], numba.int64, numba.float32)
    sass = inspect.compile(kernel, sig, "sm_90a").sass
    s_mma, pv_mma = r"HGMMA\.64x128x16\.F32\.BF16", rf"HGMMA\.64x{d}x16\.F32\.BF16"
    count = len(re.findall(s_mma, sass)) + (len(re.findall(pv_mma, sass)) if d != 128 else 0)
    assert count == d // 16 + 8, sorted(set(re.findall(r"HGMMA\S*", sass)))
    assert "CALL" not in sass and "STL" not in sass and "LDL" not in sass and "STS" not in sass
    assert sass.count("F2FP.BF16.F32.PACK_AB") >= 32
    # one fence and one wait for S's MMAs, one each for P V's: ptxas did not serialise them (a
    # conversion between the fence and the MMAs would add a wait after every MMA)
    assert sass.count("WARPGROUP.ARRIVE") == sass.count("WARPGROUP.DEPBAR.LE") == 2
