"""TensorMap as a kernel argument: by-value __grid_constant__ parameter, compile-time checks."""

import re

import numba
import numpy as np
import pytest
from numba import cuda
from numba.cuda import types

from numba_tma import OpArgumentError, TensorMap, TensorMapError, fence, inspect, mbarrier, tma
from numba_tma.descriptors.tile_layout import TileLayout
from numba_tma.intrinsics.tensor_map_type import global_map_type

F16 = types.float16
MAP_F32_2D = TensorMap.numba_type("float32", (32, 64))


def load_tile(desc, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((32, 64), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
        mbarrier.arrive_expect_tx(bars, 32 * 64 * 4)
        tma.load(desc, tile, (0, 0), bars)
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]


SIG = (MAP_F32_2D, numba.float32[::1])


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_map_is_a_grid_constant_parameter(arch):
    out = inspect.compile(load_tile, SIG, arch)
    assert ".param .align 64 .b8" in out.ptx and "_param_0[128]" in out.ptx
    assert "cvta.param.u64" in out.ptx
    assert "__local_depot" not in out.ptx, "TMA must read the parameter, never a local copy"
    assert "fence.proxy.tensormap" not in out.ptx, "a by-value map needs no acquire fence"
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" in out.ptx
    assert "UTMALDG.2D" in out.opcodes()


def test_type_names_dtype_rank_box():
    assert str(MAP_F32_2D) == "TensorMap[float32, rank=2, box=(32, 64), tiled]"
    assert MAP_F32_2D != TensorMap.numba_type("float32", (64, 32))


def _load_into(tile_dtype, coords="(0, 0)"):
    """A kernel loading a box of a 2-D map into a (32, 64) tile of ``tile_dtype``."""
    namespace = {"cuda": cuda, "types": types, "tma": tma}
    exec(f"""
def k(desc, out):
    bars = cuda.shared.array(1, types.uint64)
    tile = cuda.shared.array((32, 64), types.{tile_dtype}, alignment=128)
    tma.load(desc, tile, {coords}, bars)
    out[0] = tile[0, 0]
""", namespace)
    return namespace["k"]


@pytest.mark.parametrize("dtype,tiles", [
    ("float32", ["float32", "int32", "uint32"]),          # same bytes, reinterpreted
    ("bfloat16", ["uint16", "int16", "float16"]),         # numba has no bfloat16 shared arrays
    ("float8_e4m3fn", ["uint8", "int8"]),                 # nor fp8 ones
    ("float8_e5m2", ["uint8"]),
])
def test_any_tile_of_the_map_element_width_is_accepted(dtype, tiles):
    map_type = TensorMap.numba_type(dtype, (32, 64))
    for tile in tiles:
        ptx = inspect.ptx(_load_into(tile), (map_type, numba.float32[::1]))
        assert "cp.async.bulk.tensor.2d" in ptx


@pytest.mark.parametrize("dtype,tile,bits", [("float32", "float16", 32), ("bfloat16", "float32", 16),
                                             ("float8_e4m3fn", "uint16", 8)])
def test_a_tile_of_another_width_is_refused(dtype, tile, bits):
    with pytest.raises(OpArgumentError, match=rf"'dst' must have {bits}-bit elements like the map"):
        inspect.ptx(_load_into(tile), (TensorMap.numba_type(dtype, (32, 64)), numba.float32[::1]))


@pytest.mark.parametrize("dtype,col,ok", [("float32", 4, True), ("float32", 2, False), ("float16", 8, True),
                                          ("float16", 12, False), ("float8_e4m3fn", 48, True),
                                          ("float8_e4m3fn", 8, False)])
def test_constant_first_coordinate_must_be_16_byte_aligned(dtype, col, ok):
    kernel = _load_into({"float32": "float32", "float16": "uint16", "float8_e4m3fn": "uint8"}[dtype], f"({col}, 0)")
    sig = (TensorMap.numba_type(dtype, (32, 64)), numba.float32[::1])
    if ok:
        assert "cp.async.bulk.tensor.2d" in inspect.ptx(kernel, sig)
    else:
        with pytest.raises(OpArgumentError, match=r"'coords\[0\]' times the element size .* multiple of 16 bytes"):
            inspect.ptx(kernel, sig)


def test_a_run_time_first_coordinate_is_not_checked():
    kernel = _load_into("float32", "(int(out[1]), 0)")
    assert "cp.async.bulk.tensor.2d" in inspect.ptx(kernel, SIG)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_map_argument_compiles_in_debug_mode(arch):
    """numba's own ``debug=True, opt=False``: libNVVM 13.5 parses that IR with its modern parser even
    for sm_90a (``byval(<type>)``), 13.0 with its LLVM 7 one (bare ``byval``); the spelling is measured."""
    out = inspect.compile(load_tile, SIG, arch, debug=True, opt=False)
    assert "_param_0[128]" in out.ptx and "cvta.param.u64" in out.ptx
    assert "UTMALDG.2D" in out.opcodes()


def test_element_strides_are_part_of_the_type():
    a = FakeCudaArray((64, 64), np.float32)
    plain, strided = TensorMap.tiled(a, (16, 16))._numba_type_, TensorMap.tiled(a, (16, 16), element_strides=(2, 1))
    assert plain != strided._numba_type_ and "element_strides=(2, 1)" in str(strided._numba_type_)   # array order


def test_the_swizzle_is_part_of_the_type():
    plain, swizzled = TensorMap.numba_type("float16", (64, 64)), TensorMap.numba_type("float16", (64, 64), swizzle="128B")
    assert plain != swizzled and "swizzle=SWIZZLE_128B" in str(swizzled)


def test_coords_must_match_the_rank():
    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((32, 64), numba.float32)
        tma.load(desc, tile, (0, 0, 0), bars)

    with pytest.raises(OpArgumentError, match=r"'coords' must have 2 entries \(the rank of TensorMap"):
        inspect.ptx(k, SIG)


class FakeCudaArray:
    """Just the __cuda_array_interface__ of a device array: TensorMap encodes with no GPU."""

    def __init__(self, shape, dtype, address=0x7F0000000000, strides=None):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": np.dtype(dtype).str, "data": (address, False),
            "strides": strides, "version": 3,
        }


