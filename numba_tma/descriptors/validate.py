"""The driver's acceptance rules (driver 13.0 on sm_90), as tables and small checks.

Each check raises :class:`TensorMapError` naming the argument, the value and the rule.  The
rules are those that reproduce every accept/reject decision in the golden captures
(``tests/data``); where they differ from the driver documentation, ``docs/descriptors.md``
says so.

>>> p = tiled_params("float32", 0x7f0000000000, [64, 32], [256], [16, 8], None,
...                  "none", "128B", "none", "none")
>>> p.box_bytes
512
"""

import operator
from collections import namedtuple

from .enums import (SWIZZLE_BYTES, TYPE_INFO, DataType, Im2colWideMode, Interleave, L2Promotion, Mode, OOBFill,
                    Swizzle, coerce)
from .errors import TensorMapError

MAX_ADDRESS = 1 << 57            # the driver rejects addresses of 2**57 and above
MAX_DIM = 1 << 32
MAX_STRIDE = 1 << 40
MAX_BOX_BYTES = 233472           # 228 KiB: largest box the driver accepts on the H200
INNER_ALIGN = 16                 # the innermost box extent spans a multiple of 16 bytes

RANK = {Mode.TILED: (1, 5), Mode.IM2COL: (3, 5)}
# (low, high) inclusive per array / scalar argument
RANGES = {"box_dim": (1, 256), "element_strides": (1, 8), "global_dim": (1, MAX_DIM),
          "channels_per_pixel": (1, 256), "pixels_per_column": (1, 1024)}
CORNER_LIMIT = {3: 1 << 15, 4: 1 << 7, 5: 1 << 4}     # offsets in [-limit, limit)
SWIZZLE_SPAN = {Swizzle[name]: span for name, span in SWIZZLE_BYTES.items() if span}
# Rejected by the driver on compute capability 9.x (documented for CC >= 10).
NEEDS_SM100 = {"data_type": {DataType.PACKED_16U4_ALIGN8B, DataType.PACKED_16U4_ALIGN16B,
                             DataType.PACKED_16U6_ALIGN16B},
               "swizzle": {Swizzle.SWIZZLE_128B_ATOM_32B, Swizzle.SWIZZLE_128B_ATOM_32B_FLIP_8B,
                           Swizzle.SWIZZLE_128B_ATOM_64B}}

Params = namedtuple("Params", "mode data_type global_address global_dim global_strides box_dim "
                              "element_strides interleave swizzle l2_promotion oob_fill "
                              "pixel_box_lower_corner pixel_box_upper_corner channels_per_pixel "
                              "pixels_per_column box_bytes")


def _int(name, value, index=None):
    """``value`` (entry ``index`` of ``name``) as an int: exactly an integer, not a bool or float."""
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TensorMapError(name, value, "must be an integer", index=index) from None


def _ints(name, values, length=None, what=None):
    """``values`` as a list of ints (see :func:`_int`), of ``length`` entries (``what``) if given."""
    try:
        if isinstance(values, (str, bytes, bytearray)):
            raise TypeError
        values = list(values)
    except TypeError:
        raise TensorMapError(name, values, "must be a sequence of integers") from None
    try:
        out = [operator.index(v) for v in values]
        if bool in map(type, values):
            raise TypeError
    except TypeError:  # slow path: find the entry to blame
        out = [_int(name, v, i) for i, v in enumerate(values)]
    if length is not None and len(out) != length:
        raise TensorMapError(name, out, f"must have {what} = {length} entries")
    return out


def _in_range(name, value, index=None, limits=None):
    """Check ``value`` (entry ``index`` of ``name``) against ``RANGES[name]`` or ``limits``."""
    lo, hi = limits or RANGES[name]
    if not lo <= value <= hi:
        raise TensorMapError(name, value, f"must be in [{lo}, {hi}]", index=index)


def swizzle_span(interleave, swizzle):
    """The most bytes the innermost box extent may span: the swizzle's span, or None (no swizzle,
    or interleaved, where the driver does not bound it)."""
    return SWIZZLE_SPAN.get(swizzle) if interleave == Interleave.NONE else None


def address_alignment(interleave) -> int:
    """The tensor address's alignment: 16 bytes, 32 with 32B interleave."""
    return 32 if interleave == Interleave.INTERLEAVE_32B else 16


def check_global_address(global_address, interleave):
    """The encoders' rule for the tensor's address: a multiple of 16 (32 with 32B interleave)
    in [0, 2**57); returns it as an int."""
    align = address_alignment(interleave)
    global_address = _int("global_address", global_address)
    if not 0 <= global_address < MAX_ADDRESS or global_address % align:
        raise TensorMapError("global_address", global_address,
                             f"must be a multiple of {align} in [0, 2**57)")
    return global_address


