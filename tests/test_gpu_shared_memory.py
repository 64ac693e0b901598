"""SharedMemoryPlan on the GPU: every piece's shared address read back (offsets and alignment as
planned), and a 14-stage TMA ring with 128B swizzle in 225 KB of dynamic shared memory."""

import numba
import numpy as np
import pytest
from numba import cuda
from numba.cuda import types

from numba_tma import SharedMemoryPlan, TensorMap, at, fence, launch, mbarrier, tma
from numba_tma.intrinsics._core import PtxOp, SharedArray, build_intrinsic

from gpu_support import bounded_wait

pytestmark = pytest.mark.gpu

# Test-only op: the 32-bit shared-window address of element 0.
address_of = build_intrinsic(PtxOp("test.address_of", "mov.u32 {out}, {array};", (SharedArray("array"),),
                                   returns=types.uint32, memory=False, doc="test only"))

PLAN = (SharedMemoryPlan().array("flags", 3, types.uint8, align=1).array("w32", (8, 8), types.float32, swizzle="32B")
        .array("w128", (2, 8, 32), types.float32, swizzle="128B").barriers("bars", 3)
        .array("tail", 7, types.float64))
carve_plan = PLAN.carver()


@cuda.jit
def addresses(out):
    s = carve_plan()
    out[0] = address_of(s.flags)
    out[1] = address_of(s.w32)
    out[2] = address_of(s.w128)
    out[3] = address_of(s.bars)
    out[4] = address_of(s.tail)


def test_pieces_sit_where_the_plan_says():
    out = cuda.to_device(np.zeros(5, np.uint32))
    launch(addresses, 1, 1, out, shared_mem=PLAN.nbytes)
    got = out.copy_to_host().astype(np.int64)
    layout = PLAN.layout
    start = got[0]
    assert start % 1024 == 0                                   # rounded up to the largest alignment
    for addr, (offset, _, _, align) in zip(got, layout.values()):
        assert addr - start == offset and addr % align == 0


STAGES, BOX_R, BOX_C = 14, 128, 32                             # 14 x 16 KB fp32 tiles
RING = SharedMemoryPlan().array("ring", (STAGES, BOX_R, BOX_C), types.float32, swizzle="128B").barriers("full", STAGES)
carve_ring = RING.carver()


@cuda.jit
def persistent_copy(desc, out, ntiles, status):
    """Block b copies tiles b, b + grid, ... through a 14-stage ring: a prologue fills every stage,
    then each stage is consumed (un-swizzled into ``out``) and refilled with the tile 14 ahead."""
    s = carve_ring()
    tid = cuda.threadIdx.x
    mine = (ntiles - cuda.blockIdx.x + cuda.gridDim.x - 1) // cuda.gridDim.x
    if tid == 0:
        for i in range(STAGES):
            mbarrier.init(at(s.full, i), 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if tid == 0:
        for i in range(min(STAGES, mine)):
            mbarrier.arrive_expect_tx(at(s.full, i), desc.box_bytes)
            tma.load(desc, at(s.ring, i), (0, (cuda.blockIdx.x + i * cuda.gridDim.x) * BOX_R), at(s.full, i))
    for i in range(mine):
        stage = i % STAGES
        bounded_wait(at(s.full, stage), (i // STAGES) & 1, status)
        row0 = (cuda.blockIdx.x + i * cuda.gridDim.x) * BOX_R
        for e in range(tid, BOX_R * BOX_C, cuda.blockDim.x):
            r, c = e // BOX_C, e % BOX_C
            k = tma.swizzled_index(desc, r, c)                 # flat index into the swizzled tile
            out[row0 + r, c] = s.ring[stage, k // BOX_C, k % BOX_C]
        cuda.syncthreads()                                     # stage read by every thread
        if tid == 0 and i + STAGES < mine:
            mbarrier.arrive_expect_tx(at(s.full, stage), desc.box_bytes)
            tma.load(desc, at(s.ring, stage), (0, (cuda.blockIdx.x + (i + STAGES) * cuda.gridDim.x) * BOX_R),
                     at(s.full, stage))


def test_a_14_stage_ring_in_225_kb_of_dynamic_shared_memory():
    assert RING.nbytes > 200 * 1024
    ntiles = 3 * STAGES * 2 + 5                                # every stage reused, phases wrap
    host = np.random.default_rng(5).standard_normal((ntiles * BOX_R, BOX_C)).astype(np.float32)
    desc = TensorMap.tiled(cuda.to_device(host), (BOX_R, BOX_C), swizzle="128B")
    out = cuda.to_device(np.zeros_like(host))
    status = cuda.to_device(np.zeros(1, np.int32))
    launch(persistent_copy, 2, 128, desc, out, ntiles, status, shared_mem=RING.nbytes)
    assert status.copy_to_host()[0] == 0
    np.testing.assert_array_equal(out.copy_to_host(), host)


@cuda.jit
def narrow_rows(desc, out, status):
    """An fp16 8 x 8 box (16-byte rows) with 128B swizzle, in a tile of desc.smem_bytes (its rows
    lie 128 bytes apart), read back through tma.swizzled_index."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array(512, numba.uint16, alignment=1024)       # 8 rows x 128 bytes
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, desc.box_bytes)
        tma.load(desc, tile, (8, 16), bars)
    bounded_wait(bars, 0, status)
    if cuda.threadIdx.x < 64:
        r, c = cuda.threadIdx.x // 8, cuda.threadIdx.x % 8
        out[r, c] = tile[tma.swizzled_index(desc, r, c)]
        out[8, 0] = desc.smem_bytes


def test_narrow_swizzled_rows_read_back_through_swizzled_index():
    host = np.random.default_rng(6).standard_normal((64, 64)).astype(np.float16)
    desc = TensorMap.tiled(cuda.to_device(host), (8, 8), swizzle="128B")
    assert (desc.box_bytes, desc.smem_bytes) == (128, 1024)
    out = cuda.to_device(np.zeros((9, 8), np.uint16))   # the tile's bits (a float16 array would convert them)
    status = cuda.to_device(np.zeros(1, np.int32))
    narrow_rows[1, 64](desc, out, status)
    assert status.copy_to_host()[0] == 0
    got = out.copy_to_host()
    np.testing.assert_array_equal(got[:8], host[16:24, 8:16].view(np.uint16))
    assert got[8, 0] == 1024                                          # desc.smem_bytes in the kernel
