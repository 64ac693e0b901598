"""``transfer_bytes``: what a load delivers, against bytes counted in shared memory on the H200
(2026-11-30, driver 13.0; poisoned shared memory, bytes written by one load of a 64^3 tensor)."""

import pytest

from numba_tma.descriptors import TensorMapError, decode, encode_tiled

# (dtype, box_dim, element_strides, bytes the descriptor field holds, bytes the H200 wrote)
MEASURED = [
    ("float32", [8, 5, 3], [1, 1, 1], 480, 480),
    ("float32", [8, 5, 3], [1, 2, 1], 192, 288),
    ("float32", [8, 5, 3], [1, 3, 1], 96, 192),
    ("float32", [8, 5, 3], [2, 1, 1], 240, 480),
    ("float32", [8, 5, 3], [4, 1, 1], 120, 480),
    ("float32", [8, 5, 3], [3, 1, 1], 120, 480),
    ("float32", [8, 5, 3], [3, 2, 2], 16, 192),
    ("float16", [16, 5, 2], [1, 1, 3], 0, 160),
]


@pytest.mark.parametrize("dtype,box,estrides,field,written", MEASURED)
def test_transfer_bytes_match_the_h200(dtype, box, estrides, field, written):
    f = decode(encode_tiled(dtype, 0x7F0000000000, [64, 64, 64], [256, 256 * 64], box, estrides))
    assert f.box_bytes == field
    assert f.transfer_bytes == written


def test_interleaved_transfer_size_is_refused_not_guessed():
    f = decode(encode_tiled("float16", 0x7F0000000000, [64, 64, 64], [256, 256 * 64], [8, 4, 4],
                            interleave="16B"))
    with pytest.raises(TensorMapError, match="interleave.*not established"):
        f.transfer_bytes
