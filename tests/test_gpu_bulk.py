"""Bulk copies (``cp.async.bulk``) on the GPU, checked against numpy: load / store round trips of
contiguous rows and of rows of a pitched array, ``bulk.reduce`` for every op and element type,
``bulk.prefetch`` in a copy loop, and L2 cache hints."""

import functools

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import bulk, cache, fence, mbarrier
from numba_tma.reductions import BULK_REDUCE_TYPES

from gpu_support import bounded_wait
from test_gpu_tma_store import POLICIES, assert_both_branches, reduce_operands, reduce_reference

pytestmark = pytest.mark.gpu

THREADS = 128
BULK_MAX = 8192                  # bytes of the shared buffer
SENTINEL = -7.0


def new_status():
    return cuda.to_device(np.zeros(1, np.int32))


def check_status(status):
    assert status.copy_to_host()[0] == 0, "the bulk load never completed the barrier"


# -- 1. load / store round trips -------------------------------------------------------------------

@cuda.jit
def copy_rows_kernel(src, dst, nbytes, status):
    """Block r copies the first ``nbytes`` bytes of row ``src[r]`` to ``dst[r]`` through shared
    memory: ``bulk.load``, then ``bulk.store`` of the same buffer."""
    bars = cuda.shared.array(1, numba.uint64)
    buf = cuda.shared.array(BULK_MAX, numba.uint8, alignment=128)
    r = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, nbytes)
        bulk.load(buf, src[r], nbytes, bars)
    bounded_wait(bars, 0, status)
    if cuda.threadIdx.x == 0:
        bulk.store(dst[r], buf, nbytes)
        bulk.commit_group()
        bulk.wait_group(0)


@pytest.mark.parametrize("nbytes", [16, 48, 1008, 4096, BULK_MAX])
def test_bulk_round_trip(nbytes):
    rows, width = 3, BULK_MAX + 64
    host = np.random.default_rng(nbytes).integers(0, 256, (rows, width), dtype=np.uint8)
    out = cuda.to_device(np.full((rows, width), 0xA5, np.uint8))
    status = new_status()
    copy_rows_kernel[rows, THREADS](cuda.to_device(host), out, nbytes, status)
    check_status(status)
    expect = np.full((rows, width), 0xA5, np.uint8)
    expect[:, :nbytes] = host[:, :nbytes]
    np.testing.assert_array_equal(out.copy_to_host(), expect)


def test_bulk_round_trip_rows_of_a_pitched_array():
    """``a[:, :272]`` of a (rows, 288) float32 array: rows of 1088 bytes, 1152 bytes apart; ``src[r]``
    in the kernel is the 1-D view starting at row r."""
    rows, cols, pitch = 5, 272, 288
    host = np.random.default_rng(1).standard_normal((rows, pitch)).astype(np.float32)
    out = cuda.to_device(np.full((rows, pitch), SENTINEL, np.float32))
    status = new_status()
    copy_rows_kernel[rows, THREADS](cuda.to_device(host)[:, :cols], out[:, :cols], cols * 4, status)
    check_status(status)
    expect = np.full((rows, pitch), SENTINEL, np.float32)
    expect[:, :cols] = host[:, :cols]
    np.testing.assert_array_equal(out.copy_to_host(), expect)      # the padding columns are untouched


# -- 2. bulk.reduce: every op x every element type -------------------------------------------------

RED_N, RED_OFF = 256, 16         # reduce RED_N elements into dst[RED_OFF:]; RED_OFF on each side stays
NUMPY = {"u32": np.uint32, "s32": np.int32, "u64": np.uint64, "s64": np.int64, "f32": np.float32,
         "f64": np.float64, "f16": np.float16}
RED_CASES = [(op, t) for op, ptx_types in BULK_REDUCE_TYPES.items() for t in ptx_types]
ADD_RTOL = {"f32": 1e-6, "f64": 1e-12, "f16": 2.0 ** -10}


@functools.cache
def reduce_kernel(op, dtype):
    """Write ``values`` (RED_N of ``dtype``) to shared memory and ``bulk.reduce`` them into
    ``dst[RED_OFF:]`` with ``op``."""
    nbytes = RED_N * np.dtype(dtype).itemsize

    @cuda.jit
    def kernel(dst, values):
        buf = cuda.shared.array(RED_N, dtype, alignment=128)
        for i in range(cuda.threadIdx.x, RED_N, cuda.blockDim.x):
            buf[i] = values[i]
        fence.proxy_async()          # ordinary stores -> visible to the bulk copy (async proxy)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            bulk.reduce(dst[RED_OFF:], buf, nbytes, op)
            bulk.commit_group()
            bulk.wait_group(0)

    return kernel


