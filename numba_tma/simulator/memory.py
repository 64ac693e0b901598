"""Simulated shared memory: arrays that know where they were allocated, sit at exactly the
alignment the GPU guarantees them, and refuse a read of bytes an async copy has not delivered.

**Placement.**  On the GPU a shared array is aligned to its dtype (or to ``alignment=``) and to
nothing more that can be relied on; the simulator places each array at an address that is a
multiple of that alignment but *not* of twice it, so a TMA tile that is aligned only by luck on
the GPU is reported here (``alignment=128``; 1024 for 128B swizzle).  Dynamic shared memory
(``cuda.shared.array(0, ...)``) is one buffer per block at its declared alignment (ptxas honours
``.align`` on the extern declaration) and at least 16 bytes.  Each block has its own
arrays (at the same addresses modulo 8 KiB, so a layout computed from an address is the same in
every block, as it is on the GPU).
"""

from __future__ import annotations

import linecache
import os

import numpy as np

from . import state as _state

_MAX_ALIGNMENT = 1 << 12


class SharedArray(np.ndarray):
    """A numpy array in simulated shared memory; views keep what their allocation knows."""

    variable = "shared"      # the name it was assigned to
    place = "?"              # where it was allocated (file:line)
    origin = 0               # the address of its first element
    caller = None            # the allocation's key: (file, line) of its cuda.shared.array
    owner = None             # the block it belongs to (its numba-cuda BlockManager)

    def __array_finalize__(self, obj):
        if obj is not None:
            for attribute in ("variable", "place", "origin", "caller", "owner"):
                setattr(self, attribute, getattr(obj, attribute, getattr(self, attribute)))

    def __getitem__(self, index):
        value = super().__getitem__(index)
        if _state.COPIES_IN_FLIGHT and not isinstance(value, np.ndarray):
            _state.check_generic_read(self, index)
        return value


def address(array) -> int:
    """The address of element 0 of a numpy-backed array (a shared array or a host array)."""
    return np.asarray(array).__array_interface__["data"][0]


def element_address(array, index) -> int:
    """The address of ``array[index]`` for an integer index tuple (negative entries wrap)."""
    index = index if isinstance(index, tuple) else (index,)
    base = address(array)
    for i, n, stride in zip(index, array.shape, array.strides):
        base += (int(i) + n if int(i) < 0 else int(i)) * stride
    return base


def name(array, addr=None) -> str:
    """How messages name a shared array (or one of its elements): ``bars[1] (k.py:12: bars = ...)``."""
    if not isinstance(array, SharedArray):
        return "an array outside shared memory"
    addr = address(array) if addr is None else addr
    return f"{array.variable}[{(addr - array.origin) // array.itemsize}] (allocated at {array.place})"


def _variable(caller) -> str:
    """``tile`` from the source line ``tile = cuda.shared.array(...)``."""
    text = linecache.getline(*caller).strip()
    variable = text.split("=", 1)[0].strip() if "=" in text else ""
    return variable if variable.isidentifier() else "shared"


def alignment_of(dtype, alignment) -> int:
    """The alignment a shared array is guaranteed: ``alignment``, else the dtype's size rounded up
    to a power of two (as numba-cuda aligns it)."""
    align = alignment or 1 << (dtype.itemsize - 1).bit_length()
    if align & (align - 1) or not 0 < align <= _MAX_ALIGNMENT:
        raise _state.SimulatorError(f"numba_tma simulator: cuda.shared.array(alignment={alignment}) must be a power "
                                    f"of two up to {_MAX_ALIGNMENT}")
    return align


def allocate(shape, dtype, alignment, caller, owner) -> SharedArray:
    """A shared array of ``shape`` and ``dtype`` aligned to :func:`alignment_of` and to no more,
    allocated at ``caller`` (file, line; line 0: the launch's dynamic shared memory) for the block
    ``owner``."""
    align = alignment_of(dtype, alignment)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.zeros(nbytes + 2 * _MAX_ALIGNMENT, np.uint8)
    start = raw.__array_interface__["data"][0]
    # a multiple of align, not of 2 * align, and the same modulo 2 * _MAX_ALIGNMENT in every block,
    # as the GPU's blocks share one shared-memory layout (a start rounded up at run time, as
    # SharedMemoryPlan's carver does, then lands at the same offset in every block)
    offset = (align - start) % (2 * _MAX_ALIGNMENT)
    array = np.ndarray.__new__(SharedArray, shape, dtype, buffer=raw, offset=offset)
    if caller[1]:
        array.variable, array.place = _variable(caller), f"{os.path.basename(caller[0])}:{caller[1]}"
    else:
        array.variable, array.place = "dynamic_shared", "launch"
    array.origin, array.caller, array.owner = start + offset, caller, owner
    return array


def byte_view(array) -> np.ndarray:
    """The bytes of a contiguous array, writable, as plain numpy (no read checks)."""
    return np.asarray(array).reshape(-1).view(np.uint8)


def host(array) -> np.ndarray:
    """The plain numpy array behind a simulator device array (inside or outside a kernel) or a
    shared array."""
    if isinstance(array, np.ndarray):
        return np.asarray(array)
    inner = array.__dict__.get("_item")       # a device array as a kernel sees it
    return host(inner if inner is not None else array._ary)
