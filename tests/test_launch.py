"""numba_tma.launch: argument errors named before anything touches the device (no GPU needed)."""

import numpy as np
import pytest
from numba import cuda

from numba_tma import LaunchError, launch


@cuda.jit
def noop(out):
    out[0] = 1


@pytest.mark.parametrize("grid,block,cluster,match", [
    (6, 32, (4, 1, 1), r"grid=\(6, 1, 1\): must be divisible by cluster=\(4, 1, 1\) in every dimension"),
    ((4, 3), 32, (2, 2), r"grid=\(4, 3, 1\): must be divisible by cluster=\(2, 2, 1\)"),
    (0, 32, (1, 1, 1), r"grid=0: must be a positive integer or a tuple of 1 to 3 positive integers"),
    (4, (32, 2, 1, 1), (1, 1, 1), r"block=\(32, 2, 1, 1\): must be a positive integer or a tuple of 1 to 3"),
    (4, 32, (2.0, 1, 1), r"cluster=\(2.0, 1, 1\): must be a positive integer"),
])
def test_bad_shapes_are_refused(grid, block, cluster, match):
    with pytest.raises(LaunchError, match=match):
        launch(noop, grid, block, np.zeros(1, np.int32), cluster=cluster)


def test_a_cached_shape_never_answers_for_a_float():
    from numba_tma.launch import geometry as _shapes

    assert _shapes(4, 32, (2, 1, 1), 0)[3] == 2
    assert _shapes(4, 32, tuple([2, 1, 1]), 0) == _shapes(4, 32, (2, 1, 1), 0)   # equal, other objects
    with pytest.raises(LaunchError, match=r"cluster=\(2.0, 1, 1\)"):
        _shapes(4, 32, (2.0, 1, 1), 0)
    with pytest.raises(LaunchError, match=r"cluster=\(2, True, 1\)"):
        _shapes(4, 32, (2, True, 1), 0)
    with pytest.raises(LaunchError, match=r"shared_mem=False: must be a non-negative number of bytes"):
        _shapes(4, 32, (2, 1, 1), False)
    assert _shapes([4], 32, [2, 1, 1], 0) == _shapes(4, 32, (2, 1, 1), 0)   # lists: unhashable, checked each time


def test_cluster_kernel_keeps_numbas_launch_syntax():
    from numba_tma import ClusterKernel, cluster_kernel

    k = cluster_kernel(cluster=(2, 1))(noop)
    assert isinstance(k, ClusterKernel) and k.dispatcher is noop and k.cluster == (2, 1, 1)
    assert callable(k[4, 32]) and callable(k[4, 32, 0, 1024])
    with pytest.raises(LaunchError, match=r"takes \[grid, block\], \[grid, block, stream\] or"):
        k[4]
    with pytest.raises(LaunchError, match=r"grid=\(3, 1, 1\): must be divisible by cluster=\(2, 1, 1\)"):
        k[3, 32](np.zeros(1, np.int32))
    plain = cluster_kernel(cluster=4)(lambda out: None)
    assert plain.cluster == (4, 1, 1) and hasattr(plain.dispatcher, "overloads")
    with pytest.raises(LaunchError, match=r"cluster=0: must be a positive integer"):
        cluster_kernel(cluster=0)


# -- the limit table and its checks (numba_tma.launch_limits), with fake devices -------------------

import re
from types import SimpleNamespace

import numba

from numba_tma import launch_limits
from numba_tma.launch_limits import H200, check, check_multicast, check_static

SIM = "the simulated device \\(an H200\\)"


class FakeDevice:
    """A numba Device's attributes as the H100 / A100 report them; counts the attribute reads."""

    def __init__(self, id, cc=(9, 0), optin=232448, name="NVIDIA H100 80GB HBM3"):
        self.id, self.compute_capability, self.name, self.reads = id, cc, name, 0
        self._attrs = dict(MAX_THREADS_PER_BLOCK=1024, MAX_BLOCK_DIM_X=1024, MAX_BLOCK_DIM_Y=1024, MAX_BLOCK_DIM_Z=64,
                           MAX_GRID_DIM_X=2**31 - 1, MAX_GRID_DIM_Y=65535, MAX_GRID_DIM_Z=65535,
                           MAX_SHARED_MEMORY_PER_BLOCK_OPTIN=optin, MAX_SHARED_MEMORY_PER_BLOCK=49152)

    def __getattr__(self, name):
        if name.startswith("MAX_"):
            self.reads += 1
            return self._attrs[name]
        raise AttributeError(name)


