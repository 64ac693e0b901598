"""TensorMap on the GPU: numba's launch passes it by value; the kernel sees exactly our bytes."""

import importlib
import importlib.util

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import TensorMap, fence, mbarrier, tma

from gpu_support import SIMULATOR, TILE_C, TILE_R, bounded_wait, received_bytes, tile_copy

if not SIMULATOR:
    from gpu_support import read_word

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype,box,swizzle", [(np.float32, (32, 64), "none"), (np.float16, (64, 64), "128B"),
                                               (np.uint8, (16, 32), "32B")])
def test_kernel_receives_our_exact_bytes(dtype, box, swizzle):
    desc = TensorMap.tiled(cuda.to_device(np.zeros((300, 512), dtype)), box, swizzle=swizzle)
    assert received_bytes(desc) == desc.bytes


def test_retarget_repoints_the_launched_descriptor():
    first, second = np.ones((64, 128), np.float32), np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    desc = TensorMap.tiled(cuda.to_device(first), (TILE_R, TILE_C))
    np.testing.assert_array_equal(tile_copy(desc, first.shape), first)        # its twin now exists
    desc.retarget(cuda.to_device(second))
    assert received_bytes(desc) == desc.bytes
    np.testing.assert_array_equal(tile_copy(desc, second.shape), second)


def test_launches_write_the_maps_bytes_in_place():
    """cuda.core's descriptor object holds our 128 bytes where by_value found them, so a launch
    copies the map's bytes into a kept twin instead of asking the driver for one (if this fails,
    cuda.core changed its layout and every launch pays the driver's ~25 us)."""
    from numba_tma.descriptors import by_value

    host = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    desc = TensorMap.tiled(cuda.to_device(np.zeros_like(host)), (TILE_R, TILE_C))
    np.testing.assert_array_equal(tile_copy(desc, host.shape), 0)     # a twin made by the driver: the search ran
    assert by_value.in_place(), "cuda.core's TensorMapDescriptor no longer holds the bytes where they were found"
    desc.retarget(cuda.to_device(host))
    assert received_bytes(desc) == desc.bytes
    np.testing.assert_array_equal(tile_copy(desc, host.shape), host)


def test_fresh_maps_each_launch_read_their_own_arrays():
    """Every launch passes the bytes of the map it was given, however many maps came before."""
    arrays = [np.full((64, 128), k, np.float32) for k in range(6)]
    for host in arrays:   # each TensorMap dies at the end of its iteration
        np.testing.assert_array_equal(tile_copy(TensorMap.tiled(cuda.to_device(host), (TILE_R, TILE_C)),
                                                host.shape), host)


if not SIMULATOR:
    @cuda.jit
    def echo_three(first, words, second, third, out):
        """The 16 words of three by-value maps (kernel parameters 0, after an array's, and last)."""
        for i in range(16):
            out[0, i] = read_word(first, i)
            out[1, i] = read_word(second, i)
            out[2, i] = read_word(third, i)
        words[0] = 1


def _three_maps(k):
    """Three maps, two of one layout, over arrays made for round ``k``."""
    first = TensorMap.tiled(cuda.to_device(np.full((64, 128), k, np.float32)), (TILE_R, TILE_C))
    second = TensorMap.tiled(cuda.to_device(np.full((64, 128), -k, np.float32)), (TILE_R, TILE_C))
    third = TensorMap.tiled(cuda.to_device(np.zeros((96, 256), np.float16)), (64, 64), swizzle="128B")
    return first, second, third


def _received(out):
    return [bytes(row) for row in out.copy_to_host().view(np.uint8).reshape(3, 128)]


