"""The simulator as a memory-model checker (issue 21): each planted mistake is reported in at
least 19 of 20 default runs (20 fresh seeds, one subprocess), naming block, thread, op, the
kernel's name of the barrier or array and the missing step; the correct twin of each runs clean
under the same 20 seeds."""

import pytest

from test_simulator import simulate

SETUP = """
from numba_tma import cluster, dsmem, testing
def count(launch, n=20):
    runs = testing.run_seeds(launch, n)
    bad = [r for r in runs if r.error is not None]
    print("reported", len(bad), "of", len(runs))
    for r in bad[:1]:
        print("message", r.error)
src = cuda.to_device(np.arange(32 * 32, dtype=np.float32).reshape(32, 32))
desc = TensorMap.tiled(src, (8, 32))            # 1 KiB boxes
dst = cuda.to_device(np.zeros((32, 32), np.float32))
ddesc = TensorMap.tiled(dst, (8, 32))
"""

STORE = """
@cuda.jit
def k(ddesc, fenced):
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    for i in range(cuda.threadIdx.x, 256, cuda.blockDim.x):
        tile[i // 32, i % 32] = i
    if fenced:
        fence.proxy_async()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        tma.store(ddesc, tile, (0, 0))
        tma.commit_group()
        tma.wait_group_read(0)
count(lambda: k[1, 4](ddesc, FENCED))
"""

MULTICAST_INIT = """
@cuda.jit
def k(desc, out, cluster_wide):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    if cluster_wide:
        cluster.sync()
    else:
        cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, 1024)
        if cluster.ctarank() == 0:
            tma.load(desc, tile, (0, 0), bars, multicast=0b11)
    mbarrier.wait(bars, 0)
    out[cluster.ctarank(), cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]
    cluster.sync()
out = np.zeros((2, 4), np.float32)
count(lambda: numba_tma.launch(k, 2, 4, desc, out, CLUSTER_WIDE, cluster=(2, 1, 1)))
"""

EXIT_REMOTE = """
@cuda.jit
def k(out, arrive, waits):
    bars = cuda.shared.array(1, numba.uint64)
    buf = cuda.shared.array(4, numba.uint32, alignment=16)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cluster.sync()
    rank = cluster.ctarank()
    if rank == 0 and cuda.threadIdx.x == 0:
        if arrive:
            mbarrier.arrive_remote(bars, 1)
        else:
            dsmem.store_async(buf, numba.uint32(7), bars, 1)
    if rank == 1 and cuda.threadIdx.x == 0:
        if not arrive:
            mbarrier.arrive_expect_tx(bars, 4)
        if waits:
            mbarrier.wait(bars, 0)
            out[0] = buf[0]
out = np.zeros(1, np.uint32)
count(lambda: numba_tma.launch(k, 2, 2, out, ARRIVE, WAITS, cluster=(2, 1, 1)))
"""

RING = """
@cuda.jit
def k(desc, out, right):
    bars = cuda.shared.array(2, numba.uint64)
    tiles = cuda.shared.array((2, 8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        for s in range(2):
            mbarrier.init(bars[s:], 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        for s in range(2):
            mbarrier.arrive_expect_tx(bars[s:], 1024)
            tma.load(desc, tiles[s], (0, 8 * s), bars[s:])
    if right:
        mbarrier.wait(bars, 0)
        mbarrier.wait(bars[1:], 0)
    else:
        mbarrier.wait(bars, 0)                   # slot 1 is read after waiting on slot 0's barrier only
    for s in range(2):
        out[s, cuda.threadIdx.x] = tiles[s, 0, cuda.threadIdx.x]
out = np.zeros((2, 4), np.float32)
count(lambda: k[1, 4](desc, out, RIGHT))
"""

UNANNOUNCED = """
@cuda.jit
def k(desc, out, announce):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cluster.sync()
    rank = cluster.ctarank()
    if cuda.threadIdx.x == 0:
        if announce or rank == 0:
            mbarrier.arrive_expect_tx(bars, 1024)
        else:
            mbarrier.arrive(bars)                # block 1 forgets to announce the multicast's bytes
        if rank == 0:
            tma.load(desc, tile, (0, 0), bars, multicast=0b11)
    mbarrier.wait(bars, 0)
    out[rank, cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]
    cluster.sync()
out = np.zeros((2, 4), np.float32)
count(lambda: numba_tma.launch(k, 2, 4, desc, out, ANNOUNCE, cluster=(2, 1, 1)))
"""

PARITY = """
@cuda.jit
def k(desc, out, flip):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    for it in range(3):
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, 1024)
            tma.load(desc, tile, (0, 8 * it), bars)
        mbarrier.wait(bars, it & 1 if flip else 0)
        out[it, cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]
        cuda.syncthreads()
out = np.zeros((3, 4), np.float32)
count(lambda: k[1, 4](desc, out, FLIP))
"""

CASES = {
    "store_without_fence": (STORE, {"FENCED": "False"}, {"FENCED": "True"},
                            ["tma.store reads src tile[", "fence.proxy_async()", "thread (0, 0, 0) of block (0, 0, 0)"]),
    "multicast_init_without_cluster_sync": (MULTICAST_INIT, {"CLUSTER_WIDE": "False"}, {"CLUSTER_WIDE": "True"},
                                            ["bars[0]", "cluster.sync()", "tma.load", "block (1, 0, 0)"]),
    "exit_with_dsmem_store_in_flight": (EXIT_REMOTE, {"ARRIVE": "False", "WAITS": "False"},
                                        {"ARRIVE": "False", "WAITS": "True"}, ["dsmem.store_async", "block (1, 0, 0)"]),
    "exit_with_remote_arrival_in_flight": (EXIT_REMOTE, {"ARRIVE": "True", "WAITS": "False"},
                                           {"ARRIVE": "True", "WAITS": "True"},
                                           ["mbarrier.arrive_remote", "block (1, 0, 0)", "cluster.sync()"]),
    "ring_slot_read_after_the_wrong_wait": (RING, {"RIGHT": "False"}, {"RIGHT": "True"},
                                            ["reads tiles[256]", "tma.load", "still in flight"]),
    "multicast_bytes_not_announced": (UNANNOUNCED, {"ANNOUNCE": "False"}, {"ANNOUNCE": "True"},
                                      ["tile[", "block (1, 0, 0)"]),
    "wrong_parity": (PARITY, {"FLIP": "False"}, {"FLIP": "True"}, ["parity 0", "bars[0]", "phase"]),
}


def _body(template, values):
    for key, value in values.items():
        template = template.replace(key, value)
    return template


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_planted_mistake_is_reported_in_19_of_20_runs(case):
    template, planted, correct, words = CASES[case]
    out = simulate(_body(template, planted), setup=SETUP)
    reported = int(out.split("reported ")[1].split()[0])
    print(f"{case}: reported in {reported} of 20 runs")
    assert reported >= 19, out
    message = out.split("message ", 1)[1]
    for word in words:
        assert word in message, (word, message)
    assert "NUMBA_TMA_SIM_SEED=" in message, message


@pytest.mark.parametrize("case", sorted(CASES))
def test_its_correct_twin_runs_clean_under_20_seeds(case):
    template, planted, correct, words = CASES[case]
    out = simulate(_body(template, correct), setup=SETUP)
    assert "reported 0 of 20" in out, out
