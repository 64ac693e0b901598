"""numba_tma.pipeline: its checks (at construction, at compile time, under the simulator), its cost
in SASS against the hand-written ring, and its data on the GPU and under the simulator."""

import re

import numba
import numpy as np
import pytest
from numba import cuda

import numba_tma
from numba_tma import SharedMemoryPlan, TensorMap, at, cluster, pipeline, sync, testing, tma
from numba_tma import inspect as tma_inspect
from numba_tma.errors import OpArgumentError
from numba_tma.shared_memory import SharedMemoryPlanError

from test_simulator import simulate

SIMULATED = numba_tma.ops.SIMULATOR


# -- 1. configurations refused where they are made --------------------------------------------------

@pytest.mark.parametrize("make, match", [
    (lambda: pipeline.TmaPipeline(0), r"TmaPipeline: argument 'stages' must be an integer from 1 to 64; got 0"),
    (lambda: pipeline.TmaPipeline(65), r"'stages' must be an integer from 1 to 64; got 65"),
    (lambda: pipeline.TmaPipeline("4"), r"'stages' must be an integer from 1 to 64; got '4'"),
    (lambda: pipeline.TmaPipeline(2, consumers=4),
     r"'consumers' must be pipeline.threads\(n\), pipeline.warps\(n\) or pipeline.warpgroups\(n\); got 4"),
    (lambda: pipeline.TmaPipeline(2, producer=pipeline.warps(2)),
     r"'producer' must be threads\(1\) \(one thread issues\) or warps\(1\)"),
    (lambda: pipeline.TmaPipeline(2, consumers=pipeline.same_thread(), cluster=True),
     r"'consumers' may be same_thread\(\) only with producer=threads\(1\) and no cluster"),
    (lambda: pipeline.TmaPipeline(2, cluster=1), r"'cluster' must be True or False; got 1"),
    (lambda: pipeline.TmaPipeline(2, reads="tma"), r"TmaPipeline: argument 'reads' must be 'loads' \(the consumers read stages with ordinary loads\) or 'wgmma'"),
    (lambda: pipeline.warps(0), r"pipeline.warps: argument 'count' must be an integer from 1 to 1048575; got 0"),
    (lambda: pipeline.warpgroups(1 << 18), r"pipeline.warpgroups: argument 'count' must be an integer from 1 to 262143"),
    (lambda: pipeline.AsyncPipeline(3, producers=pipeline.threads(-1)), r"'count' must be an integer"),
])
def test_a_configuration_is_refused_naming_the_argument(make, match):
    with pytest.raises(OpArgumentError, match=match):
        make()


def test_counts_follow_from_the_participants():
    ring = pipeline.TmaPipeline(3, consumers=pipeline.warpgroups(2))
    assert (ring.full_count, ring.empty_count, ring.barrier_count) == (1, 8, 6)     # one arrival per warp
    assert pipeline.AsyncPipeline(2, producers=pipeline.threads(128), consumers=pipeline.warps(3)).full_count == 128
    assert pipeline.TmaPipeline(5, consumers=pipeline.same_thread()).barrier_count == 5    # no empty barriers


def test_a_plan_reserves_the_ring_barriers():
    plan = SharedMemoryPlan().pipeline("ring", pipeline.TmaPipeline(4))
    assert plan.layout["ring"][1] == (8,)
    with pytest.raises(SharedMemoryPlanError, match=r"ring: pipeline=TmaStorePipeline\(stages=2\) must be a "):
        SharedMemoryPlan().pipeline("ring", pipeline.TmaStorePipeline(2))


# -- 2. refused at compile time ----------------------------------------------------------------------------

RING4 = pipeline.TmaPipeline(4, consumers=pipeline.warps(1))
RING2 = pipeline.TmaPipeline(2)
ASYNC = pipeline.AsyncPipeline(2, producers=pipeline.threads(32), consumers=pipeline.threads(32))
MAP = TensorMap.numba_type(numba.float32, (8, 32))


