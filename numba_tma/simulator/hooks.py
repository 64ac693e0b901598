"""The places where numba_tma's simulator reaches into numba-cuda's CUDA simulator (0.30), and
nowhere else.  ``tests/test_simulator_hooks.py`` fails with a clear message when a numba-cuda
release moves one of these names or changes the behaviour relied on.

1. **Shared arrays** (``FakeCUDAShared.array``).  The simulator refuses ``alignment=`` (so no TMA
   kernel written for the GPU runs there) and hands out plain numpy arrays.  :func:`install`
   replaces it with an allocator that takes ``alignment=``, places each array at exactly the
   alignment it is guaranteed (see :mod:`.memory`) and returns a :class:`~.memory.SharedArray`,
   keyed like the original by the source line that allocates it; dynamic shared memory
   (``shape=0``, sized by the launch's ``_dynshared_size``) is one buffer per block at the
   alignment it was first declared with.
2. **cuda.syncwarp** (``FakeCUDAModule``), which the simulator lacks: a barrier of the warp's
   running lanes (:func:`.threads.syncwarp`).
3. **Where a thread runs**: the simulator runs each CUDA thread as a ``BlockThread`` (its
   ``threadIdx``, ``blockIdx``, ``thread_id``, its block's ``BlockManager`` in ``_manager``, the
   ``syncthreads_blocked`` flag, the ``abort`` flag the manager sets when another thread raised, and
   ``exception``, where a thread's error is kept).
   ``BlockThread.__init__`` is wrapped to list every thread of a block on its manager: the manager
   makes and starts them one by one, so the running threads alone do not tell a warp's lanes, nor
   (against the manager's ``_block_dim``) whether all are made yet.
4. **Clusters of several blocks** (``FakeCUDAKernel.__call__``), which runs one block after
   another, so blocks could never meet.  :func:`run_clusters` is that method with one change: the
   blocks of a cluster run at once, each ``BlockManager.run`` in its own host thread.  Shared
   arrays (item 1) are therefore allocated per block, and :func:`peer_array` finds the same
   array in another block of the cluster (distributed shared memory).
5. **Launch limits** (``FakeCUDAKernel.__getitem__``, numba's ``kernel[grid, block, stream,
   shared_mem]``, which ``numba_tma.launch`` and :func:`run_clusters` use too): the launch is
   checked against the H200's limits (:mod:`numba_tma.launch_limits`) before it runs; the
   kernel's static shared arrays are checked as item 1 allocates them.
"""

from __future__ import annotations

