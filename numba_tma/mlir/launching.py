"""``numba_tma.launch`` of numba-cuda-mlir kernels: the same argument checks and ``LaunchError``
words as for numba-cuda's (``numba_tma.launch`` checks the shapes first), the launch checked
against the device's limits once per distinct launch (:mod:`numba_tma.launch_limits`), then
numba-cuda-mlir's own launcher, ``kernel[grid, block, stream, shared_mem, cluster]``, which makes
clusters and opts in to dynamic shared memory above 48 KB itself.  The kernel's own limits (its
static shared memory, the threads its registers allow, its constant multicast masks) are not read
on this host: the driver's error names those."""

from .. import launch_limits
from ..intrinsics.mlir_adapter import cuda, is_kernel

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
    kernel[(grid, block, stream, shared_mem) + ((cluster,) if size > 1 else ())](*args)