def _compile(body):
    source = ("def k(desc, out):\n    bars = cuda.shared.array(8, numba.uint64)\n"
              "    tiles = cuda.shared.array((4, 8, 32), numba.float32, alignment=128)\n"
              + "".join(f"    {line}\n" for line in body.strip().splitlines()))
    scope = dict(cuda=cuda, numba=numba, at=at, tma=tma, RING4=RING4, RING2=RING2, ASYNC=ASYNC)
    exec(source, scope)
    return tma_inspect.compile(cuda.jit(scope["k"]), (MAP, numba.float32[::1]), "sm_90a")


@pytest.mark.skipif(SIMULATED, reason="compiles")
@pytest.mark.parametrize("body, match", [
    ("ring = RING4.create(bars)\nring.acquire(RING2.create(bars).producer_state(), desc)",
     r"TmaPipeline.acquire: argument 'state' must be a PipelineState of this ring \(4 stages"),
    ("ring = RING4.create(bars)\nring.acquire(ring.producer_state())",
     r"TmaPipeline.acquire: argument 'expect' is needed by a TmaPipeline"),
    ("ring = RING4.create(bars)\nring.acquire(ring.producer_state(), 1 << 20)",
     r"argument 'expect' must be from 1 to 1048575 bytes per stage \(what one mbarrier phase can count\); got 1048576"),
    ("ring = RING4.create(bars)\nring.acquire(ring.producer_state(), 1.5)",
     r"argument 'expect' must be a TensorMap, a tuple of them, or a byte count"),
    ("ring = RING4.create(out)", r"TmaPipeline.create: argument 'bars' must be a 1-D uint64 shared array of 8 mbarriers"),
    ("ring = ASYNC.create(bars)\nring.acquire(ring.producer_state(), desc)",
     r"AsyncPipeline.acquire: argument 'expect' must be left out"),
    ("ring = ASYNC.create(bars)\nring.load(ring.producer_state(), desc, tiles, (0, 0))",
     r"AsyncPipeline.load: argument 'self' is a AsyncPipeline: load\(\) is a step of TmaPipeline"),
    ("ring = RING4.create(bars)\nring.commit(ring.producer_state())",
     r"TmaPipeline.commit: argument 'self' is a TmaPipeline: commit\(\) is a step of AsyncPipeline"),
])
def test_misuse_is_refused_at_compile_time(body, match):
    with pytest.raises(Exception, match=match):
        _compile(body)


@pytest.mark.skipif(SIMULATED, reason="compiles")
def test_a_ring_expects_the_box_bytes_of_a_map_in_global_memory():
    """``TensorMap.to_device()``'s array says its layout: ``acquire`` expects its 1024 box bytes (8 x
    32 float32) as for the by-value map, a constant of the PTX (PTX ISA 9.1, 9.7.13.15.13 mbarrier.arrive:
    ``mbarrier.arrive.expect_tx.shared::cta.b64 state, [addr], txCount``)."""
    from numba_tma.intrinsics.tensor_map_type import global_map_type

    source = ("def k(desc, out):\n    bars = cuda.shared.array(8, numba.uint64)\n"
              "    ring = RING4.create(bars)\n    ring.acquire(ring.producer_state(), desc)\n")
    scope = dict(cuda=cuda, numba=numba, RING4=RING4)
    exec(source, scope)
    ptx = tma_inspect.compile(cuda.jit(scope["k"]), (global_map_type(MAP.layout), numba.float32[::1]), "sm_90a").ptx
    count = re.search(r"mov\.u32\s+(%r\d+), 1024;", ptx)
    assert count and re.search(rf"mbarrier\.arrive\.expect_tx\.shared::cta\.b64 %rd\d+, \[%r\d+\], {count[1]};", ptx)


# -- 3. misuse reported under the simulator, in the pipeline's terms ------------------------------------------

_SIM_SETUP = """
from numba_tma import pipeline
RING = pipeline.TmaPipeline(2, consumers=pipeline.threads(32))

def launch_ring(consume):
    @cuda.jit
    def k(src, out):
        bars = cuda.shared.array(4, numba.uint64)
        tiles = cuda.shared.array((2, 8, 32), numba.float32, alignment=128)
        ring = RING.create(bars)
        if cuda.threadIdx.x == 32:
            p = ring.producer_state()
            for i in range(4):
                ring.acquire(p, src)
                tma.load(src, at(tiles, p.index), (0, 0), ring.full(p))
                p = p.advance()
        elif cuda.threadIdx.x < 32:
            consume(ring, tiles, out)
    x = np.arange(256, dtype=np.float32).reshape(8, 32)
    out = np.zeros(32, np.float32)
    try:
        k[1, 33](TensorMap.tiled(x, (8, 32)), out)
    except Exception as exc:
        print("REPORT:", exc)
    return out
"""