def test_the_simulators_limits_are_the_h200s():
    assert (H200.threads_per_block, H200.block, H200.grid) == (1024, (1024, 1024, 64), (2**31 - 1, 65535, 65535))
    assert (H200.shared_per_block, H200.shared_default, H200.cluster) == (232448, 49152, 16)


def test_a_devices_limits_are_read_once_per_device():
    device = FakeDevice(id=1001)
    limits = launch_limits.of_device(device)
    assert limits.shared_per_block == 232448 and limits.block == (1024, 1024, 64) and limits.cluster == 16
    assert limits.who == "this device (NVIDIA H100 80GB HBM3)"
    reads = device.reads
    assert launch_limits.of_device(device) is limits and device.reads == reads
    assert launch_limits.of_device(FakeDevice(id=1002, cc=(8, 0), optin=166912)).cluster == 1


@pytest.mark.parametrize("grid,block,cluster,shared_mem,match", [
    ((1, 1, 1), (2048, 1, 1), (1, 1, 1), 0,
     rf"block=\(2048, 1, 1\): 2048 threads per block; {SIM} allows at most 1024$"),
    ((1, 1, 1), (32, 64, 1), (1, 1, 1), 0, r"block=\(32, 64, 1\): 2048 threads per block"),
    ((1, 1, 1), (1, 1, 128), (1, 1, 1), 0, rf"block=\(1, 1, 128\): 128 threads in z; {SIM} allows at most 64 in z"),
    ((2**31, 1, 1), (32, 1, 1), (1, 1, 1), 0,
     rf"grid=\(2147483648, 1, 1\): 2147483648 blocks in x; {SIM} allows at most 2147483647 in x"),
    ((1, 65536, 1), (32, 1, 1), (1, 1, 1), 0, r"grid=\(1, 65536, 1\): 65536 blocks in y; .* at most 65535 in y"),
    ((1, 1, 65536), (32, 1, 1), (1, 1, 1), 0, r"65536 blocks in z"),
    ((32, 1, 1), (32, 1, 1), (32, 1, 1), 0,
     rf"cluster=\(32, 1, 1\): 32 blocks per cluster; {SIM} allows at most 16 \(8 portably"),
    ((8, 4, 1), (32, 1, 1), (8, 4, 1), 0, r"cluster=\(8, 4, 1\): 32 blocks per cluster"),
    ((1, 1, 1), (32, 1, 1), (1, 1, 1), 232449,
     rf"shared_mem=232449: 232449 bytes of dynamic shared memory per block; {SIM} allows at most 232448 bytes of "
     r"shared memory per block \(dynamic and static together, with the opt-in\)$"),
])
def test_each_limit_is_refused_naming_the_argument_the_value_and_the_limit(grid, block, cluster, shared_mem, match):
    with pytest.raises(LaunchError, match=match):
        check(grid, block, shared_mem, H200, cluster=cluster)


def test_the_largest_launch_of_each_kind_passes():
    check((2**31 - 1, 65535, 65535), (1024, 1, 1), 232448, H200)
    check((16, 1, 1), (1, 1024, 1), 0, H200, cluster=(16, 1, 1))
    check((4, 4, 1), (16, 16, 4), 232448 - 1024, H200, cluster=(4, 4, 1), static=1024, kernel_threads=1024)
    check((1, 1, 1), (32, 1, 1), 49152, H200, opted_in=False)


def test_the_kernels_own_figures_count():
    with pytest.raises(LaunchError, match=r"shared_mem=232000: .* of which the kernel's static shared arrays take "
                                          r"1024$"):
        check((1, 1, 1), (32, 1, 1), 232000, H200, static=1024)
    with pytest.raises(LaunchError, match=r"block=\(1024, 1, 1\): 1024 threads per block; this kernel allows at most "
                                          r"512 \(the registers each thread uses"):
        check((1, 1, 1), (1024, 1, 1), 0, H200, kernel_threads=512)
    with pytest.raises(LaunchError, match=r"shared_mem=49000: .*without the opt-in .* at most 49152 per block "
                                          r"\(dynamic and static together, of which the kernel's static shared arrays "
                                          r"take 1024\), and numba's own launch does not opt in: launch with "
                                          r"numba_tma.launch\(..., shared_mem=49000\)"):
        check((1, 1, 1), (32, 1, 1), 49000, H200, static=1024, opted_in=False)


def test_clusters_on_a_device_without_them():
    limits = launch_limits.of_device(FakeDevice(id=1003, cc=(8, 6), name="NVIDIA A10"))
    with pytest.raises(LaunchError, match=r"cluster=\(2, 1, 1\): this device \(NVIDIA A10\) has no thread-block "
                                          r"clusters \(compute capability 8.6; clusters need 9.0\)"):
        check((2, 1, 1), (32, 1, 1), 0, limits, cluster=(2, 1, 1))
    check((2, 1, 1), (32, 1, 1), 0, limits)


