"""Clusters on the GPU: numba_tma.launch with cluster shapes 1-16 and 2-D, every cluster register
read back from every block against the model, distributed shared memory through map_shared, and a
TMA load into dynamic shared memory beyond 160 KB."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import LaunchError, TensorMap, at, cluster, fence, launch, mbarrier, testing, tma

from gpu_support import bounded_wait

pytestmark = pytest.mark.gpu

FIELDS = 12


@cuda.jit
def registers(out):
    b = cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y
    local = cuda.shared.array(4, numba.int32)
    if cuda.threadIdx.x == 0:
        out[b, 0] = cluster.ctarank()
        out[b, 1] = cluster.nctarank()
        out[b, 2] = cluster.ctaid("x")
        out[b, 3] = cluster.ctaid("y")
        out[b, 4] = cluster.nctaid("x")
        out[b, 5] = cluster.nctaid("y")
        out[b, 6] = cluster.clusterid("x")
        out[b, 7] = cluster.clusterid("y")
        out[b, 8] = cluster.nclusterid("x")
        out[b, 9] = cluster.nclusterid("y")
        out[b, 10] = 1 if cluster.is_first_cta() else 0
        out[b, 11] = cluster.cta_rank_of(local)


def _model(grid, shape):
    rows = []
    for by in range(grid[1]):
        for bx in range(grid[0]):
            cx, cy = bx % shape[0], by % shape[1]
            rank = cx + cy * shape[0]
            rows.append([rank, shape[0] * shape[1], cx, cy, shape[0], shape[1], bx // shape[0], by // shape[1],
                         grid[0] // shape[0], grid[1] // shape[1], int(rank == 0), rank])
    return np.array(rows, np.int32)


@pytest.mark.parametrize("shape", [(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (2, 2), (4, 2)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.both_ways
def test_every_cluster_register_in_every_block(shape):
    if testing.WAY == "simulator" and shape[0] * shape[1] > 4:
        pytest.skip("under the simulator clusters of 1 to 4 blocks cover the registers (the GPU runs all)")
    grid = (shape[0] * 3, shape[1] * 2)
    out = cuda.to_device(np.full((grid[0] * grid[1], FIELDS), -1, np.int32))
    launch(registers, grid, 32, out, cluster=shape + (1,))
    np.testing.assert_array_equal(out.copy_to_host(), _model(grid, shape))


@cuda.jit
def pass_to_neighbour(out, ranks):
    """Each block writes its rank into its shared array; after a cluster sync it reads its
    neighbour's array through map_shared."""
    mine = cuda.shared.array(32, numba.int32)
    rank, n = cluster.ctarank(), cluster.nctarank()
    mine[cuda.threadIdx.x] = 100 * rank + cuda.threadIdx.x
    cluster.sync()
    peer = cluster.map_shared(mine, (rank + 1) % n)
    out[cuda.blockIdx.x, cuda.threadIdx.x] = peer[cuda.threadIdx.x]
    if cuda.threadIdx.x == 0:
        ranks[cuda.blockIdx.x] = cluster.cta_rank_of(peer)
    cluster.sync()                       # the neighbour's memory must outlive these reads


@pytest.mark.parametrize("size", [2, 4, 8])
@pytest.mark.both_ways
def test_distributed_shared_memory_reads_the_neighbour(size):
    blocks = 2 * size
    out = cuda.to_device(np.zeros((blocks, 32), np.int32))
    ranks = cuda.to_device(np.zeros(blocks, np.int32))
    launch(pass_to_neighbour, blocks, 32, out, ranks, cluster=(size, 1, 1))
    neighbour = (np.arange(blocks) % size + 1) % size
    np.testing.assert_array_equal(out.copy_to_host(), 100 * neighbour[:, None] + np.arange(32)[None, :])
    np.testing.assert_array_equal(ranks.copy_to_host(), neighbour)


FAR = 40 * 1024          # element 40960 of a float32 array: 160 KiB into dynamic shared memory