@pytest.mark.parametrize("consume, expected", [
    ("""c = ring.consumer_state()
for i in range(4):
    ring.release(c)
    c = c.advance()""",
     "TmaPipeline(stages=2, consumers=threads(32), producer=threads(1)): release: stage 0 (phase 0) released "
     "without a wait for it by this thread"),
    ("""c = ring.consumer_state()
for i in range(4):
    ring.wait(c)
    ring.release(c)
    ring.release(c)
    c = c.advance()""", "stage 0 (phase 0) released without a wait for it by this thread (ring.wait(state) first; "
                        "or it was released twice)"),
    ("""c = ring.consumer_state()
for i in range(4):
    ring.wait(c)
    ring.release(c)
    out[cuda.threadIdx.x] += tiles[c.index, 0, cuda.threadIdx.x]
    c = c.advance()""", "(allocated at kernel.py:15): TmaPipeline(stages=2, consumers=threads(32), producer=threads(1)): "
                        "stage 0 (phase 0) was released by this thread, and its producer may refill it at any time"),
    ("""c = ring.producer_state()
for i in range(4):
    ring.wait(c)
    out[cuda.threadIdx.x] += tiles[c.index, 0, cuda.threadIdx.x]
    ring.release(c)
    c = c.advance()""", "wait: stage 0 waited at phase 1, which returns at once without the stage's data: full[0] is "
                        "in round 0 and has completed no round yet (a parity wait counts the phase before a fresh "
                        "barrier's first as complete). The phase expected is 0 (round 0 of stage 0): consumers start "
                        "at ring.consumer_state() (phase 0)"),
    ("""c = ring.consumer_state()
for i in range(4):
    ring.wait(c)
    out[cuda.threadIdx.x] += tiles[c.index, 0, cuda.threadIdx.x]
    ring.release(c)
    if i != 1:
        c = c.advance()""", "wait: stage 1 waited at phase 0, which returns at once without the stage's data: full[1] "
                            "is in round 1 and this thread already waited for its round 0. The phase expected is 1 "
                            "(round 1 of stage 1): advance the state once after each stage"),
])
def test_consumer_misuse_is_reported_in_the_pipeline_terms(consume, expected):
    body = "def consume(ring, tiles, out):\n" + "".join(f"    {line}\n" for line in consume.splitlines())
    out = simulate(body + "\nlaunch_ring(cuda.jit(device=True)(consume))\n", setup=_SIM_SETUP)
    assert "REPORT:" in out and expected in out, out


def test_an_acquire_without_advancing_is_reported():
    out = simulate("""
        RING1 = pipeline.TmaPipeline(2)

        @cuda.jit
        def k(src):
            bars = cuda.shared.array(4, numba.uint64)
            tiles = cuda.shared.array((2, 8, 32), numba.float32, alignment=128)
            ring = RING1.create(bars)
            p = ring.producer_state()
            ring.acquire(p, src)
            tma.load(src, at(tiles, p.index), (0, 0), ring.full(p))
            ring.acquire(p, src)

        try:
            k[1, 1](TensorMap.tiled(np.zeros((8, 32), np.float32), (8, 32)))
        except Exception as exc:
            print("REPORT:", exc)
    """, setup="from numba_tma import pipeline\n")
    assert ("REPORT:" in out and "acquire: stage 0 acquired again in the same round (phase 1): the state was not "
            "advanced" in out), out


