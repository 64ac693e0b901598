"""Clusters of several blocks under the simulator (``numba_tma.launch(..., cluster=...)``): the
blocks of a cluster run at once, so ranks, the cluster barrier, distributed shared memory, remote
barrier arrivals and multicast copies behave as on the GPU, checked against numpy models; and a
cluster that cannot make progress is reported, naming every block's threads."""

from test_simulator import simulate

SETUP = """
from numba_tma import cluster, dsmem
"""


def test_ranks_ids_and_the_shared_memory_of_other_blocks():
    out = simulate(setup=SETUP, body="""
        @cuda.jit
        def k(out):
            mine = cuda.shared.array(1, numba.int32)
            b = cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y
            if cuda.threadIdx.x == 0:
                mine[0] = 100 + b
            cluster.sync()                                  # every block has written its value
            r, n = cluster.ctarank(), cluster.nctarank()
            if cuda.threadIdx.x == 0:
                out[b, 0], out[b, 1] = r, n
                out[b, 2], out[b, 3] = cluster.ctaid("x"), cluster.ctaid("y")
                out[b, 4], out[b, 5] = cluster.clusterid("x"), cluster.clusterid("y")
                out[b, 6] = cluster.map_shared(mine, (r + 1) % n)[0]   # the next block's value
                out[b, 7] = cluster.cta_rank_of(cluster.map_shared(mine, n - 1))
            cluster.sync()                                  # no block leaves while others read it

        out = np.zeros((8, 8), np.int32)
        numba_tma.launch(k, (4, 2), 32, out, cluster=(2, 2, 1))
        want = np.zeros((8, 8), np.int32)
        for y in range(2):
            for x in range(4):
                r = x % 2 + 2 * (y % 2)
                nxt = (r + 1) % 4
                bx, by = x - x % 2 + nxt % 2, y - y % 2 + nxt // 2
                want[x + 4 * y] = [r, 4, x % 2, y % 2, x // 2, y // 2, 100 + bx + 4 * by, 3]
        assert (out == want).all(), out
        print("ranks ok")
    """)
    assert "ranks ok" in out, out


def test_distributed_shared_memory_ops_between_blocks():
    out = simulate(setup=SETUP, body="""
        @cuda.jit
        def k(out, rounds):
            bars = cuda.shared.array(1, numba.uint64)
            inbox = cuda.shared.array(4, numba.int32, alignment=16)
            total = cuda.shared.array(1, numba.int32)
            r, n = cluster.ctarank(), cluster.nctarank()
            if cuda.threadIdx.x == 0:
                total[0] = 0
                mbarrier.init(bars, 1)
                fence.mbarrier_init()
            cluster.sync()
            value = r
            for k in range(rounds):                         # a ring: each block sends to the next
                if cuda.threadIdx.x == 0:
                    mbarrier.arrive_expect_tx(bars, 4)
                cluster.sync()                              # every block expects before anyone sends
                if cuda.threadIdx.x == 0:
                    dsmem.store_async(inbox, numba.int32(value * 10 + 1), bars, (r + 1) % n)
                mbarrier.wait(bars, k & 1)
                value = inbox[0]
                cluster.sync()
            if cuda.threadIdx.x == 0 and r == 0:            # every block adds its value into block 0
                mbarrier.arrive_expect_tx(bars, 4 * n)
            cluster.sync()
            if cuda.threadIdx.x == 0:
                dsmem.reduce_async(total, numba.int32(value), bars, 0, op="add")
                if r == 0:
                    mbarrier.wait(bars, rounds & 1)
                    out[n] = total[0]
            cluster.sync()
            out[r] = value

        rounds = 3
        out = np.zeros(5, np.int64)
        numba_tma.launch(k, 4, 2, out, rounds, cluster=(4, 1, 1))
        values = list(range(4))
        for _ in range(rounds):
            values = [values[(r - 1) % 4] * 10 + 1 for r in range(4)]
        assert out.tolist() == values + [sum(values)], (out, values)
        print("dsmem ok")
    """)
    assert "dsmem ok" in out, out