def test_tiled_map_from_array_order():
    a = FakeCudaArray((1000, 1024), np.float32)
    desc = TensorMap.tiled(a, (64, 32))
    f = desc.fields
    assert f.global_dim == (1024, 1000) and f.global_strides == (4096,)
    assert f.box_dim == (32, 64)  # innermost first inside the descriptor
    assert desc.box == (64, 32) and desc.rank == 2 and desc.dtype == "float32"
    assert desc.box_bytes == 64 * 32 * 4 and len(desc.bytes) == 128
    assert "box=[64, 32]" in repr(desc) and "<table>" in desc._repr_html_()


def test_with_array_only_changes_the_address():
    a, b = FakeCudaArray((256, 256), np.float16), FakeCudaArray((256, 256), np.float16, address=0x7F0000100000)
    desc = TensorMap.tiled(a, (64, 64), swizzle="128B")
    moved = desc.with_array(b)
    assert moved.address == 0x7F0000100000
    assert moved.bytes[8:] == desc.bytes[8:]


def test_retarget_repoints_in_place():
    a, b = FakeCudaArray((256, 256), np.float16), FakeCudaArray((256, 256), np.float16, address=0x7F0000100000)
    desc = TensorMap.tiled(a, (64, 64), swizzle="128B")
    layout, fields_before = desc.bytes[8:], desc.fields
    assert desc.retarget(b) is desc
    assert desc.address == desc.fields.global_address == 0x7F0000100000 and fields_before.global_address != desc.address
    assert desc.bytes[8:] == layout
    with pytest.raises(TensorMapError, match=r"array=.*must match the map's float16\[256, 256\]"):
        desc.retarget(FakeCudaArray((256, 128), np.float16))


def test_with_array_rejects_another_shape():
    desc = TensorMap.tiled(FakeCudaArray((256, 256), np.float16), (64, 64))
    with pytest.raises(ValueError, match="must match the map's float16"):
        desc.with_array(FakeCudaArray((128, 256), np.float16))


