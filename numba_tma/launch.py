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

from . import launch_limits
from .errors import LaunchError
from .launch_limits import PORTABLE_CLUSTER
from .ops import SIMULATOR

__all__ = ["ClusterKernel", "LaunchError", "cluster_kernel", "launch"]


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
_PLANS: dict = {}        # (that result, shared_mem, device id) -> _Plan
_SIMULATED: set = set()  # under the simulator: the (shapes, shared_mem) checked against the H200's limits
_OPTED_IN: dict = {}     # (kernel handle, device id) -> (dynamic shared bytes allowed, non-portable set)


def _plain(value) -> bool:
    """An int or a tuple of ints, exactly (so a cached 2 never answers for 2.0 or True)."""
    return type(value) is int or type(value) is tuple and all(type(d) is int for d in value)


def _shapes(grid, block, cluster, shared_mem):
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


def _check(shapes, shared_mem, limits, **kernel):
    """``shapes`` (from :func:`_check_shapes`) against the device's ``limits`` (and the kernel's)."""
    clusters, block, cluster, _ = shapes
    grid = tuple(c * s for c, s in zip(clusters, cluster))
    launch_limits.check(grid, block, shared_mem, limits, cluster=cluster, **kernel)


class _Plan:
    """One distinct launch on one device: its cuda.core configuration, checked against the device,
    and the compiled kernels checked against it (their static shared memory, threads, constant
    multicast masks) with their opt-ins set."""

    __slots__ = ("config", "shapes", "shared_mem", "ready")

    def __init__(self, config, shapes, shared_mem):
        self.config, self.shapes, self.shared_mem, self.ready = config, shapes, shared_mem, set()


def _plan(shapes, shared_mem, device):
    """The launch's :class:`_Plan`, checked against the device once per distinct launch."""
    key = (shapes, shared_mem, device.id)
    plan = _PLANS.get(key)
    if plan is None:
        from cuda.core import LaunchConfig

        clusters, block, cluster, _ = shapes
        _check(shapes, shared_mem, launch_limits.of_device(device))
        config = LaunchConfig(grid=clusters, cluster=cluster, block=block, shmem_size=shared_mem)
        plan = _PLANS[key] = _Plan(config, shapes, shared_mem)
    return plan


def _ready(plan, overload, cufunc, device):
    """Check a compiled kernel against a launch (once per kernel and launch): its static shared
    memory and the threads its registers allow against the device, its constant multicast masks
    against the cluster; then set the kernel's opt-ins."""
    from .numba_cuda_hooks import constant_multicast_masks, kernel_figures

    limits = launch_limits.of_device(device)
    static, most_threads = kernel_figures(cufunc)
    _check(plan.shapes, plan.shared_mem, limits, static=static, kernel_threads=most_threads)
    launch_limits.check_multicast(constant_multicast_masks(overload), plan.shapes[2])
    default = limits.shared_default - static     # the dynamic shared memory a kernel takes without the opt-in
    if plan.shared_mem > default or plan.shapes[3] > PORTABLE_CLUSTER:
        _opt_in(cufunc, plan.shared_mem, default, plan.shapes[3], device.id)
    plan.ready.add(cufunc)


def _opt_in(cufunc, shared_mem, default, size, device_id):
    """Raise the kernel's dynamic shared-memory limit (``default`` bytes without the opt-in) to
    ``shared_mem`` and allow non-portable clusters, each when needed, once per kernel and device
    (the driver keeps both)."""
    from cuda.bindings import driver

    key = (int(cufunc.handle), device_id)
    allowed, non_portable = _OPTED_IN.get(key, (default, False))
    attrs = driver.CUfunction_attribute
    if shared_mem > allowed:
        _set_attribute(cufunc, attrs.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_mem, device_id)
        allowed = shared_mem
    if size > PORTABLE_CLUSTER and not non_portable:
        _set_attribute(cufunc, attrs.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, device_id)
        non_portable = True
    _OPTED_IN[key] = allowed, non_portable


def _set_attribute(cufunc, attribute, value, device_id):
    from cuda.bindings import driver

    err, = driver.cuKernelSetAttribute(attribute, value, cufunc.handle, device_id)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"cuKernelSetAttribute({attribute.name}, {value}) failed: {err.name}")


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
    shapes = _shapes(grid, block, cluster, shared_mem)
    if SIMULATOR:   # numba-cuda's CUDA simulator: its own launch; the blocks of a cluster run at once
        if (shapes, shared_mem) not in _SIMULATED:
            _check(shapes, shared_mem, launch_limits.H200)
            _SIMULATED.add((shapes, shared_mem))
        from .simulator import scheduler

        # the kernel is opted in to this much dynamic shared memory, as on the GPU (numba's own launch
        # of it may then take as much: the simulator's launch check reads this)
        scheduler.opt_in(kernel.py_func, shared_mem)

        with scheduler.clusters_of(shapes[2]):
            kernel[grid, block, stream, shared_mem](*args)
        return
    if type(kernel) not in _NUMBA_KERNELS and _mlir_kernel(kernel):
        from .mlir.launching import launch as mlir_launch

        mlir_launch(kernel, shapes, shared_mem, stream, args)
        return
    try:
        _launch_numba_cuda(kernel, shapes, shared_mem, stream, args)
    except RuntimeError as error:   # a by-value map's twin kept from another device's launches
        from .numba_cuda_hooks import launched_again

        launched_again(error, lambda: _launch_numba_cuda(kernel, shapes, shared_mem, stream, args))


def _launch_numba_cuda(kernel, shapes, shared_mem, stream, args):
    """Launch the numba-cuda ``kernel`` with its arguments prepared as numba's own launch does."""
    core_launch, prepared_launch, loaded_device, core_stream = _GPU or _gpu()
    overload, cufunc, kernelargs, retr = prepared_launch(kernel, args, stream)
    device = loaded_device(cufunc)
    plan = _plan(shapes, shared_mem, device)
    if cufunc not in plan.ready:
        _ready(plan, overload, cufunc, device)
    core_launch(core_stream(stream), plan.config, cufunc.kernel, *kernelargs)
    for writeback in retr:
        writeback()


_GPU = None       # what a launch on the GPU calls, imported at the first (not at numba_tma's import)
_NUMBA_KERNELS: set = set()   # dispatcher classes seen to be numba-cuda's (one set lookup per launch)


def _mlir_kernel(kernel) -> bool:
    """Whether ``kernel`` is a numba-cuda-mlir kernel (launched through :mod:`numba_tma.mlir.launching`);
    else its class is remembered as numba-cuda's."""
    if "numba_cuda_mlir" in sys.modules:
        from .intrinsics.mlir_adapter import is_kernel

        if is_kernel(kernel):
            return True
    _NUMBA_KERNELS.add(type(kernel))
    return False


def _gpu():
    """``(cuda.core's launch, prepared_launch, loaded_device, core_stream)``, imported once (tests
    put a stand-in GPU's here: ``tests/fake_gpu.py``)."""
    global _GPU
    if _GPU is None:
        from cuda.core import launch as core_launch

        from .numba_cuda_hooks import core_stream, loaded_device, prepared_launch

        _GPU = core_launch, prepared_launch, loaded_device, core_stream
    return _GPU


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
