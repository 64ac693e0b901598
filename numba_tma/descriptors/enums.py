"""Tensor-map enums with the CUDA driver's numeric values, and argument coercion.

Every encoder argument accepts the enum member, its int value, or an obvious string
(case-insensitive; the driver's full name works too)::

    >>> coerce(Swizzle, "128B", "swizzle")
    <Swizzle.SWIZZLE_128B: 3>
    >>> coerce(DataType, "bf16", "data_type") is DataType.BFLOAT16
    True
    >>> coerce(L2Promotion, "CU_TENSOR_MAP_L2_PROMOTION_L2_256B", "l2_promotion")
    <L2Promotion.L2_256B: 3>
"""

from collections import namedtuple
from enum import IntEnum

from .errors import TensorMapError


class DataType(IntEnum):
    """``CUtensorMapDataType``."""
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12
    PACKED_16U4_ALIGN8B = 13
    PACKED_16U4_ALIGN16B = 14
    PACKED_16U6_ALIGN16B = 15


class Interleave(IntEnum):
    """``CUtensorMapInterleave``."""
    NONE = 0
    INTERLEAVE_16B = 1
    INTERLEAVE_32B = 2


class Swizzle(IntEnum):
    """``CUtensorMapSwizzle``."""
    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3
    SWIZZLE_128B_ATOM_32B = 4
    SWIZZLE_128B_ATOM_32B_FLIP_8B = 5
    SWIZZLE_128B_ATOM_64B = 6


# The span in bytes of each swizzle TMA can place in shared memory (by name), and the row bits it
# XORs into the 16-byte chunk index: address bits 7-9, one, two or three of them.
SWIZZLE_BYTES = {"NONE": 0, "SWIZZLE_32B": 32, "SWIZZLE_64B": 64, "SWIZZLE_128B": 128}
SWIZZLE_ROW_MASK = {0: 0, 32: 1, 64: 3, 128: 7}


def smem_row_bytes(inner_bytes, swizzle_bytes):
    """How far apart the rows of a box land in shared memory: the box's inner bytes without a
    swizzle, the swizzle span with one, even when the row is narrower (measured on the H200: a
    16-byte fp16 row with 128B swizzle fills bytes 0-15 of each 128)."""
    return swizzle_bytes if swizzle_bytes else inner_bytes


def swizzled_offsets(offsets, swizzle_bytes):
    """Where byte offset(s) (an int or a numpy array) of a dense box land in shared memory under a
    swizzle of ``swizzle_bytes`` (0, 32, 64, 128): the 16-byte chunk index XORed with bits 7-9 of
    the offset (as measured on the H200 by the descriptor sweep)."""
    return offsets ^ (((offsets >> 7) & SWIZZLE_ROW_MASK[swizzle_bytes]) << 4)


class L2Promotion(IntEnum):
    """``CUtensorMapL2promotion``."""
    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class OOBFill(IntEnum):
    """``CUtensorMapFloatOOBfill``."""
    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


class Im2colWideMode(IntEnum):
    """``CUtensorMapIm2ColWideMode``."""
    W = 0
    W128 = 1


class Mode(IntEnum):
    """Descriptor kind, as stored in bits 0-3 of qword 1 (not a driver enum)."""
    TILED = 0
    IM2COL = 1


# bits: element width; code: the descriptor's type field (PTX tensormap.replace .elemtype);
# tf32: qword-1 bit 16, set for the two TF32 types; floating: may use NaN OOB fill.
TypeInfo = namedtuple("TypeInfo", "bits code tf32 floating")
TYPE_INFO = {
    DataType.UINT8: TypeInfo(8, 0, False, False),
    DataType.UINT16: TypeInfo(16, 1, False, False),
    DataType.UINT32: TypeInfo(32, 2, False, False),
    DataType.INT32: TypeInfo(32, 3, False, False),
    DataType.UINT64: TypeInfo(64, 4, False, False),
    DataType.INT64: TypeInfo(64, 5, False, False),
    DataType.FLOAT16: TypeInfo(16, 6, False, True),
    DataType.FLOAT32: TypeInfo(32, 7, False, True),
    DataType.FLOAT64: TypeInfo(64, 9, False, True),
    DataType.BFLOAT16: TypeInfo(16, 10, False, True),
    DataType.FLOAT32_FTZ: TypeInfo(32, 8, False, True),
    DataType.TFLOAT32: TypeInfo(32, 7, True, True),
    DataType.TFLOAT32_FTZ: TypeInfo(32, 8, True, True),
    DataType.PACKED_16U4_ALIGN8B: TypeInfo(4, 13, False, False),
    DataType.PACKED_16U4_ALIGN16B: TypeInfo(4, 14, False, False),
    DataType.PACKED_16U6_ALIGN16B: TypeInfo(6, 15, False, False),
}
TYPE_BY_CODE = {(info.code, info.tf32): dt for dt, info in TYPE_INFO.items()}

