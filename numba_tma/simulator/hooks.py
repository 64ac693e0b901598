"""The places where numba_tma's simulator reaches into numba-cuda's CUDA simulator (0.30), and
nowhere else.  ``tests/test_simulator_hooks.py`` fails with a clear message when a numba-cuda
release moves one of these names or changes the behaviour relied on.

1. **Shared arrays** (``FakeCUDAShared.array``).  The simulator refuses ``alignment=`` (so no TMA
   kernel written for the GPU runs there) and hands out plain numpy arrays.  :func:`install`
   replaces it with an allocator that takes ``alignment=``, places each array at exactly the
   alignment it is guaranteed (see :mod:`.memory`) and returns a :class:`~.memory.SharedArray`,
   keyed like the original by the source line that allocates it.
2. **cuda.syncwarp** (``FakeCUDAModule``), which the simulator lacks: a barrier of the warp's
   running lanes (:func:`.threads.syncwarp`).
3. **Where a thread runs**: the simulator runs each CUDA thread as a ``BlockThread`` (its
   ``threadIdx``, ``blockIdx``, ``thread_id``, its block's ``BlockManager`` in ``_manager``, the
   ``syncthreads_blocked`` flag, the ``abort`` flag the manager sets when another thread raised, and
   ``exception``, where a thread's error is kept).
   ``BlockThread.__init__`` is wrapped to list every thread of a block on its manager: the manager
   starts them one by one, so the running threads alone do not tell a warp's lanes.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
from numba.cuda.simulator import kernel as _kernel
from numba.cuda.simulator import kernelapi as _kernelapi

SUPPORTED = "0.30"   # the numba-cuda minor these hooks were verified against
BlockThread = _kernel.BlockThread


class SimulatorError(RuntimeError):
    """A kernel did something the GPU would fault on, hang on or silently get wrong."""


def current_thread() -> BlockThread:
    """The simulated CUDA thread running the caller."""
    thread = threading.current_thread()
    if not isinstance(thread, BlockThread):
        raise SimulatorError("numba_tma simulator: a device op was called outside a kernel")
    return thread


def kernel_cuda():
    """The ``cuda`` module the running simulated kernel sees (its ``shared.array`` and so on)."""
    return _kernel._get_kernel_context()


def block_key(thread) -> object:
    """One object per running block (its ``BlockManager``)."""
    return thread._manager


def block_dim(thread) -> tuple:
    return tuple(thread._manager._block_dim)


def grid_dim(thread) -> tuple:
    return tuple(thread._manager._grid_dim)


def block_threads(thread) -> list:
    """The threads of ``thread``'s block that have not exited (including any not started yet)."""
    return [t for t in thread._manager.__dict__[_THREADS] if t.ident is None or t.is_alive()]


def every_block_thread(thread) -> list:
    """Every thread of ``thread``'s block, exited ones included."""
    return list(thread._manager.__dict__[_THREADS])


def in_syncthreads(thread) -> bool:
    return thread.syncthreads_blocked


def aborted(thread) -> bool:
    """Whether the block is being stopped: the manager set ``abort``, or another thread of the
    block has died with an exception (the manager may miss that one: it drops a thread that
    finished between its exception check and its liveness check, and then waits for the others)."""
    return thread.abort or any(t.exception for t in every_block_thread(thread) if t is not thread)


def index(thread, kind="thread") -> tuple:
    """``threadIdx`` (or ``blockIdx``) as a tuple."""
    return tuple(thread.threadIdx if kind == "thread" else thread.blockIdx)


def linear_id(thread) -> int:
    return thread.thread_id


# -- 1. shared arrays ----------------------------------------------------------------------------

_original_shared_array = _kernelapi.FakeCUDAShared.array
_ALLOCATING = threading.Lock()   # every thread of a block allocates its shared arrays at once


def _shared_array(self, shape, dtype, alignment=None):
    from . import memory

    if shape == 0:   # dynamic shared memory: the simulator's one buffer, viewed as shared
        return memory.as_shared(_original_shared_array(self, shape, dtype))
    frame = sys._getframe(1)
    caller = (frame.f_code.co_filename, frame.f_lineno)
    with _ALLOCATING:
        array = self._allocations.get(caller)
        if array is None:
            dtype = _kernelapi.numpy_support.as_dtype(dtype) if isinstance(dtype, _kernelapi.types.Type) else dtype
            array = memory.allocate(shape, np.dtype(dtype), alignment, caller)
            self._allocations[caller] = array
    return array


# -- 2. cuda.syncwarp ------------------------------------------------------------------------------

def _syncwarp(self, mask=0xFFFFFFFF):
    from . import threads

    threads.syncwarp(mask)


# -- 3. every thread of a block (the manager starts them one by one) ------------------------------

_THREADS = "numba_tma_threads"
_original_thread_init = BlockThread.__init__


def _thread_init(self, f, manager, *args, **kwargs):
    _original_thread_init(self, f, manager, *args, **kwargs)
    manager.__dict__.setdefault(_THREADS, []).append(self)


def install() -> None:
    """Patch numba-cuda's simulator (idempotent)."""
    BlockThread.__init__ = _thread_init
    _kernelapi.FakeCUDAShared.array = _shared_array
    _kernelapi.FakeCUDAModule.syncwarp = _syncwarp