@cuda.jit
def far_tile(desc, out, status):
    dyn = cuda.shared.array(0, numba.float32, alignment=1024)
    bars = cuda.shared.array(1, numba.uint64)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, desc.box_bytes)
        tma.load(desc, at(dyn, FAR), (0, 0), bars)
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, 32 * 64, cuda.blockDim.x):
        out[i // 64, i % 64] = dyn[FAR + i]


def test_dynamic_shared_memory_above_200_kb():
    host = np.random.default_rng(12).standard_normal((32, 64)).astype(np.float32)
    out = cuda.to_device(np.zeros_like(host))
    status = cuda.to_device(np.zeros(1, np.int32))
    launch(far_tile, 1, 128, TensorMap.tiled(cuda.to_device(host), (32, 64)), out, status, shared_mem=200 * 1024)
    assert status.copy_to_host()[0] == 0
    np.testing.assert_array_equal(out.copy_to_host(), host)


@pytest.mark.parametrize("kwargs,match", [
    (dict(grid=6, cluster=(4, 1, 1)), r"grid=\(6, 1, 1\): must be divisible by cluster=\(4, 1, 1\)"),
    (dict(grid=32, cluster=(32, 1, 1)), r"cluster=\(32, 1, 1\): 32 blocks per cluster; this device \(.*\) allows at "
                                        r"most 16"),
    (dict(grid=1, shared_mem=1 << 20), r"shared_mem=1048576: 1048576 bytes of dynamic shared memory per block; this "
                                       r"device \(.*\) allows at most 232448 bytes"),
    (dict(grid=(0, 1)), r"grid=\(0, 1\): must be a positive integer"),
])
def test_bad_launches_are_refused_before_anything_runs(kwargs, match):
    out = cuda.to_device(np.zeros((64, FIELDS), np.int32))
    grid = kwargs.pop("grid")
    with pytest.raises(LaunchError, match=match):
        launch(registers, grid, 32, out, **kwargs)



@cuda.jit
def multicast_halves(desc, out, status):
    """Each CTA of a cluster of n loads 16/n rows of a (16, 32) tile and multicasts them to every
    CTA: each CTA's barrier expects the whole tile."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((16, 32), numba.float32, alignment=128)
    rank, n = cluster.ctarank(), cluster.nctarank()
    rows = 16 // n
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cluster.sync()                                   # every CTA's barrier exists before data lands
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, 16 * 32 * 4)
        tma.load(desc, at(tile, rank * rows), (0, rank * rows), bars, multicast=cluster.mask_all(n))
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, 16 * 32, cuda.blockDim.x):
        out[cuda.blockIdx.x, i // 32, i % 32] = tile[i // 32, i % 32]
    cluster.sync()


@pytest.mark.parametrize("size", [2, 4, 8])
@pytest.mark.both_ways
def test_multicast_fills_every_cta_of_the_cluster(size):
    if testing.WAY == "simulator" and size > 4:
        pytest.skip("a cluster of 8 takes ~13 s in the simulator; 2 and 4 run there")
    host = np.random.default_rng(13).standard_normal((16, 32)).astype(np.float32)
    out = cuda.to_device(np.zeros((2 * size, 16, 32), np.float32))
    status = cuda.to_device(np.zeros(1, np.int32))
    desc = TensorMap.tiled(cuda.to_device(host), (16 // size, 32))
    launch(multicast_halves, 2 * size, 64, desc, out, status, cluster=(size, 1, 1))
    assert status.copy_to_host()[0] == 0
    np.testing.assert_array_equal(out.copy_to_host(), np.broadcast_to(host, (2 * size, 16, 32)))


@cuda.jit
def everyone_arrives_everywhere(done, status):
    """Every CTA's barrier expects one arrival from each CTA of the cluster, made remotely."""
    bars = cuda.shared.array(1, numba.uint64)
    n = cluster.nctarank()
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, n)
        fence.mbarrier_init()
    cluster.sync()
    if cuda.threadIdx.x == 0:
        for r in range(n):
            mbarrier.arrive_remote(bars, r)
    bounded_wait(bars, 0, status)
    if cuda.threadIdx.x == 0:
        done[cuda.blockIdx.x] = 1
    cluster.sync()


