"""Distributed shared memory on the GPU: a ring of the cluster's blocks passing a tile around for
1,000 rounds with st.async / bulk shared::cluster copies and remote barriers, and red.async
reductions into one block, each checked against the model."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import at, cluster, dsmem, fence, launch, mbarrier, testing

pytestmark = pytest.mark.gpu

N = 64               # int32 elements passed around (256 bytes)
SPINS = 1 << 20      # per wait; a broken protocol fails the test instead of hanging


@cuda.jit(device=True)
def cluster_wait(bars, phase, status):
    """Wait (acquire, cluster scope: the arrivals come from other blocks) but give up after SPINS."""
    for _ in range(SPINS):
        if mbarrier.try_wait(bars, phase, sem="acquire", scope="cluster"):
            return True
    status[0] = 1
    return False


@cuda.jit
def ring(out, rounds, by_copy, status):
    """Round k: block r sends outbox[k % 2] to block r+1's inbox (st.async, or one bulk copy when
    ``by_copy``), completing on r+1's ``full`` barrier; then writes inbox + 1 into its other outbox
    and tells block r-1 (remote arrival on its ``empty``) that the inbox may be refilled."""
    inbox = cuda.shared.array(N, numba.int32)
    outbox = cuda.shared.array((2, N), numba.int32)
    full = cuda.shared.array(1, numba.uint64)
    empty = cuda.shared.array(1, numba.uint64)
    tid = cuda.threadIdx.x
    rank, n = cluster.ctarank(), cluster.nctarank()
    nxt, prv = (rank + 1) % n, (rank + n - 1) % n
    for i in range(tid, N, cuda.blockDim.x):
        outbox[0, i] = rank * 1000 + i
    if tid == 0:
        mbarrier.init(full, 1)
        mbarrier.init(empty, 1)
        fence.mbarrier_init()
    fence.proxy_async()                  # outbox written by threads, read by the bulk copy
    cluster.sync()                       # every block's barriers exist before anyone sends
    for k in range(rounds):
        if status[0] != 0:
            break
        if tid == 0:
            if k > 0:
                cluster_wait(empty, (k - 1) & 1, status)     # r+1 consumed what we sent last round
            mbarrier.arrive_expect_tx(full, N * 4)            # our own inbox, filled by r-1
            src = k & 1
            if by_copy:
                dsmem.copy_async(inbox, outbox[src], N * 4, full, nxt)
            else:
                for j in range(0, N, 4):
                    dsmem.store_async(at(inbox, j), (outbox[src, j], outbox[src, j + 1], outbox[src, j + 2],
                                                     outbox[src, j + 3]), full, nxt)
        cluster_wait(full, k & 1, status)
        for i in range(tid, N, cuda.blockDim.x):
            outbox[(k + 1) & 1, i] = inbox[i] + 1
        fence.proxy_async()
        cuda.syncthreads()
        if tid == 0:
            mbarrier.arrive_remote(empty, prv)
    for i in range(tid, N, cuda.blockDim.x):
        out[cuda.blockIdx.x, i] = inbox[i]
    cluster.sync()                       # no block leaves while another may still signal it


@pytest.mark.parametrize("by_copy", [False, True], ids=["st_async", "bulk_copy"])
@pytest.mark.parametrize("size", [2, 4, 8])
@pytest.mark.both_ways
def test_a_ring_of_blocks_passes_a_tile_for_1000_rounds(size, by_copy):
    if testing.WAY == "simulator" and size > 4:
        pytest.skip("clusters of 8 blocks x 64 threads take minutes in the simulator; 2 and 4 run there")
    rounds, blocks = (3 if testing.WAY == "simulator" else 1000), 2 * size      # the simulator: a few rounds
    out = cuda.to_device(np.zeros((blocks, N), np.int32))
    status = cuda.to_device(np.zeros(1, np.int32))
    launch(ring, blocks, 64, out, rounds, by_copy, status, cluster=(size, 1, 1))
    assert status.copy_to_host()[0] == 0, "a wait gave up"
    rank = np.arange(blocks) % size
    source = (rank - rounds) % size                     # whose tile arrived after `rounds` hops
    expected = source[:, None] * 1000 + np.arange(N)[None, :] + rounds - 1
    np.testing.assert_array_equal(out.copy_to_host(), expected)


@cuda.jit
def histogram(values, out, status):
    """Every block reduces its values into block 0's counters (red.async add / max / or), each
    element completing 4 bytes on block 0's barrier, which expects all of them."""
    counts = cuda.shared.array(8, numba.uint32)
    top = cuda.shared.array(1, numba.int32)
    bits = cuda.shared.array(1, numba.uint32)
    bars = cuda.shared.array(1, numba.uint64)
    tid, rank, n = cuda.threadIdx.x, cluster.ctarank(), cluster.nctarank()
    if tid < 8:
        counts[tid] = 0
    if tid == 0:
        top[0] = -(1 << 30)
        bits[0] = 0
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cluster.sync()
    if rank == 0 and tid == 0:
        mbarrier.arrive_expect_tx(bars, n * cuda.blockDim.x * 3 * 4)
    v = values[cuda.blockIdx.x * cuda.blockDim.x + tid]
    dsmem.reduce_async(at(counts, v & 7), 1, bars, 0, op="add")
    dsmem.reduce_async(top, v, bars, 0, op="max")
    dsmem.reduce_async(bits, numba.uint32(1) << (v & 31), bars, 0, op="or")
    if rank == 0:
        cluster_wait(bars, 0, status)
        if tid < 8:
            out[cuda.blockIdx.x // n, tid] = counts[tid]
        if tid == 0:
            out[cuda.blockIdx.x // n, 8] = top[0]
            out[cuda.blockIdx.x // n, 9] = bits[0]
    cluster.sync()


@pytest.mark.parametrize("size", [2, 4])
@pytest.mark.both_ways
def test_reductions_into_one_block(size):
    threads, clusters = 64, 2
    values = np.random.default_rng(21).integers(-500, 500, clusters * size * threads).astype(np.int32)
    out = cuda.to_device(np.zeros((clusters, 10), np.int64))
    status = cuda.to_device(np.zeros(1, np.int32))
    launch(histogram, clusters * size, threads, cuda.to_device(values), out, status, cluster=(size, 1, 1))
    assert status.copy_to_host()[0] == 0, "a wait gave up"
    got = out.copy_to_host()
    for c, chunk in enumerate(values.reshape(clusters, -1)):
        assert got[c, :8].tolist() == np.bincount(chunk & 7, minlength=8).tolist()
        assert got[c, 8] == chunk.max()
        assert got[c, 9] == np.bitwise_or.reduce(np.uint32(1) << (chunk & 31).astype(np.uint32))


@cuda.jit
def bulk_sums(out, status):
    """Every block adds its 64 uint32 values into block 0's totals with one bulk reduce-copy."""
    totals = cuda.shared.array(64, numba.uint32)
    part = cuda.shared.array(64, numba.uint32)
    bars = cuda.shared.array(1, numba.uint64)
    tid, rank, n = cuda.threadIdx.x, cluster.ctarank(), cluster.nctarank()
    totals[tid] = 0
    part[tid] = rank * 100 + tid
    fence.proxy_async()                  # part, written by threads, is read by the bulk copy
    if tid == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cluster.sync()
    if tid == 0:
        if rank == 0:
            mbarrier.arrive_expect_tx(bars, n * 64 * 4)
        dsmem.reduce_copy_async(totals, part, 64 * 4, bars, 0, op="add")
    if rank == 0:
        cluster_wait(bars, 0, status)
        out[cuda.blockIdx.x // n, tid] = totals[tid]
    cluster.sync()


@pytest.mark.parametrize("size", [2, 4])
@pytest.mark.both_ways
def test_bulk_reduce_copies_into_one_block(size):
    out = cuda.to_device(np.zeros((2, 64), np.uint32))
    status = cuda.to_device(np.zeros(1, np.int32))
    launch(bulk_sums, 2 * size, 64, out, status, cluster=(size, 1, 1))
    assert status.copy_to_host()[0] == 0, "a wait gave up"
    expected = sum(r * 100 for r in range(size)) + size * np.arange(64)
    np.testing.assert_array_equal(out.copy_to_host(), np.broadcast_to(expected, (2, 64)))
