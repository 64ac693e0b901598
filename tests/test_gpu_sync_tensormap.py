"""On the GPU: device-side descriptor editing (every replace_* field decoded back, and one kernel
retargeting a descriptor across eight tensors), named barriers, elect_one, cp.async with zero fill."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import TensorMap, at, cp_async, fence, mbarrier, sync, tensormap, tlx, tma
from numba_tma.descriptors import decode

from gpu_support import bounded_wait

pytestmark = pytest.mark.gpu

NEW_ADDRESS = 0x7F12_3456_7800


@cuda.jit
def edit_fields(desc, bufs, address):
    """Slot k of ``bufs`` (128 bytes each) gets ``desc`` with one field replaced."""
    if cuda.threadIdx.x == 0:
        for k in range(10):
            tensormap.copy(bufs[k * 128:], desc)
        tensormap.replace_global_address(bufs[128:], address)
        tensormap.replace_global_dim(bufs[256:], 1, 77)
        tensormap.replace_box_dim(bufs[384:], 0, 8)
        tensormap.replace_global_stride(bufs[512:], 0, 4096)
        tensormap.replace_element_stride(bufs[640:], 1, 2)
        tensormap.replace_rank(bufs[768:], 2)
        tensormap.replace_swizzle(bufs[896:], 1)
        tensormap.replace_fill_mode(bufs[1024:], 1)
        tensormap.replace_elemtype(bufs[1152:], 3)


def test_every_replaced_field_decodes_to_the_value_written():
    """Each tensormap.replace_* is checked by decoding the edited bytes with numba_tma's decoder
    (itself byte-identical to the driver): field values are the logical ones."""
    a = cuda.to_device(np.zeros((64, 256), np.float32))
    desc = TensorMap.tiled(a, (16, 32))
    bufs = cuda.to_device(np.zeros(10 * 128, np.uint8))
    edit_fields[1, 32](desc, bufs, NEW_ADDRESS)
    raw = bufs.copy_to_host().tobytes()
    slots = [raw[k * 128:(k + 1) * 128] for k in range(10)]
    assert slots[0] == desc.bytes
    base = decode(desc.bytes)
    assert decode(slots[1]).global_address == NEW_ADDRESS
    assert decode(slots[2]).global_dim == (base.global_dim[0], 77)
    assert decode(slots[3]).box_dim == (8, base.box_dim[1])
    assert decode(slots[4]).global_strides == (4096,)
    assert decode(slots[5]).element_strides == (1, 2)
    assert decode(slots[6]).rank == 3          # .rank takes the rank minus one
    assert decode(slots[7]).swizzle.name == "SWIZZLE_32B"
    assert decode(slots[8]).oob_fill.name == "NAN_REQUEST_ZERO_FMA"
    assert decode(slots[9]).data_type.name == "INT32"


BOX_R, BOX_C = 8, 16


@cuda.jit
def walk_tensors(desc, gdescs, addresses, rows, cols, out, status):
    """Block p retargets the template ``desc`` at tensor p (address, shape, row pitch), publishes
    it to global memory and loads the tile at (row 8, column 16) of tensor p through it."""
    p = cuda.blockIdx.x
    buf = cuda.shared.array(128, numba.uint8, alignment=128)
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((BOX_R, BOX_C), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        tensormap.copy(buf, desc)
        tensormap.replace_global_address(buf, addresses[p])
        tensormap.replace_global_dim(buf, 0, cols[p])
        tensormap.replace_global_dim(buf, 1, rows[p])
        tensormap.replace_global_stride(buf, 0, cols[p] * 4)
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    mine = gdescs[p * 128:(p + 1) * 128]
    tensormap.cp_fenceproxy(mine, buf)          # the whole warp
    if cuda.threadIdx.x == 0:
        fence.proxy_tensormap_acquire(mine)
        mbarrier.arrive_expect_tx(bars, BOX_R * BOX_C * 4)
        tma.load(mine, tile, (16, 8), bars)
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, BOX_R * BOX_C, cuda.blockDim.x):
        out[p, i // BOX_C, i % BOX_C] = tile[i // BOX_C, i % BOX_C]


def test_one_kernel_retargets_a_descriptor_across_eight_tensors():
    rng = np.random.default_rng(9)
    shapes = [(16 + 8 * k, 32 + 4 * (k % 3) * 4) for k in range(8)]
    hosts = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    devs = [cuda.to_device(h) for h in hosts]
    template = TensorMap.tiled(devs[0], (BOX_R, BOX_C))
    addresses = np.array([d.__cuda_array_interface__["data"][0] for d in devs], np.uint64)
    out = cuda.to_device(np.zeros((8, BOX_R, BOX_C), np.float32))
    status = cuda.to_device(np.zeros(1, np.int32))
    walk_tensors[8, 32](template, cuda.to_device(np.zeros(8 * 128, np.uint8)), addresses,
                        np.array([s[0] for s in shapes], np.int32), np.array([s[1] for s in shapes], np.int32),
                        out, status)
    assert status.copy_to_host()[0] == 0
    got = out.copy_to_host()
    for p, h in enumerate(hosts):
        np.testing.assert_array_equal(got[p], h[8:8 + BOX_R, 16:16 + BOX_C])


@cuda.jit
def producer_consumer(out):
    """Warp 0 writes shared data and arrives on named barrier 1; warp 1 waits there and reads."""
    data = cuda.shared.array(32, numba.int32)
    lane, warp = cuda.threadIdx.x % 32, cuda.threadIdx.x // 32
    if warp == 0:
        data[lane] = 3 * lane + 1
        sync.named_barrier_arrive(1, 64)
    else:
        sync.named_barrier_sync(1, 64)
        out[lane] = data[31 - lane]


def test_named_barrier_orders_a_producer_warp_before_a_consumer_warp():
    out = cuda.to_device(np.zeros(32, np.int32))
    for _ in range(5):
        producer_consumer[1, 64](out)
        np.testing.assert_array_equal(out.copy_to_host(), 3 * np.arange(32)[::-1] + 1)


@cuda.jit
def token_ring(log):
    """Two warps take turns (FlashAttention-3's ping-pong of warpgroups): each waits at its own
    named barrier (1 + w, 64 threads) and arrives at the other's; warp 0 arrives at its own first,
    so one warp arrives twice at barrier 1 in its first phase (arrivals are counted).  Each turn
    appends to a shared log at a shared cursor: out of turn, entries would be lost or misplaced."""
    entries = cuda.shared.array(9, numba.int32)
    lane, w = cuda.threadIdx.x % 32, cuda.threadIdx.x // 32
    if cuda.threadIdx.x == 0:
        entries[8] = 0
    cuda.syncthreads()
    if w == 0:
        sync.named_barrier_arrive(1, 64)
    for i in range(4):
        sync.named_barrier_sync(1 + w, 64)
        if lane == 0:
            cursor = entries[8]
            entries[cursor] = 10 * i + w + 1
            entries[8] = cursor + 1
        cuda.syncwarp()
        sync.named_barrier_arrive(2 - w, 64)
    cuda.syncthreads()
    if cuda.threadIdx.x < 9:
        log[cuda.threadIdx.x] = entries[cuda.threadIdx.x]


@pytest.mark.both_ways
def test_named_barriers_pass_a_turn_between_two_warps():
    log = cuda.to_device(np.full(9, -1, np.int32))
    token_ring[1, 64](log)
    np.testing.assert_array_equal(log.copy_to_host(), [1, 2, 11, 12, 21, 22, 31, 32, 8])


@cuda.jit
def elect(out, active):
    lane = cuda.threadIdx.x
    if lane < active:
        out[lane] = 1 if sync.elect_one() else 0


@pytest.mark.parametrize("active", [32, 13, 1])
def test_elect_one_picks_exactly_one_active_lane(active):
    out = cuda.to_device(np.full(32, -1, np.int32))
    elect[1, 32](out, active)
    got = out.copy_to_host()
    assert got[:active].sum() == 1 and got[0] == 1 and (got[active:] == -1).all()


@cuda.jit
def cp_async_rows(src, dst, nbytes, status):
    """Each thread copies one 16-byte chunk of ``src`` with cp.async, reading only the bytes below
    ``nbytes`` (zero-filling the rest); completion through an mbarrier (noinc arrivals)."""
    buf = cuda.shared.array(512, numba.uint8, alignment=16)
    bars = cuda.shared.array(1, numba.uint64)
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(bars, cuda.blockDim.x)
    cuda.syncthreads()
    start = 16 * t
    valid = min(max(nbytes - start, 0), 16)
    cp_async.load(buf[start:], src[start:], 16, src_nbytes=valid)
    cp_async.mbarrier_arrive(bars, noinc=True)
    bounded_wait(bars, 0, status)
    for i in range(start, start + 16):
        dst[i] = buf[i]


@cuda.jit
def cp_async_groups(src, dst):
    buf = cuda.shared.array(512, numba.uint8, alignment=16)
    start = 16 * cuda.threadIdx.x
    cp_async.load(buf[start:], src[start:], 16, cache="cg")
    cp_async.commit_group()
    cp_async.wait_group(0)
    cuda.syncthreads()
    for i in range(start, start + 16):
        dst[i] = buf[i]


@pytest.mark.parametrize("nbytes", [512, 500, 37, 0])
def test_cp_async_zero_fills_ragged_edges(nbytes):
    src_host = np.random.default_rng(10).integers(1, 255, 512).astype(np.uint8)
    src, dst = cuda.to_device(src_host), cuda.to_device(np.full(512, 0xAA, np.uint8))
    status = cuda.to_device(np.zeros(1, np.int32))
    cp_async_rows[1, 32](src, dst, nbytes, status)
    assert status.copy_to_host()[0] == 0
    want = np.where(np.arange(512) < nbytes, src_host, 0).astype(np.uint8)
    np.testing.assert_array_equal(dst.copy_to_host(), want)


def test_cp_async_groups_complete():
    src_host = np.arange(512, dtype=np.uint32).astype(np.uint8)
    dst = cuda.to_device(np.zeros(512, np.uint8))
    cp_async_groups[1, 32](cuda.to_device(src_host), dst)
    np.testing.assert_array_equal(dst.copy_to_host(), src_host)


@cuda.jit
def tlx_masked_rows(src, dst, nvalid, cg):
    """TLX's per-thread async load with a mask: thread t copies 16 bytes (4 floats) when
    ``4 * t < nvalid``, else zero-fills its chunk; ``cg`` picks the ``.cg`` cache modifier."""
    buf = cuda.shared.array(256, numba.float32, alignment=16)
    start = 4 * cuda.threadIdx.x
    if cg:
        tlx.async_load(src[start:], buf[start:], mask=start < nvalid, other=0, cache_modifier=".cg")
    else:
        tlx.async_load(src[start:], buf[start:], mask=start < nvalid)
    tlx.async_load_commit_group()
    tlx.async_load_wait_group(0)
    cuda.syncthreads()
    for i in range(start, start + 4):
        dst[i] = buf[i]


@pytest.mark.both_ways
@pytest.mark.parametrize("nvalid, cg", [(256, True), (100, True), (100, False), (0, False)])
def test_tlx_async_load_mask_zero_fills_the_masked_chunks(nvalid, cg):
    src_host = np.random.default_rng(11).uniform(1, 2, 256).astype(np.float32)
    dst = cuda.to_device(np.full(256, -1, np.float32))
    tlx_masked_rows[1, 64](cuda.to_device(src_host), dst, nvalid, cg)
    chunk_valid = (np.arange(256) // 4) * 4 < nvalid       # the model: whole 16-byte chunks, by their start
    np.testing.assert_array_equal(dst.copy_to_host(), np.where(chunk_valid, src_host, np.float32(0)))


@cuda.jit
def ring_with_at(desc, out, stages, status):
    """Tiles streamed through a ring named with at(): the naming works on the GPU too."""
    bars = cuda.shared.array(4, numba.uint64)
    ring = cuda.shared.array((4, BOX_R, BOX_C), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        for s in range(stages):
            mbarrier.init(at(bars, s), 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    for k in range(8):
        s = k % stages
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(at(bars, s), BOX_R * BOX_C * 4)
            tma.load(desc, at(ring, s), (0, k * BOX_R), at(bars, s))
        bounded_wait(at(bars, s), (k // stages) & 1, status)
        for i in range(cuda.threadIdx.x, BOX_R * BOX_C, cuda.blockDim.x):
            out[k * BOX_R + i // BOX_C, i % BOX_C] = ring[s, i // BOX_C, i % BOX_C]
        cuda.syncthreads()


@pytest.mark.parametrize("stages", [1, 3, 4])
def test_a_ring_named_with_at(stages):
    host = np.random.default_rng(11).standard_normal((8 * BOX_R, BOX_C)).astype(np.float32)
    out = cuda.to_device(np.zeros_like(host))
    status = cuda.to_device(np.zeros(1, np.int32))
    ring_with_at[1, 64](TensorMap.tiled(cuda.to_device(host), (BOX_R, BOX_C)), out, stages, status)
    assert status.copy_to_host()[0] == 0
    np.testing.assert_array_equal(out.copy_to_host(), host)
