"""The simulator as a memory-model checker (issue 21): each planted mistake is reported in at
least 19 of 20 default runs (20 fresh seeds, one subprocess), naming block, thread, op, the
kernel's name of the barrier or array and the missing step; the correct twin of each runs clean
under the same 20 seeds."""

import functools

import pytest

from test_simulator import simulate

SETUP = """
from numba_tma import cluster, dsmem, tensormap, testing
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

FENCE_WHO = """
@cuda.jit
def k(ddesc, issuer_fences):
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    for i in range(cuda.threadIdx.x, 256, cuda.blockDim.x):
        tile[i // 32, i % 32] = i
    cuda.syncthreads()
    if cuda.threadIdx.x == (0 if issuer_fences else 1):
        fence.proxy_async()                      # after the barrier: orders every write for this thread
    if cuda.threadIdx.x == 0:
        tma.store(ddesc, tile, (0, 0))
        tma.commit_group()
        tma.wait_group_read(0)
count(lambda: k[1, 4](ddesc, ISSUER_FENCES))
"""

GLOBAL = """
@cuda.jit
def k(g, gdesc, out, fenced):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    for i in range(cuda.threadIdx.x, 256, cuda.blockDim.x):
        g[i // 32, i % 32] = 2 * i
    if fenced:
        fence.proxy_async("global")
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, 1024)
        tma.load(gdesc, tile, (0, 0), bars)
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]
g = cuda.to_device(np.zeros((32, 32), np.float32))
gdesc = TensorMap.tiled(g, (8, 32))
out = np.zeros(4, np.float32)
count(lambda: k[1, 4](g, gdesc, out, FENCED))
"""

RELEASE = """
@cuda.jit
def k(desc, out, read_first):
    full = cuda.shared.array(1, numba.uint64)
    empty = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    tid = cuda.threadIdx.x
    if tid == 0:
        mbarrier.init(full, 1)
        mbarrier.init(empty, 3)
        fence.mbarrier_init()
    cuda.syncthreads()
    for it in range(3):
        if tid == 0:                             # the producer refills the slot once it is released
            mbarrier.wait(empty, (it & 1) ^ 1)
            mbarrier.arrive_expect_tx(full, 1024)
            tma.load(desc, tile, (0, 8 * it), full)
        else:
            mbarrier.wait(full, it & 1)
            if read_first:
                out[it, tid] = tile[0, tid]
                mbarrier.arrive(empty)
            else:
                mbarrier.arrive(empty)           # releases the slot before reading it
                out[it, tid] = tile[0, tid]
out = np.zeros((3, 4), np.float32)
count(lambda: k[1, 4](desc, out, READ_FIRST))
"""

RELAXED = (RELEASE.replace("READ_FIRST", "FENCED").replace("def k(desc, out, read_first):", "def k(desc, out, fenced):")
           .replace("""            if read_first:
                out[it, tid] = tile[0, tid]
                mbarrier.arrive(empty)
            else:
                mbarrier.arrive(empty)           # releases the slot before reading it
                out[it, tid] = tile[0, tid]
""", """            out[it, tid] = tile[0, tid]
            if fenced:
                fence.acq_rel("cta")             # a relaxed arrival after a fence: the release pattern
            mbarrier.arrive(empty, sem="relaxed")
