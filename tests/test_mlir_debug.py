"""Debug mode on the numba-cuda-mlir host (docs/second_host.md): the same checks as numba-cuda's,
from the same code (numba_tma.intrinsics.debug through each host's Emitter), with the same
messages and the same trap; none of it with debug mode off (no GPU)."""

import re

import numba
import pytest

pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed (the mlir extra)")

from numba_cuda_mlir import cuda  # noqa: E402
from numba_cuda_mlir import types as mt  # noqa: E402

import numba_tma  # noqa: E402
from numba_tma import TensorMap, debug, inspect  # noqa: E402
from numba_tma.mlir import map_in_global_type  # noqa: E402
from test_debug import _strings  # noqa: E402

MARKS = ("isspacep.shared", "%globaltimer", "vprintf", "trap;")


COPY = """
def copy(desc, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, 1024)
        tma.load(desc, tile, (numba.int32(out[0]), 0), bars)
    mbarrier.wait(at(bars, 0), 0)
    out[1] = tile[0, 0]
"""
# A TMA load through a map in global memory (a uint8 array on both hosts) into a shared tile at a
# run-time coords[0], and the wait on its barrier.

DESCRIPTOR = """
def tiles(desc, out, off, kk, row):
    big = cuda.shared.array(2 * 64 * 64, numba.uint16, alignment=128)
    out[0] = wgmma.descriptor(big[off:], desc, kk, row)
"""
# A wgmma descriptor of a tile at a run-time offset, at a run-time k and row.

NUMBA_CUDA, MLIR = "numba-cuda", "mlir"


def _kernel(source, host):
    """The kernel of ``source`` for ``host``: ``cuda``, ``numba`` (the types), ``at`` and the families
    are the host's."""
    mlir = host == MLIR
    namespace = {"cuda": cuda if mlir else numba.cuda, "numba": mt if mlir else numba,
                 "at": numba_tma.mlir.at if mlir else numba_tma.at,
                 **{f: getattr(numba_tma.mlir if mlir else numba_tma, f) for f in ("fence", "mbarrier", "tma", "wgmma")}}
    exec(source, namespace)
    return namespace[source.split()[1].split("(")[0]]


def _messages(ptx):
    """The printf formats of debug mode in the PTX, sorted."""
    return sorted(s.rstrip("\0") for s in _strings(ptx) if s.startswith("numba_tma debug: "))


def _compiled(host, source, sig, arch="sm_90a"):
    return inspect.compile(_kernel(source, host), sig, arch, host=host)


@pytest.fixture(scope="module")
def copies():
    """The copy kernel of each host, debug mode on (time limit 250 ms) and off: ``{(host, on): Compiled}``."""
    sigs = {NUMBA_CUDA: (numba.uint8[::1], numba.float32[::1]), MLIR: (mt.uint8[::1], mt.float32[::1])}
    out = {}
    for host, sig in sigs.items():
        for on in (False, True):
            with debug(on=on, timeout_ms=250):
                out[host, on] = _compiled(host, COPY, sig)
    inspect.assemble_together([out[NUMBA_CUDA, True], out[MLIR, True]])
    return out


def test_release_code_has_none_of_it(copies):
    ptx = copies[MLIR, False].ptx
    assert not [mark for mark in MARKS if mark in ptx] and "BPT.TRAP" not in copies[MLIR, False].opcodes()