@pytest.mark.parametrize("size", [2, 4, 8])
@pytest.mark.both_ways
def test_remote_arrivals_complete_every_barrier(size):
    done = cuda.to_device(np.zeros(2 * size, np.int32))
    status = cuda.to_device(np.zeros(1, np.int32))
    launch(everyone_arrives_everywhere, 2 * size, 32, done, status, cluster=(size, 1, 1))
    assert status.copy_to_host()[0] == 0 and done.copy_to_host().tolist() == [1] * (2 * size)


def test_cluster_kernel_launches_with_numbas_syntax():
    from numba_tma import cluster_kernel

    shape = (2, 2)
    k = cluster_kernel(cluster=shape)(registers)
    grid = (shape[0] * 3, shape[1] * 2)
    out = cuda.to_device(np.full((grid[0] * grid[1], FIELDS), -1, np.int32))
    k[grid, 32](out)
    np.testing.assert_array_equal(out.copy_to_host(), _model(grid, shape))
    k[grid, 32, 0, 64 * 1024](out)                       # above 48 KB: opted in automatically
    np.testing.assert_array_equal(out.copy_to_host(), _model(grid, shape))


@cuda.jit
def multicast_swizzled(desc, out, rows_mask, status):
    """fp16 128 x 64 tiles, 128B swizzle.  rows_mask=False: the whole cluster shares tile 0, each
    CTA loading 128/n rows with the full mask.  rows_mask=True (a 2 x 2 cluster): the CTAs of
    cluster row y share tile y, each loading half of it with mask_row; the other row's CTAs
    never see it."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((128, 64), numba.uint16, alignment=1024)
    rank, n = cluster.ctarank(), cluster.nctarank()
    if rows_mask:
        x, y, width = cluster.ctaid("x"), cluster.ctaid("y"), cluster.nctaid("x")
        share, part, base, mask = width, x, y * 128, cluster.mask_row(width, y)
    else:
        share, part, base, mask = n, rank, 0, cluster.mask_all(n)
    rows = 128 // share
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cluster.sync()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, 128 * 64 * 2)
        tma.load(desc, at(tile, part * rows), (0, base + part * rows), bars, multicast=mask)
    bounded_wait(bars, 0, status)
    b = cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y
    for i in range(cuda.threadIdx.x, 128 * 64, cuda.blockDim.x):
        k = tma.swizzled_index(desc, i // 64, i % 64)
        out[b, i // 64, i % 64] = tile[k // 64, k % 64]
    cluster.sync()


@pytest.mark.parametrize("shape,rows_mask", [((2, 1), False), ((4, 1), False), ((8, 1), False), ((2, 2), True)],
                         ids=["2-all", "4-all", "8-all", "2x2-rows"])
@pytest.mark.both_ways
def test_multicast_fp16_128x64_swizzled_tiles(shape, rows_mask):
    if testing.WAY == "simulator" and shape[0] * shape[1] > 4:
        pytest.skip("a cluster of 8 takes ~16 s in the simulator; 2, 4 and 2x2 run there")
    host = np.random.default_rng(14).standard_normal((256, 64)).astype(np.float16)
    share = shape[0] if rows_mask else shape[0] * shape[1]
    desc = TensorMap.tiled(cuda.to_device(host), (128 // share, 64), swizzle="128B")
    grid = (shape[0] * 2, shape[1])
    blocks = grid[0] * grid[1]
    out = cuda.to_device(np.zeros((blocks, 128, 64), np.uint16))
    status = cuda.to_device(np.zeros(1, np.int32))
    launch(multicast_swizzled, grid, 64, desc, out, rows_mask, status, cluster=shape + (1,))
    assert status.copy_to_host()[0] == 0
    got = out.copy_to_host().view(np.float16)
    for b in range(blocks):
        by = b // grid[0]
        row = (by % shape[1]) if rows_mask else 0                 # the cluster row's tile
        np.testing.assert_array_equal(got[b], host[row * 128:(row + 1) * 128], err_msg=f"block {b}")