import os
import sys
import threading
import time

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
    block (of any block of its cluster) has died with an exception (the manager may miss that one:
    it drops a thread that finished between its exception check and its liveness check, and then
    waits for the others; and a cluster's other blocks learn of it only once its block's runner
    has seen it)."""
    cluster = cluster_of(thread)
    managers = [thread._manager] if cluster is None else cluster.managers
    return thread.abort or any(t.exception for m in managers for t in m.__dict__.get(_THREADS, ()) if t is not thread)


def index(thread, kind="thread") -> tuple:
    """``threadIdx`` (or ``blockIdx``) as a tuple."""
    return tuple(thread.threadIdx if kind == "thread" else thread.blockIdx)


def linear_id(thread) -> int:
    return thread.thread_id


# -- 1. shared arrays ----------------------------------------------------------------------------

_ALLOCATING = threading.Lock()   # every thread of a block allocates its shared arrays at once


_DYNAMIC = ("dynamic shared memory", 0)          # the allocation key of a block's dynamic buffer
_ARGS = "numba_tma_allocation_args"              # on a launch's FakeCUDAShared: key -> (shape, dtype, alignment)
_DYNAMIC_PLACED = "numba_tma_dynamic_placed"     # on it too: (the dynamic buffer's alignment, where first declared)


def _shared_array(self, shape, dtype, alignment=None):
    """One array per block and source line (numba-cuda's keeps one per line for every block)."""
    dtype = np.dtype(_kernelapi.numpy_support.as_dtype(dtype) if isinstance(dtype, _kernelapi.types.Type) else dtype)
    frame = sys._getframe(1)
    if shape == 0:   # dynamic shared memory: a buffer per block, viewed as dtype
        return _dynamic(self, dtype, alignment, frame)
    return _allocation(self, (frame.f_code.co_filename, frame.f_lineno), current_thread()._manager,
                       (shape, dtype, alignment))


def _dynamic(shared, dtype, alignment, frame):
    """The block's dynamic shared memory as ``dtype``, placed when first declared in the launch at
    that declaration's alignment (at least 16 bytes: the GPU's least for dynamic shared memory)."""
    from . import memory

    align = max(16, memory.alignment_of(dtype, alignment))
    here = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
    with _ALLOCATING:
        placed, first = shared.__dict__.setdefault(_DYNAMIC_PLACED, (align, here))
    if align > placed:
        raise SimulatorError(f"numba_tma simulator: cuda.shared.array(0, ..., alignment={align}): dynamic shared "
                             f"memory was placed when first declared ({first}), {placed}-byte aligned: declare its "
                             "largest alignment first")
    buffer = _allocation(shared, _DYNAMIC, current_thread()._manager,
                         ((shared._dynshared_size,), np.dtype(np.uint8), placed))
    return buffer[:buffer.size // dtype.itemsize * dtype.itemsize].view(dtype)


def _allocation(shared, caller, manager, args):
    from . import memory

    with _ALLOCATING:
        array = shared._allocations.get((caller, manager))
        if array is None:
            _forget_finished_blocks(shared, manager)
            allocated = shared.__dict__.setdefault(_ARGS, {})
            if caller not in allocated and caller != _DYNAMIC:
                _check_static(shared, allocated, caller, args)
            allocated.setdefault(caller, args)
            array = memory.allocate(*args, caller, manager)
            shared._allocations[(caller, manager)] = array
    return array


def _check_static(shared, allocated, caller, args):
    """The kernel's static shared arrays with the one at ``caller`` added, against the H200's
    limits: at most 48 KB (ptxas refuses more: a SimulatorError), and with the launch's dynamic
    shared memory at most the opt-in maximum (a LaunchError, as the GPU's launch gives)."""
    from .. import launch_limits

    static = sum(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                 for key, (shape, dtype, _) in list(allocated.items()) + [(caller, args)] if key != _DYNAMIC)
    try:
        launch_limits.check_static(static, launch_limits.H200)
    except launch_limits.LaunchError as refusal:
        shape, dtype, _ = args
        raise SimulatorError(f"numba_tma simulator: cuda.shared.array({shape}, {dtype}) at "
                             f"{os.path.basename(caller[0])}:{caller[1]}: {refusal}") from None
    launch_limits.check((1, 1, 1), (1, 1, 1), shared._dynshared_size, launch_limits.H200, static=static)


def _forget_finished_blocks(shared, manager):
    """Drop the shared arrays of blocks that have finished: blocks run one after another (the
    blocks of a cluster together), so when a block outside the running ones allocates, the others
    are done.  Keeps a big grid's simulation from holding every block's shared memory."""
    running = shared.__dict__.setdefault("numba_tma_running", [])
    if manager in running:
        return
    cluster = manager.__dict__.get(_CLUSTER)
    keep = set(cluster.managers) if cluster is not None else {manager}
    for key in [k for k in shared._allocations if isinstance(k, tuple) and len(k) == 2 and k[1] not in keep]:
        del shared._allocations[key]
    running[:] = [m for m in running if m in keep] + [manager]


def peer_array(array, manager):
    """``array`` (a shared array or a view of one) as it lies in the block of ``manager``: the same
    allocation, the same offset (allocated there now if that block has not reached it yet)."""
    from . import memory

    if array.owner is manager:
        return array
    shared = kernel_cuda().shared
    base = _allocation(shared, array.caller, manager, shared.__dict__[_ARGS][array.caller])
    raw = base.base
    offset = base.origin - memory.address(raw) + (memory.address(array) - array.origin)
    view = np.ndarray.__new__(memory.SharedArray, array.shape, array.dtype, buffer=raw, offset=offset,
                              strides=array.strides)
    view.variable, view.place, view.origin, view.caller, view.owner = base.variable, base.place, base.origin, \
        base.caller, manager
    return view


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


# -- 4. clusters of several blocks -----------------------------------------------------------------

_CLUSTER = "numba_tma_cluster"   # on a BlockManager: its Cluster
_BLOCK = "numba_tma_block"       # on a BlockManager: its blockIdx


class Cluster:
    """The blocks of one cluster: their managers by rank (x fastest), and the barriers they share."""

    def __init__(self, shape):
        self.shape = shape
        self.size = shape[0] * shape[1] * shape[2]
        self.managers = [None] * self.size
        self.gates: dict = {}
        self.deadlocked = False

    def rank(self, block) -> int:
        x, y, z = (b % s for b, s in zip(block, self.shape))
        return x + self.shape[0] * (y + self.shape[1] * z)


def cluster_of(thread):
    """The :class:`Cluster` of ``thread``'s block, or ``None`` outside :func:`run_clusters`."""
    return thread._manager.__dict__.get(_CLUSTER)


def manager_threads(manager) -> list:
    """The threads of a block (by its manager) that have not exited."""
    return [t for t in manager.__dict__.get(_THREADS, []) if t.ident is None or t.is_alive()]


def all_threads_made(manager) -> bool:
    """Whether the manager has made every thread of its block (it makes and starts them one by one)."""
    x, y, z = manager._block_dim
    return len(manager.__dict__.get(_THREADS, ())) == x * y * z


def manager_block(manager) -> tuple:
    return manager.__dict__[_BLOCK]


def run_clusters(dispatcher, grid, block, cluster, shared_mem, args) -> None:
    """``dispatcher[grid, block, 0, shared_mem](*args)`` with the blocks of each cluster of shape
    ``cluster`` running at once (numba-cuda's ``FakeCUDAKernel.__call__``, but for that)."""
    kernel = dispatcher[grid, block, 0, shared_mem]
    grid_dim, block_dim = _kernel.normalize_kernel_dimensions(kernel.grid_dim, kernel.block_dim)
    module = _kernelapi.FakeCUDAModule(grid_dim, block_dim, kernel.dynshared_size)
    with _kernel._push_kernel_context(module):
        retr = []

        def fake_arg(arg):
            for extension in kernel.extensions:
                _, arg = extension.prepare_args(None, arg, stream=0, retr=retr)
            if isinstance(arg, np.ndarray) and arg.ndim > 0:
                arg = _kernel.InOut(arg).to_device(retr)
            elif isinstance(arg, _kernel.ArgHint):
                arg = arg.to_device(retr)
            elif isinstance(arg, np.void):
                arg = _kernel.FakeCUDAArray(arg)
            return _kernel.FakeWithinKernelCUDAArray(arg) if isinstance(arg, _kernel.FakeCUDAArray) else arg

        fake_args = [fake_arg(arg) for arg in args]
        with _kernelapi.swapped_cuda_module(kernel.fn, module):
            shape = tuple(cluster)
            for first in np.ndindex(*(g // c for g, c in zip(grid_dim, shape))):
                _run_cluster(kernel, grid_dim, block_dim, Cluster(shape), first, fake_args)
        for writeback in retr:
            writeback()


def _run_cluster(kernel, grid_dim, block_dim, cluster, first, args):
    runs, errors = [], []
    for offset in np.ndindex(*cluster.shape):
        point = tuple(f * c + o for f, c, o in zip(first, cluster.shape, offset))
        manager = _kernel.BlockManager(kernel.fn, grid_dim, block_dim, kernel._debug)
        manager.__dict__[_CLUSTER], manager.__dict__[_BLOCK] = cluster, point
        cluster.managers[cluster.rank(point)] = manager

        def run(manager=manager, point=point):
            try:
                _run_block(manager, point, args)
            except BaseException as exc:   # noqa: BLE001 - handed to the launching thread
                errors.append(exc)
                for m in cluster.managers:   # stop the other blocks' threads too
                    for t in m.__dict__.get(_THREADS, []):
                        t.abort = True
        runs.append(threading.Thread(target=run, name=f"block {point}"))
    for r in runs:
        r.start()
    for r in runs:
        r.join()
    if errors:
        raise next((e for e in errors if not isinstance(e, SystemExit)), errors[0])


def _run_block(manager, grid_point, args):
    """``BlockManager.run`` (numba-cuda 0.30), yielding the GIL on each pass of its polling loop:
    several blocks poll at once here, and numba's loop, which never yields, would hand the GIL to
    the block's own threads only once per switch interval (a cluster of 2 took minutes)."""
    threads, live, blocked = set(), set(), set()
    for block_point in np.ndindex(*manager._block_dim):
        t = BlockThread(lambda: manager._f(*args), manager, grid_point, block_point, manager._debug)
        t.start()
        threads.add(t)
        live.add(t)
    while live:
        for t in live:
            if t.syncthreads_blocked:
                blocked.add(t)
            elif t.exception:
                for other in threads:
                    other.abort = True
                    other.syncthreads_blocked = False
                    other.syncthreads_event.set()
                raise t.exception[0].with_traceback(t.exception[1])
        if live == blocked:
            for t in blocked:
                t.syncthreads_blocked = False
                t.syncthreads_event.set()
            blocked = set()
        live = {t for t in live if t.is_alive()}
        time.sleep(0)
    for t in threads:
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


# -- 5. launch limits --------------------------------------------------------------------------------

_original_configure = _kernel.FakeCUDAKernel.__getitem__


def _configure(self, configuration):
    """``kernel[grid, block, stream, shared_mem]``, refused if an H200 would not take it (above
    48 KB of dynamic shared memory only if ``numba_tma.launch`` opted the kernel in to as much)."""
    from .. import launch_limits

    configured = _original_configure(self, configuration)
    launch_limits.check(tuple(self.grid_dim), tuple(self.block_dim), self.dynshared_size, launch_limits.H200,
                        opted_in=self.dynshared_size <= self.__dict__.get(launch_limits.OPTED_IN, 0))
    return configured


def install() -> None:
    """Patch numba-cuda's simulator (idempotent)."""
    BlockThread.__init__ = _thread_init
    _kernelapi.FakeCUDAShared.array = _shared_array
    _kernel.FakeCUDAKernel.__getitem__ = _configure
    _kernelapi.FakeCUDAModule.syncwarp = _syncwarp
