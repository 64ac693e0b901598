"""mbarrier semantics on the GPU, step by step: phase parity on a fresh barrier, the split
transaction forms (expect_tx / complete_tx), arrive_drop shrinking the count, inval and re-init,
state tokens (pending_count, test/try_wait on a token), the sem / scope / suspend_ns variants, and a
warp-specialised TMA pipeline over an S-stage ring with full and empty barriers.

Every probe that must be False is taken while the phase provably cannot have completed (the
missing step comes later, after a ``syncthreads``); a probe that must be True right after the
completing step is taken by the thread that made that step (its own operations on one barrier
are ordered).  Every wait is bounded: a barrier that never completes sets ``status[0]`` instead of
hanging the test.
"""

import functools

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import TensorMap, at, fence, mbarrier, tma

from gpu_support import WAIT_SPINS, bounded_wait

pytestmark = pytest.mark.gpu

FULL_MASK = 0xFFFFFFFF


def new_status():
    return cuda.to_device(np.zeros(1, np.int32))


def check_status(status, what="a barrier phase never completed"):
    assert status.copy_to_host()[0] == 0, what


def run(kernel, threads, nresults, *args):
    """Launch one block of ``threads`` with a result array (filled with 7: never a probe's value)
    and a status flag; the results, after checking the flag."""
    result = cuda.to_device(np.full(nresults, 7, np.int32))
    status = new_status()
    kernel[1, threads](result, *args, status)
    check_status(status)
    return result.copy_to_host().tolist()


@cuda.jit(device=True)
def waited(bar, phase, status):
    """``bounded_wait`` that also says whether the phase completed (False: ``status[0]`` set)."""
    for _ in range(WAIT_SPINS):
        if mbarrier.try_wait(bar, phase):
            return True
    status[0] = 1
    return False


@cuda.jit(device=True)
def waited_token(bar, token, status):
    """A bounded ``try_wait_token`` loop; False (and ``status[0]`` set) if it never completed."""
    for _ in range(WAIT_SPINS):
        if mbarrier.try_wait_token(bar, token):
            return True
    status[0] = 1
    return False


# -- 1. parity ---------------------------------------------------------------------------------------

@cuda.jit
def parity_kernel(result, status):
    bars = cuda.shared.array(1, numba.uint64)
    mbarrier.init(bars, 1)
    fence.mbarrier_init()
    cuda.syncthreads()
    result[0] = mbarrier.test_wait(bars, 0)   # phase 0 is current and incomplete
    result[1] = mbarrier.test_wait(bars, 1)   # the "phase before 0" counts as complete
    mbarrier.arrive(bars)                     # completes phase 0 (count 1); phase 1 is current
    result[2] = mbarrier.test_wait(bars, 0)
    result[3] = mbarrier.test_wait(bars, 1)
    mbarrier.arrive(bars)                     # completes phase 1
    result[4] = mbarrier.test_wait(bars, 0)   # parity 0 now names phase 2, incomplete
    result[5] = mbarrier.test_wait(bars, 1)
    mbarrier.arrive(bars)                     # completes phase 2
    result[6] = mbarrier.test_wait(bars, 0)
    result[7] = mbarrier.test_wait(bars, 1)
    bounded_wait(bars, 0, status)


def test_parity_of_a_fresh_barrier_and_after_each_arrival():
    assert run(parity_kernel, 1, 8) == [0, 1, 1, 0, 0, 1, 1, 0]


# -- 2. split transactions: expect_tx / complete_tx with arrivals (CCCL's arrive_tx cases) ---------------

@cuda.jit
def split_tx_kernel(result, status):
    """``blockDim.x`` threads, count = blockDim.x, each expecting 4 bytes per phase.  Phase 0: every
    byte is delivered first and thread 0's arrival is the last step; phase 1: every thread arrives
    first and thread 0's complete_tx is the last step.  Results (thread 0):
    [0] phase 0 after the expect_tx only, [1] all bytes and all arrivals but one, [2] after the last
    arrival, [3] phase 1 with all arrivals and all bytes but 4, [4] after the last complete_tx,
    [5] parity 0 after phase 1 (phase 2 current)."""
    bars = cuda.shared.array(1, numba.uint64)
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(bars, cuda.blockDim.x)
        fence.mbarrier_init()
    cuda.syncthreads()
    # phase 0: the bytes first, then the arrivals; thread 0 arrives last
    mbarrier.expect_tx(bars, 4)
    cuda.syncthreads()
    if t == 0:
        result[0] = mbarrier.test_wait(bars, 0)
    cuda.syncthreads()
    mbarrier.complete_tx(bars, 4)
    if t != 0:
        mbarrier.arrive(bars)
    cuda.syncthreads()
    if t == 0:
        result[1] = mbarrier.test_wait(bars, 0)   # tx-count 0, one arrival pending
        mbarrier.arrive(bars)
        result[2] = mbarrier.test_wait(bars, 0)
    bounded_wait(bars, 0, status)
    # phase 1: the arrivals first; thread 0 delivers the last 4 bytes
    mbarrier.expect_tx(bars, 4)
    cuda.syncthreads()
    if t != 0:
        mbarrier.complete_tx(bars, 4)
    mbarrier.arrive(bars)
    cuda.syncthreads()
    if t == 0:
        result[3] = mbarrier.test_wait(bars, 1)   # every arrival in, 4 bytes outstanding
        mbarrier.complete_tx(bars, 4)
        result[4] = mbarrier.test_wait(bars, 1)
        result[5] = mbarrier.test_wait(bars, 0)
    bounded_wait(bars, 1, status)


