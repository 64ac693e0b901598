"""Pure-Python encoders mirroring ``cuTensorMapEncode*`` (same parameters, same order).

Each returns the 128 bytes the driver (13.0, sm_90) writes, or raises :class:`TensorMapError`
for any input the driver rejects.  Dimensions are innermost first; ``global_strides`` has
``rank - 1`` byte strides (dimension 0 is contiguous).
"""

from .decode import descriptor_bytes
from .errors import TensorMapError
from .fields import TensorMapFields
from .validate import MAX_ADDRESS, _int, im2col_params, tiled_params, wide_corners


def _fields(p):
    return TensorMapFields(p.mode, p.data_type, p.global_address, p.global_dim, p.global_strides,
                           p.box_dim, p.element_strides, p.interleave, p.swizzle, p.l2_promotion,
                           p.oob_fill, p.pixel_box_lower_corner, p.pixel_box_upper_corner,
                           p.channels_per_pixel, p.pixels_per_column)


def encode_tiled(data_type, global_address, global_dim, global_strides, box_dim, element_strides=None,
                 interleave="none", swizzle="none", l2_promotion="none", oob_fill="none"):
    """``cuTensorMapEncodeTiled`` in Python; ``element_strides=None`` means all ones.

    >>> from numba_tma.descriptors import decode
    >>> desc = encode_tiled("float32", 0x7f0000000000, [1024, 512], [4096], [64, 32],
    ...                     swizzle="none", l2_promotion="128B")
    >>> len(desc), decode(desc).box_bytes
    (128, 8192)
    """
    p = tiled_params(data_type, global_address, global_dim, global_strides, box_dim, element_strides,
                     interleave, swizzle, l2_promotion, oob_fill)
    return _fields(p).encode()


def encode_im2col(data_type, global_address, global_dim, global_strides, pixel_box_lower_corner,
                  pixel_box_upper_corner, channels_per_pixel, pixels_per_column, element_strides=None,
                  interleave="none", swizzle="none", l2_promotion="none", oob_fill="none"):
    """``cuTensorMapEncodeIm2col`` in Python (rank 3-5, NWC/NHWC/NDHWC; corners W first).

    >>> from numba_tma.descriptors import decode
    >>> desc = encode_im2col("float16", 0, [64, 16, 16, 2], [128, 2048, 32768], [-1, -1], [0, 0],
    ...                      64, 128)
    >>> decode(desc).pixel_box_lower_corner
    (-1, -1)
    """
    p = im2col_params(data_type, global_address, global_dim, global_strides, pixel_box_lower_corner,
                      pixel_box_upper_corner, channels_per_pixel, pixels_per_column, element_strides,
                      interleave, swizzle, l2_promotion, oob_fill)
    return _fields(p).encode()


def encode_im2col_wide(data_type, global_address, global_dim, global_strides, pixel_box_lower_corner_width,
                       pixel_box_upper_corner_width, channels_per_pixel, pixels_per_column,
                       element_strides=None, interleave="none", mode="W", swizzle="128B",
                       l2_promotion="none", oob_fill="none"):
    """``cuTensorMapEncodeIm2colWide`` as driver 13.0 runs it on sm_90.

    There the driver accepts it and writes an ordinary im2col map whose W offsets are these
    widths (D and H offsets 0), with ``mode`` validated but not stored; the documented
    CC >= 10 form could not be observed (see docs/descriptors.md).

    >>> wide = encode_im2col_wide("float16", 0, [64, 16, 2], [128, 2048], -1, 0, 64, 128)
    >>> wide == encode_im2col("float16", 0, [64, 16, 2], [128, 2048], [-1], [0], 64, 128, swizzle="128B")
    True
    """
    lower, upper = wide_corners(global_dim, pixel_box_lower_corner_width, pixel_box_upper_corner_width, mode)
    p = im2col_params(data_type, global_address, global_dim, global_strides, lower, upper,
                      channels_per_pixel, pixels_per_column, element_strides, interleave, swizzle,
                      l2_promotion, oob_fill,
                      corner_names=("pixel_box_lower_corner_width", "pixel_box_upper_corner_width"))
    return _fields(p).encode()


def replace_address(desc, global_address):
    """``cuTensorMapReplaceAddress``: ``desc`` with a new global address.

    The driver only asks for a non-zero, 16-byte aligned address below 2**57 here (even for
    32-byte interleaved maps).

    >>> from numba_tma.descriptors import decode
    >>> d = encode_tiled("uint8", 0x1000, [64], [], [16])
    >>> decode(replace_address(d, 0x2000)).global_address
    8192
    """
    desc = descriptor_bytes(desc)
    global_address = _int("global_address", global_address)
    if not 0 < global_address < MAX_ADDRESS or global_address % 16:
        raise TensorMapError("global_address", global_address,
                             "must be a non-zero multiple of 16 below 2**57")
    return global_address.to_bytes(8, "little") + desc[8:]


def encode(fields):
    """Pack :class:`TensorMapFields` into 128 bytes without validation (``fields.encode()``).

    >>> from numba_tma.descriptors import decode
    >>> d = encode_tiled("float64", 0x1000, [32, 32], [256], [2, 2])
    >>> encode(decode(d)) == d
    True
    """
    if not isinstance(fields, TensorMapFields):
        raise TensorMapError("fields", fields, "must be a TensorMapFields (from decode, or built field by field)")
    return fields.encode()