def test_too_few_expected_bytes_are_reported_with_no_more_k_steps_than_stages():
    """Two maps loaded into each stage, the bytes of one announced: each stage's phase would complete
    with the second load in flight; with two K steps and two stages nothing refills a stage, so no
    refill reports it: the phase's completion does, naming the bytes announced and those due."""
    out = simulate("""
        RING2 = pipeline.TmaPipeline(2, consumers=pipeline.threads(32))

        @cuda.jit
        def k(a, b, out, both):
            bars = cuda.shared.array(4, numba.uint64)
            ta = cuda.shared.array((2, 8, 32), numba.float32, alignment=128)
            tb = cuda.shared.array((2, 8, 32), numba.float32, alignment=128)
            ring = RING2.create(bars)
            if cuda.threadIdx.x == 32:
                p = ring.producer_state()
                for i in range(2):
                    if both:
                        ring.acquire(p, (a, b))
                    else:
                        ring.acquire(p, a)               # the bytes of b are not announced
                    tma.load(a, at(ta, p.index), (0, 0), ring.full(p))
                    tma.load(b, at(tb, p.index), (0, 0), ring.full(p))
                    p = p.advance()
            elif cuda.threadIdx.x < 32:
                c = ring.consumer_state()
                for i in range(2):
                    ring.wait(c)
                    out[cuda.threadIdx.x] += ta[c.index, 0, cuda.threadIdx.x] + tb[c.index, 0, cuda.threadIdx.x]
                    ring.release(c)
                    c = c.advance()

        x = TensorMap.tiled(np.arange(256, dtype=np.float32).reshape(8, 32), (8, 32))
        for both in (False, True):
            out = np.zeros(32, np.float32)
            runs = testing.run_seeds(lambda: k[1, 33](x, x, out, both), 10)
            bad = [r.error for r in runs if r.error is not None]
            print("both" if both else "one", "reported", len(bad), "of", len(runs), *bad[:1])
    """, setup="from numba_tma import pipeline, testing\n")
    assert "both reported 0 of 10" in out, out
    assert "one reported 10 of 10" in out, out
    for words in ("phase 0 of bars[", "(allocated at kernel.py:",
                  ") in block (0, 0, 0) completes with 1024 bytes announced",
                  "(1024 more bytes, issued in this phase) is still in flight: too few expected bytes",
                  "announce every byte the copies of a phase bring (2048 here)",
                  "ring.acquire(state, (desc_a, desc_b))"):
        assert words in out, (words, out)


def test_a_prime_after_the_first_round_is_reported():
    out = simulate("""
        RING1 = pipeline.TmaPipeline(1)

        @cuda.jit
        def k(src):
            bars = cuda.shared.array(2, numba.uint64)
            tiles = cuda.shared.array((1, 8, 32), numba.float32, alignment=128)
            ring = RING1.create(bars)
            p = ring.producer_state()
            ring.prime(p, src)
            tma.load(src, at(tiles, p.index), (0, 0), ring.full(p))
            p = p.advance()
            ring.prime(p, src)

        try:
            k[1, 1](TensorMap.tiled(np.zeros((8, 32), np.float32), (8, 32)))
        except Exception as exc:
            print("REPORT:", exc)
    """, setup="from numba_tma import pipeline\n")
    assert ("REPORT:" in out and "prime: stage 0 (phase 0) is not in the ring's first round: prime() fills a fresh "
            "ring's stages without waiting; later rounds acquire()" in out), out


def test_more_releases_than_declared_consumers_are_reported():
    out = simulate("""
        RING1 = pipeline.TmaPipeline(1, consumers=pipeline.threads(2))

        @cuda.jit
        def k(src):
            bars = cuda.shared.array(2, numba.uint64)
            tiles = cuda.shared.array((1, 8, 32), numba.float32, alignment=128)
            ring = RING1.create(bars)
            if cuda.threadIdx.x == 3:
                p = ring.producer_state()
                ring.acquire(p, src)
                tma.load(src, at(tiles, p.index), (0, 0), ring.full(p))
            else:
                c = ring.consumer_state()
                ring.wait(c)
                ring.release(c)

        try:
            k[1, 4](TensorMap.tiled(np.zeros((8, 32), np.float32), (8, 32)))
        except Exception as exc:
            print("REPORT:", exc)
    """, setup="from numba_tma import pipeline\n")
    assert ("REPORT:" in out and "release: stage 0 (phase 0) released by 3 consumer participants in one round; the "
            "pipeline declares consumers=threads(2) (2 arrivals)" in out), out


# -- 4. the cost: one step in SASS, against the hand-written ring ---------------------------------------------

