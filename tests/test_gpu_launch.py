"""Launch limits on the GPU: ``numba_tma.launch``, a ``cluster_kernel`` and numba's own syntax (a map
among the arguments too) refuse, naming the argument, the value, the device's limit and the rule,
what the device refuses; the kernel's own figures (static shared memory, the threads its registers
allow) count; a kernel whose constant multicast mask names a block outside the cluster is refused."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import LaunchError, TensorMap, cluster, cluster_kernel, fence, launch, launch_limits, mbarrier, tma
from numba_tma.numba_cuda.launching import kernel_figures

from gpu_support import bounded_wait

pytestmark = pytest.mark.gpu

DEVICE = r"this device \(.*\) allows at most"


@cuda.jit
def count(out):
    if cuda.threadIdx.x + cuda.threadIdx.y + cuda.threadIdx.z == 0:
        cuda.atomic.add(out, 0, 1)


@cuda.jit
def with_map(desc, out):
    if cuda.threadIdx.x == 0:
        out[0] = desc.box_bytes


def _out():
    return cuda.to_device(np.zeros(1, np.int32))


def test_the_devices_table_is_read_from_the_device():
    device = cuda.get_current_device()
    limits = launch_limits.of_device(device)
    assert limits is launch_limits.of_device(device)
    assert (limits.threads_per_block, limits.block) == (device.MAX_THREADS_PER_BLOCK, (
        device.MAX_BLOCK_DIM_X, device.MAX_BLOCK_DIM_Y, device.MAX_BLOCK_DIM_Z))
    assert limits.shared_per_block == device.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    if "H200" in str(device.name) or "H100" in str(device.name):   # the simulator's defaults are the H200's
        h200 = launch_limits.H200
        assert (limits.threads_per_block, limits.block, limits.grid, limits.shared_per_block, limits.shared_default,
                limits.cluster) == (h200.threads_per_block, h200.block, h200.grid, h200.shared_per_block,
                                    h200.shared_default, h200.cluster)


@pytest.mark.parametrize("run,match", [
    (lambda out: launch(count, 1, 2048, out), rf"block=\(2048, 1, 1\): 2048 threads per block; {DEVICE} 1024"),
    (lambda out: launch(count, 1, (1, 1, 128), out), rf"block=\(1, 1, 128\): 128 threads in z; {DEVICE} 64 in z"),
    (lambda out: launch(count, (1, 65536), 32, out), rf"grid=\(1, 65536, 1\): 65536 blocks in y; {DEVICE} 65535"),
    (lambda out: launch(count, 1, 32, out, shared_mem=232449), rf"shared_mem=232449: .*{DEVICE} 232448 bytes"),
    (lambda out: cluster_kernel(cluster=(2, 1, 1))(count)[2, 2048](out), r"block=\(2048, 1, 1\): 2048 threads"),
    (lambda out: count[1, 2048](out), rf"block=\(2048, 1, 1\): 2048 threads per block; {DEVICE} 1024"),
    (lambda out: count[(1, 65536), 32](out), rf"grid=\(1, 65536, 1\): 65536 blocks in y; {DEVICE} 65535"),
    (lambda out: count[1, (1, 1, 128)](out), r"block=\(1, 1, 128\): 128 threads in z"),
    (lambda out: count[1, 32, 0, 300_000](out), rf"shared_mem=300000: .*{DEVICE} 232448 bytes"),
    (lambda out: with_map[1, 2048](TensorMap.tiled(cuda.to_device(np.zeros((8, 32), np.float32)), (8, 32)), out),
     rf"block=\(2048, 1, 1\): 2048 threads per block; {DEVICE} 1024"),
], ids=["launch-threads", "launch-z", "launch-grid-y", "launch-shared", "cluster_kernel-threads", "numba-threads",
        "numba-grid-y", "numba-z", "numba-shared", "numba-with-a-map"])
def test_every_launch_path_names_the_limit(run, match):
    out = _out()
    with pytest.raises(LaunchError, match=match):
        run(out)
    cuda.synchronize()
    assert out.copy_to_host()[0] == 0


@cuda.jit
def dynamic_user(out):
    dyn = cuda.shared.array(0, numba.uint8)
    dyn[cuda.threadIdx.x] = 1
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        out[0] += dyn[1]


def test_numbas_own_launch_above_48_kb_says_it_does_not_opt_in_until_numba_tma_has():
    out = _out()
    with pytest.raises(LaunchError, match=r"shared_mem=100000: .* without the opt-in .* numba's own launch does not "
                                          r"opt in: launch with numba_tma.launch\(..., shared_mem=100000\)") as caught:
        dynamic_user[1, 32, 0, 100_000](out)
    assert caught.value.__cause__ is not None            # the driver's own error, chained
    launch(dynamic_user, 1, 32, out, shared_mem=100_000)   # opts the kernel in ...
    dynamic_user[1, 32, 0, 100_000](out)                    # ... and the driver keeps it
    assert out.copy_to_host()[0] == 2


STATIC = 40 * 1024
STATIC_WORDS = STATIC // 4     # a constant shape (numba reads globals as constants, not expressions of them)


@cuda.jit
def static_40k(out):
    fixed = cuda.shared.array(STATIC_WORDS, numba.int32)
    dyn = cuda.shared.array(0, numba.int32)
    fixed[cuda.threadIdx.x] = 1
    dyn[cuda.threadIdx.x] = 2
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        out[0] += fixed[1] + dyn[1]


def test_the_kernels_static_shared_memory_counts():
    out = _out()
    launch(static_40k, 1, 32, out, shared_mem=20_000)     # 60 KB in all: opted in (the default is 48 KB - static)
    assert out.copy_to_host()[0] == 3
    most = launch_limits.of_device(cuda.get_current_device()).shared_per_block - STATIC
    launch(static_40k, 1, 32, out, shared_mem=most)
    assert out.copy_to_host()[0] == 6
    with pytest.raises(LaunchError, match=rf"shared_mem={most + 1}: .* of which the kernel's static shared arrays "
                                          rf"take {STATIC}"):
        launch(static_40k, 1, 32, out, shared_mem=most + 1)


_N = 96
exec("def _heavy(src, out):\n    i = cuda.grid(1)\n"
     + "".join(f"    a{j} = src[(i + {j}) % src.size]\n" for j in range(_N))
     + "    for _ in range(src.size):\n"
     + "".join(f"        a{j} = a{j} * a{(j + 1) % _N} + 1.0\n" for j in range(_N))
     + "    out[i] = " + " + ".join(f"a{j}" for j in range(_N)) + "\n")
heavy = cuda.jit(_heavy)     # float64 values live across a loop: about 2 registers each


def test_the_threads_the_kernels_registers_allow_count():
    src, out = cuda.to_device(np.ones(64)), cuda.to_device(np.zeros(1024))
    launch(heavy, 1, 32, src, out)
    overload = next(iter(heavy.overloads.values()))
    _, most = kernel_figures(overload._codelibrary.get_cufunc())
    if most >= 1024:
        pytest.skip(f"ptxas fitted the kernel in registers for {most} threads")
    with pytest.raises(LaunchError, match=rf"block=\(1024, 1, 1\): 1024 threads per block; this kernel allows at "
                                          rf"most {most} \(the registers each thread uses"):
        launch(heavy, 1, 1024, src, out)
    with pytest.raises(LaunchError, match=rf"this kernel allows at most {most}"):
        heavy[1, 1024](src, out)


@cuda.jit
def multicast_from_rank_0(desc, out, status):
    """Rank 0 loads the tile and multicasts it to blocks 0 and 1 (a constant mask)."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cluster.sync()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, 8 * 32 * 4)
        if cluster.ctarank() == 0:
            tma.load(desc, tile, (0, 0), bars, multicast=0b11)
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, 8 * 32, cuda.blockDim.x):
        out[cuda.blockIdx.x, i // 32, i % 32] = tile[i // 32, i % 32]
    cluster.sync()


def test_a_constant_multicast_mask_needs_a_cluster_holding_its_blocks():
    host = np.arange(8 * 32, dtype=np.float32).reshape(8, 32)
    desc = TensorMap.tiled(cuda.to_device(host), (8, 32))
    out, status = cuda.to_device(np.zeros((4, 8, 32), np.float32)), cuda.to_device(np.zeros(1, np.int32))
    rule = (r"the kernel multicasts with the constant mask 0x3 \(tma.load: ranks 0, 1\), which names block 1: launch "
            r"with clusters of at least 2 blocks")
    with pytest.raises(LaunchError, match=rf"cluster=\(1, 1, 1\): 1 block per cluster, but {rule}"):
        launch(multicast_from_rank_0, 2, 32, desc, out, status)
    with pytest.raises(LaunchError, match=rf"numba's own launch \(no clusters\): 1 block per cluster, but {rule}"):
        multicast_from_rank_0[2, 32](desc, out, status)
    launch(multicast_from_rank_0, 4, 32, desc, out, status, cluster=(2, 1, 1))
    assert status.copy_to_host()[0] == 0
    np.testing.assert_array_equal(out.copy_to_host(), np.broadcast_to(host, (4, 8, 32)))


@cuda.jit
def first_box(desc, out):
    """Thread 0 loads box (0, 0) of ``desc`` (8 x 32 elements of 4 bytes) and every thread copies an
    element's bits into ``out`` (uint32)."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.uint32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, 1024)
        tma.load(desc, tile, (0, 0), bars)
    bounded_wait(bars, 0, out[8:, 0])
    for i in range(cuda.threadIdx.x, 256, cuda.blockDim.x):
        out[i // 32, i % 32] = tile[i // 32, i % 32]


def test_memory_at_a_reused_address_gets_a_fresh_map_and_type():
    """The caches of maps (layouts by geometry) and of launches (by shape and kernel) key on nothing
    that memory reuse can make stale: arrays at one address with other shapes and dtypes (views of
    one allocation, and an allocation made after freeing another) get maps of their own, and the
    kernel their own data."""
    big = cuda.device_array(4096, np.float32)
    views = [big[:512].reshape(16, 32), big[:512].reshape(8, 64), big[:1024].reshape(32, 32),
             big[:1024].view(np.int32).reshape(16, 64), big[:512].reshape(16, 32)]
    context = cuda.current_context()
    for i in range(len(views) + 1):
        if i < len(views):
            a = views[i]
        else:                                     # freed, then allocated again (perhaps elsewhere)
            del big, views
            context.deallocations.clear()
            a = cuda.device_array((8, 32), np.int32)
        host = (np.arange(a.size).reshape(a.shape) + 1000 * i).astype(a.dtype)
        a.copy_to_device(host)
        desc = TensorMap.tiled(a, (8, 32))
        assert tuple(reversed(desc.fields.global_dim)) == a.shape and desc.address == a.device_ctypes_pointer.value
        out = cuda.to_device(np.zeros((9, 32), np.uint32))
        launch(first_box, 1, 64, desc, out)
        np.testing.assert_array_equal(out.copy_to_host()[:8], host[:8, :32].view(np.uint32))