def test_static_shared_memory_above_48_kb_is_refused():
    check_static(49152, H200)
    with pytest.raises(LaunchError, match=r"the kernel's static shared arrays take 49156 bytes; at most 49152 bytes "
                                          r"of shared memory per block can be static \(ptxas refuses the kernel"):
        check_static(49156, H200)


def test_a_constant_mask_needs_a_cluster_holding_its_blocks():
    check_multicast((("tma.load", 0b1111), ("bulk.load", 1)), (4, 1, 1))
    check_multicast((("tma.load", 0b0101),), (1, 3, 1))
    with pytest.raises(LaunchError, match=r"cluster=\(2, 1, 1\): 2 blocks per cluster, but the kernel multicasts with "
                                          r"the constant mask 0xa \(tma.load: ranks 1, 3\), which names block 3: launch "
                                          r"with clusters of at least 4 blocks"):
        check_multicast((("tma.load", 0b1010),), (2, 1, 1))


# -- numba_tma.launch on a GPU: the per-kernel checks, with fake objects (no driver call) ----------

def _kernel_plan(device, grid=(4, 1, 1), block=(128, 1, 1), cluster=(1, 1, 1), shared_mem=0):
    from numba_tma.gpu.launching import Plan
    from numba_tma.launch import geometry

    return Plan(config=None, shapes=geometry(grid, block, cluster, shared_mem), shared_mem=shared_mem)


def _fake_kernel(static=0, maxthreads=1024, masks=()):
    ir_text = "\n".join(f'call void asm "// numba_tma.multicast {w} {m:#x}", ""()' for w, m in masks)
    overload = SimpleNamespace(_codelibrary=SimpleNamespace(llvm_strs=[ir_text]))
    return overload, FakeFunction(attrs=SimpleNamespace(shared=static, maxthreads=maxthreads), handle=1)


class FakeFunction(SimpleNamespace):
    """A loaded kernel (numba's ``CudaPythonFunction``): hashed by identity, as it is."""

    __hash__ = object.__hash__


def test_launch_checks_each_compiled_kernel_once_per_launch_shape():
    from numba_tma.gpu.launching import ready as _ready

    device = FakeDevice(id=1004)
    plan = _kernel_plan(device, shared_mem=40 * 1024)
    overload, cufunc = _fake_kernel(static=1024)
    _ready(plan, overload, cufunc, device)      # 41 KB in all: no opt-in, no driver call
    assert cufunc in plan.ready
    big = _kernel_plan(device, shared_mem=232448 - 512)
    with pytest.raises(LaunchError, match=r"shared_mem=231936: .* at most 232448 bytes .* of which the kernel's "
                                          r"static shared arrays take 1024"):
        _ready(big, overload, cufunc, device)
    with pytest.raises(LaunchError, match=r"block=\(512, 1, 1\): 512 threads per block; this kernel allows at most "
                                          r"256"):
        _ready(_kernel_plan(device, block=(512, 1, 1)), *_fake_kernel(maxthreads=256), device)
    masked = _fake_kernel(masks=[("tma.load", 0b1111), ("cluster.mask_row(2, 1)", 0b1100)])
    _ready(_kernel_plan(device, grid=(8, 1, 1), cluster=(4, 1, 1)), *masked, device)
    with pytest.raises(LaunchError, match=r"cluster=\(2, 2, 1\): 4 blocks per cluster, .*"):
        _ready(_kernel_plan(device, grid=(4, 2, 1), cluster=(2, 2, 1)), *_fake_kernel(masks=[("tma.load", 1 << 4)]),
               device)
    with pytest.raises(LaunchError, match=r"cluster=\(2, 1, 1\): 2 blocks per cluster, but the kernel multicasts "
                                          r"with the constant mask 0xf \(tma.load: ranks 0, 1, 2, 3\)"):
        _ready(_kernel_plan(device, cluster=(2, 1, 1)), *masked, device)


# -- a kernel's constant multicast masks, read from its compiled code (no GPU) --------------------

@cuda.jit(device=True)
def _issue_constant(desc, tile, bars):
    numba_tma_tma.load(desc, tile, (0, 0), bars, multicast=0b1010)


import numba_tma.tma as numba_tma_tma  # noqa: E402
from numba_tma import TensorMap, bulk, cluster, tlx  # noqa: E402


