"""Simulator semantics the GPU defines: elect_one under a partial mask, dynamic shared memory at
its declared alignment, numpy integers wherever ints go, an error ending the launch as that
error (no polling thread left behind, no deadlock report), no false deadlock in a correct
cluster while a block waits in cuda.syncthreads(), and setmaxnreg run by a whole warpgroup only."""

from test_simulator import simulate

SETUP = """
import threading
from numba_tma import cluster, cp_async, sync
from numba_tma.simulator import memory, state
"""


def test_elect_one_elects_the_lowest_lane_executing_it():
    out = simulate(setup=SETUP, body="""
        @cuda.jit
        def k(lanes, counts, bars):
            bar = cuda.shared.array(1, numba.uint64)
            lane, warp = cuda.threadIdx.x % 32, cuda.threadIdx.x // 32
            if cuda.threadIdx.x == 0:
                mbarrier.init(bar, 1)
            cuda.syncthreads()
            if (warp == 0 and lane >= 5) or (warp == 1 and lane % 3 == 2):    # partial masks
                if sync.elect_one():
                    lanes[warp, 0] = lane
                    cuda.atomic.add(counts, (warp, 0), 1)
            cuda.syncthreads()
            if cuda.threadIdx.x == 40:
                mbarrier.arrive(bar)
            mbarrier.wait(bar, 0)                    # every lane, leaving the wait one by one
            if sync.elect_one():
                lanes[warp, 1] = lane
                cuda.atomic.add(counts, (warp, 1), 1)
            if lane < 7:                             # these lanes have exited
                return
            if sync.elect_one():
                lanes[warp, 2] = lane
                cuda.atomic.add(counts, (warp, 2), 1)

        lanes, counts = np.full((2, 3), -1, np.int32), np.zeros((2, 3), np.int32)
        k[1, 64](lanes, counts, 0)
        print("lanes", lanes.tolist(), "counts", counts.tolist())
    """)
    assert "lanes [[5, 0, 7], [2, 0, 7]] counts [[1, 1, 1], [1, 1, 1]]" in out, out


def test_dynamic_shared_memory_sits_at_its_declared_alignment_and_no_more():
    out = simulate(setup=SETUP, body="""
        def make(first, second):
            @cuda.jit
            def k(out):
                a = cuda.shared.array(0, numba.float32, alignment=first)
                b = cuda.shared.array(0, numba.uint8, alignment=second)
                if cuda.threadIdx.x == 0:
                    out[cuda.blockIdx.x, 0] = memory.address(a) % 4096
                    out[cuda.blockIdx.x, 1] = memory.address(b) - memory.address(a)
            return k

        for first, second in ((1024, 16), (None, None), (128, 1024)):
            out = np.zeros((2, 2), np.int64)
            try:
                numba_tma.launch(make(first, second), 2, 32, out, shared_mem=8192)
                print("placed", first, second, out.tolist())
            except Exception as exc:
                print("raised", exc)
    """)
    assert "placed 1024 16 [[1024, 0], [1024, 0]]" in out, out      # 1024-aligned, not 2048
    assert "placed None None [[16, 0], [16, 0]]" in out, out        # 16, not 32: the GPU's least
    assert ("cuda.shared.array(0, ..., alignment=1024): dynamic shared memory was placed when first declared "
            "(kernel.py:") in out and "128-byte aligned: declare its largest alignment first" in out, out


def test_numpy_integers_are_accepted_like_ints():
    out = simulate(setup=SETUP, body="""
        @cuda.jit
        def k(desc, src, out, n):
            bars = cuda.shared.array(2, numba.uint64)
            tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
            buf = cuda.shared.array(64, numba.float32, alignment=16)
            small = cuda.shared.array(4, numba.float32, alignment=16)
            tid = cuda.threadIdx.x
            if tid == 0:
                mbarrier.init(bars, np.int32(1))
                mbarrier.init(at(bars, 1), np.int64(1))
                fence.mbarrier_init()
            cluster.sync()
            if tid == 0:
                mbarrier.arrive_expect_tx(bars, n + np.int32(8 * 32 * 4))
                bulk.load(buf, src, n, bars, multicast=np.int32(1) << cluster.ctarank())
                tma.load(desc, tile, (np.int32(0), np.int64(8)), bars)
                cp_async.load(small, src, 16)            # immediates: an np.int64(16) is refused here,
                cp_async.commit_group()                  # as compiled (tests/test_simulator_warp.py)
                cp_async.wait_group(0)
            mbarrier.wait(bars, np.int32(0))
            cuda.syncthreads()                       # thread 0's cp.async has landed
            out[cuda.blockIdx.x, tid] = buf[tid] + tile[1, tid % 32] + small[tid % 4]
            cluster.sync()

        src = np.arange(64, dtype=np.float32)
        image = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
        out = np.zeros((2, 64), np.float32)
        numba_tma.launch(k, 2, 64, TensorMap.tiled(cuda.to_device(image), (8, 32)), src, out, np.int32(256),
                         cluster=(2, 1, 1))
        t = np.arange(64)
        print("equal", (out == (src + image[9, t % 32] + src[t % 4])[None, :]).all())
    """)
    assert "equal True" in out, out