"""))
assert 'sem="relaxed"' in RELAXED and "read_first" not in RELAXED, "RELEASE's text changed: rewrite RELAXED"

REUSE = """
@cuda.jit
def k(ddesc, waits):
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    for it in range(2):
        for i in range(cuda.threadIdx.x, 256, cuda.blockDim.x):
            tile[i // 32, i % 32] = i + it
        fence.proxy_async()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            tma.store(ddesc, tile, (0, 8 * it))
            tma.commit_group()
            if waits:
                tma.wait_group_read(0)
        cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        tma.wait_group_read(0)
count(lambda: k[1, 4](ddesc, WAITS))
"""

EDITED = """
@cuda.jit
def k(template, descs, out, release, acquire):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        tensormap.copy(descs, template)
        tensormap.replace_global_dim(descs, 1, 16)
        if release:
            fence.proxy_tensormap_release()
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 1:
        if acquire:
            fence.proxy_tensormap_acquire(descs)
        mbarrier.arrive_expect_tx(bars, 1024)
        tma.load(descs, tile, (0, 0), bars)
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]
descs = cuda.to_device(np.zeros(128, np.uint8))
out = np.zeros(4, np.float32)
count(lambda: k[1, 4](desc, descs, out, RELEASE, ACQUIRE))
"""

MAPPED = """
@cuda.jit
def k(out, synced):
    buf = cuda.shared.array(4, numba.uint32)
    buf[cuda.threadIdx.x] = cuda.threadIdx.x + 10 * cluster.ctarank()
    if synced:
        cluster.sync()
    else:
        cuda.syncthreads()                       # orders this block's writes only
    peer = cluster.map_shared(buf, 1 - cluster.ctarank())
    out[cluster.ctarank(), cuda.threadIdx.x] = peer[cuda.threadIdx.x]
    cluster.sync()
out = np.zeros((2, 4), np.uint32)
count(lambda: numba_tma.launch(k, 2, 4, out, SYNCED, cluster=(2, 1, 1)))
"""

INIT_FENCE = """
@cuda.jit
def k(desc, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        FENCE
    cuda.syncthreads()
    if cuda.threadIdx.x == 1:                    # another thread's copy: the async proxy completes on bars
        mbarrier.arrive_expect_tx(bars, 1024)
        tma.load(desc, tile, (0, 0), bars)
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]
out = np.zeros(4, np.float32)
count(lambda: k[1, 4](desc, out))
"""

REMOTE_INIT_FENCE = """
@cuda.jit
def k(out):
    bars = cuda.shared.array(1, numba.uint64)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 2)                   # this block's arrival and the other block's
        FENCE
    cluster.sync()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_remote(bars, 1 - cluster.ctarank())
        mbarrier.arrive(bars)
        mbarrier.wait(bars, 0)
        out[cluster.ctarank()] = 1
    cluster.sync()