def _multicasting(desc, src, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((32, 64), numba.float32, alignment=128)
    _issue_constant(desc, tile, bars)                                              # in a device function
    numba_tma_tma.load(desc, tile, (0, 0), bars, multicast=cluster.mask_row(2, 1))  # a helper's constant
    numba_tma_tma.load(desc, tile, (0, 0), bars, multicast=numba.uint16(out[0]))    # a run-time mask: not counted
    bulk.load(tile, src, 256, bars, multicast=3)
    tlx.async_descriptor_load(desc, tile, (0, 0), bars, multicast_targets=0b100)     # TLX's spelling
    out[0] = tile[0, 0]


def test_the_constant_masks_of_a_kernel_and_its_device_functions_are_recorded():
    from numba.cuda.compiler import _compile_pyfunc_with_fixup

    from numba_tma import inspect
    from numba_tma.numba_cuda.launching import constant_multicast_masks

    sig = (TensorMap.numba_type("float32", (32, 64)), numba.float32[::1], numba.float32[::1])
    lib, _ = _compile_pyfunc_with_fixup(_multicasting, sig, device=False, abi="numba", cc=(9, 0, "a"))
    overload = SimpleNamespace(_codelibrary=lib)
    assert constant_multicast_masks(overload) == (("tma.load", 0b1010), ("cluster.mask_row(2, 1)", 0b1100),
                                                  ("tma.load", 0b100), ("bulk.load", 3))
    assert constant_multicast_masks(overload) is constant_multicast_masks(overload)   # read once
    ptx = inspect.ptx(_multicasting, sig)
    assert "numba_tma.multicast" not in ptx and ptx.count(".multicast::cluster") == 5   # the PTX is unchanged


def test_numbas_own_launch_refuses_a_kernel_whose_constant_mask_needs_a_cluster(monkeypatch):
    from numba_tma.numba_cuda import launching

    launched = []
    monkeypatch.setattr(launching, "_kernel_launch", lambda self, *a: launched.append(a))
    overload, _ = _fake_kernel(masks=[("tma.load", 0b11)])
    for _ in range(2):    # refused each time (the reason is kept on the kernel)
        with pytest.raises(LaunchError, match=re.escape(
                "numba's own launch (no clusters): 1 block per cluster, but the kernel multicasts with the constant "
                "mask 0x3 (tma.load: ranks 0, 1), which names block 1: launch with clusters of at least 2 blocks "
                "(numba_tma.launch(..., cluster=...) or a numba_tma.cluster_kernel)")):
            launching.launch_checked(overload, (), (1, 1, 1), (32, 1, 1))
    plain, _ = _fake_kernel(masks=[("tma.load", 0b1)])      # only its own block: fine
    launching.launch_checked(plain, (), (1, 1, 1), (32, 1, 1))
    assert launched == [((), (1, 1, 1), (32, 1, 1), 0, 0)]


def test_numbas_own_launch_names_the_limit_when_the_driver_refuses(monkeypatch):
    from numba.cuda.cudadrv import devices

    from numba_tma.numba_cuda import launching

    class DriverError(Exception):
        pass

    def refused(self, *args):
        raise DriverError("CUDA_ERROR_INVALID_VALUE")

    device = FakeDevice(id=1005)
    monkeypatch.setattr(launching, "_kernel_launch", refused)
    monkeypatch.setattr(devices, "get_context", lambda: SimpleNamespace(device=device))
    monkeypatch.setattr(launching, "_dynamic_allowed", lambda cufunc, device_id: 49152 - 2048)   # the default
    overload, cufunc = _fake_kernel(static=2048)
    overload._codelibrary.get_cufunc = lambda: cufunc
    with pytest.raises(LaunchError, match=r"block=\(2048, 1, 1\): 2048 threads per block; this device \(NVIDIA H100 "
                                          r"80GB HBM3\) allows at most 1024") as caught:
        launching.launch_checked(overload, (), (1, 1, 1), (2048, 1, 1))
    assert isinstance(caught.value.__cause__, DriverError)
    with pytest.raises(LaunchError, match=r"shared_mem=48000: .* without the opt-in .* of which the kernel's static "
                                          r"shared arrays take 2048\), and numba's own launch does not opt in"):
        launching.launch_checked(overload, (), (1, 1, 1), (32, 1, 1), 0, 48000)
    with pytest.raises(DriverError):     # no limit broken: the driver's own error
        launching.launch_checked(overload, (), (1, 1, 1), (32, 1, 1))
    monkeypatch.setattr(launching, "_dynamic_allowed", lambda cufunc, device_id: 100_000)   # launch opted in
    with pytest.raises(DriverError):
        launching.launch_checked(overload, (), (1, 1, 1), (32, 1, 1), 0, 48000)
