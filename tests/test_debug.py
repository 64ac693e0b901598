"""Debug mode on the CPU: the release code has none of it; on, each op carries its checks and the
wait its time limit."""

import re

import numba
import pytest
from numba import cuda

from numba_tma import TensorMap, at, debug, fence, inspect, mbarrier, tma
from numba_tma.debugging import STATE

SIG = (TensorMap.numba_type("float32", (8, 32), swizzle="128B"), numba.int32[::1])
MARKS = ("isspacep.shared", "%globaltimer", "vprintf", "trap;")


def copy(desc, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)   # (1024 would fold the check away)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, desc.box_bytes)
        tma.load(desc, tile, (out[0], 0), bars)
    mbarrier.wait(at(bars, 0), 0)
    out[1] = tile[0, 0]


def _strings(ptx):
    """The byte-array constants of the PTX (vprintf formats), decoded."""
    return [bytes(int(b) for b in body.split(",")).decode(errors="replace")
            for body in re.findall(r"\.b8 [\w$]+\[\d+\] = \{([\d, ]+)\}", ptx)]


def test_release_code_has_none_of_it():
    ptx = inspect.ptx(copy, SIG)
    assert not any(mark in ptx for mark in MARKS)


def test_debug_code_checks_every_operand_and_bounds_the_wait():
    """(The tile's size check is folded away here: the static tile is exactly the box; the GPU
    test has a short one.)"""
    with debug(timeout_ms=250):
        ptx = inspect.ptx(copy, SIG)
    assert all(mark in ptx for mark in MARKS)
    assert "250000000" in ptx                                  # the limit, in ns
    assert ptx.count("isspacep.shared") == 4      # init, expect_tx, load's tile and barrier (at() is an address)
    assert "1023" in ptx                                       # 128B swizzle: 1024-byte alignment of the tile
    for message in ("argument 'dst' is not in shared memory", "is not 1024-byte aligned (a TMA tile with swizzle",
                    "coords[0] = %lld: times 4 bytes it must be a multiple",
                    "timed out after 250 ms waiting for phase parity",
                    "is past the tensor's last index %lld along dimension 0 (the whole box is out of bounds)"):
        assert any(message in text for text in _strings(ptx)), message


def test_the_switch_is_restored_and_changes_the_compiled_code():
    assert not STATE.on
    with debug():
        assert STATE.on
        on = inspect.ptx(copy, SIG)
    assert not STATE.on and inspect.ptx(copy, SIG) != on


def test_a_bad_time_limit_is_refused():
    with pytest.raises(ValueError, match=r"timeout_ms=0: must be a positive number of milliseconds"):
        debug(timeout_ms=0)


def test_debug_code_assembles():
    with debug():
        out = inspect.compile(copy, SIG, "sm_90a")
    assert {"UTMALDG.2D", "BPT.TRAP", "QSPC.E.S", "CS2R"} <= out.opcodes()   # load, trap, isspacep, globaltimer
