"""wgmma checked against numpy, on the GPU and under the simulator (both ways): one 64 x N x K
warpgroup tile loaded by TMA (128B swizzle), bf16 and fp8 (e4m3) inputs, float32 accumulators,
ragged stores; and setmaxnreg in numba's own launch (GPU only)."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import TensorMap, fence, mbarrier, tma, wgmma



def bf16_bits(x):
    """float32 -> bfloat16 bits, round to nearest even (what a bf16 tensor holds)."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


E4M3 = np.array([((-1) ** (b >> 7)) * (2.0 ** ((b >> 3 & 15) - 7) * (1 + (b & 7) / 8) if b >> 3 & 15 else
                  2.0 ** -6 * ((b & 7) / 8)) for b in range(256)], np.float64)
E4M3[[0x7F, 0xFF]] = np.nan      # e4m3 has no infinities; S.1111.111 is NaN


def test_the_e4m3_model_has_the_format_s_values():
    """OCP FP8 E4M3: 0x38 = 1, 0x7E = 448 (the largest), 0x01 = 2^-9 (the smallest subnormal)."""
    assert (E4M3[0x38], E4M3[0x7E], E4M3[0x01], E4M3[0xB8]) == (1.0, 448.0, 2.0 ** -9, -1.0)


def _tile_kernel(n_acc, k_steps, dtype, elem_bytes):
    element = numba.uint16 if elem_bytes == 2 else numba.uint8
    a_elems, b_elems = 64 * 128 // elem_bytes, 256 * 128 // elem_bytes

    @cuda.jit
    def kernel(desc_a, desc_b, out, rows, cols):
        ta = cuda.shared.array(a_elems, element, alignment=1024)
        tb = cuda.shared.array(b_elems, element, alignment=1024)
        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc_a.box_bytes + desc_b.box_bytes)
            tma.load(desc_a, ta, (0, 0), bars)
            tma.load(desc_b, tb, (0, 0), bars)
        mbarrier.wait(bars, 0)
        acc = wgmma.zeros(n_acc)
        acc = wgmma.fence(acc)
        for k in range(k_steps):
            acc = wgmma.mma_async(acc, wgmma.descriptor(ta, desc_a, k, 0), wgmma.descriptor(tb, desc_b, k, 0),
                                  k, dtype=dtype)
        wgmma.commit_group()
        acc = wgmma.wait_group(0, acc)
        wgmma.store(acc, out[:rows, :cols], 0, 0)
    return kernel


@pytest.mark.parametrize("n", [8, 128, 256])
@pytest.mark.both_ways
def test_bf16_tile_matches_numpy(n):
    rng = np.random.default_rng(n)
    a = rng.integers(-4, 5, (64, 64)).astype(np.float32)
    b = rng.integers(-4, 5, (n, 64)).astype(np.float32)             # B as N x K (K-major)
    da = TensorMap.tiled(cuda.to_device(bf16_bits(a)), (64, 64), swizzle="128B", data_type="bfloat16")
    db = TensorMap.tiled(cuda.to_device(bf16_bits(b)), (n, 64), swizzle="128B", data_type="bfloat16")
    out = cuda.to_device(np.full((64, n), -1.0, np.float32))
    _tile_kernel(n // 2, 4, "bf16", 2)[1, 128](da, db, out, 64, n)
    np.testing.assert_array_equal(out.copy_to_host(), a @ b.T)


@pytest.mark.both_ways
def test_bf16_random_values_within_float32_rounding():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((128, 64)).astype(np.float32)
    ab, bb = bf16_bits(a), bf16_bits(b)
    da = TensorMap.tiled(cuda.to_device(ab), (64, 64), swizzle="128B", data_type="bfloat16")
    db = TensorMap.tiled(cuda.to_device(bb), (128, 64), swizzle="128B", data_type="bfloat16")
    out = cuda.to_device(np.zeros((64, 128), np.float32))
    _tile_kernel(64, 4, "bf16", 2)[1, 128](da, db, out, 64, 128)
    want = bf16_value(ab).astype(np.float64) @ bf16_value(bb).astype(np.float64).T
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.both_ways
def test_ragged_store_writes_nothing_outside():
    rng = np.random.default_rng(4)
    a = rng.integers(-4, 5, (64, 64)).astype(np.float32)
    b = rng.integers(-4, 5, (128, 64)).astype(np.float32)
    da = TensorMap.tiled(cuda.to_device(bf16_bits(a)), (64, 64), swizzle="128B", data_type="bfloat16")
    db = TensorMap.tiled(cuda.to_device(bf16_bits(b)), (128, 64), swizzle="128B", data_type="bfloat16")
    out = cuda.to_device(np.full((64, 128), -7.0, np.float32))
    _tile_kernel(64, 4, "bf16", 2)[1, 128](da, db, out, 37, 101)
    got, want = out.copy_to_host(), np.full((64, 128), -7.0, np.float32)
    want[:37, :101] = (a @ b.T)[:37, :101]
    np.testing.assert_array_equal(got, want)


@pytest.mark.both_ways
def test_e4m3_tile_matches_numpy():
    rng = np.random.default_rng(5)
    codes = np.array([b for b in range(256) if np.isfinite(E4M3[b]) and abs(E4M3[b]) <= 4], np.uint8)
    a, b = rng.choice(codes, (64, 128)), rng.choice(codes, (256, 128))
    da = TensorMap.tiled(cuda.to_device(a), (64, 128), swizzle="128B")
    db = TensorMap.tiled(cuda.to_device(b), (256, 128), swizzle="128B")
    out = cuda.to_device(np.zeros((64, 256), np.float32))
    _tile_kernel(128, 4, "e4m3", 1)[1, 128](da, db, out, 64, 256)
    want = E4M3[a] @ E4M3[b].T
    # Hopper accumulates fp8 products with about 14 bits of mantissa (DeepSeek-V3, section 3.3.2)
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=0, atol=2e-3 * np.abs(want).max())



