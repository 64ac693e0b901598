"""Compile-time errors of the TMA store/reduce/prefetch and bulk ops: each names the argument and
the rule (no GPU needed)."""

import numba
import pytest
from numba import cuda
from numba.cuda import types

from numba_tma import ArchError, OpArgumentError, TensorMap, bulk, cache, inspect, tma

GLOBAL = (numba.uint8[::1], numba.uint64[::1])


def _kernel(body):
    namespace = {"cuda": cuda, "types": types, "tma": tma, "bulk": bulk, "cache": cache}
    exec("def k(desc, out):\n    bar = cuda.shared.array(2, types.uint64)\n    " + body.replace("\n", "\n    "),
         namespace)
    return namespace["k"]


def _map(dtype, box=(32, 64), mode="tiled", rank=None):
    return (TensorMap.numba_type(dtype, box, mode=mode, rank=rank), numba.uint64[::1])


@pytest.mark.parametrize("dtype,tile,op", [("float32", "float32", "min"), ("float32", "float32", "and"),
                                           ("int32", "int32", "inc"), ("float16", "uint16", "xor"),
                                           ("uint8", "uint8", "add")])
def test_tensor_reduce_op_illegal_for_the_map_dtype(dtype, tile, op):
    k = _kernel(f"t = cuda.shared.array((32, 64), types.{tile}, alignment=128)\ntma.reduce(desc, t, (0, 0), {op!r})")
    with pytest.raises(OpArgumentError, match=rf"tma.reduce: argument 'op' '{op}' cannot reduce a"):
        inspect.ptx(k, _map(dtype))


def test_tensor_reduce_legal_for_the_map_dtype():
    k = _kernel("t = cuda.shared.array((32, 64), types.float32, alignment=128)\ntma.reduce(desc, t, (0, 0), 'add')")
    assert "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group" in inspect.ptx(k, _map("float32"))


@pytest.mark.parametrize("dtype,op", [("float32", "min"), ("float64", "max"), ("int32", "inc"), ("float32", "xor"),
                                      ("int64", "add"), ("uint8", "add")])
def test_bulk_reduce_op_illegal_for_the_source_dtype(dtype, op):
    k = _kernel(f"bulk.reduce(desc, cuda.shared.array(64, types.{dtype}), 64, {op!r})")
    with pytest.raises(OpArgumentError, match=rf"bulk.reduce: argument 'src' must have elements of a type reduce op "
                                              rf"'{op}' takes"):
        inspect.ptx(k, GLOBAL)


def test_reduce_op_must_be_a_known_constant():
    k = _kernel("bulk.reduce(desc, cuda.shared.array(64, types.uint32), 64, 'mul')")
    with pytest.raises(OpArgumentError, match=r"argument 'op' must be a constant, one of 'add', 'min'"):
        inspect.ptx(k, GLOBAL)


@pytest.mark.parametrize("call,match", [
    ("bulk.wait_group(64)", r"bulk.wait_group: argument 'n' must be in \[0, 63\]; got 64"),
    ("tma.wait_group_read(-1)", r"bulk.wait_group_read: argument 'n' must be in \[0, 63\]; got -1"),
    ("bulk.wait_group(out[0])", r"argument 'n' must be a compile-time integer constant"),
])
def test_wait_group_count(call, match):
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(_kernel(call), GLOBAL)


NBYTES_RULE = r"'nbytes' must be a multiple of 16 bytes \(whole 16-byte chunks\), from 16 to 2\*\*32 - 16; got "


@pytest.mark.parametrize("call,match", [
    ("bulk.store(desc, cuda.shared.array(64, types.uint8), 24)", NBYTES_RULE + "24"),
    ("bulk.load(cuda.shared.array(64, types.uint8), desc, 0, bar)",
     r"'nbytes' must be a multiple of 16 bytes, from 16 to 2\*\*20 - 16: the copy completes on one mbarrier, whose "
     r"transaction count holds at most 2\*\*20 - 1 bytes; got 0"),
    ("bulk.prefetch(desc, 8)", NBYTES_RULE + "8"),
    ("bulk.reduce(desc, cuda.shared.array(64, types.uint32), 40, 'add')", r"'nbytes' must be a multiple of 16"),
])
def test_nbytes_rules_when_constant(call, match):
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(_kernel(call), GLOBAL)


def test_store_from_a_tile_of_another_width_or_rank():
    k = _kernel("t = cuda.shared.array((32, 64), types.float16, alignment=128)\ntma.store(desc, t, (0, 0))")
    with pytest.raises(OpArgumentError, match=r"tma.store: argument 'src' must have 32-bit elements like the map"):
        inspect.ptx(k, _map("float32"))
    k = _kernel("t = cuda.shared.array((32, 64), types.float32, alignment=128)\ntma.store(desc, t, (0, 0, 0))")
    with pytest.raises(OpArgumentError, match=r"tma.store: argument 'coords' must have 2 entries"):
        inspect.ptx(k, _map("float32"))