out = np.zeros(2, np.uint32)
count(lambda: numba_tma.launch(k, 2, 2, out, cluster=(2, 1, 1)))
"""

SHORT_EXPECT = """
@cuda.jit
def k(desc, out, nbytes):
    bars = cuda.shared.array(1, numba.uint64)
    tiles = cuda.shared.array((2, 8, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, nbytes)  # two boxes complete on bars
        tma.load(desc, tiles[0], (0, 0), bars)
        tma.load(desc, tiles[1], (0, 8), bars)
    mbarrier.wait(bars, 0)
    for s in range(2):
        out[s, cuda.threadIdx.x] = tiles[s, 0, cuda.threadIdx.x]
out = np.zeros((2, 4), np.float32)
count(lambda: k[1, 4](desc, out, NBYTES))
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
    "multicast_bytes_not_announced": (   # by the schedule: read in flight, refill after a read, or bytes early
        UNANNOUNCED, {"ANNOUNCE": "False"}, {"ANNOUNCE": "True"},
        ["block (1, 0, 0)", ("reads tile[", "tma.load writes tile[", "the transaction count of bars[0]",
                             "completes with 0 bytes announced")]),
    "wrong_parity": (PARITY, {"FLIP": "False"}, {"FLIP": "True"}, ["parity 0", "bars[0]", "phase"]),
    "store_fenced_by_a_thread_that_does_not_issue_it": (
        FENCE_WHO, {"ISSUER_FENCES": "False"}, {"ISSUER_FENCES": "True"},
        ["thread (0, 0, 0) of block (0, 0, 0): tma.store reads src tile[0] (allocated at kernel.py:",
         "which this thread wrote with ordinary stores", "fence.proxy_async() in the thread that issues the tma.store"]),
    "global_writes_loaded_by_tma_without_a_global_fence": (
        GLOBAL, {"FENCED": "False"}, {"FENCED": "True"},
        ["thread (0, 0, 0) of block (0, 0, 0): tma.load reads g[0, 0] (kernel argument g), which this thread wrote",
         'Missing step: fence.proxy_async("global") after the writes']),
    "refill_of_a_slot_released_before_its_reads": (
        RELEASE, {"READ_FIRST": "False"}, {"READ_FIRST": "True"},
        ["thread (0, 0, 0) of block (0, 0, 0): tma.load writes tile[1] (allocated at kernel.py:",
         "which thread (1, 0, 0) read with no barrier ordering that read before this tma.load",
         "mbarrier.arrive on its 'empty' barrier"]),
    "refill_of_a_slot_released_by_a_relaxed_arrival_without_a_fence": (
        RELAXED, {"FENCED": "False"}, {"FENCED": "True"},
        ["tma.load writes tile[", "read with no barrier ordering that read before this tma.load"]),
    "store_source_rewritten_before_wait_group_read": (
        REUSE, {"WAITS": "False"}, {"WAITS": "True"},
        ["of block (0, 0, 0): writes tile[", "(allocated at kernel.py:", "which the tma.store issued by ",
         "thread (0, 0, 0) of block (0, 0, 0)", "may still read", "tma.commit_group() and tma.wait_group_read(0)"]),
    "edited_tensormap_not_released": (
        EDITED, {"RELEASE": "False", "ACQUIRE": "True"}, {"RELEASE": "True", "ACQUIRE": "True"},
        ["thread (1, 0, 0) of block (0, 0, 0): tma.load uses the descriptor descs[0] (kernel argument descs), which "
         "thread (0, 0, 0) of block (0, 0, 0) edited in memory (tensormap.replace_global_dim) and did not release",
         "Missing step: fence.proxy_tensormap_release() in that thread"]),
    "edited_tensormap_not_acquired": (
        EDITED, {"RELEASE": "True", "ACQUIRE": "False"}, {"RELEASE": "True", "ACQUIRE": "True"},
        ["thread (1, 0, 0) of block (0, 0, 0): tma.load uses the descriptor descs[0]",
         "released it, but this thread did not acquire it",
         "Missing step: fence.proxy_tensormap_acquire(desc) in this thread"]),
    "init_without_fence_before_an_async_copy": (
        INIT_FENCE, {"FENCE": "pass"}, {"FENCE": "fence.mbarrier_init()"},
        ["thread (1, 0, 0) of block (0, 0, 0): tma.load completes its bytes on bars[0] (allocated at kernel.py:",
         "its mbarrier.init by thread (0, 0, 0) of block (0, 0, 0) was not followed by fence.mbarrier_init()",
         "Missing step: fence.mbarrier_init() after mbarrier.init in the initialising thread"]),
    "init_without_fence_used_by_another_block": (
        REMOTE_INIT_FENCE, {"FENCE": "pass"}, {"FENCE": "fence.mbarrier_init()"},
        ["mbarrier.arrive_remote on bars[0] (allocated at kernel.py:", "whose mbarrier.init by thread (0, 0, 0) of "
         "block (", "was not followed by fence.mbarrier_init() before the cluster barrier that published it",
         "Missing step: fence.mbarrier_init() after mbarrier.init in the initialising thread, before its "
         "cluster.sync()"]),
    "multicast_init_without_fence": (
        MULTICAST_INIT.replace("        fence.mbarrier_init()\n", "        FENCE\n"),
        {"CLUSTER_WIDE": "True", "FENCE": "pass"}, {"CLUSTER_WIDE": "True", "FENCE": "fence.mbarrier_init()"},
        ["tma.load", "bars[0]", "was not followed by fence.mbarrier_init()", "Missing step: fence.mbarrier_init()"]),
    "too_few_expected_bytes_with_nothing_refilled": (
        SHORT_EXPECT, {"NBYTES": "1024"}, {"NBYTES": "2048"},
        ["phase 0 of bars[0] (allocated at kernel.py:", "in block (0, 0, 0) completes with 1024 bytes announced",
         "the tma.load issued by thread (0, 0, 0) of block (0, 0, 0) into tiles[", "too few expected bytes",
         "announce every byte the copies of a phase bring (2048 here)"]),
    "map_shared_read_before_a_cluster_barrier": (
        MAPPED, {"SYNCED": "False"}, {"SYNCED": "True"},
        [" of block (", ") reads buf[", "(allocated at kernel.py:", "through cluster.map_shared, which thread (",
         "wrote with no barrier ordering that write before this read",
         "Missing step: cluster.sync() in every block after the writes"]),
}


