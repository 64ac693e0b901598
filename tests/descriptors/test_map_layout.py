"""A map's layout is stated once, from its checked arguments in array order: against the driver's
golden captures (the bytes it wrote, and what they say decoded) and the H200's measured transfer
sizes, and without decoding anything on the way to the kernel."""

import importlib

import numpy as np
import pytest
from golden import GOLDEN_FILES, load

from numba_tma import TensorMap
from numba_tma.descriptors import DataType, Interleave, TensorMapError, decode, encode_im2col, encode_tiled
from numba_tma.descriptors import tensor_map

# An array dtype of each TMA type's width (the 32-bit float variants are chosen by data_type).
ARRAY_DTYPE = {DataType.UINT8: "uint8", DataType.UINT16: "uint16", DataType.UINT32: "uint32", DataType.INT32: "int32",
               DataType.UINT64: "uint64", DataType.INT64: "int64", DataType.FLOAT16: "float16",
               DataType.FLOAT32: "float32", DataType.FLOAT64: "float64", DataType.BFLOAT16: "bfloat16",
               DataType.FLOAT32_FTZ: "float32", DataType.TFLOAT32: "float32", DataType.TFLOAT32_FTZ: "float32"}
BITS = {"uint8": 8, "uint16": 16, "bfloat16": 16, "float16": 16, "uint32": 32, "int32": 32, "float32": 32,
        "uint64": 64, "int64": 64, "float64": 64}


class Array:
    """The ``__cuda_array_interface__`` of a device array (no memory behind it); bfloat16 as CuPy
    or PyTorch export it, raw 2-byte elements with a dtype that says so."""

    def __init__(self, shape, dtype, strides=None, address=0x7F0000000000):
        typestr = "<V2" if dtype == "bfloat16" else np.dtype(dtype).str
        self.dtype = dtype
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (address, False),
                                         "strides": None if strides is None else tuple(strides), "version": 3}


def _accepted(kind):
    """The driver's accepted captures of ``kind`` (tiled or im2col) of types a TensorMap can take."""
    for path in GOLDEN_FILES:
        for rec in load(path)[1]:
            if rec["kind"] == kind and rec["rc"] == 0 and DataType(rec["params"]["data_type"]) in ARRAY_DTYPE:
                yield rec["params"], bytes.fromhex(rec["desc"])