def _common(mode, data_type, global_address, global_dim, global_strides, element_strides,
            interleave, swizzle, l2_promotion, oob_fill):
    """Checks shared by all encoders; returns the coerced values."""
    data_type = coerce(DataType, data_type, "data_type")
    interleave = coerce(Interleave, interleave, "interleave")
    swizzle = coerce(Swizzle, swizzle, "swizzle")
    l2_promotion = coerce(L2Promotion, l2_promotion, "l2_promotion")
    oob_fill = coerce(OOBFill, oob_fill, "oob_fill")
    for name, value in (("data_type", data_type), ("swizzle", swizzle)):
        if value in NEEDS_SM100[name]:
            raise TensorMapError(name, value.name, "needs compute capability >= 10.0 (the driver rejects "
                                 "it on 9.x, so its descriptor bits are unconfirmed); use "
                                 "numba_tma.descriptors.driver on such a GPU")
    global_dim = _ints("global_dim", global_dim)
    rank = len(global_dim)
    lo, hi = RANK[mode]
    if not lo <= rank <= hi:
        raise TensorMapError("global_dim", global_dim, f"rank (its length) must be in [{lo}, {hi}]")
    if interleave != Interleave.NONE and rank < 3:
        raise TensorMapError("interleave", interleave.name, "needs rank >= 3")
    if oob_fill == OOBFill.NAN_REQUEST_ZERO_FMA and not TYPE_INFO[data_type].floating:
        raise TensorMapError("oob_fill", oob_fill.name, f"NaN fill needs a floating data_type, not {data_type.name}")
    global_address = check_global_address(global_address, interleave)
    align = address_alignment(interleave)
    for i, d in enumerate(global_dim):
        _in_range("global_dim", d, i)
    global_strides = _ints("global_strides", global_strides, rank - 1, "rank - 1")
    for i, s in enumerate(global_strides):
        if s < 0:
            raise TensorMapError("global_strides", s, "must not be negative: TMA does not support negative "
                                 "strides (reversed views)", index=i)
        if s >= MAX_STRIDE or s % align:
            raise TensorMapError("global_strides", s, f"must be a multiple of {align} below 2**40", index=i)
    if element_strides is None:
        element_strides = [1] * rank
    element_strides = _ints("element_strides", element_strides, rank, "rank")
    for i, e in enumerate(element_strides):
        _in_range("element_strides", e, i)
    return (data_type, global_address, global_dim, global_strides, element_strides, interleave,
            swizzle, l2_promotion, oob_fill)


def _inner_and_size(name, index, inner, box_bytes, data_type, interleave, swizzle, box_name, box_value):
    """Rules on the innermost box extent (entry ``index`` of ``name``) and on the whole load
    (``box_name``)."""
    nbytes = inner * TYPE_INFO[data_type].bits // 8
    if nbytes % INNER_ALIGN:
        raise TensorMapError(name, inner, f"{inner} x {data_type.name} = {nbytes} bytes, not a multiple of "
                             f"{INNER_ALIGN}", index=index)
    span = swizzle_span(interleave, swizzle)
    if span is not None and nbytes > span:
        raise TensorMapError(name, inner, f"{nbytes} inner bytes exceed the {swizzle.name} span of {span} bytes",
                             index=index)
    if box_bytes > MAX_BOX_BYTES:
        raise TensorMapError(box_name, box_value, f"one load would be {box_bytes} bytes of shared memory, "
                             f"over the {MAX_BOX_BYTES}-byte limit")


def tiled_params(data_type, global_address, global_dim, global_strides, box_dim, element_strides,
                 interleave, swizzle, l2_promotion, oob_fill):
    """Validate ``cuTensorMapEncodeTiled`` arguments; return them coerced as :class:`Params`."""
    (data_type, global_address, global_dim, global_strides, element_strides, interleave, swizzle,
     l2_promotion, oob_fill) = _common(Mode.TILED, data_type, global_address, global_dim, global_strides,
                                       element_strides, interleave, swizzle, l2_promotion, oob_fill)
    box_dim = _ints("box_dim", box_dim, len(global_dim), "rank")
    for i, b in enumerate(box_dim):
        _in_range("box_dim", b, i)
    n = TYPE_INFO[data_type].bits // 8
    for b, e in zip(box_dim, element_strides):
        n *= b // e
    _inner_and_size("box_dim", 0, box_dim[0], n, data_type, interleave, swizzle, "box_dim", tuple(box_dim))
    return Params(Mode.TILED, data_type, global_address, tuple(global_dim), tuple(global_strides),
                  tuple(box_dim), tuple(element_strides), interleave, swizzle, l2_promotion, oob_fill,
                  None, None, None, None, n)