def test_an_accepted_interface_still_checks_every_later_array():
    """After a first array is accepted, later ones whose interface matches it are answered from the
    interface alone: any difference (shape, dtype, strides, an unaligned address) still goes
    through every check, and each array's own address is used."""
    desc = TensorMap.tiled(FakeCudaArray((8, 8, 64), np.float16), (8, 8, 16), interleave="32B", swizzle="32B")
    assert desc.with_array(FakeCudaArray((8, 8, 64), np.float16, address=0x7F0000100000)).address == 0x7F0000100000
    assert desc.retarget(FakeCudaArray((8, 8, 64), np.float16, address=0x7F0000200020)).address == 0x7F0000200020
    for other, rule in [(FakeCudaArray((8, 8, 64), np.float16, address=0x7F0000000010), "multiple of 32"),
                        (FakeCudaArray((8, 8, 32), np.float16), r"must match the map's float16\[8, 8, 64\]"),
                        (FakeCudaArray((8, 8, 64), np.int16), r"must match the map's float16"),
                        (FakeCudaArray((8, 8, 64), np.float16, strides=(2048, 256, 2)), "must match the map's")]:
        with pytest.raises(TensorMapError, match=rule):
            desc.with_array(other)
    assert desc.address == 0x7F0000200020


def test_tiled_over_an_interface_seen_before_checks_the_address_and_encodes_the_same():
    from numba_tma.descriptors import tensor_map

    first = TensorMap.tiled(FakeCudaArray((96, 200), np.float32), (64, 32), swizzle="128B")
    again = TensorMap.tiled(FakeCudaArray((96, 200), np.float32, address=0x7F0000300000), (64, 32), swizzle="128B")
    tensor_map._TILED.clear()
    tensor_map._TILED_BY_INTERFACE.clear()
    fresh = TensorMap.tiled(FakeCudaArray((96, 200), np.float32, address=0x7F0000300000), (64, 32), swizzle="128B")
    assert again.bytes == fresh.bytes != first.bytes and again.address == 0x7F0000300000
    with pytest.raises(TensorMapError, match="multiple of 16"):
        TensorMap.tiled(FakeCudaArray((96, 200), np.float32, address=0x7F0000300008), (64, 32), swizzle="128B")
    other = TensorMap.tiled(FakeCudaArray((96, 200), np.int32), (64, 32), swizzle="128B")
    assert other.dtype == "int32" and other.bytes[8:] != fresh.bytes[8:]
    with pytest.raises(TensorMapError, match="box"):
        TensorMap.tiled(FakeCudaArray((96, 200), np.float32), (64, 32.0), swizzle="128B")   # 32.0 == 32 as a key: not the cached map


# (shape, dtype, box, options, the encoder's arguments in driver order: data type, global_dim, global_strides,
# box_dim, the options): maps of a seen layout are built by splicing in the address
SEEN_LAYOUTS = [
    ((1024, 512), np.float32, (64, 32), {}, ("float32", [512, 1024], [2048], [32, 64], {"l2_promotion": "128B"})),
    ((96, 200), np.float16, (32, 64), {"swizzle": "128B", "oob_fill": "nan"},
     ("float16", [200, 96], [400], [64, 32], {"swizzle": "128B", "oob_fill": "nan", "l2_promotion": "128B"})),
    ((4, 64, 128), np.int8, (2, 16, 64), {"l2_promotion": "none", "element_strides": (1, 2, 1)},
     ("uint8", [128, 64, 4], [128, 8192], [64, 16, 2], {"element_strides": [1, 2, 1]})),
    ((8, 8, 64), np.float16, (8, 8, 16), {"interleave": "32B", "swizzle": "32B"},
     ("float16", [64, 8, 8], [128, 1024], [16, 8, 8], {"interleave": "32B", "swizzle": "32B",
                                                        "l2_promotion": "128B"})),
]


@pytest.mark.parametrize("shape, dtype, box, options, driver", SEEN_LAYOUTS)
def test_a_seen_layout_gives_the_encoders_bytes_at_each_new_address(shape, dtype, box, options, driver):
    from numba_tma.descriptors import encode_tiled

    data_type, global_dim, global_strides, box_dim, encoder_options = driver
    desc = TensorMap.tiled(FakeCudaArray(shape, dtype), box, **options)
    for address in (0x7F0000000000, 0x7F0000400000, 0x7F0000400080, 0x100):
        array = FakeCudaArray(tuple([*shape]), dtype, address=address)   # a new array: its own shape tuple
        expected = encode_tiled(data_type, address, global_dim, global_strides, box_dim, **encoder_options)
        made = TensorMap.tiled(array, box, **options)
        assert made.bytes == expected and made.address == address
        assert desc.with_array(array).bytes == expected
        assert made._numba_type_ is desc._numba_type_