def _map(kind, p):
    """The capture's map made with TensorMap, everything given in the array's order (reversed from
    the driver's innermost-first parameters)."""
    r, data_type = p["rank"], DataType(p["data_type"])
    dtype = ARRAY_DTYPE[data_type]
    shape = p["global_dim"][:r][::-1]
    strides = (*p["global_strides"][:r - 1][::-1], BITS[dtype] // 8)
    options = dict(element_strides=tuple(p["element_strides"][:r][::-1]), interleave=Interleave(p["interleave"]),
                   swizzle=p["swizzle"], l2_promotion=p["l2_promotion"], oob_fill=p["oob_fill"],
                   data_type=data_type if ARRAY_DTYPE[data_type] == "float32" else None)
    array = Array(shape, dtype, strides, p["global_address"])
    if kind == "tiled":
        return TensorMap.tiled(array, tuple(p["box_dim"][:r][::-1]), **options)
    return TensorMap.im2col(array, p["pixel_box_lower_corner"][:r - 2][::-1], p["pixel_box_upper_corner"][:r - 2][::-1],
                            p["channels_per_pixel"], p["pixels_per_column"], **options)


@pytest.mark.parametrize("kind", ["tiled", "im2col"])
def test_maps_of_the_captured_arguments_are_the_drivers_bytes_and_say_what_they_encode(kind):
    """Every accepted capture, made from the array's side: TensorMap's bytes are the driver's, and
    the layout stated from the arguments (never decoded) says what the driver's bytes say decoded."""
    count = 0
    for p, captured in _accepted(kind):
        desc, f = _map(kind, p), decode(captured)
        assert desc.bytes == captured, p
        layout, bits = desc.layout, BITS[ARRAY_DTYPE[f.data_type]]
        assert (layout.data_type, layout.swizzle, layout.rank, layout.mode) == \
            (f.data_type.name, f.swizzle.name, f.rank, kind), p
        assert layout.element_strides == (None if set(f.element_strides) == {1} else f.element_strides[::-1]), p
        expected_box = f.box_dim[::-1] if kind == "tiled" else (f.pixels_per_column, f.channels_per_pixel)
        assert layout.box == desc.box == expected_box, p
        if f.interleave == Interleave.NONE:
            assert layout.box_bytes == desc.box_bytes == f.transfer_bytes, p
        else:
            assert layout.box_bytes is None, p
        assert desc.swizzle == f.swizzle and desc.store_overrun == (-(f.global_dim[0] * bits // 8)) % 16, p
        # what driver_bytes() hands the driver: the map's own arguments, back in the driver's order
        encoder = encode_tiled if kind == "tiled" else encode_im2col
        assert encoder(global_address=desc.address, **desc._layout.encoder_arguments()) == captured, p
        count += 1
    assert count > (5000 if kind == "im2col" else 14000)


# (dtype, box in array order, element strides in array order, bytes the H200 wrote into shared memory;
# tests/descriptors/test_transfer_bytes.py, measured 2026-11-30 on a 64^3 tensor)
MEASURED = [("float32", (3, 5, 8), (1, 1, 1), 480), ("float32", (3, 5, 8), (1, 2, 1), 288),
            ("float32", (3, 5, 8), (1, 3, 1), 192), ("float32", (3, 5, 8), (1, 1, 2), 480),
            ("float32", (3, 5, 8), (1, 1, 4), 480), ("float32", (3, 5, 8), (1, 1, 3), 480),
            ("float32", (3, 5, 8), (2, 2, 3), 192),
            ("float16", (2, 5, 16), (3, 1, 1), 160)]


@pytest.mark.parametrize("dtype, box, element_strides, written", MEASURED)
def test_box_bytes_are_what_the_h200_wrote(dtype, box, element_strides, written):
    desc = TensorMap.tiled(Array((64, 64, 64), dtype), box, element_strides=element_strides)
    assert desc.box_bytes == desc.layout.box_bytes == written
    assert desc._numba_type_.box_bytes == written


def test_an_interleaved_maps_box_bytes_are_refused_and_unknown_to_kernels():
    desc = TensorMap.tiled(Array((8, 8, 64), "float16"), (8, 8, 16), interleave="32B", swizzle="32B")
    with pytest.raises(TensorMapError, match=r"interleave='INTERLEAVE_32B': the bytes an interleaved load delivers "
                                             r"are not established"):
        desc.box_bytes
    assert desc.layout.box_bytes is None and desc.layout.smem_bytes is None
    assert "box_bytes=unknown (interleaved)" in repr(desc)


def test_nothing_on_the_way_to_the_kernel_decodes(monkeypatch):
    """Making maps, re-pointing them and reading what kernels and launches read decodes no bytes:
    the layout was stated when the arguments were checked."""
    def refuse(*args):
        raise AssertionError("decoded")

    monkeypatch.setattr(importlib.import_module("numba_tma.descriptors.decode"), "decode", refuse)
    monkeypatch.setattr(tensor_map, "decode", refuse)
    a, b = (Array((96, 198), "float32", strides=(800, 4), address=address) for address in (0x7F0000000000,
                                                                                           0x7F0000100000))
    desc = TensorMap.tiled(a, (64, 32), swizzle="128B", element_strides=(2, 1))
    x = TensorMap.im2col(Array((2, 16, 16, 64), "float16"), (-1, -1), (1, 1), 64, 128)
    for made in (desc, desc.with_array(b), desc.retarget(b), x, TensorMap.tiled(b, (64, 32), swizzle="128B",
                                                                               element_strides=(2, 1))):
        made.layout, made.box_bytes, made.smem_bytes, made.swizzle, made.store_overrun, made._numba_type_
        repr(made)
    # rows 2 apart: 32 of 32 float32 (128 bytes, the swizzle's span); 198 float32 are 8 bytes short of 800
    assert desc.box_bytes == 32 * 32 * 4 and desc.smem_bytes == 32 * 128 and desc.store_overrun == 8
    with pytest.raises(AssertionError, match="decoded"):
        desc.fields     # the one reader of the bytes: for display and cross-checks


def test_maps_of_one_layout_share_it_and_its_kernel_type():
    """One home: every map of a layout (made again, ``with_array``, an equal call spelled otherwise)
    holds an equal layout, whose Numba type is made once; ``with_array`` shares the map's own.  (Two
    calls share one layout object only while the layout caches hold it: other tests fill them.)"""
    a, b = Array((96, 200), "float32"), Array((96, 200), "float32", address=0x7F0000100000)
    first = TensorMap.tiled(a, (64, 32), swizzle="128B")
    assert first.with_array(b)._layout is first._layout
    for other in (TensorMap.tiled(b, (64, 32), swizzle="128B"), TensorMap.tiled(b, [64, 32], swizzle="SWIZZLE_128B"),
                  first.with_array(b)):
        assert other.layout == first.layout and other.bytes[8:] == first.bytes[8:]
        assert other._numba_type_ is first._numba_type_
    assert TensorMap.tiled(a, (64, 32), swizzle="128B", allow_store_overrun=True)._layout is not first._layout


@pytest.mark.parametrize("columns, dtype, allow, overrun, in_type", [
    (59, "float32", False, 4, 4), (59, "float32", True, 4, 0), (64, "float16", False, 0, 0), (7, "uint8", False, 9, 9),
    (3, "float64", True, 8, 0)])
def test_store_overrun_is_the_rows_bytes_to_16_and_kernels_see_it_unless_allowed(columns, dtype, allow, overrun,
                                                                                 in_type):
    size = BITS[dtype] // 8
    pitched = Array((8, columns), dtype, strides=(256, size))     # rows 256 bytes apart
    desc = TensorMap.tiled(pitched, (8, 16 // size), allow_store_overrun=allow)
    assert desc.store_overrun == overrun and desc.layout.store_overrun == in_type


def test_a_float32_map_read_as_tfloat32_says_so_in_its_type():
    desc = TensorMap.tiled(Array((64, 64), "float32"), (16, 16), data_type="tfloat32")
    assert desc.dtype == desc.layout.dtype == "float32 as TFLOAT32" and desc.layout.data_type == "TFLOAT32"
    assert str(desc._numba_type_) == "TensorMap[float32 as TFLOAT32, rank=2, box=(16, 16), tiled]"


@pytest.mark.parametrize("make", [
    lambda: TensorMap.tiled(Array((64, 96, 128), "float16", address=0x7F0000200000), (2, 16, 64), swizzle="128B",
                            element_strides=(1, 2, 4), oob_fill="nan"),
    lambda: TensorMap.tiled(Array((100, 64), "float32", strides=(512, 4)), (16, 16), data_type="tfloat32"),
    lambda: TensorMap.im2col(Array((2, 8, 16, 16, 64), "bfloat16"), (-1, -2, 0), (1, 0, -1), 64, 128,
                             element_strides=(1, 1, 2, 1, 1))],
    ids=["tiled 3-D, element strides, NaN fill", "tfloat32 over float32, pitched rows", "im2col NDHWC bfloat16"])
def test_the_by_value_twin_is_made_from_the_layouts_array_order_arguments(make, monkeypatch):
    """cuda.core takes the map's arguments in the array's order: the stand-in driver
    (``tests/fake_gpu.py``) encodes what it is given as ``cuTensorMapEncode*`` would, and its twin
    holds exactly the map's bytes."""
    from fake_gpu import PAD, FakeDriver

    from numba_tma.descriptors import by_value

    monkeypatch.setattr(by_value, "MAKER", FakeDriver())
    desc = make()
    assert by_value._new(desc)[PAD:PAD + 128] == desc.bytes