def im2col_params(data_type, global_address, global_dim, global_strides, pixel_box_lower_corner,
                  pixel_box_upper_corner, channels_per_pixel, pixels_per_column, element_strides,
                  interleave, swizzle, l2_promotion, oob_fill, corner_names=None):
    """Validate ``cuTensorMapEncodeIm2col`` arguments; return them coerced as :class:`Params`.

    ``corner_names`` renames the corner arguments in errors (used by the im2col-wide encoder).
    """
    (data_type, global_address, global_dim, global_strides, element_strides, interleave, swizzle,
     l2_promotion, oob_fill) = _common(Mode.IM2COL, data_type, global_address, global_dim, global_strides,
                                       element_strides, interleave, swizzle, l2_promotion, oob_fill)
    rank = len(global_dim)
    lower_name, upper_name = corner_names or ("pixel_box_lower_corner", "pixel_box_upper_corner")
    lower = _ints(lower_name, pixel_box_lower_corner, rank - 2, "rank - 2")
    upper = _ints(upper_name, pixel_box_upper_corner, rank - 2, "rank - 2")
    limit = CORNER_LIMIT[rank]
    for name, values in ((lower_name, lower), (upper_name, upper)):
        for i, v in enumerate(values):
            if not -limit <= v < limit:
                raise TensorMapError(name, v, f"must be in [{-limit}, {limit - 1}] for rank {rank}", index=i)
    # The box along each spatial dimension must be non-empty, computed as the driver does: in
    # 32-bit arithmetic, against global_dim[i + 1] (global_dim[i] when interleaved).
    first = 0 if interleave != Interleave.NONE else 1
    for i, (lo, up) in enumerate(zip(lower, upper)):
        end = _int32(global_dim[first + i] + up)
        if end <= lo:
            raise TensorMapError(upper_name, up, f"empty box: int32(global_dim[{first + i}] + "
                                 f"upper) = {end} must exceed lower = {lo}", index=i)
    cpp = _int("channels_per_pixel", channels_per_pixel)
    ppc = _int("pixels_per_column", pixels_per_column)
    _in_range("channels_per_pixel", cpp)
    _in_range("pixels_per_column", ppc)
    n = cpp * ppc * TYPE_INFO[data_type].bits // 8
    _inner_and_size("channels_per_pixel", None, cpp, n, data_type, interleave, swizzle,
                    "channels_per_pixel x pixels_per_column", (cpp, ppc))
    return Params(Mode.IM2COL, data_type, global_address, tuple(global_dim), tuple(global_strides), None,
                  tuple(element_strides), interleave, swizzle, l2_promotion, oob_fill, tuple(lower),
                  tuple(upper), cpp, ppc, n)


def wide_corners(global_dim, lower_width, upper_width, mode):
    """Map im2col-wide's W offsets to im2col corners (D and H offsets 0), as driver 13.0 on sm_90 does.

    >>> wide_corners([64, 8, 8, 8, 2], -1, 0, "W")
    ([-1, 0, 0], [0, 0, 0])
    """
    rank = len(_ints("global_dim", global_dim))
    coerce(Im2colWideMode, mode, "mode")
    lower = _int("pixel_box_lower_corner_width", lower_width)
    upper = _int("pixel_box_upper_corner_width", upper_width)
    pad = [0] * max(rank - 3, 0)
    return [lower] + pad, [upper] + pad


def _int32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def check_gather4(desc_or_fields):
    """Raise TensorMapError unless a descriptor suits ``tile::gather4`` loads.

    gather4 needs a tiled, 2-D map whose box is one row (``box_dim[1] == 1``) and no interleave.
    Accepts 128 descriptor bytes, :class:`TensorMapFields` or a ``TensorMap``; returns the fields.

    >>> from numba_tma.descriptors import encode_tiled
    >>> check_gather4(encode_tiled("float16", 0, [128, 64], [256], [64, 1])).box_dim
    (64, 1)
    """
    from .decode import decode
    from .fields import TensorMapFields
    f = getattr(desc_or_fields, "fields", desc_or_fields)  # a TensorMap carries its decoded fields
    f = f if isinstance(f, TensorMapFields) else decode(f)
    if f.mode != Mode.TILED:
        raise TensorMapError("mode", f.mode.name, "gather4 needs a tiled tensor map")
    if f.rank != 2:
        raise TensorMapError("rank", f.rank, "gather4 needs a 2-D tensor map")
    if f.box_dim[1] != 1:
        raise TensorMapError("box_dim", f.box_dim[1], "gather4 needs a box of one row (box_dim[1] == 1)", index=1)
    if f.interleave != Interleave.NONE:
        raise TensorMapError("interleave", f.interleave.name, "gather4 needs interleave NONE")
    return f
