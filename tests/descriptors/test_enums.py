"""Enum values and argument coercion."""

import numpy as np
import pytest

from numba_tma.descriptors import (DataType, Im2colWideMode, Interleave, L2Promotion, OOBFill, Swizzle,
                                   TensorMapError)
from numba_tma.descriptors.enums import TYPE_INFO, coerce


def test_driver_values():
    assert len(DataType) == 16 and [int(d) for d in DataType] == list(range(16))
    assert len(Swizzle) == 7 and int(Swizzle.SWIZZLE_128B_ATOM_64B) == 6
    assert [int(x) for x in (Interleave.INTERLEAVE_32B, L2Promotion.L2_256B, OOBFill.NAN_REQUEST_ZERO_FMA,
                             Im2colWideMode.W128)] == [2, 3, 1, 1]
    assert set(TYPE_INFO) == set(DataType)


@pytest.mark.parametrize("cls, value, expected", [
    (DataType, "float32", DataType.FLOAT32), (DataType, "BF16", DataType.BFLOAT16),
    (DataType, "16U4_ALIGN8B", DataType.PACKED_16U4_ALIGN8B), (DataType, np.float16, DataType.FLOAT16),
    (DataType, np.dtype("int64"), DataType.INT64), (DataType, "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32", DataType.TFLOAT32),
    (Swizzle, "128B", Swizzle.SWIZZLE_128B), (Swizzle, "none", Swizzle.NONE), (Swizzle, 5, Swizzle(5)),
    (Swizzle, "128b_atom_32b_flip_8b", Swizzle.SWIZZLE_128B_ATOM_32B_FLIP_8B),
    (Interleave, "32B", Interleave.INTERLEAVE_32B), (L2Promotion, "256B", L2Promotion.L2_256B),
    (L2Promotion, "CU_TENSOR_MAP_L2_PROMOTION_L2_64B", L2Promotion.L2_64B), (OOBFill, "nan", OOBFill(1)),
    (OOBFill, "zero", OOBFill.NONE), (Im2colWideMode, "w128", Im2colWideMode.W128),
])
def test_coerce_accepts_enum_int_and_names(cls, value, expected):
    assert coerce(cls, value, "arg") is expected
    assert coerce(cls, expected, "arg") is expected and coerce(cls, int(expected), "arg") is expected


@pytest.mark.parametrize("cls, value", [(Swizzle, 7), (Swizzle, "96B"), (DataType, "float8"), (DataType, True),
                                        (L2Promotion, -1), (Interleave, 1.0), (OOBFill, None)])
def test_coerce_rejects_naming_the_argument(cls, value):
    with pytest.raises(TensorMapError) as info:
        coerce(cls, value, "my_arg")
    assert info.value.argument == "my_arg" and cls.__name__ in str(info.value)