def test_maps_of_one_layout_in_one_launch_each_arrive_whole():
    """Several maps in one launch, two of one layout, each at its own parameter: the kernel receives
    each one's bytes (a twin per parameter position, not per layout), through numba's launch, through
    numba_tma.launch and from two threads launching at once (twins are per thread)."""
    import threading

    from numba_tma import launch

    words = cuda.device_array(1, np.int32)
    for k in range(3):
        maps = _three_maps(k)
        out = cuda.to_device(np.zeros((3, 16), np.uint64))
        echo_three[1, 1](maps[0], words, maps[1], maps[2], out)
        assert _received(out) == [m.bytes for m in maps]
        out = cuda.to_device(np.zeros((3, 16), np.uint64))
        launch(echo_three, 1, 1, maps[0], words, maps[1], maps[2], out, cluster=(1, 1, 1))
        assert _received(out) == [m.bytes for m in maps]

    failures = []

    def worker(k):
        stream = cuda.stream()
        for _ in range(50):
            maps = _three_maps(k)
            out = cuda.to_device(np.zeros((3, 16), np.uint64), stream=stream)
            echo_three[1, 1, stream](maps[0], words, maps[1], maps[2], out)
            host = out.copy_to_host(stream=stream)
            stream.synchronize()
            got = [bytes(row) for row in host.view(np.uint8).reshape(3, 128)]
            if got != [m.bytes for m in maps]:
                failures.append(k)

    threads = [threading.Thread(target=worker, args=(k,)) for k in (10, 20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, f"a kernel received another launch's map in threads {sorted(set(failures))}"


@pytest.mark.parametrize("form", ["by-value", "global"])
def test_tile_copy_through_tensor_map(form):
    host = np.random.default_rng(1).standard_normal((200, 320)).astype(np.float32)
    desc = TensorMap.tiled(cuda.to_device(host), (TILE_R, TILE_C))
    np.testing.assert_array_equal(tile_copy(desc if form == "by-value" else desc.to_device(), host.shape), host)


def test_with_array_repoints_the_map():
    first = np.ones((64, 128), np.float32)
    second = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    desc = TensorMap.tiled(cuda.to_device(first), (TILE_R, TILE_C))
    np.testing.assert_array_equal(tile_copy(desc.with_array(cuda.to_device(second)), second.shape), second)


def test_cupy_and_torch_arrays():
    host = np.random.default_rng(2).standard_normal((96, 128)).astype(np.float32)
    tried = 0
    for module, make in (("cupy", lambda m: m.asarray(host)), ("torch", lambda m: m.tensor(host, device="cuda"))):
        if importlib.util.find_spec(module) is None:
            continue
        array = make(importlib.import_module(module))
        desc = TensorMap.tiled(array, (TILE_R, TILE_C))
        assert desc.address == array.__cuda_array_interface__["data"][0]
        np.testing.assert_array_equal(tile_copy(desc, host.shape), host)
        tried += 1
    if not tried:
        pytest.skip("neither CuPy nor PyTorch is installed")


C, PIXELS = 16, 32
BLOCK = C * PIXELS


@cuda.jit
def im2col_kernel(desc, out, status):
    bars = cuda.shared.array(1, numba.uint64)
    block = cuda.shared.array(BLOCK, numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
        mbarrier.arrive_expect_tx(bars, PIXELS * C * 4)
        tma.load_im2col(desc, block, (0, 1, 1, 0), (0, 0), bars)  # (c, w, h, n), offsets (w, h)
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, PIXELS * C, cuda.blockDim.x):
        out[i] = block[i]


def test_im2col_by_value_and_global_forms_agree():
    host = np.random.default_rng(3).standard_normal((2, 8, 8, C)).astype(np.float32)  # NHWC
    desc = TensorMap.im2col(cuda.to_device(host), (-1, -1), (-1, -1), C, PIXELS)
    dumps = []
    for arg in (desc, desc.to_device()):
        out = cuda.to_device(np.zeros(PIXELS * C, np.float32))
        status = cuda.to_device(np.zeros(1, np.int32))
        im2col_kernel[1, 128](arg, out, status)
        assert status.copy_to_host()[0] == 0
        dumps.append(out.copy_to_host().reshape(PIXELS, C))
    np.testing.assert_array_equal(dumps[0], dumps[1])
    np.testing.assert_array_equal(dumps[0][0], host[0, 1, 1])  # the first pixel is at the coordinates


@cuda.jit(device=True)
def issue_tile(desc, tile, bars):
    mbarrier.arrive_expect_tx(bars, desc.box_bytes)  # a compile-time constant
    tma.load(desc, tile, (0, 0), bars)


@cuda.jit
def add_tiles(a, b, out, status):
    bars = cuda.shared.array(2, numba.uint64)
    ta = cuda.shared.array((TILE_R, TILE_C), numba.float32, alignment=128)
    tb = cuda.shared.array((TILE_R, TILE_C), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        mbarrier.init(bars[1:], 1)
        fence.mbarrier_init()
        issue_tile(a, ta, bars)
        issue_tile(b, tb, bars[1:])
    bounded_wait(bars, 0, status)
    bounded_wait(bars[1:], 0, status)
    for i in range(cuda.threadIdx.x, TILE_R * TILE_C, cuda.blockDim.x):
        out[i // TILE_C, i % TILE_C] = ta[i // TILE_C, i % TILE_C] + tb[i // TILE_C, i % TILE_C]


def test_two_maps_through_a_device_function():
    """Two by-value maps (like a GEMM's A and B), issued from a device function."""
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((TILE_R, TILE_C)).astype(np.float32) for _ in range(2))
    out = cuda.to_device(np.zeros((TILE_R, TILE_C), np.float32))
    status = cuda.to_device(np.zeros(1, np.int32))
    add_tiles[1, 128](TensorMap.tiled(cuda.to_device(a), (TILE_R, TILE_C)),
                      TensorMap.tiled(cuda.to_device(b), (TILE_R, TILE_C)), out, status)
    assert status.copy_to_host()[0] == 0
    np.testing.assert_array_equal(out.copy_to_host(), a + b)


def _bits_kernel(tile_dtype):
    """Copy a (32, BOX_C) box of a 2-D map into a tile of ``tile_dtype`` and out as raw bits."""
    box_c = 128 // np.dtype(tile_dtype).itemsize   # 128-byte rows

    @cuda.jit
    def kernel(desc, out, status):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((32, box_c), tile_dtype, alignment=128)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (cuda.blockIdx.x * box_c, 0), bars)
        bounded_wait(bars, 0, status)
        for i in range(cuda.threadIdx.x, 32 * box_c, cuda.blockDim.x):
            out[i // box_c, cuda.blockIdx.x * box_c + i % box_c] = tile[i // box_c, i % box_c]

    return kernel, box_c


@pytest.mark.parametrize("dtype,bits", [("bfloat16", "uint16"), ("float8_e4m3fn", "uint8"), ("float8_e5m2", "uint8")])
def test_torch_bf16_and_fp8_tensors_by_value(dtype, bits):
    """numba has no bfloat16 / fp8 shared arrays: the map fills a tile of the same width and the
    kernel sees the tensor's exact bits."""
    torch = pytest.importorskip("torch")
    x = (torch.randn(32, 512, device="cuda") * 8).to(getattr(torch, dtype))
    kernel, box_c = _bits_kernel(getattr(np, bits))
    desc = TensorMap.tiled(x, (32, box_c))
    assert desc.dtype == dtype
    out = cuda.to_device(np.zeros((32, 512), bits))
    status = cuda.to_device(np.zeros(1, np.int32))
    kernel[512 // box_c, 128](desc, out, status)
    assert status.copy_to_host()[0] == 0
    want = x.view(getattr(torch, bits)).cpu().numpy()
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_debug_build_of_a_map_kernel_runs():
    """``debug=True, opt=False`` (numba's own options) compiles a by-value map and copies right."""
    host = np.random.default_rng(5).standard_normal((32, 64)).astype(np.float32)
    kernel, box_c = _bits_kernel(np.float32)
    debug_kernel = cuda.jit(debug=True, opt=False)(kernel.py_func)
    out = cuda.to_device(np.zeros((32, 64), np.float32))
    status = cuda.to_device(np.zeros(1, np.int32))
    debug_kernel[64 // box_c, 32](TensorMap.tiled(cuda.to_device(host), (32, box_c)), out, status)
    assert status.copy_to_host()[0] == 0
    np.testing.assert_array_equal(out.copy_to_host(), host)


def test_tf32_map_over_float32_by_value():
    """``data_type="tfloat32"`` over a float32 array: a float32 tile receives the values rounded to
    TF32, to nearest with ties to even (measured on the H200; half the rows are exact ties)."""
    rng = np.random.default_rng(6)
    bits = rng.standard_normal((32, 64)).astype(np.float32).view(np.uint32)
    bits[16:] = (bits[16:] & np.uint32(0xFFFFE000)) | np.uint32(0x1000)      # ties, both parities of bit 13
    kernel, box_c = _bits_kernel(np.float32)
    desc = TensorMap.tiled(cuda.to_device(bits.view(np.float32)), (32, box_c), data_type="tfloat32")
    out = cuda.to_device(np.zeros((32, 64), np.float32))
    status = cuda.to_device(np.zeros(1, np.int32))
    kernel[64 // box_c, 128](desc, out, status)
    assert status.copy_to_host()[0] == 0
    nearest_even = (bits + np.uint32(0xFFF) + ((bits >> 13) & 1)) & np.uint32(0xFFFFE000)
    np.testing.assert_array_equal(out.copy_to_host().view(np.uint32), nearest_even)


def _swizzled_copy_kernel(rows, cols, dtype):
    """Load one (rows, cols) box with the map's swizzle; every thread reads its elements back through
    ``tma.swizzled_index`` into ``out`` in the tensor's order; ``status[1]`` gets ``desc.swizzle``."""

    size = rows * cols
    element = numba.from_dtype(np.dtype(dtype))

    @cuda.jit
    def kernel(desc, out, status):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array(size, element, alignment=1024)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (cuda.blockIdx.x * cols, 0), bars)
            status[1] = desc.swizzle
        bounded_wait(bars, 0, status)
        for i in range(cuda.threadIdx.x, size, cuda.blockDim.x):
            r, c = i // cols, i % cols
            out[r, cuda.blockIdx.x * cols + c] = tile[tma.swizzled_index(desc, r, c)]

    return kernel


@pytest.mark.parametrize("dtype,swizzle,span", [(np.uint16, "32B", 32), (np.uint16, "64B", 64),
                                                (np.uint16, "128B", 128), (np.float32, "128B", 128),
                                                (np.uint8, "64B", 64), (np.float32, "none", 0)])
def test_swizzled_index_reads_a_swizzled_tile(dtype, swizzle, span):
    rows, cols = 16, (span or 64) // np.dtype(dtype).itemsize     # a box row is one swizzle span
    host = np.random.default_rng(8).integers(0, 250, (rows, 4 * cols)).astype(dtype)
    kernel = _swizzled_copy_kernel(rows, cols, dtype)
    out = cuda.to_device(np.zeros_like(host))
    status = cuda.to_device(np.zeros(2, np.int32))
    kernel[4, 64](TensorMap.tiled(cuda.to_device(host), (rows, cols), swizzle=swizzle), out, status)
    assert status.copy_to_host().tolist() == [0, span]
    np.testing.assert_array_equal(out.copy_to_host(), host)