def test_an_error_ends_the_launch_as_itself_and_stops_polling_threads():
    """Another thread polls a barrier with try_wait while thread 0 fails: the launch raises thread
    0's error, in a block and in a cluster, and no simulated thread polls on after it."""
    out = simulate(setup=SETUP, body="""
        import time
        from numba_tma.simulator import scheduler

        @cuda.jit
        def k(src):
            bars = cuda.shared.array(1, numba.uint64)
            buf = cuda.shared.array(64, numba.float32, alignment=16)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
            cuda.syncthreads()
            if cuda.threadIdx.x == 0 and cluster.ctarank() == cluster.nctarank() - 1:
                mbarrier.arrive_expect_tx(bars, 20)
                bulk.load(buf, src, 20, bars)        # 20 bytes: not whole 16-byte chunks
            while not mbarrier.try_wait(bars, 0):
                pass

        for shape in ((1, 1, 1), (2, 1, 1)):
            try:
                numba_tma.launch(k, shape[0], 4, np.zeros(64, np.float32), cluster=shape)
            except Exception as exc:
                print("raised", type(exc).__name__, str(exc).splitlines()[0])
            time.sleep(0.5)
            left = [t for t in threading.enumerate() if isinstance(t, scheduler.Worker) and t.is_alive()]
            print("threads left", len(left))
    """)
    # the declaration's rule, as the compiled op words it (every value is a constant here)
    assert out.count("raised OpArgumentError tid=[0, 0, 0] ctaid=[") == 2 and "deadlock" not in out, out
    assert out.count("numba_tma: bulk.load: argument 'nbytes' must be a multiple of 16 bytes") == 2, out
    assert out.count("threads left 0") == 2, out


def test_a_correct_cluster_is_never_reported_while_a_block_waits_in_syncthreads():
    """Block 0 passes 30 cuda.syncthreads() while the others wait for its arrival (one of them
    polling, so the detector looks all the time): a block whose threads all wait in syncthreads
    is released, not stuck."""
    out = simulate(setup=SETUP, body="""
        @cuda.jit
        def k(out, steps):
            bars = cuda.shared.array(1, numba.uint64)
            r, n = cluster.ctarank(), cluster.nctarank()
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
                fence.mbarrier_init()
            cluster.sync()
            if r == 0:
                for j in range(steps):
                    cuda.syncthreads()
                if cuda.threadIdx.x == 0:
                    for q in range(n):
                        mbarrier.arrive_remote(bars, q)
            if r == 1 and cuda.threadIdx.x == 0:
                while not mbarrier.try_wait(bars, 0):
                    pass
            else:
                mbarrier.wait(bars, 0)
            cluster.sync()
            if cuda.threadIdx.x == 0:
                out[cuda.blockIdx.x] += steps

        out = np.zeros(4, np.int64)
        for run in range(8):
            numba_tma.launch(k, 4, 32, out, 30, cluster=(4, 1, 1))
        print("out", out.tolist())
    """)
    assert "out [240, 240, 240, 240]" in out, out


