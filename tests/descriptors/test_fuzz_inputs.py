"""Wrong-typed host inputs: every public host function raises TensorMapError, and nothing else.

Each argument of each function is replaced in turn by every value of ``WRONG`` (a fixed list, so
the test is deterministic).  The call must raise :class:`TensorMapError` — never TypeError,
MemoryError, IndexError, ..., nor succeed — except for the few valid replacements listed in
``VALID``, which must succeed.
"""

import numpy as np
import pytest
from test_tensor_map_arg import FakeCudaArray

from numba_tma import TensorMap
from numba_tma.descriptors import (TensorMapError, check_gather4, decode, encode, encode_im2col,
                                   encode_im2col_wide, encode_tiled, replace_address)

ADDR = 0x7F00_0000_0000
DESC = encode_tiled("float16", ADDR, [128, 64], [256], [64, 1])
MAP = TensorMap.tiled(FakeCudaArray((64, 128), np.float16), (16, 64))

WRONG = {"None": None, "int": 64, "str": "bogus", "float": 1.5, "negative": -1, "nested": [[1, 2], [3]],
         "bytes": b"\x00" * 7, "ndarray": np.ones((2, 3)), "bool": True}

ENUMS = dict(interleave="none", swizzle="none", l2_promotion="none", oob_fill="none")
IM2COL = dict(data_type="float16", global_address=ADDR, global_dim=[64, 16, 2], global_strides=[128, 2048])
# function name -> (function, valid keyword arguments)
CALLS = {
    "encode_tiled": (encode_tiled, dict(data_type="float16", global_address=ADDR, global_dim=[128, 64],
                                        global_strides=[256], box_dim=[64, 1], element_strides=None, **ENUMS)),
    "encode_im2col": (encode_im2col, dict(**IM2COL, pixel_box_lower_corner=[-1], pixel_box_upper_corner=[0],
                                          channels_per_pixel=64, pixels_per_column=128, element_strides=None,
                                          **ENUMS)),
    "encode_im2col_wide": (encode_im2col_wide, dict(**IM2COL, pixel_box_lower_corner_width=-1,
                                                    pixel_box_upper_corner_width=0, channels_per_pixel=64,
                                                    pixels_per_column=128, element_strides=None, interleave="none",
                                                    mode="W", swizzle="128B", l2_promotion="none", oob_fill="none")),
    "encode": (encode, dict(fields=decode(DESC))),
    "replace_address": (replace_address, dict(desc=DESC, global_address=ADDR + 0x1000)),
    "decode": (decode, dict(desc=DESC)),
    "check_gather4": (check_gather4, dict(desc_or_fields=DESC)),
    "TensorMap.tiled": (TensorMap.tiled, dict(array=FakeCudaArray((64, 128), np.float16), box=(16, 64),
                                              element_strides=None, **ENUMS)),
    "TensorMap.im2col": (TensorMap.im2col, dict(array=FakeCudaArray((2, 16, 16, 64), np.float16),
                                                pixel_box_lower_corner=(-1, -1), pixel_box_upper_corner=(0, 0),
                                                channels_per_pixel=64, pixels_per_column=128, element_strides=None,
                                                **ENUMS)),
    "TensorMap.with_array": (MAP.with_array, dict(array=FakeCudaArray((64, 128), np.float16))),
    "TensorMap.numba_type": (TensorMap.numba_type, dict(dtype="float16", box=(16, 64), mode="tiled", rank=None,
                                                        box_bytes=None, swizzle="none")),
}

# Replacements that are valid inputs, so the call must succeed: defaults (None), 64 where an
# integer of that size is wanted, -1 as an im2col-wide corner.
VALID = {(fn, arg, "None") for fn, (_, kw) in CALLS.items() for arg, value in kw.items() if value is None}
VALID |= {(fn, arg, "int") for fn in ("encode_im2col", "encode_im2col_wide", "TensorMap.im2col")
          for arg in ("channels_per_pixel", "pixels_per_column")}
VALID |= {(fn, "global_address", "int") for fn in ("encode_tiled", "encode_im2col", "encode_im2col_wide",
                                                   "replace_address")}
VALID |= {("encode_im2col_wide", "pixel_box_upper_corner_width", "int"), ("TensorMap.numba_type", "box_bytes", "int"),
          ("encode_im2col_wide", "pixel_box_lower_corner_width", "negative"),
          ("encode_im2col_wide", "pixel_box_upper_corner_width", "negative")}


@pytest.mark.parametrize("fn,arg", [(fn, arg) for fn, (_, kw) in CALLS.items() for arg in kw])
def test_only_tensor_map_errors_escape(fn, arg):
    function, kwargs = CALLS[fn]
    function(**kwargs)                                     # the unchanged call is valid
    wrong = []
    for label, value in WRONG.items():
        valid = (fn, arg, label) in VALID
        try:
            function(**{**kwargs, arg: value})
        except TensorMapError as e:
            if valid:
                wrong.append(f"{arg}={value!r} is valid but raised {e}")
        except Exception as e:                             # noqa: BLE001 - the point of the test
            wrong.append(f"{arg}={value!r}: {type(e).__name__}: {e}")
        else:
            if not valid:
                wrong.append(f"{arg}={value!r}: accepted")
    assert not wrong, f"{fn}: " + "; ".join(wrong)


@pytest.mark.parametrize("value", [128, bytes(64), bytearray(129), None, "x" * 128])
def test_decode_needs_exactly_128_bytes(value):
    """``decode(128)`` used to decode ``bytes(128)``, an all-zero map."""
    with pytest.raises(TensorMapError, match="desc"):
        decode(value)


def test_decode_takes_any_buffer():
    assert decode(np.frombuffer(DESC, np.uint8)) == decode(bytearray(DESC)) == decode(DESC)
