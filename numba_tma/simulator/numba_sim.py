"""The adapter to numba-cuda's CUDA simulator (0.30): the only module of numba_tma that names its
internals, and it holds no logic of its own.  ``tests/test_simulator_hooks.py`` fails, naming
what moved, when a numba-cuda release changes one of them.

numba-cuda's ``FakeCUDAKernel.__call__`` converts the arguments, swaps the kernel's ``cuda``
global for a ``FakeCUDAModule`` and then, for each block of the grid in turn, calls
``BlockManager(fn, grid_dim, block_dim, debug).run(grid_point, *args)``.  numba_tma keeps all of
that and replaces what runs a block, one method of the kernel's ``cuda`` module and adds others:

1. **kernel.BlockManager**: :func:`install` puts :class:`_Blocks` in its place, which hands each
   block to numba_tma's scheduler (:func:`.scheduler.run_block`), with the running kernel's
   ``cuda`` module (``_get_kernel_context()``, one per kernel call) and its dynamic shared
   memory size (``.shared._dynshared_size``).  The kernel's ``cuda`` module
   asks ``threading.current_thread()`` for ``threadIdx``, ``blockIdx``, ``thread_id`` (``laneid``)
   and ``syncthreads()`` / ``syncthreads_count`` / ``_and`` / ``_or``: the scheduler's threads
   (:class:`.scheduler.Worker`) answer them.
2. **kernelapi.FakeCUDAShared.array** (``cuda.shared.array``), which refuses ``alignment=``:
   replaced by numba_tma's allocator (:func:`.memory.shared_array`), told the allocating frame.
3. **kernelapi.FakeCUDAModule**'s warp-level functions, which the simulator lacks (``cuda.syncwarp``,
   ``cuda.shfl_sync``, ``cuda.ballot_sync``, ``cuda.activemask``, ...: :data:`.warp_ops.FUNCTIONS`):
   each added to the class as a method calling numba_tma's function.
4. **numba's scalar types called on a value** (``numba.uint32(x)`` in a kernel, which the
   simulator runs as Python): ``Type.__call__`` imports and checks against an ABC before
   ``cast_python_value``; for one plain number the replacement calls ``cast_python_value`` at
   once (the same value, about 3x faster; the docs' 32-bit index style calls it dozens of times
   per thread), and anything else goes to numba's own.
5. **devicearray.FakeWithinKernelCUDAArray.__setitem__** (a kernel's store into a device array):
   the store, then the memory-model checker is told of it (:func:`.memory.global_stored`, with
   the numpy array behind the device array); not replaced with the checker off.

6. **The declarations' import** (:func:`lent_device_stubs`): the declarations import numba-cuda's
   typing modules, which key their templates on device stubs (``cuda.shared``...) the
   simulator's ``numba.cuda`` lacks (:data:`DEVICE_STUBS`); they are lent numba-cuda's own for that
   import and taken back after, so kernels and host code see the simulator's.

Device arrays (``FakeCUDAArray``, and ``FakeWithinKernelCUDAArray`` around it inside a kernel)
are read through the numpy array protocol they forward (:func:`host_array`).
``TensorMap.to_device()``'s array is a ``FakeCUDAArray`` subclass whose ``_numba_type_`` is the
map's (:func:`typed_device_array`); inside a kernel :func:`numba_type_of` finds it behind its
``FakeWithinKernelCUDAArray`` (``_item``: that wrapper's ``__getattr__`` falls back to indexing).
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np
from numba.core import types as _types
from numba.cuda.np import numpy_support
from numba.cuda.np.numpy_support import from_dtype  # noqa: F401  a numpy dtype's Numba type (the twins' checks)
from numba.cuda.simulator import kernel as _kernel
from numba.cuda.simulator import kernelapi as _kernelapi
from numba.cuda.simulator.cudadrv import devicearray as _devicearray

SUPPORTED = "0.30"   # the numba-cuda minor this adapter was verified against

_RUN_BLOCK = None    # set by install(): scheduler.run_block
_ALLOCATE = None     # set by install(): memory.shared_array
_STORED = None       # set by install(): memory.global_stored, or None with the checker off


class _Blocks:
    """Stands in for numba-cuda's ``BlockManager``: one per block, made and run by
    ``FakeCUDAKernel.__call__``."""

    def __init__(self, f, grid_dim, block_dim, debug):
        self.f, self.grid_dim, self.block_dim, self.debug = f, grid_dim, block_dim, debug

    def run(self, grid_point, *args):
        context = _kernel._get_kernel_context()        # one per kernel call: the launch it belongs to
        _RUN_BLOCK(self.f, tuple(self.grid_dim), tuple(self.block_dim), self.debug, tuple(grid_point), args,
                   context, context.shared._dynshared_size)


def _shared_array(self, shape, dtype, alignment=None):
    """``cuda.shared.array`` in a kernel (``self``: the launch's ``FakeCUDAShared``)."""
    return _ALLOCATE(shape, as_dtype(dtype), alignment, sys._getframe(1))


def _method(function):
    """``function`` as a method of the kernel's ``cuda`` module (``self``: the launch's
    ``FakeCUDAModule``)."""
    def method(self, *args):
        return function(*args)

    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = function.__doc__
    return method


def _store(self, idx, val):
    """``array[idx] = val`` on a device array in a kernel (``self``: its ``FakeWithinKernelCUDAArray``)."""
    item = self._item
    item._ary[idx] = val
    _STORED(item._ary, idx)


_DTYPES: dict = {}


def as_dtype(dtype) -> np.dtype:
    """A numba type (``numba.uint64``), numpy dtype or its name as a numpy dtype."""
    try:
        found = _DTYPES.get(dtype)
    except TypeError:             # unhashable (a structured dtype's field list)
        return np.dtype(dtype)
    if found is None:
        found = _DTYPES[dtype] = np.dtype(dtype if isinstance(dtype, (np.dtype, type, str))
                                          else numpy_support.as_dtype(dtype))
    return found


def host_array(array) -> np.ndarray:
    """The numpy array behind a simulator device array (the wrappers forward numpy's array
    interface to it), or ``array`` itself; the memory is shared, not copied."""
    return array if isinstance(array, np.ndarray) else np.asarray(array)


def host_array_or_none(value):
    """:func:`host_array` of a numpy or simulator device array; ``None`` for anything else."""
    if isinstance(value, np.ndarray):
        return value
    return np.asarray(value) if hasattr(value, "__array_interface__") else None


class _TypedArray(_devicearray.FakeCUDAArray):
    """A simulator device array of a Numba type of numba_tma's choosing, with constant attributes
    (a kernel's ``desc.box_bytes``)."""

    def __init__(self, ary, numba_type, attributes):
        super().__init__(ary)
        self._type, self._attributes = numba_type, attributes

    @property
    def _numba_type_(self):
        return self._type

    def __getattr__(self, name):
        attributes = self.__dict__.get("_attributes", {})
        return attributes[name] if name in attributes else super().__getattr__(name)


def typed_device_array(data, numba_type, attributes) -> _TypedArray:
    """A read-only copy of ``data`` (a numpy array) in a simulator device array typed
    ``numba_type`` (a read-only array type), ``attributes`` (a dict) its attributes."""
    copy = np.array(data)
    copy.flags.writeable = False
    return _TypedArray(copy, numba_type, attributes)


def numba_type_of(value):
    """The Numba type of a :func:`typed_device_array` (or of the wrapper a kernel sees it through);
    ``None`` for any other value."""
    if type(value) is _devicearray.FakeWithinKernelCUDAArray:
        value = value._item
    return value._type if type(value) is _TypedArray else None


_NUMBERS = frozenset({int, float, bool,
                      *(np.dtype(code).type for code in np.typecodes["AllInteger"] + np.typecodes["Float"])})
_TYPE_CALL = _types.Type.__call__


_CASTS: dict = {}       # id(a number type) -> the numpy scalar type its cast_python_value makes (numba's
                        # number types are made once each, held by numba.types for good: an id names one; a hash costs more)


def _number_call(self, *args):
    """``numba.uint32(x)`` and the like: a plain number cast at once (numba's
    ``cast_python_value``: the numpy scalar type of the type's name), anything else as numba does."""
    if len(args) == 1 and type(args[0]) in _NUMBERS:
        cast = _CASTS.get(id(self))
        if cast is None:
            cast = _CASTS[id(self)] = getattr(np, self.name)
        return cast(args[0])
    return _TYPE_CALL(self, *args)


def install(run_block, shared_array, warp_functions, stored=None) -> None:
    """Wire numba-cuda's simulator to numba_tma's scheduler, allocator and warp-level functions
    (``warp_functions``: ``{name: function}``, each the kernel's ``cuda.<name>``), and (``stored``)
    its device arrays' stores to the checker (idempotent)."""
    global _RUN_BLOCK, _ALLOCATE, _STORED
    _RUN_BLOCK, _ALLOCATE, _STORED = run_block, shared_array, stored
    if stored is not None:
        _devicearray.FakeWithinKernelCUDAArray.__setitem__ = _store
    _kernel.BlockManager = _Blocks
    _kernelapi.FakeCUDAShared.array = _shared_array
    for name, function in warp_functions.items():
        setattr(_kernelapi.FakeCUDAModule, name, _method(function))
    _types.Integer.__call__ = _types.Float.__call__ = _number_call


DEVICE_STUBS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "syncwarp", "shared", "local",
                "const", "atomic", "match_any_sync", "match_all_sync", "threadfence_block", "threadfence_system",
                "threadfence", "selp", "popc", "brev", "clz", "ffs", "fma", "cbrt", "activemask", "lanemask_lt",
                "nanosleep")
"""The names ``numba.cuda`` takes from ``numba.cuda.stubs`` off the simulator (its ``device_init``)."""


@contextlib.contextmanager
def lent_device_stubs():
    """For the ``with`` block: :data:`DEVICE_STUBS` lent to the simulator's ``numba.cuda`` (numba-cuda's
    typing modules key their templates on them), taken back after."""
    import numba.cuda as cuda_module
    from numba.cuda import stubs

    lent = [name for name in DEVICE_STUBS if name not in vars(cuda_module)]
    for name in lent:
        setattr(cuda_module, name, getattr(stubs, name))
    try:
        yield
    finally:
        for name in lent:
            delattr(cuda_module, name)
