"""decode / encode round trips and the readable form."""

import random

import pytest

from numba_tma.descriptors import (DataType, Mode, Swizzle, TensorMapError, TensorMapFields, decode, encode,
                                   encode_im2col, encode_tiled, replace_address)


def test_fields_and_str():
    desc = encode_tiled("tf32", 0x7F0000000000, [1024, 512, 3], [4096, 4096 * 512], [32, 16, 1],
                        [1, 2, 1], swizzle="128B", l2_promotion="256B", oob_fill="nan")
    f = decode(desc)
    assert (f.mode, f.data_type, f.rank, f.swizzle, f.box_bytes) == (Mode.TILED, DataType.TFLOAT32, 3,
                                                                    Swizzle.SWIZZLE_128B, 32 * 8 * 4)
    text = str(f)
    assert "tiled TFLOAT32 rank 3" in text and "(32, 16, 1)" in text and "SWIZZLE_128B" in text
    assert encode(f) == desc


def test_im2col_fields():
    desc = encode_im2col("float16", 0, [64, 16, 16, 32, 2], [128, 2048, 32768, 1048576], [-16, 0, 15],
                         [15, -1, 0], 32, 1024)
    f = decode(desc)
    assert (f.pixel_box_lower_corner, f.pixel_box_upper_corner) == ((-16, 0, 15), (15, -1, 0))
    assert (f.channels_per_pixel, f.pixels_per_column, f.box_dim, f.box_bytes) == (32, 1024, None, 65536)
    assert "corners" in str(f)


def test_any_bytes_round_trip_and_residual_is_reported():
    rng = random.Random(3)
    for _ in range(300):
        raw = bytearray(rng.randrange(256) if rng.random() < 0.3 else 0 for _ in range(128))
        raw[8] = raw[8] & 0x8F | rng.randrange(5) << 4     # rank field 0..4 (rank 1..5)
        assert decode(bytes(raw)).encode() == raw
    with pytest.raises(TensorMapError, match="rank must be 1..5"):
        decode(bytes(8) + b"\x70" + bytes(119))
    desc = bytearray(encode_tiled("uint8", 0x1000, [64], [], [16]))
    desc[10] |= 0x20                                   # bit 21 of qword 1
    desc[100] = 0x5A                                   # a byte no field uses
    f = decode(bytes(desc))
    assert f.large_tensor and f.encode() == bytes(desc) and "byte 100 mask 0x5a" in str(f)


def test_replace_address():
    desc = encode_tiled("float16", 0x7F0000000000, [64, 64, 64], [128, 8192], [16, 4, 4], interleave="32B",
                        swizzle="32B")
    new = replace_address(desc, 0x7F0000000010)       # 16-byte aligned is enough here (driver behaviour)
    assert decode(new).global_address == 0x7F0000000010 and new[8:] == desc[8:]
    for bad in (0, 0x7F0000000008, 1 << 57):
        with pytest.raises(TensorMapError, match="global_address"):
            replace_address(desc, bad)
    with pytest.raises(TensorMapError, match="desc"):
        decode(desc[:64])


def test_unencodable_swizzle_is_refused():
    f = TensorMapFields(Mode.TILED, DataType.UINT8, 0, (64,), (), (16,), (1,), swizzle=Swizzle.SWIZZLE_128B_ATOM_64B)
    with pytest.raises(TensorMapError, match="unconfirmed"):
        f.encode()