def test_debug_code_checks_the_operands_and_bounds_the_wait_as_numba_cudas(copies):
    """Each shared operand in shared memory and aligned (at()'s alignment is known here: folded), the
    map in global memory 64-byte aligned, the wait bounded by %globaltimer (250 ms in ns): the same
    printf formats as numba-cuda's kernel, the same count of each check, a trap each."""
    mlir, numba_cuda = copies[MLIR, True], copies[NUMBA_CUDA, True]
    assert all(mark in mlir.ptx for mark in MARKS) and "250000000" in mlir.ptx
    assert re.search(r"and\.b64\s+%rd\d+, %rd\d+, 63;", mlir.ptx), "the map's 64-byte alignment"
    bar = "argument 'bar' at 0x%llx is not 8-byte aligned (an mbarrier is 8 bytes, 8-aligned)"
    in_shared = "argument '{}' is not in shared memory (generic address 0x%llx)"
    messages = _messages(mlir.ptx)
    assert [m.split(", block")[0] for m in messages] == [f"numba_tma debug: {m}" for m in (
        f"mbarrier.arrive_expect_tx: {bar}", f"mbarrier.arrive_expect_tx: {in_shared.format('bar')}",
        f"mbarrier.init: {bar}", f"mbarrier.init: {in_shared.format('bar')}",
        "mbarrier.wait: timed out after 250 ms waiting for phase parity %lld of the mbarrier at shared address 0x%llx "
        "(are the expected bytes and the arrival count right?)",
        f"tma.load: {bar}", f"tma.load: {in_shared.format('bar')}",
        "tma.load: argument 'desc' at 0x%llx is not 64-byte aligned (a CUtensorMap in global memory is 64-byte "
        "aligned)",
        f"tma.load: {in_shared.format('dst')}")], messages
    assert all(m.endswith(", block (%lld, %lld, %lld) thread (%lld, %lld, %lld)\n") for m in messages)
    assert messages == _messages(numba_cuda.ptx)
    assert mlir.ptx.count("trap;") == numba_cuda.ptx.count("trap;") == 9
    assert mlir.ptx.count("isspacep.shared") == numba_cuda.ptx.count("isspacep.shared") == 4
    assert mlir.ptx.count("%globaltimer") == numba_cuda.ptx.count("%globaltimer") == 2
    for opcode in ("BPT.TRAP", "QSPC.E.S", "CS2R"):   # the trap, isspacep (one folded by ptxas), %globaltimer
        assert mlir.opcode_counts()[opcode] == numba_cuda.opcode_counts()[opcode] > 0, opcode


WGMMA = map_in_global_type("uint16", (64, 64), swizzle="128B")


def test_wgmma_descriptor_checks_as_numba_cudas():
    """The map is by value under numba-cuda, in global memory here (its type says its layout): the
    same tile, k and row checks, with the same messages."""
    with debug():
        numba_cuda = _compiled(NUMBA_CUDA, DESCRIPTOR, (
            TensorMap.numba_type("uint16", (64, 64), swizzle="128B"), numba.uint64[::1], numba.int32, numba.int32,
            numba.int32))
        mlir = _compiled(MLIR, DESCRIPTOR, (WGMMA, mt.uint64[::1], mt.int32, mt.int32, mt.int32))
    messages = _messages(mlir.ptx)
    assert [m.split(", block")[0] for m in messages] == [
        "numba_tma debug: wgmma.descriptor: argument 'tile' at 0x%llx is not 1024-byte aligned (the 8-row swizzle "
        "atom of a wgmma operand tile with swizzle SWIZZLE_128B)",
        "numba_tma debug: wgmma.descriptor: argument 'tile' is not in shared memory (generic address 0x%llx)",
        "numba_tma debug: wgmma.descriptor: k = %lld: must be in [0, 4): a K step of 32 bytes inside the 128-byte "
        "swizzle span of the map (a wider K is the next tile)",
        "numba_tma debug: wgmma.descriptor: row = %lld: must be a multiple of 8 (the 8-row swizzle atom)",
        "numba_tma debug: wgmma.descriptor: row = %lld: must be below the tile's %lld rows of 128 bytes (the "
        "descriptor would start past the tile)"], messages
    assert messages == _messages(numba_cuda.ptx)
    assert mlir.ptx.count("trap;") == numba_cuda.ptx.count("trap;") == 5
    inspect.assemble_together([numba_cuda, mlir])
    assert mlir.opcode_counts()["BPT.TRAP"] == numba_cuda.opcode_counts()["BPT.TRAP"]