def _mn_kernel(n):
    """A (64 x 64, K-major) times B given K x N row-major: B's tile is N / 64 boxes of (64 K rows,
    64 N), read MN-major (descriptor_mn, trans_b=True)."""
    boxes, b_elements, regs = n // 64, 64 * n, n // 2      # constants of the kernel

    @cuda.jit
    def kernel(desc_a, desc_b, out):
        ta = cuda.shared.array(64 * 64, numba.uint16, alignment=1024)
        tb = cuda.shared.array(b_elements, numba.uint16, alignment=1024)
        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc_a.box_bytes + boxes * desc_b.box_bytes)
            tma.load(desc_a, ta, (0, 0), bars)
            for j in range(boxes):
                tma.load(desc_b, tb[j * 4096:], (64 * j, 0), bars)
        mbarrier.wait(bars, 0)
        acc = wgmma.zeros(regs)
        acc = wgmma.fence(acc)
        for k in range(4):
            acc = wgmma.mma_async(acc, wgmma.descriptor(ta, desc_a, k, 0), wgmma.descriptor_mn(tb, desc_b, k, 0), k,
                                  trans_b=True)
        wgmma.commit_group()
        acc = wgmma.wait_group(0, acc)
        wgmma.store(acc, out, 0, 0)
    return kernel


@pytest.mark.parametrize("n", [64, 256])
@pytest.mark.both_ways
def test_mn_major_b_given_k_by_n_matches_numpy(n):
    rng = np.random.default_rng(10 + n)
    a = rng.integers(-4, 5, (64, 64)).astype(np.float32)
    b = rng.integers(-4, 5, (64, n)).astype(np.float32)             # B as K x N (MN-major)
    da = TensorMap.tiled(cuda.to_device(bf16_bits(a)), (64, 64), swizzle="128B", data_type="bfloat16")
    db = TensorMap.tiled(cuda.to_device(bf16_bits(b)), (64, 64), swizzle="128B", data_type="bfloat16")
    out = cuda.to_device(np.full((64, n), -1.0, np.float32))
    _mn_kernel(n)[1, 128](da, db, out)
    np.testing.assert_array_equal(out.copy_to_host(), a @ b)


@pytest.mark.gpu
def test_setmaxnreg_takes_effect_in_numbas_own_launch():
    """numba's ``kernel[grid, block]`` of a kernel calling setmaxnreg runs the code linked whole-program:
    its SASS (numba's, from the loaded cubin) has USETMAXREG and it starts with the 168 registers
    ``launch_bounds=(384, 1)`` allows; and the data are right."""
    @cuda.jit(launch_bounds=(384, 1))     # (the simulator's cuda.jit takes no launch_bounds: GPU only)
    def rebalanced(out):
        group = cuda.threadIdx.x // 128
        if group == 0:
            wgmma.setmaxnreg(40, "dec")       # the GEMM's split: the producer drops to 40,
        else:
            wgmma.setmaxnreg(232, "inc")      # the two consumer warpgroups rise to 232
        out[cuda.blockIdx.x, cuda.threadIdx.x] = 1000 * group + cuda.threadIdx.x

    out = cuda.to_device(np.zeros((4, 384), np.int32))
    rebalanced[4, 384](out)
    cuda.synchronize()
    t = np.arange(384)
    np.testing.assert_array_equal(out.copy_to_host(), np.broadcast_to(1000 * (t // 128) + t, (4, 384)))
    (sass,), (registers,) = rebalanced.inspect_sass().values(), rebalanced.get_regs_per_thread().values()
    assert "USETMAXREG.DEALLOC.CTAPOOL" in sass and "USETMAXREG.TRY_ALLOC.CTAPOOL" in sass
    assert registers == 168
