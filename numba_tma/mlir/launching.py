"""``numba_tma.launch`` of numba-cuda-mlir kernels: the same argument checks and ``LaunchError``
words as for numba-cuda's (``numba_tma.launch`` checks the shapes first), the launch checked
against the device's limits once per distinct launch (:mod:`numba_tma.launch_limits`), then
numba-cuda-mlir's own launcher, ``kernel[grid, block, stream, shared_mem, cluster]``, which makes
clusters and opts in to dynamic shared memory above 48 KB itself.  The kernel's own limits (its
static shared memory beside the dynamic, the threads its registers allow) are read when the driver
refuses the launch, which then raises a ``LaunchError`` naming them (numba-cuda-mlir picks and
compiles the kernel inside its launcher, so they are not known before).  Its constant multicast
masks are not read on this host."""

from .. import launch_limits
from ..errors import LaunchError
from ..intrinsics.hosts.mlir_adapter import cuda, is_kernel, kernel_figures

__all__ = ["is_kernel", "launch"]

_CHECKED: set = set()   # (shapes, shared_mem, device id) checked against the device


def launch(kernel, shapes, shared_mem, stream, args) -> None:
    """Launch the numba-cuda-mlir ``kernel`` on ``args`` with ``shapes`` (``numba_tma.launch``'s
    checked ``(grid in clusters, block, cluster, blocks per cluster)``)."""
    clusters, block, cluster, size = shapes
    grid = tuple(c * s for c, s in zip(clusters, cluster))
    device = cuda.get_current_device()
    key = (shapes, shared_mem, device.id)
    if key not in _CHECKED:
        launch_limits.check(grid, block, shared_mem, launch_limits.of_device(device), cluster=cluster)
        _CHECKED.add(key)
    try:
        kernel[(grid, block, stream, shared_mem) + ((cluster,) if size > 1 else ())](*args)
    except Exception as refusal:
        explain(refusal, kernel, args, grid, block, shared_mem, cluster, launch_limits.of_device(device))
        raise


def explain(refusal, kernel, args, grid, block, shared_mem, cluster, limits) -> None:
    """Raise a ``LaunchError`` (from the driver's ``refusal``) if the kernel's own figures explain
    it: its static shared memory with ``shared_mem``, or fewer threads than ``block`` allowed by its
    registers.  Returns if they do not, or cannot be read (the refusal then stands)."""
    try:
        static, most_threads = kernel_figures(kernel, args)
    except Exception:   # noqa: BLE001 - the refusal is the error to report
        return
    try:
        launch_limits.check(grid, block, shared_mem, limits, cluster=cluster, static=static,
                            kernel_threads=most_threads)
    except LaunchError as why:
        raise why from refusal
