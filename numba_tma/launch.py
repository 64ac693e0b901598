"""Launch any ``@cuda.jit`` kernel with thread-block clusters and any dynamic shared memory the
device allows — what numba's ``kernel[grid, block, stream, shmem]`` cannot express.

Example::

    # fragment: the signature, with the caller's kernel and arguments
    numba_tma.launch(kernel, grid, block, *args, cluster=(2, 1, 1), shared_mem=200_000, stream=s)

``grid`` is in blocks, as in numba, and must be divisible by the cluster shape.  Clusters of up to
8 blocks are portable; up to 16 on devices that allow it (the non-portable opt-in is set
automatically).  Shared memory above 48 KB is opted in automatically, up to the device's limit.
Arguments are prepared exactly as numba's own launch prepares them (arrays of numba, CuPy and
PyTorch, scalars, records, by-value ``TensorMap``\\ s; host arrays are copied back afterwards).
"""

from __future__ import annotations

import operator
import sys

from .errors import LaunchError
from .ops import BACKEND

__all__ = ["ClusterKernel", "LaunchError", "cluster_kernel", "launch", "prepare_launch"]


def _dims(name, value):
    """``value`` (an integer or a tuple of 1 to 3, numpy integers included) as a 3-tuple of ints."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    try:
        dims = () if any(isinstance(d, bool) for d in items) else tuple(operator.index(d) for d in items)
    except TypeError:
        dims = ()
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise LaunchError(f"{name}={value!r}: must be a positive integer or a tuple of 1 to 3 positive integers")
    return dims + (1,) * (3 - len(dims))


def _check_shapes(grid, block, cluster, shared_mem):
    """``(grid in clusters, block, cluster, blocks per cluster)``, checked without the device."""
    grid, block, cluster = _dims("grid", grid), _dims("block", block), _dims("cluster", cluster)
    if any(g % c for g, c in zip(grid, cluster)):
        raise LaunchError(f"grid={grid}: must be divisible by cluster={cluster} in every dimension (grid counts "
                          "blocks, as in numba)")
    if not isinstance(shared_mem, int) or isinstance(shared_mem, bool) or shared_mem < 0:
        raise LaunchError(f"shared_mem={shared_mem!r}: must be a non-negative number of bytes")
    return tuple(g // c for g, c in zip(grid, cluster)), block, cluster, cluster[0] * cluster[1] * cluster[2]


_SHAPES: dict = {}       # (grid, block, cluster, shared_mem) as given -> (_check_shapes' result, that key)


def _plain(value) -> bool:
    """An int or a tuple of ints, exactly (so a cached 2 never answers for 2.0 or True)."""
    return type(value) is int or type(value) is tuple and all(type(d) is int for d in value)


def geometry(grid, block, cluster, shared_mem):
    """A launch's geometry checked without the device: ``(grid in clusters, block, cluster, blocks
    per cluster)`` (cached for plain ints and tuples)."""
    key = (grid, block, cluster, shared_mem)
    try:
        seen = _SHAPES.get(key)
    except TypeError:     # a list: the checks decide
        seen = None
    # equal to a checked key, and of its kinds: its very objects (a call site's constants) or plain
    if seen is not None and (all(map(operator.is_, key, seen[1])) or all(map(_plain, key))):
        return seen[0]
    shapes = _check_shapes(grid, block, cluster, shared_mem)
    if all(map(_plain, key)):
        _SHAPES[key] = shapes, key
    return shapes


def launch(kernel, grid, block, *args, cluster=(1, 1, 1), shared_mem=0, stream=0):
    """Launch ``kernel`` (a ``@cuda.jit`` dispatcher) on ``args`` with ``grid`` blocks of ``block``
    threads, grouped in clusters of shape ``cluster``, with ``shared_mem`` bytes of dynamic shared
    memory, on ``stream`` (a numba stream, or 0).  The geometry is checked against the device's
    limits (:mod:`numba_tma.launch_limits`) once per distinct launch shape, and each compiled
    kernel once per shape (its static shared memory, the threads its registers allow, its
    constant multicast masks against the cluster); the kernel's opt-ins are set once.

    A numba-cuda-mlir kernel (``numba_cuda_mlir.cuda.jit``) is launched by numba-cuda-mlir's own
    launcher after the same checks (:mod:`numba_tma.mlir.launching`).

    Example::

        # fragment: the caller's kernel k and its arguments
        numba_tma.launch(k, (8, 4), 128, a, out, cluster=(2, 1, 1), shared_mem=150_000)
    """
    shapes = geometry(grid, block, cluster, shared_mem)
    if type(kernel) not in _NUMBA_KERNELS and _mlir_kernel(kernel):
        from .mlir.launching import launch as mlir_launch

        mlir_launch(kernel, shapes, shared_mem, stream, args)
        return
    BACKEND.launch(kernel, shapes, shared_mem, stream, args)


def prepare_launch(kernel, grid, block, *args, varying=(), cluster=(1, 1, 1), shared_mem=0, stream=0):
    """:func:`launch`'s work done once, for a library that launches one kernel many times with a few
    arguments changed: returns an object whose ``launch(*values)`` launches ``kernel`` as
    ``launch(kernel, grid, block, *args, ...)`` would with the arguments at positions ``varying``
    replaced by ``values`` — each a ``TensorMap`` of the same Numba type as the one it replaces, or
    an array of the same shape, strides and type (on the GPU only its address is read).  The
    rest, typing, argument preparation and the checks run once.  numba-cuda kernels only.

    Example::

        # fragment: the caller's kernel, maps of one type and outputs of one shape
        prepared = numba_tma.prepare_launch(k, grid, 128, desc, out, 7, varying=(0, 1))
        for desc, out in zip(descs, outs):
            prepared.launch(desc, out)
    """
    shapes = geometry(grid, block, cluster, shared_mem)
    if type(kernel) not in _NUMBA_KERNELS and _mlir_kernel(kernel):
        raise LaunchError("numba_tma.prepare_launch: numba-cuda kernels only (launch a numba-cuda-mlir kernel with "
                          "numba_tma.launch)")
    for position in varying:
        if not (isinstance(position, int) and 0 <= position < len(args)):
            raise LaunchError(f"numba_tma.prepare_launch: varying={varying!r}: positions of the {len(args)} arguments")
    return BACKEND.prepare(kernel, shapes, shared_mem, stream, args, tuple(varying))


_NUMBA_KERNELS: set = set()   # dispatcher classes seen to be numba-cuda's (one set lookup per launch)


def _mlir_kernel(kernel) -> bool:
    """Whether ``kernel`` is a numba-cuda-mlir kernel (launched through :mod:`numba_tma.mlir.launching`);
    else its class is remembered as numba-cuda's."""
    if "numba_cuda_mlir" in sys.modules:
        from .intrinsics.hosts.mlir_adapter import is_kernel

        if is_kernel(kernel):
            return True
    _NUMBA_KERNELS.add(type(kernel))
    return False


