"""Host-side CUtensorMap (TMA descriptor) encoding, decoding and validation, in pure Python.

The encoders mirror ``cuTensorMapEncodeTiled`` / ``Im2col`` / ``Im2colWide`` argument for
argument and return the 128 bytes the driver writes (byte-identical to driver 13.0 on sm_90,
checked against golden captures); no GPU or CUDA driver is needed.  ``driver`` holds the same
functions backed by ``cuda.bindings`` for cross-checks.

>>> from numba_tma.descriptors import encode_tiled, decode
>>> desc = encode_tiled("bfloat16", 0x7f0000000000, [4096, 4096], [8192], [64, 64],
...                     swizzle="128B", l2_promotion="128B")
>>> decode(desc).box_bytes
8192
"""

from . import driver
from .decode import decode
from .encode import encode, encode_im2col, encode_im2col_wide, encode_tiled, replace_address
from .enums import DataType, Im2colWideMode, Interleave, L2Promotion, Mode, OOBFill, Swizzle
from .errors import TensorMapError
from .fields import TensorMapFields
from .validate import check_gather4

__all__ = ["DataType", "Im2colWideMode", "Interleave", "L2Promotion", "Mode", "OOBFill", "Swizzle",
           "TensorMapError", "TensorMapFields", "check_gather4", "decode", "driver", "encode", "encode_im2col",
           "encode_im2col_wide", "encode_tiled", "replace_address"]
