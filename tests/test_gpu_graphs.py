"""CUDA graphs of numba-tma launches on the GPU: a sequence of four launches (a TMA load through a
by-value map, a cluster launch, a launch with 96 KB of dynamic shared memory, a counter) captured
once and replayed 1000 times, with nodes re-pointed between replays (the map at other arrays, the
cluster launch's scalar, the accumulator at another array) and the data checked against numpy;
a node keeps its cluster after being re-pointed; a re-pointed argument of another type is refused."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import LaunchError, LaunchGraph, TensorMap, cluster, fence, mbarrier, tma

from gpu_support import bounded_wait

pytestmark = pytest.mark.gpu

ROWS, COLS = 64, 128              # the source arrays
BOX_R, BOX_C = 32, 64             # one TMA box per block of the load
N = ROWS * COLS
BLOCKS = 8                        # of the cluster launch: ROWS // BLOCKS rows each, in clusters of 2
OFFSET = 16384                    # where the dynamic shared staging starts (64 KB in: past the 48 KB default)
DYNAMIC = (OFFSET + N) * 4        # 96 KB
REPLAYS = 1000


@cuda.jit
def load_tiles(desc, out, status):
    """Block (x, y) loads box (y, x) of the map into shared memory and stores it in ``out``."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((BOX_R, BOX_C), numba.float32, alignment=128)
    row0, col0 = cuda.blockIdx.y * BOX_R, cuda.blockIdx.x * BOX_C
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, BOX_R * BOX_C * 4)
        tma.load(desc, tile, (col0, row0), bars)
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, BOX_R * BOX_C, cuda.blockDim.x):
        out[row0 + i // BOX_C, col0 + i % BOX_C] = tile[i // BOX_C, i % BOX_C]


@cuda.jit
def scale_in_clusters(src, out, scale, ranks):
    """``out = src * scale + the block's rank in its cluster`` (block b: rows b*8 .. b*8+7);
    ``ranks[b] = (rank, blocks in the cluster)``."""
    b = cuda.blockIdx.x
    rank = cluster.ctarank()
    if cuda.threadIdx.x == 0:
        ranks[b, 0] = rank
        ranks[b, 1] = cluster.nctarank()
    per = ROWS // BLOCKS
    for i in range(cuda.threadIdx.x, per * COLS, cuda.blockDim.x):
        r, c = b * per + i // COLS, i % COLS
        out[r, c] = src[r, c] * scale + rank
    cluster.sync()


@cuda.jit
def reverse_through_shared(src, acc):
    """``acc.flat[i] += src.flat[N - 1 - i]``, staged in dynamic shared memory 64 KB in."""
    dyn = cuda.shared.array(0, numba.float32)
    for i in range(cuda.threadIdx.x, N, cuda.blockDim.x):
        dyn[OFFSET + i] = src[i // COLS, i % COLS]
    cuda.syncthreads()
    for i in range(cuda.threadIdx.x, N, cuda.blockDim.x):
        acc[i // COLS, i % COLS] += dyn[OFFSET + N - 1 - i]


@cuda.jit
def count(counter):
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(counter, 0, 1)


RANKS = np.repeat(np.arange(BLOCKS) % 2, ROWS // BLOCKS)[:, None]   # each row's block's rank in its cluster


def _expected_stage(src, scale):
    return src * scale + RANKS


def test_a_captured_sequence_replays_1000_times_re_pointed_between_replays():
    rng = np.random.default_rng(24)
    sources = [rng.integers(0, 16, (ROWS, COLS)).astype(np.float32) for _ in range(3)]
    d_sources = [cuda.to_device(s) for s in sources]
    stage0, stage1 = (cuda.device_array((ROWS, COLS), np.float32) for _ in range(2))
    accs = [cuda.to_device(np.zeros((ROWS, COLS), np.float32)) for _ in range(2)]
    ranks = cuda.to_device(np.full((BLOCKS, 2), -1, np.int32))
    status, counter = cuda.to_device(np.zeros(1, np.int32)), cuda.to_device(np.zeros(1, np.int32))
    desc = TensorMap.tiled(d_sources[0], (BOX_R, BOX_C))
    fresh = [desc.with_array(a) for a in d_sources]           # maps of their own, one layout

    g = LaunchGraph()
    load = g.launch(load_tiles, (COLS // BOX_C, ROWS // BOX_R), 128, desc, stage0, status)
    scaled = g.launch(scale_in_clusters, BLOCKS, 128, stage0, stage1, 1, ranks, cluster=(2, 1, 1))
    rev = g.launch(reverse_through_shared, 1, 256, stage1, accs[0], shared_mem=DYNAMIC)
    g.launch(count, 1, 32, counter)
    assert [n.index for n in g.nodes] == [0, 1, 2, 3] and not g.built

    model = [np.zeros((ROWS, COLS), np.float64) for _ in range(2)]
    source, scale, acc = 0, 1, 0
    for i in range(REPLAYS):
        if i % 7 == 3:                       # the map, retargeted in place, then the node re-pointed
            source = (source + 1) % 3
            g.set_args(load, desc.retarget(d_sources[source]), stage0, status)
        elif i % 11 == 5:                    # a map of its own
            source = (source + 2) % 3
            g.set_args(load, fresh[source], stage0, status)
        if i % 5 == 1:                       # the cluster launch's scalar
            scale = 1 + i % 3
            g.set_args(scaled, stage0, stage1, scale, ranks)
        if i % 13 == 12:                     # the accumulator
            acc = 1 - acc
            g.set_args(rev, stage1, accs[acc])
        g.replay()
        assert g.built
        model[acc] += _expected_stage(sources[source], scale).reshape(-1)[::-1].reshape(ROWS, COLS)
        if i in (0, 1, 100, 511, REPLAYS - 1):   # the stages of this replay, exactly
            cuda.synchronize()
            assert status.copy_to_host()[0] == 0, f"replay {i}: TMA never completed the barrier"
            np.testing.assert_array_equal(stage0.copy_to_host(), sources[source], err_msg=f"replay {i}: the load")
            np.testing.assert_array_equal(stage1.copy_to_host(), _expected_stage(sources[source], scale),
                                          err_msg=f"replay {i}: the cluster launch")
            np.testing.assert_array_equal(ranks.copy_to_host(), np.stack([np.arange(BLOCKS) % 2,
                                                                          np.full(BLOCKS, 2)], axis=1),
                                          err_msg=f"replay {i}: the cluster launch's ranks (clusters of 2)")
    cuda.synchronize()
    assert counter.copy_to_host()[0] == REPLAYS
    for a, m in zip(accs, model):             # every replay's data, summed (exact in float32: < 2**24)
        np.testing.assert_array_equal(a.copy_to_host(), m.astype(np.float32))
    g.close()


def test_a_re_pointed_argument_of_another_type_is_refused_and_the_graph_still_replays():
    src = cuda.to_device(np.arange(N, dtype=np.float32).reshape(ROWS, COLS))
    out, status = cuda.device_array((ROWS, COLS), np.float32), cuda.to_device(np.zeros(1, np.int32))
    desc = TensorMap.tiled(src, (BOX_R, BOX_C))
    with LaunchGraph() as g:
        load = g.launch(load_tiles, (COLS // BOX_C, ROWS // BOX_R), 128, desc, out, status)
        g.replay()
        other_box = TensorMap.tiled(src, (BOX_R // 2, BOX_C))
        with pytest.raises(LaunchError, match=r"argument 'desc' \(#0\) is TensorMap.*, but the node was recorded "
                                              r"with TensorMap"):
            g.set_args(load, other_box, out, status)
        with pytest.raises(LaunchError, match=r"argument 'out' \(#1\) is array\(float64, 2d, C\), but the node was "
                                              r"recorded with array\(float32, 2d, C\)"):
            g.set_args(load, desc, cuda.device_array((ROWS, COLS), np.float64), status)
        with pytest.raises(LaunchError, match=r"the graph is built"):
            g.launch(count, 1, 32, status)
        out.copy_to_device(np.zeros((ROWS, COLS), np.float32))
        g.replay()
        np.testing.assert_array_equal(out.copy_to_host(), src.copy_to_host())


def test_replays_on_a_stream_of_their_own():
    stream = cuda.stream()
    counter = cuda.to_device(np.zeros(1, np.int32))
    g = LaunchGraph(stream=stream)
    node = g.launch(count, 1, 32, counter)
    for _ in range(10):
        g.replay()
    other = cuda.to_device(np.zeros(1, np.int32))
    g.set_args(node, other)
    g.replay()
    stream.synchronize()
    assert (counter.copy_to_host()[0], other.copy_to_host()[0]) == (10, 1)
    g.close()
