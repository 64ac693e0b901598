"""Error messages name the argument, the value and the rule; gather4 checks."""

import numpy as np
import pytest

from numba_tma.descriptors import (TensorMapError, check_gather4, decode, encode_im2col, encode_im2col_wide,
                                   encode_tiled)

ADDR = 0x7F00_0000_0000
OK = dict(data_type="float32", global_address=ADDR, global_dim=[64, 32, 8], global_strides=[256, 8192],
          box_dim=[16, 8, 2])


def err(**changes):
    with pytest.raises(TensorMapError) as info:
        encode_tiled(**{**OK, **changes})
    return info.value


def shown(e):
    """The argument as the message shows it: with the index of an array entry."""
    return e.argument if e.index is None else f"{e.argument}[{e.index}]"


@pytest.mark.parametrize("changes, argument, value, words", [
    (dict(global_dim=[64, 0, 8]), "global_dim[1]", 0, "[1, 4294967296]"),
    (dict(global_dim=[64, 32, 2**32 + 1]), "global_dim[2]", 2**32 + 1, "[1, 4294967296]"),
    (dict(global_dim=[1] * 6, global_strides=[16] * 5, box_dim=[4] * 6), "global_dim", [1] * 6, "rank"),
    (dict(global_strides=[256, 8200]), "global_strides[1]", 8200, "multiple of 16"),
    (dict(global_strides=[256, 2**40]), "global_strides[1]", 2**40, "below 2**40"),
    (dict(global_strides=[-256, 8192]), "global_strides[0]", -256, "must not be negative"),
    (dict(global_strides=[256]), "global_strides", [256], "rank - 1"),
    (dict(box_dim=[16, 257, 2]), "box_dim[1]", 257, "[1, 256]"),
    (dict(box_dim=[3, 8, 2]), "box_dim[0]", 3, "multiple of 16"),
    (dict(box_dim=[64, 8, 2], swizzle="128B"), "box_dim[0]", 64, "SWIZZLE_128B span of 128 bytes"),
    (dict(box_dim=[64, 256, 8]), "box_dim", (64, 256, 8), "233472-byte limit"),
    (dict(element_strides=[1, 9, 1]), "element_strides[1]", 9, "[1, 8]"),
    (dict(global_address=ADDR + 8), "global_address", ADDR + 8, "multiple of 16"),
    (dict(global_address=ADDR + 16, interleave="32B"), "global_address", ADDR + 16, "multiple of 32"),
    (dict(global_address=1 << 57), "global_address", 1 << 57, "2**57"),
    (dict(data_type="int32", oob_fill="nan"), "oob_fill", "NAN_REQUEST_ZERO_FMA", "floating"),
    (dict(swizzle="128B_atom_32B"), "swizzle", "SWIZZLE_128B_ATOM_32B", "compute capability >= 10.0"),
    (dict(data_type="16U4_ALIGN8B"), "data_type", "PACKED_16U4_ALIGN8B", "compute capability >= 10.0"),
    (dict(swizzle="512B"), "swizzle", "512B", "Swizzle"),
    (dict(box_dim=[16, 8.0, 2]), "box_dim[1]", 8.0, "integer"),
])
def test_tiled_errors(changes, argument, value, words):
    e = err(**changes)
    assert (shown(e), e.value) == (argument, value) and words in e.rule
    assert str(e).startswith(f"{argument}={value!r}: ")


def test_interleave_needs_rank_3():
    with pytest.raises(TensorMapError, match="interleave.*rank >= 3"):
        encode_tiled("uint8", ADDR, [64, 64], [64], [16, 16], interleave="16B")


def test_driver_quirks_are_accepted():
    # 32B interleave with a swizzle other than 32B, and strides of 0: the driver takes both.
    encode_tiled("float16", ADDR, [64, 8, 8], [128, 1024], [16, 8, 8], interleave="32B", swizzle="128B")
    encode_tiled("uint8", ADDR, [64, 8], [0], [16, 8])
    encode_tiled("uint8", 0, [64], [], [16])                     # address 0 encodes (replace refuses it)