def _sass_counts(kernels, sig):
    """How many SASS instructions each of ``kernels`` has (linked and disassembled together)."""
    compiled = [tma_inspect.compile(kernel, sig, "sm_90a") for kernel in kernels]
    tma_inspect.assemble_together(compiled)
    return [sum(c.opcode_counts().values()) for c in compiled]


def _steps_kernel(step, repeats, setup):
    lines = "".join(f"    {line}\n" for line in setup.strip().splitlines())
    lines += "".join(f"    {line}\n" for _ in range(repeats) for line in step.strip().splitlines())
    scope = dict(cuda=cuda, numba=numba, at=at, tma=tma, mbarrier=numba_tma.mbarrier, sync=sync, RING4=RING4)
    exec(f"def k(desc, out, k0):\n{lines}    out[0] = 1\n", scope)
    return cuda.jit(scope["k"])


_HAND_SETUP = """
bars = cuda.shared.array(8, numba.uint64)
tiles = cuda.shared.array((4, 8, 32), numba.float32, alignment=128)
k = numba.uint32(k0)
"""
_RING_SETUP = _HAND_SETUP + "ring = RING4.create(bars)\np = ring.producer_state()\nc = ring.consumer_state()\n"
# one step each way: what examples/warp_specialized_ring.py did by hand (benchmarks/reference_rings.py), and the ring
_STEPS = {
    "producer": ("""s = k % 4
mbarrier.wait(at(bars, 4 + s), ((k // 4) & 1) ^ 1)
mbarrier.arrive_expect_tx(at(bars, s), 1024)
tma.load(desc, at(tiles, s), (0, 0), at(bars, s))
k = numba.uint32(k + 1)""", """ring.acquire(p, desc)
tma.load(desc, at(tiles, p.index), (0, 0), ring.full(p))
p = p.advance()"""),
    "consumer": ("""s = k % 4
mbarrier.wait(at(bars, s), (k // 4) & 1)
out[cuda.threadIdx.x] += tiles[s, 0, cuda.threadIdx.x]
cuda.syncwarp()
if cuda.threadIdx.x % 32 == 0:
    mbarrier.arrive(at(bars, 4 + s))
k = numba.uint32(k + 1)""", """ring.wait(c)
out[cuda.threadIdx.x] += tiles[c.index, 0, cuda.threadIdx.x]
ring.release(c)
c = c.advance()"""),
}


@pytest.mark.skipif(SIMULATED, reason="compiles")
@pytest.mark.parametrize("side", _STEPS)
def test_one_step_costs_what_the_hand_written_step_costs(side):
    """The SASS instructions one more step adds (a kernel of 3 steps minus one of 2), by hand and
    through the ring: within 2 instructions."""
    sig = (MAP, numba.float32[::1], numba.int64)
    hand, ring = _STEPS[side]
    hand3, hand2, ring3, ring2 = _sass_counts([_steps_kernel(hand, 3, _HAND_SETUP), _steps_kernel(hand, 2, _HAND_SETUP),
                                               _steps_kernel(ring, 3, _RING_SETUP), _steps_kernel(ring, 2, _RING_SETUP)],
                                              sig)
    by_hand, by_ring = hand3 - hand2, ring3 - ring2
    assert by_hand > 5, by_hand      # the step is there (a wait loop, the arrive, the copy)
    assert by_ring <= by_hand + 2, (side, by_hand, by_ring)


# -- 5. data: GPU and simulator -----------------------------------------------------------------------------

TILE_R, TILE_C = 8, 32


