"""Helpers for GPU tests: a barrier wait that cannot hang, and one tile-copy kernel."""

import numba
import numpy as np
from numba import cuda
from numba.cuda import types

from numba_tma import SIMULATOR, TensorMap, fence, mbarrier, tma

WAIT_SPINS = 1 << 20


@cuda.jit(device=True)
def bounded_wait(bars, phase, status):
    """Wait for ``phase`` like ``mbarrier.wait`` but give up after WAIT_SPINS tries and record the
    failure in ``status[0]``, so a barrier that never completes fails the test instead of hanging."""
    for _ in range(WAIT_SPINS):
        if mbarrier.try_wait(bars, phase):
            return
    status[0] = 1


TILE_R, TILE_C = 32, 64


@cuda.jit
def tile_copy_kernel(desc, out, origin, status):
    """Block (x, y) loads the TILE_R x TILE_C float32 tile at (y * TILE_R, x * TILE_C) + origin
    (row, col) of the source through shared memory and stores it at out[y * TILE_R, x * TILE_C]."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((TILE_R, TILE_C), numba.float32, alignment=128)
    row0, col0 = cuda.blockIdx.y * TILE_R, cuda.blockIdx.x * TILE_C
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, TILE_R * TILE_C * 4)
        tma.load(desc, tile, (col0 + origin[1], row0 + origin[0]), bars)  # innermost (column) first
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, TILE_R * TILE_C, cuda.blockDim.x):
        r, c = row0 + i // TILE_C, col0 + i % TILE_C
        if r < out.shape[0] and c < out.shape[1]:
            out[r, c] = tile[i // TILE_C, i % TILE_C]


def tile_copy(desc_arg, shape, origin=(0, 0)):
    """An array of ``shape`` copied tile by tile through ``desc_arg`` (a TensorMap or descriptor
    bytes on the device), starting at ``origin`` (row, col) of the source."""
    out = cuda.to_device(np.full(shape, -1, np.float32))
    status = cuda.to_device(np.zeros(1, np.int32))
    grid = ((shape[1] + TILE_C - 1) // TILE_C, (shape[0] + TILE_R - 1) // TILE_R)
    tile_copy_kernel[grid, 128](desc_arg, out, np.array(origin, np.int32), status)
    assert status.copy_to_host()[0] == 0, "TMA never completed the barrier"
    return out.copy_to_host()


def on_device(desc_bytes):
    """128 descriptor bytes in a uint8 device array (the global-memory form)."""
    return cuda.to_device(np.frombuffer(desc_bytes, dtype=np.uint8))


if not SIMULATOR:    # the descriptor echo is a compiled intrinsic (tests run under the simulator: both_ways)
    from numba_tma.intrinsics._core import Int, PtxOp, build_intrinsic
    from numba_tma.intrinsics.tma import Descriptor

    # Test-only op: 64-bit word i of the descriptor, read where TMA reads it (the parameter).
    read_word = build_intrinsic(PtxOp(
        "test.descriptor_word", "{{\n .reg .u64 a;\n mad.lo.u64 a, {i}, 8, {desc};\n ld.u64 {out}, [a];\n}}",
        (Descriptor("desc"), Int("i", bits=64)), returns=types.uint64, memory=False, doc="test only"))

    @cuda.jit
    def read_param_kernel(desc, out):
        for i in range(16):
            out[i] = read_word(desc, i)

    class _AsLaunched:
        """A kernel argument passing a map's 128 ``bytes`` by value as numba's launcher passes any
        map, typed as one fixed map type: the echo kernel reads raw bytes, so one compiled kernel
        serves every map.  It carries what a by-value twin is made from (the map's ``_layout`` and
        ``address``), as a launch made while no twin is kept needs."""

        _numba_type_ = TensorMap.numba_type("uint8", (16,))

        def __init__(self, desc):
            self.bytes, self._layout, self.address = desc.bytes, desc._layout, desc.address

    def received_bytes(desc, one_kernel=False):
        """The 128 bytes a kernel receives when ``desc`` is launched with numba's own syntax (with
        ``one_kernel``, its bytes passed as one fixed map type: no compilation per layout)."""
        out = cuda.to_device(np.zeros(16, np.uint64))
        read_param_kernel[1, 1](_AsLaunched(desc) if one_kernel else desc, out)
        return out.copy_to_host().tobytes()


def echoing(original, received, checked_modes):
    """``original`` (numba's launcher's by-value hook: ``by_value.argument(tmap, position)``) wrapped
    so that the first time a map's bytes are seen, ``received(tmap, one_kernel=True)`` launches a
    kernel echoing the 128 bytes it receives, which must be ``tmap.bytes``; each map checked adds its
    mode to ``checked_modes``.  The echo is launched while the outer launch prepares its arguments,
    so it gets twins of its own (the outer launch's twins of earlier positions already hold its
    maps) and the outer ones are given back after."""
    from numba_tma.descriptors import by_value

    seen = set()

    def checked(tmap, position):
        if tmap.bytes not in seen:
            seen.add(tmap.bytes)   # first: the echo's own launch passes the same bytes
            outer = getattr(by_value._SLOTS, "twins", None)
            by_value._SLOTS.twins = []
            try:
                got = received(tmap, one_kernel=True)
            finally:
                by_value._SLOTS.twins = outer
            assert got == tmap.bytes, f"the kernel received other bytes than {tmap!r}:\n{got.hex()}\n{tmap.bytes.hex()}"
            checked_modes.append(getattr(tmap, "mode", "tiled"))
        return original(tmap, position)

    return checked


def import_example(name, host="numba-cuda"):
    """``examples/<name>.py`` imported for this process's way (the example picks the simulator
    itself when it finds no GPU: tell it what this process runs, then restore the variable).
    ``host="mlir"``: a second copy compiled by numba-cuda-mlir (``NUMBA_TMA_HOST=mlir``; not under
    the simulator: without a GPU its kernels compile for sm_90a through ``numba_tma.inspect``),
    imported beside the first with its own ``_host``."""
    import importlib
    import os
    import sys

    import numba_tma

    folder = os.path.join(os.path.dirname(__file__), "..", "examples")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    mlir = host == "mlir"
    variables = {"NUMBA_ENABLE_CUDASIM": "1" if numba_tma.ops.SIMULATOR and not mlir else "0",
                 "NUMBA_TMA_HOST": host}
    saved = {v: os.environ.get(v) for v in variables}
    shared = {m: sys.modules.pop(m) for m in (name, "_host") if mlir and m in sys.modules}
    os.environ.update(variables)
    try:
        return importlib.import_module(name)
    finally:
        if mlir:     # the numba-cuda copies back (or none: imported afresh when asked)
            for module in (name, "_host"):
                sys.modules.pop(module, None)
            sys.modules.update(shared)
        for variable, value in saved.items():
            if value is None:
                del os.environ[variable]
            else:
                os.environ[variable] = value