def test_an_address_reused_with_another_shape_or_dtype_gets_its_own_map():
    """Memory freed and allocated again at the same address, as another array: the map (and its
    Numba type) is that array's, never the one cached for the address's previous array."""
    from numba_tma.descriptors import encode_tiled

    address = 0x7F0000A00000
    for shape, dtype, name, global_strides in [((256, 256), np.float32, "float32", [1024]),
                                               ((256, 128), np.float32, "float32", [512]),
                                               ((128, 256), np.float32, "float32", [1024]),
                                               ((256, 256), np.float16, "float16", [512]),
                                               ((256, 256), np.int32, "int32", [1024])]:
        for _ in range(2):   # the second time from the cache
            made = TensorMap.tiled(FakeCudaArray(shape, dtype, address=address), (64, 64))
            assert made.bytes == encode_tiled(name, address, shape[::-1], global_strides, [64, 64],
                                              l2_promotion="128B")
            assert made.dtype == name and made.fields.global_dim == shape[::-1]
            assert made._numba_type_ == TensorMap.numba_type(name, (64, 64))
    strided = TensorMap.tiled(FakeCudaArray((256, 128), np.float32, address=address, strides=(1024, 4)), (64, 64))
    assert strided.fields.global_dim == (128, 256) and strided.fields.global_strides == (1024,)


def test_a_seen_layout_still_refuses_a_bad_address_or_inexact_arguments():
    TensorMap.tiled(FakeCudaArray((96, 200), np.float32), (64, 32))
    TensorMap.tiled(FakeCudaArray((96, 200), np.float32), (64, 32))   # now a seen layout
    for address, rule in [(0x7F0000300008, "multiple of 16"), (0x7F0000300004, "multiple of 16 in"), (2**57, r"\[0, 2\*\*57\)")]:
        with pytest.raises(TensorMapError, match=rf"array data pointer=.*{rule}"):
            TensorMap.tiled(FakeCudaArray((96, 200), np.float32, address=address), (64, 32))
    # equal to the seen layout's key but not of its kinds: as the full checks decide
    for shape, box, kwargs, rule in [((96, 200), (64, True), {}, r"box\[1\]=True: must be an integer"),
                                     ((96, 200), (64, 32), {"allow_store_overrun": 0},
                                      "allow_store_overrun=0: must be True or False"),
                                     ((True, 200), (64, 32), {}, r"array shape\[0\]=True .*must be an integer")]:
        with pytest.raises(TensorMapError, match=rule):
            TensorMap.tiled(FakeCudaArray(shape, np.float32), box, **kwargs)
    for shape, box in [((96, 200), (64, np.int64(32))), ((np.int64(96), 200), (64, 32))]:
        made = TensorMap.tiled(FakeCudaArray(shape, np.float32), box)
        assert made.box == (64, 32) and made.fields.global_dim == (200, 96)
        assert all(type(d) is int for d in made.box + made.fields.global_dim)


def test_box_rank_must_match_the_array():
    with pytest.raises(ValueError, match="box.*one entry per array dimension"):
        TensorMap.tiled(FakeCudaArray((64, 64), np.float32), (64,))


def test_unsupported_dtype_is_named():
    with pytest.raises(ValueError, match="complex64"):
        TensorMap.tiled(FakeCudaArray((64, 64), np.complex64), (8, 8))


def test_im2col_map_from_array_order():
    x = FakeCudaArray((2, 16, 16, 64), np.float16)  # NHWC
    desc = TensorMap.im2col(x, (-1, -2), (1, 0), 64, 128)
    f = desc.fields
    assert desc.mode == "im2col" and desc.rank == 4 and desc.box == (128, 64)
    assert f.global_dim == (64, 16, 16, 2)
    assert f.pixel_box_lower_corner == (-2, -1) and f.pixel_box_upper_corner == (0, 1)  # W first inside
    assert (f.channels_per_pixel, f.pixels_per_column) == (64, 128)
    assert desc.box_bytes == 64 * 128 * 2


def test_im2col_corner_count_is_checked():
    with pytest.raises(ValueError, match="pixel_box_lower_corner.*one entry per spatial dimension"):
        TensorMap.im2col(FakeCudaArray((2, 16, 16, 64), np.float16), (-1,), (0, 0), 64, 128)


MAP_IM2COL = TensorMap.numba_type("float16", (128, 64), mode="im2col", rank=4)