def _ring_kernel(stages, groups):
    """A producer warp (the ring elects its lane) feeding ``groups`` consumer warpgroups through a
    ``stages``-stage ring; every consumer thread sums two elements of each tile, ``rounds`` times
    over all tiles (the states run on across the rounds, as over persistent tiles)."""
    ring_config = pipeline.TmaPipeline(stages, consumers=pipeline.warpgroups(groups), producer=pipeline.warps(1))
    nbars = ring_config.barrier_count

    @cuda.jit
    def kernel(src, out, n_tiles, rounds):
        bars = cuda.shared.array(nbars, numba.uint64)
        tiles = cuda.shared.array((stages, TILE_R, TILE_C), numba.float32, alignment=128)
        ring = ring_config.create(bars)
        warp = cuda.threadIdx.x // 32
        if warp == 0:
            p = ring.producer_state()
            for _ in range(rounds):
                for t in range(n_tiles):
                    ring.acquire(p, src)
                    ring.load(p, src, at(tiles, p.index), (0, t * TILE_R))
                    p = p.advance()
        else:
            i = (cuda.threadIdx.x - 32) % 128
            g = (cuda.threadIdx.x - 32) // 128
            acc = numba.float32(0)
            c = ring.consumer_state()
            for _ in range(rounds):
                for t in range(n_tiles):
                    ring.wait(c)
                    acc += tiles[c.index, i // TILE_C, i % TILE_C] + tiles[c.index, 4 + i // TILE_C, i % TILE_C]
                    ring.release(c)
                    c = c.advance()
            out[g, i] = acc
    return kernel


def _ring_model(x, n_tiles, rounds, groups):
    tiles = x.reshape(n_tiles, TILE_R * TILE_C).astype(np.float64)
    per_thread = tiles[:, :128] + tiles[:, 128:]
    return np.broadcast_to(rounds * per_thread.sum(0), (groups, 128))


@pytest.mark.both_ways
@pytest.mark.parametrize("stages, groups, iterations", [(1, 1, 10_000), (2, 4, 3000), (3, 2, 1000), (4, 1, 5000),
                                                        (6, 1, 2000), (7, 2, 700),
                                                        (8, 3, 10_000), (5, 4, 1)])
def test_a_warp_specialised_ring_delivers_every_tile(stages, groups, iterations):
    n_tiles = 16
    if testing.WAY == "simulator":      # past one wrap of the ring: every stage reused, its phase flipped
        if (stages, groups) in ((4, 1), (6, 1), (7, 2), (5, 4), (8, 3)):
            pytest.skip("under the simulator S = 1, 2, 3 and 1, 2, 4 warpgroups cover the ring (the GPU runs all)")
        iterations = min(iterations, stages + 2)
    rounds = max(1, iterations // n_tiles)
    n = min(iterations, n_tiles)
    x = np.random.default_rng(stages).integers(-8, 8, (n_tiles * TILE_R, TILE_C)).astype(np.float32)
    src = TensorMap.tiled(cuda.to_device(x), (TILE_R, TILE_C))
    out = cuda.to_device(np.zeros((groups, 128), np.float32))
    _ring_kernel(stages, groups)[1, 32 + 128 * groups](src, out, n, rounds)
    np.testing.assert_array_equal(out.copy_to_host(), _ring_model(x[:n * TILE_R], n, rounds, groups))


def _cluster_kernel(stages):
    """Every block of a cluster loads its slice of each tile with multicast to all; each block's
    consumer warp sums columns; the ring releases every stage in every block and drains at exit."""
    ring_config = pipeline.TmaPipeline(stages, consumers=pipeline.warps(1), cluster=True)
    nbars = ring_config.barrier_count

    @cuda.jit
    def kernel(src, out, n_tiles, tile_bytes):
        bars = cuda.shared.array(nbars, numba.uint64)
        tiles = cuda.shared.array((stages, 16, TILE_C), numba.float32, alignment=128)
        ring = ring_config.create(bars)
        rank, size = cluster.ctarank(), cluster.nctarank()
        rows = 16 // size
        if cuda.threadIdx.x < 32:
            if sync.elect_one():
                p = ring.producer_state()
                for t in range(n_tiles):
                    ring.acquire(p, tile_bytes)
                    ring.load(p, src, at(tiles[p.index], rank * rows), (0, t * 16 + rank * rows),
                              multicast=cluster.mask_all(size))
                    p = p.advance()
                ring.tail(p)
        else:
            lane = cuda.threadIdx.x - 32
            acc = numba.float32(0)
            c = ring.consumer_state()
            for t in range(n_tiles):
                ring.wait(c)
                for r in range(16):
                    acc += tiles[c.index, r, lane]
                ring.release(c)
                c = c.advance()
            out[cuda.blockIdx.x, lane] = acc
    return kernel


@pytest.mark.both_ways
@pytest.mark.parametrize("size, stages, n_tiles", [(1, 2, 300), (2, 3, 500), (4, 4, 1000), (2, 1, 7)])
def test_a_cluster_ring_filled_by_multicast_is_released_in_every_block(size, stages, n_tiles):
    if testing.WAY == "simulator":
        n_tiles = min(n_tiles, stages + 2)
    blocks = 2 * size
    x = np.random.default_rng(size).integers(-8, 8, (n_tiles * 16, TILE_C)).astype(np.float32)
    src = TensorMap.tiled(cuda.to_device(x), (16 // size, TILE_C))
    out = cuda.to_device(np.zeros((blocks, TILE_C), np.float32))
    numba_tma.launch(_cluster_kernel(stages), blocks, 64, src, out, n_tiles, 16 * TILE_C * 4, cluster=(size, 1, 1))
    expected = np.broadcast_to(x.astype(np.float64).sum(0), (blocks, TILE_C))
    np.testing.assert_array_equal(out.copy_to_host(), expected)


def _async_kernel(stages, cp_async_form):
    """Warp 0 fills each stage with thread stores (``commit``) or ``cp.async`` copies
    (``commit_cp_async``); warps 1-2 read it and release it.  A device function takes the ring and
    the state (they are values like any other)."""
    ring_config = pipeline.AsyncPipeline(stages, producers=pipeline.threads(32), consumers=pipeline.warps(2))
    nbars = ring_config.barrier_count

    @cuda.jit(device=True)
    def produce(ring, p, tiles, src, t):
        ring.acquire(p)
        lane = cuda.threadIdx.x
        if cp_async_form:
            numba_tma.cp_async.load(tiles[p.index, lane * 4:], src[t, lane * 4:], 16)
            ring.commit_cp_async(p)
        else:
            for e in range(4):
                tiles[p.index, lane * 4 + e] = src[t, lane * 4 + e]
            ring.commit(p)
        return p.advance()

    @cuda.jit
    def kernel(src, out, n_tiles):
        bars = cuda.shared.array(nbars, numba.uint64)
        tiles = cuda.shared.array((stages, 128), numba.float32, alignment=128)
        ring = ring_config.create(bars)
        warp, lane = cuda.threadIdx.x // 32, cuda.threadIdx.x % 32
        if warp == 0:
            p = ring.producer_state()
            for t in range(n_tiles):
                p = produce(ring, p, tiles, src, t)
        else:
            c = ring.consumer_state()
            acc = numba.float32(0)
            for t in range(n_tiles):
                ring.wait(c)
                acc += tiles[c.index, (warp - 1) * 64 + lane] + tiles[c.index, (warp - 1) * 64 + 32 + lane]
                ring.release(c)
                c = c.advance()
            out[warp - 1, lane] = acc
    return kernel


@pytest.mark.both_ways
@pytest.mark.parametrize("stages, cp_async_form, n_tiles", [(1, False, 50), (3, False, 500), (2, True, 500),
                                                            (4, True, 9)])
def test_a_ring_filled_by_threads_delivers_every_tile(stages, cp_async_form, n_tiles):
    if testing.WAY == "simulator":
        n_tiles = min(n_tiles, stages + 2)
    x = np.random.default_rng(stages).integers(-8, 8, (n_tiles, 128)).astype(np.float32)
    out = cuda.to_device(np.zeros((2, 32), np.float32))
    _async_kernel(stages, cp_async_form)[1, 96](cuda.to_device(x), out, n_tiles)
    sums = x.astype(np.float64).sum(0)
    expected = np.stack([sums[0:32] + sums[32:64], sums[64:96] + sums[96:128]])
    np.testing.assert_array_equal(out.copy_to_host(), expected)


_WGMMA_RING = """
from numba_tma import pipeline, wgmma
RING = pipeline.TmaPipeline(2, consumers=pipeline.warpgroups(1), reads="wgmma")

@cuda.jit
def k(desc_a, desc_b, out, early):
    bars = cuda.shared.array(4, numba.uint64)
    a = cuda.shared.array((2, 64, 64), numba.uint16, alignment=1024)
    b = cuda.shared.array((2, 8, 64), numba.uint16, alignment=1024)
    ring = RING.create(bars)
    if cuda.threadIdx.x == 128:
        p = ring.producer_state()
        for i in range(3):
            ring.acquire(p, (desc_a, desc_b))
            tma.load(desc_a, at(a, p.index), (0, 0), ring.full(p))
            tma.load(desc_b, at(b, p.index), (0, 0), ring.full(p))
            p = p.advance()
    elif cuda.threadIdx.x < 128:
        c = ring.consumer_state()
        previous = c
        acc = wgmma.zeros(4)
        for i in range(3):
            ring.wait(c)
            acc = wgmma.fence(acc)
            acc = wgmma.mma_async(acc, wgmma.descriptor(at(a, c.index), desc_a, 0, 0),
                                  wgmma.descriptor(at(b, c.index), desc_b, 0, 0), i)
            wgmma.commit_group()
            if early:
                ring.release(c)                  # the MMA may still be reading the stage
            else:                                # the GEMM's order: one group in flight, the stage before released
                acc = wgmma.wait_group(1, acc)
                if i > 0:
                    ring.release(previous)
            previous = c
            c = c.advance()
        acc = wgmma.wait_group(0, acc)
        if not early:
            ring.release(previous)
        wgmma.store(acc, out, 0, 0)

a = np.ones((64, 64), np.uint16) * 0x3F80          # bf16 1.0
b = np.ones((8, 64), np.uint16) * 0x3F80
da = TensorMap.tiled(a, (64, 64), swizzle="128B", data_type="bfloat16")
db = TensorMap.tiled(b, (8, 64), swizzle="128B", data_type="bfloat16")
for early in (False, True):
    out = np.zeros((64, 8), np.float32)
    try:
        k[1, 160](da, db, out, early)
        print("EARLY" if early else "RIGHT", "sums", sorted(set(out.ravel().tolist())))
    except Exception as exc:
        print("REPORT:", exc)
"""


def test_a_release_while_wgmma_reads_the_stage_is_reported():
    out = simulate(_WGMMA_RING, setup="")
    assert "RIGHT sums [48.0]" in out, out         # 3 K steps of 16 ones: every element 3 * 16
    assert ("REPORT:" in out and "TmaPipeline(stages=2, consumers=warpgroups(1), producer=threads(1), reads='wgmma'): "
            "release: stage 0 (phase 0) released while a wgmma.mma_async of this thread may still read it" in out), out


# -- tlx.alloc_barriers' barriers: the phase a parity wait sees (the mlir host's GPU test, on numba-cuda) ---

from numba_tma import mbarrier, tlx  # noqa: E402


@cuda.jit
def _tlx_barrier_probes(out, probes):
    bars = tlx.alloc_barriers(2, 64)   # both wait for the block's 64 threads
    t = cuda.threadIdx.x
    if t == 0:
        if not mbarrier.test_wait(at(bars, 1), 0):   # a fresh barrier: its phase 0 incomplete
            probes[0] = 1
    cuda.syncthreads()
    tlx.barrier_arrive(bars[1:])
    mbarrier.wait(at(bars, 1), 0)
    if t == 0:
        probes[1] = 1 if mbarrier.test_wait(at(bars, 1), 0) else 0   # phase 0 completed
        if not mbarrier.test_wait(at(bars, 0), 0):   # barrier 0 untouched: still in phase 0
            probes[2] = 1
    out[t] = 2 * t + 1


@pytest.mark.both_ways
def test_tlx_alloc_barriers_probes():
    """A parity wait is true once the phase of that parity has completed: on a barrier
    ``tlx.alloc_barriers`` just made, ``test_wait(bar, 0)`` is False until its 64 arrivals
    (tests/test_gpu_mlir_host.py::test_tlx_alloc_barriers_under_numba_cuda_mlir, the same probes)."""
    out, probes = cuda.to_device(np.zeros(64, np.int32)), cuda.to_device(np.zeros(3, np.int32))
    _tlx_barrier_probes[1, 64](out, probes)
    assert probes.copy_to_host().tolist() == [1, 1, 1]
    assert np.array_equal(out.copy_to_host(), 2 * np.arange(64, dtype=np.int32) + 1)