@pytest.mark.parametrize("threads", [256, 32, 1])
def test_phase_needs_every_arrival_and_every_byte(threads):
    assert run(split_tx_kernel, threads, 6) == [0, 0, 1, 0, 1, 0]


# -- 3. arrive_drop lowers the count of every later phase ---------------------------------------------

@cuda.jit
def arrive_drop_kernel(result, status):
    """4 threads, count 4.  Phase 0: threads 0-2 arrive, thread 3 arrive_drop (count 3 from now);
    phase 1: threads 0-2 complete it; phase 2: thread 2 leaves too with arrive_drop_expect_tx(8)
    and then delivers the 8 bytes; phase 3: threads 0 and 1 complete it (count 2)."""
    bars = cuda.shared.array(1, numba.uint64)
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(bars, 4)
        fence.mbarrier_init()
    cuda.syncthreads()
    # phase 0 (4 expected)
    if t < 3:
        mbarrier.arrive(bars)
    cuda.syncthreads()
    if t == 0:
        result[0] = mbarrier.test_wait(bars, 0)   # 3 of 4
    cuda.syncthreads()
    if t == 3:
        mbarrier.arrive_drop(bars)
    bounded_wait(bars, 0, status)
    cuda.syncthreads()
    # phase 1 (3 expected)
    if t < 2:
        mbarrier.arrive(bars)
    cuda.syncthreads()
    if t == 0:
        result[1] = mbarrier.test_wait(bars, 1)   # 2 of 3: the count did not drop by more than one
    cuda.syncthreads()
    if t == 2:
        mbarrier.arrive(bars)
    bounded_wait(bars, 1, status)                 # completes with 3: the count dropped
    cuda.syncthreads()
    if t == 0:
        result[2] = mbarrier.test_wait(bars, 1)
    # phase 2 (3 expected): thread 2 drops out and expects 8 bytes
    if t < 2:
        mbarrier.arrive(bars)
    if t == 2:
        mbarrier.arrive_drop_expect_tx(bars, 8)
    cuda.syncthreads()
    if t == 0:
        result[3] = mbarrier.test_wait(bars, 0)   # every arrival in, 8 bytes outstanding
    cuda.syncthreads()
    if t == 2:
        mbarrier.complete_tx(bars, 8)
        result[4] = mbarrier.test_wait(bars, 0)
    bounded_wait(bars, 0, status)
    cuda.syncthreads()
    # phase 3 (2 expected)
    if t == 0:
        mbarrier.arrive(bars)
    cuda.syncthreads()
    if t == 0:
        result[5] = mbarrier.test_wait(bars, 1)   # 1 of 2
    cuda.syncthreads()
    if t == 1:
        mbarrier.arrive(bars)
    bounded_wait(bars, 1, status)
    cuda.syncthreads()
    if t == 0:
        result[6] = mbarrier.test_wait(bars, 1)


def test_arrive_drop_lowers_the_count_of_later_phases():
    assert run(arrive_drop_kernel, 4, 7) == [0, 0, 1, 0, 1, 0, 1]


# -- 4. inval, then init again -------------------------------------------------------------------------

