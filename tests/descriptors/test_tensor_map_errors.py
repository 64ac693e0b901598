"""``TensorMap`` errors are in the user's terms: its own arguments, indexed in the array's order.

The encoders name the driver's parameters, innermost dimension first (``box_dim[1]``,
``global_strides[0]``); ``TensorMap`` restates each of their errors.  One row per rule that can
fail through ``TensorMap.tiled`` / ``im2col`` / ``with_array``: the exact start of the message,
and no driver name in it.
"""

import numpy as np
import pytest
from test_tensor_map_arg import FakeCudaArray

from numba_tma import TensorMap, TensorMapError

ADDR = 0x7F00_0000_0000
DRIVER_NAMES = ("box_dim", "global_dim", "global_strides", "global_address", "data_type")
# The encoder's own message for the first row, for contrast:
#   box_dim[1]=512: must be in [1, 256]


def tiled(shape=(64, 128), dtype=np.float32, box=(16, 16), strides=None, address=ADDR, **options):
    return TensorMap.tiled(FakeCudaArray(shape, dtype, address, strides), box, **options)


def im2col(lower=(-1, -1), upper=(0, 0), channels=64, pixels=128, shape=(2, 16, 16, 64), **options):
    return TensorMap.im2col(FakeCudaArray(shape, np.float16), lower, upper, channels, pixels, **options)


def with_array(address):
    return tiled().with_array(FakeCudaArray((64, 128), np.float32, address))


