"""Launch limits: one table per device, and the checks every launch path makes against it.

Who calls what:

* ``numba_tma.launch`` and a ``cluster_kernel``'s ``k[grid, block, stream, shared_mem]``:
  :func:`check` (on a GPU once per distinct launch shape and device, with the device's table;
  under the simulator with :data:`H200`), then, once per compiled kernel, :func:`check` again
  with the kernel's own figures (static shared memory, the most threads its registers allow)
  and :func:`check_multicast` with its constant multicast masks;
* numba's own ``kernel[grid, block, stream, shared_mem]``: on a GPU, when the driver refuses
  the launch, :func:`check` says why (nothing is added to a launch that works), and a kernel
  with constant multicast masks is refused (:func:`check_multicast`, once per kernel); under the
  simulator, :func:`check` before each launch;
* the simulator's shared-memory allocator: :func:`check_static` as the kernel's static shared
  arrays are allocated.

On a GPU the table is read from the device once per device (:func:`of_device`); under the
simulator it is :data:`H200`'s.

>>> check((1, 1, 1), (2048, 1, 1), 0, H200)
Traceback (most recent call last):
...
numba_tma.errors.LaunchError: block=(2048, 1, 1): 2048 threads per block; the simulated device (an H200) allows at most 1024
>>> check((4, 1, 1), (128, 1, 1), 100_000, H200, opted_in=False)
Traceback (most recent call last):
...
numba_tma.errors.LaunchError: shared_mem=100000: 100000 bytes of dynamic shared memory per block; without the opt-in the simulated device (an H200) allows at most 49152 per block (dynamic and static together), and numba's own launch does not opt in: launch with numba_tma.launch(..., shared_mem=100000) or a numba_tma.cluster_kernel, which do
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import LaunchError

PORTABLE_CLUSTER = 8     # blocks per cluster every device with clusters takes
MAX_CLUSTER = 16         # with the non-portable opt-in (sm_90 and newer; CUDA programming guide, clusters)


@dataclass(frozen=True)
class Limits:
    """What a device takes in one launch.  ``who`` names it in messages."""

    who: str
    threads_per_block: int
    block: tuple                  # the most threads in x, y, z
    grid: tuple                   # the most blocks in x, y, z
    shared_per_block: int         # the most shared memory per block (dynamic and static) with the opt-in
    shared_default: int           # the most without it; also the most static shared memory (ptxas)
    cluster: int                  # the most blocks per cluster (non-portable opt-in); 1: no clusters
    compute_capability: tuple = (9, 0)


H200 = Limits(
    # The H200's (compute capability 9.0) as the CUDA C++ Programming Guide's "Technical
    # Specifications per Compute Capability" table and the H200's device attributes give them:
    # MAX_THREADS_PER_BLOCK 1024, MAX_BLOCK_DIM_X/Y/Z 1024/1024/64, MAX_GRID_DIM_X/Y/Z
    # 2^31 - 1/65535/65535, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 232448 (227 KiB: 228 KiB per SM less
    # the 1 KiB the system reserves per block), MAX_SHARED_MEMORY_PER_BLOCK 49152 (48 KiB, also
    # the most static shared memory ptxas accepts); clusters of 8 blocks portably, 16 with
    # cudaFuncAttributeNonPortableClusterSizeAllowed (the guide's "Thread Block Clusters").
    who="the simulated device (an H200)", threads_per_block=1024, block=(1024, 1024, 64),
    grid=((1 << 31) - 1, 65535, 65535), shared_per_block=232448, shared_default=48 * 1024, cluster=MAX_CLUSTER)

_DEVICES: dict = {}      # device id -> its Limits


def of_device(device) -> Limits:
    """The limits of ``device`` (a numba ``Device``), read from its attributes once per device."""
    limits = _DEVICES.get(device.id)
    if limits is None:
        cc = tuple(device.compute_capability)
        name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
        limits = _DEVICES[device.id] = Limits(
            who=f"this device ({name})", threads_per_block=device.MAX_THREADS_PER_BLOCK,
            block=(device.MAX_BLOCK_DIM_X, device.MAX_BLOCK_DIM_Y, device.MAX_BLOCK_DIM_Z),
            grid=(device.MAX_GRID_DIM_X, device.MAX_GRID_DIM_Y, device.MAX_GRID_DIM_Z),
            shared_per_block=device.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            shared_default=device.MAX_SHARED_MEMORY_PER_BLOCK,
            cluster=MAX_CLUSTER if cc >= (9, 0) else 1, compute_capability=cc)
    return limits


def check(grid, block, shared_mem, limits: Limits, cluster=(1, 1, 1), static=0, kernel_threads=None,
          opted_in=True) -> None:
    """Refuse a launch of ``grid`` blocks (a 3-tuple, in blocks) of ``block`` threads, in clusters of
    ``cluster``, with ``shared_mem`` bytes of dynamic shared memory, that ``limits`` does not take.
    ``static``: the kernel's static shared memory; ``kernel_threads``: the most threads per block
    the compiled kernel allows (its registers); ``opted_in``: whether the launch raises the
    kernel's dynamic shared-memory limit above the default (``numba_tma.launch`` does, numba's
    own launch does not)."""
    who = limits.who
    threads = block[0] * block[1] * block[2]
    if threads > limits.threads_per_block:
        raise LaunchError(f"block={block}: {threads} threads per block; {who} allows at most "
                          f"{limits.threads_per_block}")
    for axis, n, most in zip("xyz", block, limits.block):
        if n > most:
            raise LaunchError(f"block={block}: {n} threads in {axis}; {who} allows at most {most} in {axis}")
    if kernel_threads is not None and threads > kernel_threads:
        raise LaunchError(f"block={block}: {threads} threads per block; this kernel allows at most {kernel_threads} "
                          "(the registers each thread uses limit its blocks: launch fewer threads, or compile with "
                          "max_registers=)")
    for axis, n, most in zip("xyz", grid, limits.grid):
        if n > most:
            raise LaunchError(f"grid={grid}: {n} blocks in {axis}; {who} allows at most {most} in {axis}")
    size = cluster[0] * cluster[1] * cluster[2]
    if size > limits.cluster:
        if limits.cluster == 1:
            raise LaunchError(f"cluster={cluster}: {who} has no thread-block clusters (compute capability "
                              f"{limits.compute_capability[0]}.{limits.compute_capability[1]}; clusters need 9.0)")
        raise LaunchError(f"cluster={cluster}: {size} blocks per cluster; {who} allows at most {limits.cluster} "
                          f"({PORTABLE_CLUSTER} portably; numba_tma.launch sets the non-portable opt-in above that)")
    static_part = f", of which the kernel's static shared arrays take {static}" if static else ""
    if shared_mem + static > limits.shared_per_block:
        raise LaunchError(f"shared_mem={shared_mem}: {shared_mem} bytes of dynamic shared memory per block; {who} "
                          f"allows at most {limits.shared_per_block} bytes of shared memory per block (dynamic and "
                          f"static together, with the opt-in){static_part}")
    if not opted_in and shared_mem + static > limits.shared_default:
        raise LaunchError(f"shared_mem={shared_mem}: {shared_mem} bytes of dynamic shared memory per block; without "
                          f"the opt-in {who} allows at most {limits.shared_default} per block (dynamic and static "
                          f"together{static_part}), and numba's own launch does not opt in: launch with "
                          f"numba_tma.launch(..., shared_mem={shared_mem}) or a numba_tma.cluster_kernel, which do")


def check_static(static, limits: Limits, where="") -> None:
    """Refuse ``static`` bytes of static shared arrays in one kernel: above 48 KB ptxas refuses the
    kernel (``uses too much shared data``), so the simulator refuses it too."""
    if static > limits.shared_default:
        raise LaunchError(f"{where}the kernel's static shared arrays take {static} bytes; at most "
                          f"{limits.shared_default} bytes of shared memory per block can be static (ptxas refuses the "
                          "kernel on the GPU): declare the rest as dynamic shared memory (cuda.shared.array(0, ...), "
                          "sized by shared_mem= at launch)")


def check_multicast(masks, cluster, launch=None) -> None:
    """Refuse a launch in clusters of ``cluster`` blocks of a kernel whose constant multicast
    ``masks`` (``((where, mask), ...)``: the op or helper, the mask) name a block outside the
    cluster.  ``launch`` names the launch in the message (default ``cluster=...``)."""
    size = cluster[0] * cluster[1] * cluster[2]
    for where, mask in masks:
        if mask.bit_length() > size:
            ranks = [r for r in range(mask.bit_length()) if mask >> r & 1]
            raise LaunchError(f"{launch or f'cluster={cluster}'}: {size} block{'s' * (size > 1)} per cluster, but the "
                              f"kernel multicasts with the constant mask {mask:#x} ({where}: ranks "
                              f"{', '.join(map(str, ranks))}), which names block {mask.bit_length() - 1}: launch "
                              f"with clusters of at least {mask.bit_length()} blocks")


def check_shapes(shapes, shared_mem, limits, **kernel) -> None:
    """``shapes`` — ``(grid in clusters, block, cluster, blocks per cluster)``, what
    :func:`numba_tma.launch` makes of a launch's geometry — with ``shared_mem`` against ``limits``
    (and the kernel's: ``static``, ``kernel_threads``)."""
    clusters, block, cluster, _ = shapes
    check(tuple(c * s for c, s in zip(clusters, cluster)), block, shared_mem, limits, cluster=cluster, **kernel)
