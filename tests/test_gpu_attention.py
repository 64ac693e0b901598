"""examples/attention.py's kernel checked against a float64 numpy softmax(Q K^T / sqrt(d)) V, on
the GPU and under the simulator (both ways): several heads and query blocks, several key blocks
(the ring's states, the online softmax's rescaling across blocks), d = 64 and 128."""

import numpy as np
import pytest
from numba import cuda

from gpu_support import import_example
from numba_tma import testing

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
    descs = attention.maps(cuda.to_device(q), cuda.to_device(k), cuda.to_device(v), out)
    attention.forward(descs, out, heads, seq, d)
    want = attention.reference(*(attention.bf16_values(x) for x in (q, k, v)), heads, seq, d)
    got = attention.bf16_values(out.copy_to_host())
    assert np.abs(got - want).max() <= 2e-2 * np.abs(want).max()


def test_a_sequence_not_a_multiple_of_the_key_block_is_refused():
    with pytest.raises(ValueError, match="seq=200 must be a multiple of 128"):
        attention.forward(None, None, 1, 200, 64)
