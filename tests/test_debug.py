"""Debug mode on the CPU: the release code has none of it; on, each op carries its checks and the
wait its time limit."""

import re

import numba
import pytest
from numba import cuda

from numba_tma import TensorMap, at, debug, fence, inspect, mbarrier, tma, wgmma
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


# -- wgmma: the descriptor's run-time arguments and the epilogue's staging tile -------------------------

WGMMA_SIG = (TensorMap.numba_type("uint16", (64, 64), swizzle="128B"), numba.uint64[::1], numba.int32, numba.int32,
             numba.int32)


def _wgmma_tiles(descriptor):
    """A tile at a run-time element offset (its alignment and size unknown: nothing folds away),
    a descriptor of it at a run-time ``k`` and ``row``, and the epilogue's store into it."""
    def wgmma_tiles(desc, out, off, kk, row):
        big = cuda.shared.array(2 * 64 * 64, numba.uint16, alignment=128)
        tile = big[off:]
        out[0] = descriptor(tile, desc, kk, row)
        wgmma.store_shared_bf16(wgmma.zeros(64), tile, desc, 0, 2)
    return wgmma_tiles


def test_wgmma_checks_are_emitted_in_debug_mode_only():
    """Debug mode traps on a descriptor's tile not aligned to its 8-row atom, a run-time ``k``
    outside the span, a run-time ``row`` not a multiple of 8 or past the tile, and a staging tile
    of store_shared_bf16 smaller than the boxes written (tests/debug_cases.py runs each on the
    GPU); the release kernel's PTX has none of it and its SASS the opcode counts of a control
    kernel whose descriptor op has no debug hook at all."""
    import dataclasses

    from numba_tma.intrinsics._core import OPS, build_intrinsic

    kernel = _wgmma_tiles(wgmma.descriptor)
    control = _wgmma_tiles(build_intrinsic(dataclasses.replace(OPS["wgmma.descriptor"], debug=None)))
    release, reference = inspect.compile(kernel, WGMMA_SIG), inspect.compile(control, WGMMA_SIG)
    assert not any(mark in release.ptx for mark in MARKS)
    inspect.assemble_together([release, reference])
    assert release.opcode_counts() == reference.opcode_counts()
    assert release.opcode_counts()["STS"] == 32         # 2 boxes x 64 rows x 128 bytes: 32 per thread
    with debug():
        ptx = inspect.ptx(kernel, WGMMA_SIG)
    assert "trap;" in ptx and "1023" in ptx               # the 1024-byte atom of 128B swizzle
    texts = _strings(ptx)
    for message in ("wgmma.descriptor: argument 'tile' is not in shared memory",
                    "wgmma.descriptor: argument 'tile' at 0x%llx is not 1024-byte aligned (the 8-row swizzle atom "
                    "of a wgmma operand tile with swizzle SWIZZLE_128B)",
                    "wgmma.descriptor: k = %lld: must be in [0, 4): a K step of 32 bytes inside the 128-byte swizzle "
                    "span of the map (a wider K is the next tile)",
                    "wgmma.descriptor: row = %lld: must be a multiple of 8 (the 8-row swizzle atom)",
                    "wgmma.descriptor: row = %lld: must be below the tile's %lld rows of 128 bytes (the descriptor "
                    "would start past the tile)",
                    "wgmma.store_shared_bf16: argument 'tile' at 0x%llx is not 1024-byte aligned (the 8-row atom of "
                    "the 128B-swizzled boxes it writes)",
                    "wgmma.store_shared_bf16: argument 'tile' holds %lld bytes, fewer than 16384 (the 2 boxes of 8192 "
                    "bytes it writes)"):
        assert any(message in text for text in texts), message


def test_the_simulator_refuses_the_same_wgmma_mistakes():
    """Under the simulator (no debug mode needed) the twins check the same rules, with the same
    words: a run-time k or row is a value there, refused by the declaration's own rule."""
    from test_simulator import simulate

    out = simulate(setup="from numba_tma import wgmma\n", body="""
        @cuda.jit
        def mistake(desc, case, value):
            big = cuda.shared.array(2 * 64 * 64, numba.uint16, alignment=1024)
            if case == 0:
                wgmma.descriptor(big[value:], desc, 0, 0)
            elif case == 1:
                wgmma.descriptor(big, desc, value, 0)
            elif case == 2:
                wgmma.descriptor(big, desc, 0, value)
            elif case == 3:
                wgmma.store_shared_bf16(wgmma.zeros(64), big[:value], desc, 0, 2)
            elif case == 4:
                wgmma.store_shared_bf16(wgmma.zeros(64), big[value:], desc, 0, 2)
            else:
                wgmma.descriptor(at(big, value), desc, 3, 120)        # the last 8 rows of the tile: fine
        desc = TensorMap.tiled(cuda.to_device(np.zeros((64, 64), np.uint16)), (64, 64), swizzle="128B")
        for case, value in [(0, 64), (1, 4), (2, 4), (2, 128), (3, 4096), (4, 64), (5, 0)]:
            try:
                mistake[1, 1](desc, case, value)
            except Exception as exc:
                print(case, value, "raised", str(exc).splitlines()[0])
            else:
                print(case, value, "no error")
    """)
    lines = dict((tuple(line.split()[:2]), line) for line in out.splitlines())
    aligned = "is only 128-byte aligned, not 1024 (the 8-row"
    for key, *messages in [
            (("0", "64"), "wgmma.descriptor: argument 'tile' big[64] (allocated at kernel.py:", aligned,
             "swizzle atom of a wgmma operand tile with swizzle SWIZZLE_128B): cuda.shared.array(..., alignment=1024)"),
            (("1", "4"), "wgmma.descriptor: argument 'k' must be in [0, 3]: a K step of 32 bytes inside a swizzle "
                         "span of at most 128 bytes; got 4"),
            (("2", "4"), "wgmma.descriptor: argument 'row' must be a multiple of 8 (the 8-row swizzle atom); got 4"),
            (("2", "128"), "wgmma.descriptor: row = 128: must be below the tile's 128 rows of 128 bytes (the "
                           "descriptor would start past the tile)"),
            (("3", "4096"), "wgmma.store_shared_bf16: argument 'tile' big[0] (allocated at kernel.py:",
             "holds 8192 bytes, fewer than 16384 (the 2 boxes of 8192 bytes it writes)"),
            (("4", "64"), "wgmma.store_shared_bf16: argument 'tile' big[64] (allocated at kernel.py:", aligned,
             "atom of the 128B-swizzled boxes it writes)"),
            (("5", "0"), "no error")]:
        assert all(message in lines.get(key, "") for message in messages), (key, out)