@cuda.jit
def reinit_kernel(result, status):
    """Count 2, phase 0 completed by two threads; inval; init with count 1: the barrier is at phase
    0 again (parity 0 incomplete, where before it was complete) and one arrival completes it."""
    bars = cuda.shared.array(1, numba.uint64)
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(bars, 2)
        fence.mbarrier_init()
    cuda.syncthreads()
    mbarrier.arrive(bars)
    bounded_wait(bars, 0, status)
    cuda.syncthreads()                            # nobody uses the old barrier any more
    if t == 0:
        result[0] = mbarrier.test_wait(bars, 0)   # phase 0 complete, phase 1 current
        result[1] = mbarrier.test_wait(bars, 1)
        mbarrier.inval(bars)
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
        result[2] = mbarrier.test_wait(bars, 0)   # a fresh phase 0
        result[3] = mbarrier.test_wait(bars, 1)
    cuda.syncthreads()
    if t == 1:
        mbarrier.arrive(bars)                     # one arrival: the new count
        result[4] = mbarrier.test_wait(bars, 0)
        result[5] = mbarrier.test_wait(bars, 1)
    bounded_wait(bars, 0, status)


def test_inval_then_init_starts_over_with_the_new_count():
    assert run(reinit_kernel, 2, 6) == [1, 0, 0, 1, 1, 0]


# -- 5. state tokens -----------------------------------------------------------------------------------

@cuda.jit
def token_kernel(result, status):
    """One thread, count 5: arrive(count=2), arrive(), arrive(count=2) completes phase 0.

    pending_count(token) is the pending count *before* the arrival that returned the token (PTX
    ISA, mbarrier.pending_count: "the pending count of the mbarrier object prior to the arrive-on
    operation from which the state register was obtained"; arrive's token captures the state
    prior to the arrival).  The two readings differ at every step: before = 5, 3, 2; after = 3, 2,
    0 (or 5, the reloaded count).  The sm_90a SASS agrees: init stores 2**20 - count in bits 43-62
    of the barrier word, the arrive returns the word it replaced and pending_count is
    2**20 - those bits of the token.  The PTX ISA defines pending_count only for tokens of
    ``arrive.noComplete`` (``no_complete=True``), used for the first two; the last, completing,
    arrival's token is read too, to record what the hardware does."""
    bars = cuda.shared.array(1, numba.uint64)
    mbarrier.init(bars, 5)
    fence.mbarrier_init()
    cuda.syncthreads()
    first = mbarrier.arrive(bars, count=2, no_complete=True)
    result[0] = mbarrier.pending_count(first)
    result[1] = mbarrier.test_wait_token(bars, first)       # 2 of 5
    second = mbarrier.arrive(bars, count=1, no_complete=True)
    result[2] = mbarrier.pending_count(second)
    result[3] = mbarrier.test_wait_token(bars, first)       # 3 of 5
    result[4] = mbarrier.test_wait_token(bars, second)
    last = mbarrier.arrive(bars, count=2)                   # 5 of 5: phase 0 completes
    result[5] = mbarrier.pending_count(last)                # outside the PTX contract: what the H200 does
    result[6] = mbarrier.test_wait_token(bars, first)
    result[7] = mbarrier.test_wait_token(bars, last)
    result[8] = waited_token(bars, second, status)
    result[9] = mbarrier.test_wait(bars, 0)


def test_tokens_pending_count_and_token_waits():
    assert run(token_kernel, 1, 10) == [5, 0, 3, 0, 0, 2, 1, 1, 1, 1]


@cuda.jit
def token_threads_kernel(result, status):
    """32 threads, count 32, over two phases: each thread's token from phase k is incomplete until
    the last thread (31, after a syncthreads) arrives, then complete for every thread."""
    bars = cuda.shared.array(1, numba.uint64)
    t = cuda.threadIdx.x
    if t == 0:
        mbarrier.init(bars, cuda.blockDim.x)
        fence.mbarrier_init()
    cuda.syncthreads()
    for k in range(2):
        token = numba.uint64(0)
        if t != 31:
            token = mbarrier.arrive(bars)
        cuda.syncthreads()
        if t != 31:
            result[t, 2 * k] = mbarrier.test_wait_token(bars, token)
        cuda.syncthreads()
        if t == 31:
            token = mbarrier.arrive(bars)
        result[t, 2 * k + 1] = waited_token(bars, token, status)
        cuda.syncthreads()


def test_every_threads_token_names_its_phase():
    result = cuda.to_device(np.full((32, 4), 7, np.int32))
    status = new_status()
    token_threads_kernel[1, 32](result, status)
    check_status(status)
    expect = np.tile([0, 1, 0, 1], (32, 1))
    expect[31, 0::2] = 7                  # thread 31 probes nothing before its arrival
    np.testing.assert_array_equal(result.copy_to_host(), expect)


# -- 6. sem / scope / suspend_ns variants ------------------------------------------------------------

@cuda.jit(device=True)
def arrive_plain(bar):
    mbarrier.arrive(bar)