def test_load_needs_a_tiled_map_and_load_im2col_an_im2col_map():
    def tiled_on_im2col(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        block = cuda.shared.array(8192, F16)
        tma.load(desc, block, (0, 0, 0, 0), bars)

    with pytest.raises(OpArgumentError, match=r"tma.load: argument 'desc' must be a tiled map"):
        inspect.ptx(tiled_on_im2col, (MAP_IM2COL, numba.float32[::1]))

    def im2col_on_tiled(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((32, 64), numba.float32)
        tma.load_im2col(desc, tile, (0, 0, 0), (0,), bars)

    with pytest.raises(OpArgumentError, match=r"tma.load_im2col: argument 'desc' must be an im2col map"):
        inspect.ptx(im2col_on_tiled, SIG)


def test_im2col_offsets_count_is_checked():
    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        block = cuda.shared.array(8192, F16)
        tma.load_im2col(desc, block, (0, 0, 0, 0), (0,), bars)

    with pytest.raises(OpArgumentError, match=r"'offsets' must have len\(coords\) - 2 = 2 entries"):
        inspect.ptx(k, (MAP_IM2COL, numba.float32[::1]))


@pytest.mark.parametrize("rank,offsets,bad", [(3, (65535,), None), (3, (65536,), 65536), (4, (255, 0), None),
                                              (4, (0, 256), 256), (5, (31, 31, 31), None), (5, (0, 32, 0), 32)])
def test_im2col_offset_width_depends_on_the_rank(rank, offsets, bad):
    """PTX ISA: im2col offsets are 16 bits for 3-D maps, 8 bits for 4-D and 5 bits for 5-D."""
    namespace = {"cuda": cuda, "types": types, "tma": tma}
    exec(f"""
def k(desc, out):
    bars = cuda.shared.array(1, types.uint64)
    block = cuda.shared.array(8192, types.float16)
    tma.load_im2col(desc, block, {(0,) * rank}, {offsets}, bars)
""", namespace)
    sig = (TensorMap.numba_type("float16", (128, 64), mode="im2col", rank=rank), numba.float32[::1])
    if bad is None:
        assert f"cp.async.bulk.tensor.{rank}d" in inspect.ptx(namespace["k"], sig)
    else:
        bits = {3: 16, 4: 8, 5: 5}[rank]
        with pytest.raises(OpArgumentError, match=rf"'offsets\[\d\]' must be in \[0, {(1 << bits) - 1}\] for a "
                                                  rf"{rank}-D map \({bits}-bit offsets\); got {bad}"):
            inspect.ptx(namespace["k"], sig)


def test_im2col_map_by_value_assembles():
    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        block = cuda.shared.array(8192, F16, alignment=128)
        tma.load_im2col(desc, block, (0, 1, 2, 0), (1, 1), bars)

    out = inspect.compile(k, (MAP_IM2COL, numba.float32[::1]), "sm_90a")
    assert "__local_depot" not in out.ptx and "_param_0[128]" in out.ptx
    assert "UTMALDG.4D.IM2COL" in out.opcodes()


def two_maps(a, b, out):
    bars = cuda.shared.array(2, numba.uint64)
    ta = cuda.shared.array((32, 64), numba.float32, alignment=128)
    tb = cuda.shared.array((32, 64), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, a.box_bytes)
        tma.load(a, ta, (0, 0), bars)
        mbarrier.arrive_expect_tx(bars[1:], b.box_bytes)
        tma.load(b, tb, (0, 0), bars[1:])
    out[0] = ta[0, 0] + tb[0, 0]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_two_maps_are_both_grid_constant(arch):
    """A GEMM takes an A map and a B map: both must be read in place, neither copied to local."""
    out = inspect.compile(two_maps, (MAP_F32_2D, MAP_F32_2D, numba.float32[::1]), arch)
    assert "_param_0[128]" in out.ptx and "_param_1[128]" in out.ptx
    assert "__local_depot" not in out.ptx and "st.local" not in out.ptx
    assert out.ptx.count("cp.async.bulk.tensor.2d") == 2 and "UTMALDG.2D" in out.opcodes()


def test_box_bytes_is_a_constant_in_the_kernel():
    ptx = inspect.ptx(two_maps, (MAP_F32_2D, MAP_F32_2D, numba.float32[::1]))
    assert ptx.count("mbarrier.arrive.expect_tx.shared::cta.b64 %rd") == 2
    assert f"{32 * 64 * 4};" in ptx or f", {32 * 64 * 4}" in ptx


def test_map_passed_to_a_device_function_is_not_copied():
    """A device function gets the parameter's address, not a byval (local) copy of the map (and it
    compiles with no GPU: numba_tma.numba_cuda.compiler gives it the kernel's target)."""
    @cuda.jit(device=True)
    def issue(desc, tile, bars):
        tma.load(desc, tile, (0, 0), bars)

    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((32, 64), numba.float32, alignment=128)
        issue(desc, tile, bars)
        out[0] = tile[0, 0]

    ptx = inspect.ptx(k, SIG)
    assert "_param_0[128]" in ptx and "__local_depot" not in ptx and "st.local" not in ptx
    assert "cp.async.bulk.tensor.2d" in ptx


@pytest.mark.parametrize("kwargs,match", [
    (dict(box=(8.9, 8)), r"box\[0\]=8.9: must be an integer"),
    (dict(box="88"), r"box='88': must be a sequence of integers"),
    (dict(box=8), r"box=8: must be a sequence of integers"),
    (dict(box=(8, 8), swizzle=["128B"]), r"swizzle"),
    (dict(box=(8, 8), element_strides=(1, True)), r"element_strides\[1\]=True: must be an integer"),
])
def test_tiled_rejects_inexact_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TensorMap.tiled(FakeCudaArray((64, 64), np.float32), **kwargs)


def test_zero_d_and_big_endian_arrays_are_refused():
    with pytest.raises(ValueError, match="1 to 5 dimensions"):
        TensorMap.tiled(FakeCudaArray((), np.float32), ())
    with pytest.raises(ValueError, match="little-endian"):
        TensorMap.tiled(FakeCudaArray((64, 64), ">f4"), (8, 8))


def test_host_memory_is_refused():
    with pytest.raises(ValueError, match="memory the GPU can access"):
        TensorMap.tiled(np.zeros((64, 64), np.float32), (8, 8))


@pytest.mark.parametrize("kwargs,match", [
    (dict(dtype="float32", box=(8, 8), mode="tile"), "'tiled' or 'im2col'"),
    (dict(dtype="float32", box=(8, 8), mode="im2col"), "rank"),
    (dict(dtype="complex64", box=(8, 8)), "dtype"),
])
def test_numba_type_validates(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TensorMap.numba_type(**kwargs)


def test_numba_type_takes_numpy_dtypes():
    assert TensorMap.numba_type(np.float32, (32, 64)) == MAP_F32_2D


def test_repr_of_an_interleaved_map_does_not_raise():
    desc = TensorMap.tiled(FakeCudaArray((8, 8, 64), np.float16), (8, 8, 16), interleave="32B", swizzle="32B")
    assert "box_bytes=unknown (interleaved)" in repr(desc) and "unknown" in desc._repr_html_()


def test_with_array_keeps_the_interleave_alignment_rule():
    desc = TensorMap.tiled(FakeCudaArray((8, 8, 64), np.float16), (8, 8, 16), interleave="32B", swizzle="32B")
    with pytest.raises(ValueError, match="multiple of 32"):
        desc.with_array(FakeCudaArray((8, 8, 64), np.float16, address=0x7F0000000010))


def test_a_last_dimension_of_one_needs_no_unit_stride():
    desc = TensorMap.tiled(FakeCudaArray((64, 1), np.float32, strides=(16, 64)), (16, 4))  # box may pass the edge
    assert desc.fields.global_dim == (1, 64)


# -- TensorMap.to_device(): a map in global memory typed by its layout ------------------------------

def _in_global(*args, **kwargs):
    """The Numba type of ``TensorMap.to_device()``'s array for a map of this layout (no GPU here)."""
    return global_map_type(TileLayout.describe(*args, **kwargs))


GLOBAL_F32_2D = _in_global("float32", (32, 64))


def test_to_device_is_typed_by_the_maps_layout_as_a_read_only_array():
    t = GLOBAL_F32_2D
    assert isinstance(t, types.Array) and (t.dtype, t.ndim, t.layout, t.mutable) == (types.uint8, 1, "C", False)
    assert str(t) == "TensorMap[float32, rank=2, box=(32, 64), tiled] in global memory"
    assert t != types.Array(types.uint8, 1, "C", readonly=True) and t != _in_global("float32", (32, 32))
    assert t.tile_layout == TileLayout.describe("float32", (32, 64)) and t.map.in_global


def test_a_map_in_global_memory_is_checked_as_the_by_value_map():
    def load_3d(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((32, 64), numba.float32, alignment=128)
        tma.load(desc, tile, (0, 0, 0), bars)

    def narrow_tile(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((32, 64), numba.uint16, alignment=128)
        tma.load(desc, tile, (0, 0), bars)

    for kernel in (load_3d, narrow_tile):
        with pytest.raises(OpArgumentError) as by_value:
            inspect.ptx(kernel, SIG)
        with pytest.raises(OpArgumentError) as in_global:
            inspect.ptx(kernel, (GLOBAL_F32_2D, numba.float32[::1]))
        assert str(in_global.value) == str(by_value.value)
    # a plain uint8 array says no layout: nothing to check until the device reads the map
    assert "cp.async.bulk.tensor.3d" in inspect.ptx(load_3d, (types.uint8[::1], numba.float32[::1]))


def test_a_map_in_global_memory_loads_with_its_acquire_fence_and_box_bytes_as_a_constant():
    ptx = inspect.ptx(load_tile, (GLOBAL_F32_2D, numba.float32[::1]))
    fence_at = ptx.index("fence.proxy.tensormap::generic.acquire.sys [%rd")      # PTX ISA 9.7.13.4
    assert ptx.index("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r", fence_at)

    def expect(desc, out):
        out[0] = desc.box_bytes + desc.smem_bytes + desc.swizzle + desc[0]   # the bytes stay readable
    # box_bytes 8192 + smem_bytes 8192 (64-halfword rows: one 128-byte span each) + swizzle 128
    assert "16512" in inspect.ptx(expect, (_in_global("float16", (64, 64), swizzle="128B"), numba.int64[::1]))


def test_the_ops_that_read_a_layout_read_it_from_a_map_in_global_memory():
    """wgmma's descriptor takes the swizzle and row bytes from the map (here the 128B K-major
    layout: rows of 128 bytes, the descriptor's high word 0x40000040 per the PTX ISA's matrix
    descriptor: bits 62-63 = 1, SBO 1024 >> 4 = 64), as from the by-value map; a plain array is
    refused by name."""
    from numba_tma import wgmma

    def describe(desc, out):
        tile = cuda.shared.array(64 * 64, numba.uint16, alignment=1024)
        out[0] = wgmma.descriptor(tile, desc, 0, 0)

    sig = (_in_global("bfloat16", (64, 64), swizzle="128B"), numba.uint64[::1])
    by_value = (TensorMap.numba_type("bfloat16", (64, 64), swizzle="128B"), numba.uint64[::1])
    for types_ in (sig, by_value):
        ptx = inspect.compile(describe, types_, "sm_90a").ptx
        assert re.search(r"mad\.lo\.u32 a, %r\d+, 128, %r\d+;", ptx) and "mov.b32 hi, 0x40000040;" in ptx
    with pytest.raises(OpArgumentError, match=r"wgmma.descriptor: argument 'desc' must be the by-value"):
        inspect.compile(describe, (types.uint8[::1], numba.uint64[::1]), "sm_90a")


def test_a_map_in_global_memory_cannot_be_written():
    """Its type says its layout for the whole kernel: a store into it is refused by typing, and so
    are the ops that edit descriptors in place, naming the rule."""
    from numba_tma import tensormap

    def poke(desc):
        desc[0] = 1

    def edit(desc):
        tensormap.replace_global_dim(desc, 0, 59)

    def publish(desc):
        buf = cuda.shared.array(128, numba.uint8, alignment=128)
        tensormap.cp_fenceproxy(desc, buf)

    with pytest.raises(Exception, match=r"Cannot modify readonly array of type: TensorMap\[float32, rank=2, "
                                         r"box=\(32, 64\), tiled\] in global memory"):
        inspect.compile(poke, (GLOBAL_F32_2D,), "sm_90a")
    for kernel, argument in ((edit, "buf"), (publish, "dst")):
        with pytest.raises(OpArgumentError, match=rf"argument '{argument}' must be .* not a map typed by its layout "
                                                  r"\(TensorMap.to_device\(\), numba_tma.mlir.map_in_global\): that "
                                                  r"array is read-only"):
            inspect.compile(kernel, (GLOBAL_F32_2D,), "sm_90a")
        inspect.compile(kernel, (types.uint8[::1],), "sm_90a")      # bytes of one's own may be edited