def test_store_of_an_im2col_map_uses_im2col_no_offs():
    k = _kernel("t = cuda.shared.array(8192, types.float16, alignment=128)\ntma.store(desc, t, (0, 0, 0, 0))")
    ptx = inspect.ptx(k, _map("float16", (128, 64), "im2col", 4))
    assert "cp.async.bulk.tensor.4d.global.shared::cta.im2col_no_offs.bulk_group" in ptx


def test_prefetch_needs_the_map_mode():
    k = _kernel("tma.prefetch(desc, (0, 0, 0, 0))")
    with pytest.raises(OpArgumentError, match=r"tma.prefetch: argument 'desc' must be a tiled map"):
        inspect.ptx(k, _map("float16", (128, 64), "im2col", 4))


@pytest.mark.parametrize("call", [
    "tma.gather4(desc, cuda.shared.array(256, types.float32), 0, (0, 1, 2, 3), bar)",
    "tma.scatter4(desc, cuda.shared.array(256, types.float32), 0, (0, 1, 2, 3))",
    "bulk.store_bytemask(desc, cuda.shared.array(64, types.uint8), 64, 0xFF)",
    "tma.load(desc, cuda.shared.array(256, types.float32), (0, 0), bar, cta_group=2)",
])
def test_sm100_forms_are_refused_for_sm90(call):
    with pytest.raises(ArchError, match=r"needs sm_100a? or newer.*compiled for sm_90a"):
        inspect.ptx(_kernel(call), GLOBAL, "sm_90a")
    assert inspect.ptx(_kernel(call), GLOBAL, "sm_100a")


def test_gather4_needs_a_one_row_box():
    k = _kernel("tma.gather4(desc, cuda.shared.array(256, types.float32), 0, (0, 1, 2, 3), bar)")
    with pytest.raises(OpArgumentError, match=r"'desc' must be a tiled 2-D map whose box is one row"):
        inspect.ptx(k, _map("float32", (32, 64)), "sm_100a")
    assert "tile::gather4" in inspect.ptx(k, _map("float32", (1, 64)), "sm_100a")


@pytest.mark.parametrize("call,match", [
    ("out[0] = cache.policy('evict_sometimes')", r"argument 'kind' must be a constant, one of 'evict_first'"),
    ("out[0] = cache.policy('evict_last', 1.5)", r"argument 'fraction' must be in \(0.0, 1.0\]; got 1.5"),
    ("out[0] = cache.policy('evict_last', 1.0, 'evict_last')", r"argument 'rest' must be a constant, one of None"),
    ("bulk.store(desc, cuda.shared.array(64, types.uint8), 64, cache_hint=1.5)", r"argument 'cache_hint' must be None "
                                                                                r"or a 64-bit L2 policy"),
])
def test_cache_policy_arguments(call, match):
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(_kernel(call), GLOBAL)


@pytest.mark.parametrize("op", ["tma.store(desc, t, (-4, 0))", "tma.reduce(desc, t, (-4, 0), 'add')"])
def test_a_store_box_starting_before_the_tensor_is_refused(op):
    k = _kernel("t = cuda.shared.array((32, 64), types.float32, alignment=128)\n" + op)
    with pytest.raises(OpArgumentError, match=r"'coords\[0\]' must not be negative: a box that starts before"):
        inspect.ptx(k, _map("float32"))


@pytest.mark.parametrize("op", ["and", "or", "xor"])
def test_bitwise_tensor_reduce_refuses_int64_maps(op):
    """Measured on the H200: and/or/xor on an INT64 map kill the kernel; UINT64 works."""
    k = _kernel(f"t = cuda.shared.array(64, types.int64, alignment=128)\ntma.reduce(desc, t, (0, 0), {op!r})")
    with pytest.raises(OpArgumentError, match=rf"'{op}' cannot reduce a int64 map"):
        inspect.ptx(k, _map("int64", (8, 8)))


@pytest.mark.parametrize("mask,match", [("0", r"'multicast' must be in \[1, 65535\]; got 0"),
                                        ("1 << 16", r"'multicast' must be in \[1, 65535\]; got 65536"),
                                        ("1.5", r"'multicast' must be None or a 16-bit mask")])
def test_multicast_mask_rules(mask, match):
    k = _kernel(f"t = cuda.shared.array(64, types.float32, alignment=128)\ntma.load(desc, t, (0, 0), bar, "
                f"multicast={mask})")
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(k, GLOBAL)