@cuda.jit(device=True)
def arrive_relaxed_cta(bar):
    mbarrier.arrive(bar, sem="relaxed", scope="cta")


@cuda.jit(device=True)
def arrive_cluster(bar):
    mbarrier.arrive(bar, scope="cluster")


@cuda.jit(device=True)
def arrive_release_cta_count(bar):
    mbarrier.arrive(bar, count=1, sem="release", scope="cta")


@cuda.jit(device=True)
def wait_try(bar, phase, status):
    bounded_wait(bar, phase, status)


@cuda.jit(device=True)
def wait_acquire_cluster(bar, phase, status):
    """``mbarrier.wait`` itself cannot be bounded: it runs only once a bounded probe with the same
    ordering saw the phase complete (so it returns at once, unless it checks the wrong parity)."""
    for _ in range(WAIT_SPINS):
        if mbarrier.test_wait(bar, phase, sem="acquire", scope="cluster"):
            mbarrier.wait(bar, phase, sem="acquire", scope="cluster")
            return
    status[0] = 1


@cuda.jit(device=True)
def wait_try_suspend(bar, phase, status):
    for _ in range(WAIT_SPINS):
        if mbarrier.try_wait(bar, phase, suspend_ns=1000):
            return
    status[0] = 1


@cuda.jit(device=True)
def wait_try_relaxed_cluster(bar, phase, status):
    for _ in range(WAIT_SPINS):
        if mbarrier.try_wait(bar, phase, sem="relaxed", scope="cluster"):
            return
    status[0] = 1


# name: (arrive, wait, whether the pair orders the data: a release arrival and an acquire wait)
VARIANTS = {
    "arrive.relaxed.cta + try_wait": (arrive_relaxed_cta, wait_try, False),
    "arrive.release.cluster + wait.acquire.cluster": (arrive_cluster, wait_acquire_cluster, True),
    "arrive + try_wait suspend_ns=1000": (arrive_plain, wait_try_suspend, True),
    "arrive count=1 .release.cta + try_wait.relaxed.cluster": (arrive_release_cta_count, wait_try_relaxed_cluster,
                                                               False),
}
VARIANT_PHASES = 4