# Prefixes stripped from strings before lookup (the driver's spelling, then the member's).
_PREFIXES = {
    DataType: ("CU_TENSOR_MAP_DATA_TYPE_", "PACKED_"),
    Interleave: ("CU_TENSOR_MAP_INTERLEAVE_", "INTERLEAVE_"),
    Swizzle: ("CU_TENSOR_MAP_SWIZZLE_", "SWIZZLE_"),
    L2Promotion: ("CU_TENSOR_MAP_L2_PROMOTION_", "L2_"),
    OOBFill: ("CU_TENSOR_MAP_FLOAT_OOB_FILL_",),
    Im2colWideMode: ("CU_TENSOR_MAP_IM2COL_WIDE_MODE_",),
}
_ALIASES = {
    DataType: {"U8": 0, "U16": 1, "U32": 2, "I32": 3, "S32": 3, "U64": 4, "I64": 5, "S64": 5,
               "F16": 6, "HALF": 6, "F32": 7, "FLOAT": 7, "F64": 8, "DOUBLE": 8, "BF16": 9,
               "F32_FTZ": 10, "TF32": 11, "TF32_FTZ": 12},
    OOBFill: {"ZERO": 0, "NAN": 1},
}


def _lookup_table(enum_cls):
    table = dict(_ALIASES.get(enum_cls, {}))
    for member in enum_cls:
        table[member.name] = member.value
        for prefix in _PREFIXES[enum_cls]:
            if member.name.startswith(prefix):
                table[member.name[len(prefix):]] = member.value
    return table


_TABLES = {cls: _lookup_table(cls) for cls in _PREFIXES}


def coerce(enum_cls, value, argument):
    """Return ``value`` as a member of ``enum_cls``; raise TensorMapError naming ``argument``.

    Accepts a member, its int value, a string (``"128B"``, ``"none"``, ``"float32"``, the
    driver's ``CU_TENSOR_MAP_...`` name) and, for :class:`DataType`, a numpy dtype.

    >>> coerce(Interleave, 0, "interleave")
    <Interleave.NONE: 0>
    """
    if isinstance(value, enum_cls):
        return value
    key = (enum_cls, type(value), value) if isinstance(value, (str, int)) else None
    if key in _CACHE:
        return _CACHE[key]
    member = _coerce(enum_cls, value, argument)
    if key is not None:
        _CACHE[key] = member
    return member


_CACHE = {}


def _coerce(enum_cls, value, argument):
    if _is_numpy_integer(value):
        value = int(value)
    if isinstance(value, str):
        key = value.strip().upper().replace("-", "_").replace(" ", "_")
        for prefix in _PREFIXES[enum_cls][:1] + ("CU_TENSOR_MAP_",) + _PREFIXES[enum_cls][1:]:
            if key not in _TABLES[enum_cls] and key.startswith(prefix):
                key = key[len(prefix):]
        if key in _TABLES[enum_cls]:
            return enum_cls(_TABLES[enum_cls][key])
    elif isinstance(value, int) and not isinstance(value, bool):
        if value in enum_cls._value2member_map_:
            return enum_cls(value)
    elif enum_cls is DataType and value is not None and not isinstance(value, bool) and not _is_scalar(value):
        name = _numpy_name(value)
        if name is not None and name.upper() in _TABLES[DataType]:
            return DataType(_TABLES[DataType][name.upper()])
    names = ", ".join(m.name for m in enum_cls)
    raise TensorMapError(argument, value, f"must be a {enum_cls.__name__} ({names}), its value or name")


def _is_numpy_integer(value):
    import numpy

    return isinstance(value, numpy.integer)


def _is_scalar(value):
    """A value rather than a type: numpy would take its dtype, silently ignoring the value."""
    import numpy

    return isinstance(value, (numpy.generic, float, complex))


def _numpy_name(value):
    try:
        import numpy
        return numpy.dtype(value).name
    except (ImportError, TypeError, ValueError):  # ValueError: e.g. a malformed structured dtype
        return None