def test_votes_probes_and_a_polling_deadlock():
    """syncthreads_count / _and / _or over the block; a thread probing a barrier a few times before
    arriving itself is not stuck; a thread that polls a barrier nobody will complete is reported
    as a deadlock naming its probe (a poller gets its turns first)."""
    out = simulate(setup=SETUP, body="""
        @cuda.jit
        def votes(out):
            t = cuda.threadIdx.x
            out[t, 0] = cuda.syncthreads_count(t % 3 == 0)
            out[t, 1] = cuda.syncthreads_and(t < 63)
            out[t, 2] = cuda.syncthreads_or(t == 40)
            out[t, 3] = cuda.laneid

        @cuda.jit
        def probes_then_arrives(out):
            bars = cuda.shared.array(1, numba.uint64)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                misses = 0
                for i in range(10):
                    if not mbarrier.test_wait(bars, 0):
                        misses += 1
                out[0] = misses
                mbarrier.arrive(bars)
            mbarrier.wait(bars, 0)

        @cuda.jit
        def polls_forever(out):
            bars = cuda.shared.array(1, numba.uint64)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 2)
            cuda.syncthreads()
            if cuda.threadIdx.x == 1:
                mbarrier.arrive(bars)                # one of two arrivals
            while not mbarrier.try_wait(bars, 0):
                pass

        out = np.zeros((64, 4), np.int64)
        votes[1, 64](out)
        print("votes", out[:, 0].tolist() == [22] * 64, out[:, 1].tolist() == [0] * 64,
              out[:, 2].tolist() == [1] * 64, out[:, 3].tolist() == [t % 32 for t in range(64)])
        misses = np.zeros(1, np.int64)
        probes_then_arrives[1, 32](misses)
        print("misses", misses.tolist())
        try:
            polls_forever[1, 4](out)
        except Exception as exc:
            print("raised", type(exc).__name__, exc)
    """)
    assert "votes True True True True" in out and "misses [10]" in out, out
    assert "raised SimulatorError tid=[0, 0, 0] ctaid=[0, 0, 0]: numba_tma simulator: deadlock in block (0, 0, 0)" \
        in out, out
    assert "4 threads ((0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)): polls mbarrier.try_wait(parity 0) on barrier bars[0]" in out, out
    assert "expects 2 arrivals per phase, 1 arrived" in out, out


def test_setmaxnreg_is_a_check_that_the_whole_warpgroup_runs_it():
    out = simulate(setup=SETUP, body="""
        from numba_tma import wgmma

        @cuda.jit
        def k(out, split):
            if cuda.threadIdx.x // 128 == 0:
                if cuda.threadIdx.x < split:
                    wgmma.setmaxnreg(40, "dec")
            else:
                wgmma.setmaxnreg(232, "inc")
            out[cuda.threadIdx.x] = cuda.threadIdx.x // 128

        out = np.zeros(384, np.int32)
        k[1, 384](out, 128)
        print("groups", np.bincount(out).tolist())
        try:
            k[1, 384](out, 64)
        except Exception as exc:
            print("raised", exc)
    """)
    assert "groups [128, 128, 128]" in out, out
    assert "wgmma.setmaxnreg(40, 'dec'): 64 of the 128 threads of warpgroup 0 arrived" in out, out


def test_setmaxnreg_inc_waits_for_registers_and_a_split_beyond_the_block_hangs():
    """384 threads hold 168 registers each at launch: 40 + 2 x 232 (or 24 + 2 x 240) a thread of
    each warpgroup fit, and a consumer's inc that runs before the producer's dec waits for it; 32 +
    2 x 240 does not fit (on the GPU the consumers' inc waits forever) and is reported."""
    out = simulate(setup=SETUP, body="""
        from numba_tma import wgmma

        @cuda.jit
        def k(out, producer, consumer):
            if cuda.threadIdx.x // 128 == 0:
                for _ in range(100):             # (the consumers reach their inc first)
                    cuda.syncwarp()
                wgmma.setmaxnreg(producer, "dec")
            else:
                wgmma.setmaxnreg(consumer, "inc")
            out[cuda.threadIdx.x] = 1

        out = np.zeros(384, np.int32)
        for split in ((40, 232), (24, 240)):
            k[1, 384](out, *split)
            print("fits", split, int(out.sum()))
        try:
            k[1, 384](out, 32, 240)
        except Exception as exc:
            print("raised", exc)
    """)
    assert "fits (40, 232) 384" in out and "fits (24, 240) 384" in out, out
    assert ("wgmma.setmaxnreg(240, 'inc'): warpgroup 1 waits for registers: the other warpgroups hold 272 a thread, "
            "and 272 + 240 is more than the 168 a thread" in out or
            "wgmma.setmaxnreg(240, 'inc'): warpgroup 2 waits for registers" in out), out
