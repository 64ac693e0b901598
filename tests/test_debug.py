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


def test_bulk_copies_check_size_alignment_and_extent():
    """A run-time nbytes: debug mode checks it is whole 16-byte chunks and fits both arrays, and
    that both addresses are 16-byte aligned (the GPU test runs each check)."""
    from numba_tma import bulk

    def k(dst, nbytes):
        buf = cuda.shared.array(256, numba.float32)
        bulk.store(dst, buf, nbytes)

    sig = (numba.float32[::1], numba.int32)
    assert "trap;" not in inspect.ptx(k, sig)
    with debug():
        ptx = inspect.ptx(k, sig)
    texts = _strings(ptx)
    for message in ("bulk.store: nbytes = %lld: times 1 bytes it must be a multiple of 16",
                    "bulk.store: argument 'dst' holds %lld bytes, fewer than nbytes = %lld",
                    "bulk.store: argument 'src' holds %lld bytes, fewer than nbytes = %lld",
                    "bulk.store: argument 'dst' at 0x%llx is not 16-byte aligned"):
        assert any(message in text for text in texts), message


def test_a_store_through_a_map_in_memory_checks_the_edge():
    def k(desc, x):
        tile = cuda.shared.array((16, 16), numba.float32, alignment=128)
        tma.store(desc, tile, (x, 0))

    def opted_in(desc, x):
        tile = cuda.shared.array((16, 16), numba.float32, alignment=128)
        tma.store(desc, tile, (x, 0), allow_overrun=True)

    sig = (numba.uint8[::1], numba.int32)
    message = "tma.store: coords[0] = %lld: the box ends at element %lld, past the end of the row"
    with debug():
        assert any(message in text for text in _strings(inspect.ptx(k, sig)))
        assert not any(message in text for text in _strings(inspect.ptx(opted_in, sig)))
        assert "BPT.TRAP" in inspect.compile(k, sig, "sm_90a").opcodes()
