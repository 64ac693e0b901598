"""Launch any ``@cuda.jit`` kernel with thread-block clusters and any dynamic shared memory the
device allows — what numba's ``kernel[grid, block, stream, shmem]`` cannot express.

    numba_tma.launch(kernel, grid, block, *args, cluster=(2, 1, 1), shared_mem=200_000, stream=s)

``grid`` is in blocks, as in numba, and must be divisible by the cluster shape.  Clusters of up to
8 blocks are portable; up to 16 on devices that allow it (the non-portable opt-in is set
automatically).  Shared memory above 48 KB is opted in automatically, up to the device's limit.
Arguments are prepared exactly as numba's own launch prepares them (arrays of numba, CuPy and
PyTorch, scalars, records, by-value ``TensorMap``\\ s; host arrays are copied back afterwards).
"""

from __future__ import annotations

STATIC_SHARED_LIMIT = 48 * 1024
PORTABLE_CLUSTER = 8


class LaunchError(ValueError):
    """A launch the device or the kernel cannot take, named before anything runs."""


def _dims(name, value):
    dims = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims):
        raise LaunchError(f"{name}={value!r}: must be a positive integer or a tuple of 1 to 3 positive integers")
    return dims + (1,) * (3 - len(dims))


def _set_attribute(cufunc, attribute, value, device_id):
    from cuda.bindings import driver

    err, = driver.cuKernelSetAttribute(attribute, value, cufunc.handle, device_id)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"cuKernelSetAttribute({attribute.name}, {value}) failed: {err.name}")


def launch(kernel, grid, block, *args, cluster=(1, 1, 1), shared_mem=0, stream=0):
    """Launch ``kernel`` (a ``@cuda.jit`` dispatcher) on ``args`` with ``grid`` blocks of ``block``
    threads, grouped in clusters of shape ``cluster``, with ``shared_mem`` bytes of dynamic shared
    memory, on ``stream`` (a numba stream, or 0).

    Example::

        numba_tma.launch(k, (8, 4), 128, a, out, cluster=(2, 1, 1), shared_mem=150_000)
    """
    from cuda.bindings import driver
    from cuda.core import LaunchConfig
    from cuda.core import launch as core_launch
    from numba import cuda
    from numba.cuda.cudadrv import driver as numba_driver

    from .numba_cuda_hooks import prepared_launch

    grid, block, cluster = _dims("grid", grid), _dims("block", block), _dims("cluster", cluster)
    if any(g % c for g, c in zip(grid, cluster)):
        raise LaunchError(f"grid={grid}: must be divisible by cluster={cluster} in every dimension (grid counts "
                          "blocks, as in numba)")
    device = cuda.get_current_device()
    size = cluster[0] * cluster[1] * cluster[2]
    limit = 16 if device.compute_capability >= (9, 0) else 1
    if size > limit:
        raise LaunchError(f"cluster={cluster}: {size} blocks per cluster; this device allows at most {limit} "
                          f"({PORTABLE_CLUSTER} portably)")
    if not isinstance(shared_mem, int) or shared_mem < 0:
        raise LaunchError(f"shared_mem={shared_mem!r}: must be a non-negative number of bytes")
    most = device.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    if shared_mem > most:
        raise LaunchError(f"shared_mem={shared_mem}: above this device's limit of {most} bytes of dynamic shared "
                          "memory per block (less the kernel's static shared arrays)")
    cufunc, kernelargs, retr = prepared_launch(kernel, args, stream)
    attrs = driver.CUfunction_attribute
    if shared_mem > STATIC_SHARED_LIMIT:
        _set_attribute(cufunc, attrs.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_mem, device.id)
    if size > PORTABLE_CLUSTER:
        _set_attribute(cufunc, attrs.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, device.id)
    config = LaunchConfig(grid=tuple(g // c for g, c in zip(grid, cluster)), cluster=cluster, block=block,
                          shmem_size=shared_mem)
    core_launch(numba_driver._to_core_stream(stream), config, cufunc.kernel, *kernelargs)
    for writeback in retr:
        writeback()