def _body(template, values):
    for key, value in values.items():
        template = template.replace(key, value)
    return template


@functools.cache
def _outputs() -> dict:
    """Every case's planted mistake and correct twin, run in one simulator child (one start-up for
    them all): ``{(case, "planted" or "correct"): what its count() printed}``."""
    body = ""
    for case in sorted(CASES):
        template, planted, correct, _ = CASES[case]
        for kind, values in (("planted", planted), ("correct", correct)):
            body += f'\nprint("=== {case} {kind}")\n' + _body(template, values)
    out = simulate(body, setup=SETUP, timeout=900)
    parts = {}
    for chunk in out.split("=== ")[1:]:
        head, _, text = chunk.partition("\n")
        parts[tuple(head.split())] = text
    return parts


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_planted_mistake_is_reported_in_19_of_20_runs(case):
    template, planted, correct, words = CASES[case]
    out = _outputs()[case, "planted"]
    reported = int(out.split("reported ")[1].split()[0])
    print(f"{case}: reported in {reported} of 20 runs")
    assert reported >= 19, out
    message = out.split("message ", 1)[1]
    for word in words:                   # a tuple: one of its alternatives
        assert any(w in message for w in (word if isinstance(word, tuple) else (word,))), (word, message)
    assert "NUMBA_TMA_SIM_SEED=" in message, message


@pytest.mark.parametrize("case", sorted(CASES))
def test_its_correct_twin_runs_clean_under_20_seeds(case):
    out = _outputs()[case, "correct"]
    assert "reported 0 of 20" in out, out


def test_a_relaxed_arrival_publishes_only_what_a_fence_of_reaching_scope_covered():
    from types import SimpleNamespace

    from numba_tma.simulator.scheduler import relaxed_release

    home, other = object(), object()
    row = [3, 1]
    unfenced = SimpleNamespace(fenced=None, block=home)
    assert relaxed_release(unfenced, home) is None                     # a relaxed arrival orders nothing
    cta = SimpleNamespace(fenced=(row, "cta"), block=home)
    assert relaxed_release(cta, home) is row
    assert relaxed_release(cta, other) is None                         # a CTA fence does not reach a peer block
    cluster_wide = SimpleNamespace(fenced=(row, "cluster"), block=home)
    assert relaxed_release(cluster_wide, other) is row


ORDINARY_USE = """
@cuda.jit
def k(out):
    bars = cuda.shared.array(1, numba.uint64)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 4)
    cuda.syncthreads()                           # orders the init for the block's ordinary arrivals and waits
    mbarrier.arrive(bars)
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = 1
out = np.zeros(4, np.float32)
count(lambda: k[1, 4](out))
"""


@pytest.mark.parametrize("kernel", [ORDINARY_USE, INIT_FENCE.replace("FENCE", 'fence.proxy_async("shared::cta")')],
                         ids=["ordinary_arrivals_after_syncthreads", "proxy_fence_of_the_initialising_thread"])
def test_an_init_without_its_fence_is_not_reported_where_the_rule_does_not_ask_for_it(kernel):
    """The missing init fence is a hazard for the async proxy and for other blocks only: the other
    threads of the block see the init through cuda.syncthreads(), and the initialising thread's
    fence.proxy_async("shared::cta") makes it visible to this block's async proxy (the CUDA guide's
    pattern)."""
    out = simulate(kernel, setup=SETUP)
    assert "reported 0 of 20" in out, out