@pytest.mark.parametrize("op,ptx_type", RED_CASES, ids=[f"{op}-{t}" for op, t in RED_CASES])
def test_bulk_reduce_matches_numpy(op, ptx_type):
    """Same value ranges and inc / dec rule (PTX ISA) as test_gpu_tma_store's tensor reductions."""
    dtype = np.dtype(NUMPY[ptx_type])
    rng = np.random.default_rng(RED_CASES.index((op, ptx_type)))
    old, src = reduce_operands(op, dtype, rng, (RED_OFF + RED_N + RED_OFF,), (RED_N,))
    reduced = slice(RED_OFF, RED_OFF + RED_N)
    assert_both_branches(op, old[reduced], src)
    expect = old.copy()
    expect[reduced] = reduce_reference(op, old[reduced], src)
    dst = cuda.to_device(old)
    reduce_kernel(op, dtype.type)[1, THREADS](dst, src)
    got = dst.copy_to_host()
    if op == "add" and dtype.kind == "f":
        np.testing.assert_allclose(got, expect, rtol=ADD_RTOL[ptx_type], atol=ADD_RTOL[ptx_type])
    else:
        np.testing.assert_array_equal(got, expect)


# -- 3. bulk.prefetch ----------------------------------------------------------------------------

ROW_BYTES = 4096


@functools.cache
def row_stream_kernel(prefetch):
    """Thread 0 of block b copies rows b, b + gridDim.x, ... of ``src`` to ``dst`` one at a time
    through one buffer and one barrier (phase k & 1 for its k-th row); with ``prefetch``, each step
    first prefetches the block's next row into L2."""

    @cuda.jit
    def kernel(src, dst, status):
        bars = cuda.shared.array(1, numba.uint64)
        buf = cuda.shared.array(ROW_BYTES, numba.uint8, alignment=128)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            k = 0
            for r in range(cuda.blockIdx.x, src.shape[0], cuda.gridDim.x):
                if prefetch:
                    if r + cuda.gridDim.x < src.shape[0]:
                        bulk.prefetch(src[r + cuda.gridDim.x], ROW_BYTES)
                mbarrier.arrive_expect_tx(bars, ROW_BYTES)
                bulk.load(buf, src[r], ROW_BYTES, bars)
                bounded_wait(bars, k & 1, status)
                bulk.store(dst[r], buf, ROW_BYTES)
                bulk.commit_group()
                bulk.wait_group_read(0)      # the buffer may be refilled
                k += 1
            bulk.wait_group(0)

    return kernel


def test_bulk_prefetch_changes_no_result():
    host = np.random.default_rng(2).standard_normal((24, ROW_BYTES // 4)).astype(np.float32)
    src = cuda.to_device(host)
    results = []
    for prefetch in (False, True):
        out = cuda.to_device(np.full(host.shape, SENTINEL, np.float32))
        status = new_status()
        row_stream_kernel(prefetch)[4, THREADS](src, out, status)
        check_status(status)
        results.append(out.copy_to_host())
    np.testing.assert_array_equal(results[1], results[0])
    np.testing.assert_array_equal(results[1], host)


# -- 4. L2 cache hints -----------------------------------------------------------------------------

@functools.cache
def hinted_copy_kernel(kind, fraction, rest):
    """Block r copies row r through shared memory; the bulk load and the bulk store both carry
    ``cache.policy(kind, fraction, rest)``."""

    @cuda.jit
    def kernel(src, dst, status):
        bars = cuda.shared.array(1, numba.uint64)
        buf = cuda.shared.array(ROW_BYTES, numba.uint8, alignment=128)
        r = cuda.blockIdx.x
        if cuda.threadIdx.x == 0:
            policy = cache.policy(kind, fraction, rest)
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            mbarrier.arrive_expect_tx(bars, ROW_BYTES)
            bulk.load(buf, src[r], ROW_BYTES, bars, cache_hint=policy)
            bounded_wait(bars, 0, status)
            bulk.store(dst[r], buf, ROW_BYTES, cache_hint=policy)
            bulk.commit_group()
            bulk.wait_group(0)

    return kernel


@pytest.mark.parametrize("policy", list(POLICIES), ids=list(POLICIES))
def test_bulk_cache_hints_leave_data_unchanged(policy):
    host = np.random.default_rng(3).standard_normal((8, ROW_BYTES // 4)).astype(np.float32)
    out = cuda.to_device(np.full(host.shape, SENTINEL, np.float32))
    status = new_status()
    hinted_copy_kernel(*POLICIES[policy])[host.shape[0], THREADS](cuda.to_device(host), out, status)
    check_status(status)
    np.testing.assert_array_equal(out.copy_to_host(), host)