def test_remote_arrivals_and_a_multicast_tile():
    out = simulate(setup=SETUP, body="""
        src = cuda.to_device(np.arange(16 * 32, dtype=np.float32).reshape(16, 32))
        half = TensorMap.tiled(src, (8, 32))                # each block of 2 loads half of the tile

        @cuda.jit
        def k(desc, out):
            full = cuda.shared.array(1, numba.uint64)
            done = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((16, 32), numba.float32, alignment=128)
            r, n = cluster.ctarank(), cluster.nctarank()
            if cuda.threadIdx.x == 0:
                mbarrier.init(full, 1)
                mbarrier.init(done, n)                      # one arrival from every block
                fence.mbarrier_init()
            cluster.sync()
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(full, 16 * 32 * 4)           # the whole tile lands here
                tma.load(desc, at(tile, 8 * r), (0, 8 * r), full, multicast=cluster.mask_all(n))
            mbarrier.wait(full, 0)
            for i in range(cuda.threadIdx.x, 16 * 32, cuda.blockDim.x):
                out[cuda.blockIdx.x, i] = tile[i // 32, i % 32]
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                for q in range(n):
                    mbarrier.arrive_remote(done, q)         # "I have read the tile" to every block
            mbarrier.wait(done, 0)

        out = np.zeros((4, 16 * 32), np.float32)
        numba_tma.launch(k, 4, 64, half, out, cluster=(2, 1, 1))
        assert (out == np.arange(16 * 32, dtype=np.float32)[None, :]).all()
        print("multicast ok")
    """)
    assert "multicast ok" in out, out


def test_a_cluster_that_cannot_progress_is_reported_with_every_block():
    out = simulate(setup=SETUP, body="""
        @cuda.jit
        def k(out):
            if cluster.ctarank() == 0:
                cluster.sync()                              # block 1 never arrives

        @cuda.jit
        def outside(out):
            box = cuda.shared.array(1, numba.int32)
            cluster.map_shared(box, 2)

        for kernel in (k, outside):
            try:
                numba_tma.launch(kernel, 2, 32, np.zeros(1), cluster=(2, 1, 1))
            except Exception as exc:
                print("raised", exc)
    """)
    assert "deadlock in the cluster of blocks [(0, 0, 0), (1, 0, 0)]" in out or \
        "deadlock in the cluster of blocks [(0, 0, 0)]" in out, out
    assert "cluster.sync: 32 of 64 threads of the cluster arrived" in out, out   # the op the kernel called
    assert "cluster.map_shared: cta_rank=2 is not a block of this cluster of 2 (ranks 0-1" in out, out


def test_one_source_line_allocating_other_shapes_in_other_launches():
    """Peers' arrays take the shape the running launch allocated at that line (a kernel factory
    makes the same line allocate 4 elements in one kernel and 64 in the next)."""
    out = simulate(setup=SETUP, body="""
        from numba_tma.simulator import memory, scheduler

        def make(n):
            @cuda.jit
            def k(out):
                if cluster.ctarank() == 0:          # block 1 never reaches the line: its array is made
                    box = cuda.shared.array(n, numba.int32)      # when block 0 maps it
                    if cuda.threadIdx.x == 0:
                        cluster.map_shared(box, 1)
                        peer = scheduler.current().block.cluster.blocks[1]
                        out[0] = max(a.size for a in peer.shared.values() if isinstance(a, memory.SharedArray))
                cluster.sync()
            return k

        for n in (4, 64):
            out = np.zeros(1, np.int64)
            numba_tma.launch(make(n), 2, 32, out, cluster=(2, 1, 1))
            print("peer size", n, out.tolist())
    """)
    assert "peer size 4 [4]" in out and "peer size 64 [64]" in out, out