CASES = [
    # box: range, inner bytes, swizzle span, whole-box size, count, type
    (lambda: tiled(box=(512, 16)), "box[0]=512 (dimension 0 of the array, rows): must be in [1, 256]"),
    (lambda: tiled(box=(16, 0)), "box[1]=0 (dimension 1 of the array, columns): must be in [1, 256] "
                                 "— use a multiple of 4"),
    (lambda: tiled(box=(16, 3)), "box[1]=3 (dimension 1 of the array, columns): 3 x FLOAT32 = 12 bytes, "
                                 "not a multiple of 16 — use a multiple of 4"),
    (lambda: tiled(box=(16, 64), swizzle="128B"),
     "box[1]=64 (dimension 1 of the array, columns): 256 inner bytes exceed the SWIZZLE_128B span of 128 "
     "bytes — use a multiple of 4 up to 32, or another swizzle"),
    (lambda: tiled(shape=(512, 512), box=(256, 240)), "box=(256, 240): one load would be 245760 bytes"),
    (lambda: tiled(box=(16,)), "box=(16,): must have one entry per array dimension (2)"),
    (lambda: tiled(box=(16, 8.5)), "box[1]=8.5: must be an integer"),
    # element_strides
    (lambda: tiled(element_strides=(9, 1)), "element_strides[0]=9 (dimension 0 of the array, rows): "
                                            "must be in [1, 8]"),
    (lambda: tiled(shape=(4, 64, 128), box=(1, 16, 16), element_strides=(1, 1, 0)),
     "element_strides[2]=0 (dimension 2 of the array, columns): must be in [1, 8]"),
    (lambda: tiled(element_strides=(1,)), "element_strides=(1,): must have one entry per array dimension (2)"),
    # the array: strides, shape, rank, dtype, data pointer
    (lambda: tiled(shape=(64, 50)), "array strides[0]=200 bytes (dimension 0 of the array, rows): must be a "
                                    "multiple of 16 below 2**40 — pad the rows (e.g. allocate with a pitch)"),
    (lambda: tiled(shape=(2, 64, 64), box=(1, 16, 16), strides=(1 << 40, 256, 4)),
     "array strides[0]=1099511627776 bytes (dimension 0 of the array): must be a multiple of 16 below 2**40"),
    (lambda: tiled(strides=(-512, 4)), "array strides[0]=-512 bytes (dimension 0 of the array, rows): must not "
                                       "be negative: TMA does not support negative strides (reversed views) "
                                       "— copy to a contiguous array"),
    (lambda: tiled(strides=(512, 8)), "array strides[1]=8 bytes (dimension 1 of the array, columns): must be the "
                                      "element size, 4"),
    (lambda: tiled(shape=(0, 128)), "array shape[0]=0 (dimension 0 of the array, rows): must be in [1, 4294967296]"),
    (lambda: tiled(shape=(2,) * 6, box=(2,) * 6), "array shape=(2, 2, 2, 2, 2, 2): must have 1 to 5 dimensions"),
    (lambda: tiled(shape=(), box=()), "array shape=(): must have 1 to 5 dimensions"),
    (lambda: tiled(dtype=np.complex64), "array dtype='complex64': must be one of"),
    (lambda: tiled(address=ADDR + 8), "array data pointer='0x7f0000000008': must be a multiple of 16 in "
                                      "[0, 2**57) — allocate the array aligned"),
    (lambda: tiled(shape=(4, 8, 64), dtype=np.uint8, box=(4, 8, 32), interleave="32B", address=ADDR + 16),
     "array data pointer='0x7f0000000010': must be a multiple of 32"),
    (lambda: with_array(ADDR + 4), "array data pointer='0x7f0000000004': must be a multiple of 16"),
    # options
    (lambda: tiled(dtype=np.int32, oob_fill="nan"), "oob_fill='NAN_REQUEST_ZERO_FMA': NaN fill needs a "
                                                    "floating-point array, not int32 — use oob_fill='none'"),
    (lambda: tiled(interleave="16B"), "interleave='INTERLEAVE_16B': needs rank >= 3"),
    (lambda: tiled(swizzle="128B_atom_32B"), "swizzle='SWIZZLE_128B_ATOM_32B': needs compute capability >= 10.0"),
    (lambda: tiled(swizzle="512B"), "swizzle='512B': must be a Swizzle"),
    # im2col: corners (array order: H, W for NHWC), channels, pixels, size, rank
    (lambda: im2col(lower=(-129, 0)), "pixel_box_lower_corner[0]=-129 (dimension 1 of the array, H): "
                                      "must be in [-128, 127] for rank 4"),
    (lambda: im2col(upper=(0, 200)), "pixel_box_upper_corner[1]=200 (dimension 2 of the array, W): "
                                     "must be in [-128, 127] for rank 4"),
    (lambda: im2col(lower=(0, 0), upper=(0, -16)),
     "pixel_box_upper_corner[1]=-16 (dimension 2 of the array, W): empty box: int32(array shape[2] + upper) = 0 "
     "must exceed lower = 0"),
    (lambda: im2col(shape=(2, 4, 8, 8, 64), lower=(-17, 0, 0), upper=(0, 0, 0)),
     "pixel_box_lower_corner[0]=-17 (dimension 1 of the array, D): must be in [-16, 15] for rank 5"),
    (lambda: im2col(lower=(0,)), "pixel_box_lower_corner=(0,): must have one entry per spatial dimension"),
    (lambda: im2col(channels=300), "channels_per_pixel=300 (dimension 3 of the array, C): must be in [1, 256]"),
    (lambda: im2col(channels=4), "channels_per_pixel=4 (dimension 3 of the array, C): 4 x FLOAT16 = 8 bytes, "
                                 "not a multiple of 16 — use a multiple of 8"),
    (lambda: im2col(channels=128, swizzle="64B"),
     "channels_per_pixel=128 (dimension 3 of the array, C): 256 inner bytes exceed the SWIZZLE_64B span of 64 "
     "bytes — use a multiple of 8 up to 32, or another swizzle"),
    (lambda: im2col(pixels=1025), "pixels_per_column=1025: must be in [1, 1024]"),
    (lambda: im2col(channels=256, pixels=1024), "channels_per_pixel x pixels_per_column=(256, 1024): one load "
                                                "would be 524288 bytes"),
    (lambda: im2col(element_strides=(1, 1, 9, 1)), "element_strides[2]=9 (dimension 2 of the array, W): "
                                                   "must be in [1, 8]"),
    (lambda: im2col(shape=(16, 64), lower=(), upper=()), "array shape=(16, 64): must have 3 to 5 dimensions "
                                                         "(NWC, NHWC or NDHWC) for an im2col map"),
]