class ClusterKernel:
    """A ``@cuda.jit`` kernel that always launches in clusters of ``cluster``, with numba's own
    launch syntax: ``kernel[grid, block]``, ``kernel[grid, block, stream, shared_mem]`` (grid in
    blocks).  Made by :func:`cluster_kernel`; ``.dispatcher`` is the numba kernel."""

    def __init__(self, dispatcher, cluster):
        self.dispatcher = dispatcher
        self.cluster = _dims("cluster", cluster)
        self.__doc__ = dispatcher.__doc__
        self.__name__ = getattr(dispatcher, "__name__", "kernel")

    def __getitem__(self, config):
        config = config if isinstance(config, tuple) else (config,)
        if not 2 <= len(config) <= 4:
            raise LaunchError(f"{self.__name__}[{config}]: takes [grid, block], [grid, block, stream] or "
                              "[grid, block, stream, shared_mem], as numba's launch does")
        grid, block, stream, shared_mem = config + (0, 0)[len(config) - 2:]

        def run(*args):
            launch(self.dispatcher, grid, block, *args, cluster=self.cluster, shared_mem=shared_mem, stream=stream)

        return run

    def __repr__(self):
        return f"ClusterKernel({self.__name__}, cluster={self.cluster})"


def cluster_kernel(cluster=(2, 1, 1), **jit_options):
    """Decorator: a kernel launched in clusters of ``cluster`` with numba's launch syntax.  Put it
    above ``@cuda.jit`` or on a plain function (then ``jit_options`` go to ``cuda.jit``).

    Example::

        # fragment: out the caller's device array
        @numba_tma.cluster_kernel(cluster=(2, 1, 1))
        @cuda.jit
        def k(out):
            out[cuda.blockIdx.x] = cluster.ctarank()

        k[8, 32](out)                          # 8 blocks = 4 clusters of 2
        k[8, 32, 0, 100_000](out)              # with 100 KB of dynamic shared memory
    """
    _dims("cluster", cluster)

    def wrap(fn):
        from numba import cuda

        dispatcher = fn if hasattr(fn, "overloads") else cuda.jit(**jit_options)(fn)
        return ClusterKernel(dispatcher, cluster)

    return wrap