@functools.cache
def variant_kernel(name):
    """64 threads; count 2, the arrivals by threads 0 and 32 (two warps) with the variant's arrive,
    each after writing its value for the phase to shared memory; every thread waits with the
    variant's wait.  Row k of ``result`` (thread 0, after phase k): parity k & 1 complete, the other
    parity complete, the two values."""
    arrive, wait, _ = VARIANTS[name]

    @cuda.jit
    def kernel(result, status):
        bars = cuda.shared.array(1, numba.uint64)
        data = cuda.shared.array(2, numba.int32)
        t = cuda.threadIdx.x
        if t == 0:
            mbarrier.init(bars, 2)
            fence.mbarrier_init()
        cuda.syncthreads()
        for k in range(VARIANT_PHASES):
            if t % 32 == 0:
                data[t // 32] = 10 * (k + 1) + t // 32
                arrive(bars)
            wait(bars, k & 1, status)
            if t == 0:
                result[k, 0] = mbarrier.test_wait(bars, k & 1)
                result[k, 1] = mbarrier.test_wait(bars, (k & 1) ^ 1)
                result[k, 2] = data[0]
                result[k, 3] = data[1]
            cuda.syncthreads()

    return kernel


@pytest.mark.parametrize("name", list(VARIANTS))
def test_sem_scope_and_suspend_variants_complete_each_phase(name):
    result = cuda.to_device(np.full((VARIANT_PHASES, 4), 7, np.int32))
    status = new_status()
    variant_kernel(name)[1, 64](result, status)
    check_status(status)
    got = result.copy_to_host()
    np.testing.assert_array_equal(got[:, :2], np.tile([1, 0], (VARIANT_PHASES, 1)))
    if VARIANTS[name][2]:       # release arrival -> acquire wait: the values written before are seen
        np.testing.assert_array_equal(got[:, 2:], [[10 * (k + 1), 10 * (k + 1) + 1] for k in range(VARIANT_PHASES)])


@cuda.jit
def suspend_timeout_kernel(result, status):
    """One thread, count 1: try_wait with a suspend hint on phase 0 before anyone arrived returns
    False once its time is up; after the arrival a bounded loop of it returns True."""
    bars = cuda.shared.array(1, numba.uint64)
    mbarrier.init(bars, 1)
    fence.mbarrier_init()
    cuda.syncthreads()
    result[0] = mbarrier.try_wait(bars, 0, suspend_ns=1000)
    result[1] = mbarrier.try_wait(bars, 1, suspend_ns=1000)   # the phase before 0: complete
    mbarrier.arrive(bars)
    wait_try_suspend(bars, 0, status)
    result[2] = mbarrier.try_wait(bars, 0, suspend_ns=1000)


def test_try_wait_with_suspend_hint_gives_up_on_an_incomplete_phase():
    assert run(suspend_timeout_kernel, 1, 3) == [0, 1, 1]


# -- 7. a warp-specialised TMA pipeline ----------------------------------------------------------------

TILE_ROWS, TILE_COLS = 16, 32              # the TMA box (rows, columns) of float32: 2048 bytes
CONSUMER_WARPS = 4
ROWS_PER_WARP = TILE_ROWS // CONSUMER_WARPS
PIPE_THREADS = 32 * (1 + CONSUMER_WARPS)   # warp 0 produces, warps 1-4 consume


@functools.cache
def pipeline_kernel(stages):
    """Iteration k moves tile k (rows 16k..16k+15) through ring slot k % stages: the producer
    (warp 0, lane 0) waits for the slot to be empty, arrives on full[s] expecting the box's bytes
    and TMA-loads the tile into the slot; each consumer warp waits for full[s], writes its 4 rows
    of 2 * tile + 1 to ``out`` and (one lane, after a syncwarp) arrives on empty[s] (count 4).

    Round r = k // stages of a slot: full[s] completes its phase r when the tile of round r is in,
    so consumers wait parity r & 1; empty[s] completes its phase r when the consumers released
    round r, so before round r the producer waits for phase r - 1, parity (r & 1) ^ 1 -- in
    round 0 that is parity 1, which a fresh barrier reports complete (the test above).  Neither
    barrier can run a phase ahead of its waiter, so a parity never names the wrong phase."""

    @cuda.jit
    def kernel(desc, out, n_iter, status):
        full = cuda.shared.array(stages, numba.uint64)
        empty = cuda.shared.array(stages, numba.uint64)
        ring = cuda.shared.array((stages, TILE_ROWS, TILE_COLS), numba.float32, alignment=128)
        warp, lane = cuda.threadIdx.x // 32, cuda.threadIdx.x % 32
        if cuda.threadIdx.x == 0:
            for s in range(stages):
                mbarrier.init(at(full, s), 1)
                mbarrier.init(at(empty, s), CONSUMER_WARPS)
            fence.mbarrier_init()
        cuda.syncthreads()
        if warp == 0:
            if lane == 0:
                for k in range(n_iter):
                    s = k % stages
                    if not waited(at(empty, s), ((k // stages) & 1) ^ 1, status):
                        break
                    mbarrier.arrive_expect_tx(at(full, s), desc.box_bytes)
                    tma.load(desc, at(ring, s), (0, k * TILE_ROWS), at(full, s))
        else:
            row0 = (warp - 1) * ROWS_PER_WARP
            for k in range(n_iter):
                s = k % stages
                ok = waited(at(full, s), (k // stages) & 1, status)
                if not cuda.all_sync(FULL_MASK, ok):     # the warp leaves together if it timed out
                    break
                for r in range(row0, row0 + ROWS_PER_WARP):
                    out[k * TILE_ROWS + r, lane] = numba.float32(2) * ring[s, r, lane] + numba.float32(1)
                cuda.syncwarp()
                if lane == 0:
                    mbarrier.arrive(at(empty, s))

    return kernel


STAGES = (2, 5, 7)
PIPELINE_CASES = [(s, n) for s in STAGES for n in sorted({1, s - 1, s, s + 1, 3 * s + 1, 1000})]


@pytest.mark.parametrize("stages,n_iter", PIPELINE_CASES, ids=[f"S{s}-n{n}" for s, n in PIPELINE_CASES])
def test_warp_specialised_tma_pipeline(stages, n_iter):
    # distinct integers (exact in float32, as is 2x + 1): a stale or misplaced tile cannot pass
    host = np.arange(n_iter * TILE_ROWS * TILE_COLS, dtype=np.float32).reshape(n_iter * TILE_ROWS, TILE_COLS)
    out = cuda.to_device(np.full(host.shape, -1, np.float32))
    status = new_status()
    desc = TensorMap.tiled(cuda.to_device(host), (TILE_ROWS, TILE_COLS))
    pipeline_kernel(stages)[1, PIPE_THREADS](desc, out, n_iter, status)
    check_status(status, "a pipeline wait timed out")
    np.testing.assert_array_equal(out.copy_to_host(), np.float32(2) * host + np.float32(1))