@pytest.mark.parametrize("call,message", CASES, ids=[m.split(":")[0] for _, m in CASES])
def test_errors_name_the_users_argument_in_array_order(call, message):
    with pytest.raises(TensorMapError) as info:
        call()
    text = str(info.value)
    assert text.startswith(message), text
    assert not any(name in text for name in DRIVER_NAMES), text


def test_the_error_is_structured():
    with pytest.raises(TensorMapError) as info:
        tiled(shape=(64, 50))
    e = info.value
    assert (e.argument, e.index, e.value, e.note) == ("array strides", 0, 200,
                                                      "bytes (dimension 0 of the array, rows)")
    assert e.rule.startswith("must be a multiple of 16")


def test_encoders_keep_the_drivers_terms():
    from numba_tma.descriptors import encode_tiled

    with pytest.raises(TensorMapError, match=r"^box_dim\[1\]=512: must be in \[1, 256\]$"):
        encode_tiled("float32", ADDR, [128, 64], [512], [16, 512])


@pytest.mark.parametrize("kwargs,message", [
    (dict(dtype="float32", box=(300, 0)), "box[0]=300: must be in [1, 256]"),
    (dict(dtype="float32", box=(16,) * 6), "box=(16, 16, 16, 16, 16, 16): must have 1 to 5 entries"),
    (dict(dtype="float32", box=(16, 16), rank=3), "rank=3: a tiled map's rank is len(box) = 2"),
    (dict(dtype="float32", box=(16, 16), rank=True), "rank=True: must be an integer"),
    (dict(dtype="float32", box=(16, 16), box_bytes=0), "box_bytes=0: must be in [1, 233472]"),
    (dict(dtype=None, box=(16, 16)), "dtype=None: must be one of"),
    (dict(dtype="float16", box=(128, 64, 1), mode="im2col", rank=4),
     "box=(128, 64, 1): must be (pixels_per_column, channels_per_pixel) for an im2col map"),
    (dict(dtype="float16", box=(2000, 64), mode="im2col", rank=4), "box[0]=2000: must be in [1, 1024]"),
    (dict(dtype="float16", box=(128, 300), mode="im2col", rank=4), "box[1]=300: must be in [1, 256]"),
    (dict(dtype="float16", box=(128, 64), mode="im2col"), "rank=None: an im2col map needs the tensor's rank, 3 to 5"),
    (dict(dtype="float16", box=(128, 64), mode="im2col", rank=6), "rank=6: an im2col map needs the tensor's rank"),
])
def test_numba_type_checks_box_and_rank(kwargs, message):
    with pytest.raises(TensorMapError) as info:
        TensorMap.numba_type(**kwargs)
    assert str(info.value).startswith(message), str(info.value)


def test_numba_type_accepts_a_consistent_rank():
    assert TensorMap.numba_type("float32", (32, 64), rank=np.int64(2)) == TensorMap.numba_type("float32", (32, 64))
    assert TensorMap.numba_type("float16", (128, 64), mode="im2col", rank=np.int64(4)).rank == 4


def test_data_type_picks_a_tma_type_of_the_same_width():
    a = FakeCudaArray((64, 64), np.float32)
    desc = TensorMap.tiled(a, (32, 32), data_type="tfloat32")
    assert desc.fields.data_type.name == "TFLOAT32" and desc.dtype == "float32 as TFLOAT32"
    assert desc._numba_type_.element_bits == 32
    with pytest.raises(TensorMapError, match=r"data_type='FLOAT16': must have the array's element width \(32 bits"):
        TensorMap.tiled(a, (32, 32), data_type="float16")