def test_im2col_errors_and_wide():
    args = ("float16", ADDR, [64, 16, 16, 2], [128, 2048, 32768])
    encode_im2col(*args, [-1, -1], [0, 0], 64, 128)
    with pytest.raises(TensorMapError, match=r"pixel_box_lower_corner\[0\]=-129: must be in \[-128, 127\]"):
        encode_im2col(*args, [-129, 0], [0, 0], 64, 128)
    with pytest.raises(TensorMapError, match=r"pixel_box_upper_corner\[1\]=-16: empty box"):
        encode_im2col(*args, [0, 0], [0, -16], 64, 128)
    with pytest.raises(TensorMapError, match="pixels_per_column"):
        encode_im2col(*args, [0, 0], [0, 0], 64, 1025)
    with pytest.raises(TensorMapError, match="pixel_box_lower_corner_width.*-129"):
        encode_im2col_wide(*args, -129, 0, 64, 128)
    with pytest.raises(TensorMapError, match="mode"):
        encode_im2col_wide(*args, -1, 0, 64, 128, mode="W256")


def test_check_gather4():
    desc = encode_tiled("bfloat16", ADDR, [256, 1024], [512], [64, 1])
    assert check_gather4(desc).box_dim == (64, 1)
    assert check_gather4(decode(desc)).rank == 2
    for bad, arg in ((encode_tiled("bfloat16", ADDR, [256, 1024], [512], [64, 4]), "box_dim[1]"),
                     (encode_tiled(**OK), "rank"),
                     (encode_im2col("float16", ADDR, [64, 16, 2], [128, 2048], [-1], [0], 64, 8), "mode")):
        with pytest.raises(TensorMapError) as info:
            check_gather4(bad)
        assert shown(info.value) == arg


@pytest.mark.parametrize("value", [np.int64(6), np.uint8(6)])
def test_numpy_integers_are_enum_values(value):
    from numba_tma.descriptors import DataType
    from numba_tma.descriptors.enums import coerce

    assert coerce(DataType, value, "data_type") == DataType.FLOAT16


@pytest.mark.parametrize("value", [None, np.float32(7.0), 7.0])
def test_values_that_numpy_would_read_as_dtypes_are_refused(value):
    from numba_tma.descriptors import DataType
    from numba_tma.descriptors.enums import coerce

    with pytest.raises(TensorMapError, match="data_type"):
        coerce(DataType, value, "data_type")


def test_check_gather4_takes_a_tensor_map():
    from numba_tma.descriptors import check_gather4
    from numba_tma.descriptors.tensor_map import TensorMap

    class Fake:
        __cuda_array_interface__ = {"shape": (64, 128), "typestr": "<f2", "data": (ADDR, False),
                                    "strides": None, "version": 3}

    assert check_gather4(TensorMap.tiled(Fake(), (1, 64))).box_dim == (64, 1)


def test_decode_names_the_rank_field():
    from numba_tma.descriptors import decode

    raw = bytearray(encode_tiled(**OK))
    raw[8] |= 0x70  # rank - 1 = 7
    with pytest.raises(TensorMapError, match=r"rank - 1 field = 7"):
        decode(bytes(raw))


def test_driver_backend_refuses_inexact_numbers_before_calling_the_driver():
    from numba_tma.descriptors import driver

    with pytest.raises(TensorMapError, match=r"global_dim\[0\]=64.5: must be an integer"):
        driver.encode_tiled("float32", ADDR, [64.5, 32], [256], [16, 8])
    with pytest.raises(TensorMapError, match=r"box_dim\[1\]=-1: does not fit the driver's cuuint32_t"):
        driver.encode_tiled("float32", ADDR, [64, 32], [256], [16, -1])


def test_interleaved_im2col_transfer_size_is_refused():
    f = decode(encode_im2col("float16", ADDR, [8, 16, 16, 2], [512, 8192, 131072], [0, 0], [0, 0], 8, 32,
                             interleave="16B"))
    with pytest.raises(TensorMapError, match="not established"):
        f.transfer_bytes


def test_the_layout_cache_never_answers_for_an_argument_of_another_type():
    """TensorMap.tiled validates a geometry once and caches it by its arguments; ``1 == True`` and
    ``2 == 2.0`` as dict keys, so a bool, float or numpy integer must still meet the rules."""
    import numpy as np

    from numba_tma import TensorMap, TensorMapError

    class Fake:
        __cuda_array_interface__ = {"shape": (64, 64), "typestr": "<f4", "data": (ADDR, False),
                                    "strides": None, "version": 3}

    a = Fake()
    TensorMap.tiled(a, (8, 32), allow_store_overrun=True)
    with pytest.raises(TensorMapError, match="allow_store_overrun"):
        TensorMap.tiled(a, (8, 32), allow_store_overrun=1)
    TensorMap.tiled(a, (8, 32))
    assert TensorMap.tiled(a, (np.int64(8), 32)).box == (8, 32)          # coerced, not cached
    with pytest.raises(TensorMapError, match="box"):
        TensorMap.tiled(a, (8.0, 32))
