"""Distributed shared memory ops on the CPU: the value and element-type rules, the mapped
addresses, and the requirement (the assembly rows of every form are in test_assembles)."""

import numba
import pytest
from numba import cuda
from numba.cuda import types

from numba_tma import ArchError, OpArgumentError, at, dsmem, inspect

SIG = (numba.uint32[::1],)
_PRELUDE = ("bars = cuda.shared.array(2, numba.uint64)\n    f32 = cuda.shared.array(64, numba.float32)\n"
            "    u64 = cuda.shared.array(64, numba.uint64)\n    i8 = cuda.shared.array(64, numba.int8)\n    ")


def _compile(body, arch="sm_90a"):
    namespace = {"cuda": cuda, "numba": numba, "types": types, "dsmem": dsmem, "at": at}
    exec(f"def k(out):\n    {_PRELUDE}{body}\n", namespace)
    return inspect.ptx(namespace["k"], SIG, arch)


@pytest.mark.parametrize("body,match", [
    ("dsmem.store_async(f32, (1.0, 2.0, 3.0), bars, 1)", r"argument 'value' must be one number or a tuple of 2 or 4"),
    ("dsmem.store_async(u64, (1, 2, 3, 4), bars, 1)", r"argument 'value' must hold at most 128 bits: 4 x uint64 is 256"),
    ("dsmem.store_async(i8, 1, bars, 1)", r"argument 'dst' must be a shared array of 32- or 64-bit numbers"),
    ("dsmem.store_async(f32, out, bars, 1)", r"argument 'value' must be a number or a tuple of numbers"),
    ("dsmem.store_async(f32, 1.0, bars, 16)", r"argument 'cta_rank' must be in \[0, 15\]"),
    ("dsmem.store_async(f32, 1.0, f32, 1)", r"argument 'bar' must be"),
    ("dsmem.reduce_async(f32, 1, bars, 1, op='add')", r"'dst' must have elements of a type reduce op 'add' takes "
                                                       r"\(uint32, int32, uint64 \(or int64\)\)"),
    ("dsmem.reduce_async(u64, 1, bars, 1, op='min')", r"reduce op 'min' takes \(uint32, int32\)"),
    ("dsmem.reduce_async(u64, 1, bars, 1, op='mul')", r"argument 'op' must be a constant, one of 'add'"),
    ("dsmem.reduce_async(u64, (1, 2), bars, 1, op='add')", r"argument 'value' must be one number"),
    ("dsmem.copy_async(f32, f32, 40, bars, 1)", r"argument 'nbytes' must be a multiple of 16 bytes \(whole 16-byte chunks\).*; got 40"),
    ("dsmem.reduce_copy_async(u64, f32, 64, bars, 1, op='add')", r"argument 'dst' must hold the elements of src"),
])
def test_argument_errors(body, match):
    with pytest.raises(OpArgumentError, match=match):
        _compile(body)


def test_values_take_the_destination_type():
    """A float64 literal into float32 memory is converted (as an array store would), and travels as
    its bits: four f32 values become one v4.b32 store of 0x3F800000..."""
    ptx = _compile("dsmem.store_async(f32, (1.0, 2.0, 3.0, 4.0), bars, out[0])")
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [remote_dst], {%r" in ptx
    assert ptx.count("mapa.shared::cluster.u32") == 2
    int_ptx = _compile("dsmem.reduce_async(u64, out[1], bars, 2, op='add')")
    assert "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64" in int_ptx


def test_int64_adds_as_uint64():
    ptx = _compile("dsmem.reduce_async(cuda.shared.array(4, numba.int64), -1, bars, 1, op='add')")
    assert "complete_tx::bytes.add.u64" in ptx


def test_offsets_name_the_element():
    ptx = _compile("dsmem.store_async(at(f32, 8), 1.0, at(bars, 1), 1)")
    assert "st.async" in ptx


def test_dsmem_needs_sm90():
    with pytest.raises(ArchError, match=r"dsmem.store_async needs sm_90 or newer, PTX ISA 8.1.*sm_80"):
        _compile("dsmem.store_async(f32, 1.0, bars, 1)", "sm_80")
