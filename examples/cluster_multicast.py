"""TMA multicast: the blocks of a cluster share one stream of tiles.

Every block reads the same K tiles of B (64 x 64 float32, 16 KB each; the pattern of a GEMM whose
blocks share an operand).  Without multicast each block loads every tile itself.  With a cluster
of n blocks, block r loads rows [r * 64/n, (r+1) * 64/n) of each tile with ``multicast=`` all n
blocks, so each tile crosses from L2 once per cluster instead of once per block.  A stage of the
ring may be refilled only when every block of the cluster has read it (its multicast writes into
all of them), so each block's "empty" barrier counts one remote arrival from each block.

Prints a check (every block's sums against numpy) and the time of both kernels; the L2 traffic
is measured with ``ncu --clock-control none --metrics lts__t_bytes.sum python
examples/cluster_multicast.py --once`` (see BENCHMARKS.md).

    python examples/cluster_multicast.py
"""

import sys

from _simulate_without_gpu import SIMULATED  # first: picks the CUDA simulator without a GPU

import numba
import numpy as np
from numba import cuda

from numba_tma import SharedMemoryPlan, TensorMap, at, cluster, fence, launch, mbarrier, tma

ROWS = COLS = 64                 # one tile: 64 x 64 float32
K = 8 if SIMULATED else 64      # tiles every block reads (1 MiB of B on the GPU)
STAGES = 4
THREADS = 128
PER_THREAD = ROWS * COLS // THREADS

PLAN = (SharedMemoryPlan().array("ring", (STAGES, ROWS, COLS), numba.float32)
        .barriers("full", STAGES).barriers("empty", STAGES))
carve = PLAN.carver()


@cuda.jit(device=True)
def accumulate(acc, tile):
    for k in range(PER_THREAD):
        e = cuda.threadIdx.x + k * THREADS
        acc[k] += tile[e // COLS, e % COLS]


@cuda.jit
def multicast_sum(desc, out):
    s = carve()
    tid, rank, n = cuda.threadIdx.x, cluster.ctarank(), cluster.nctarank()
    rows = ROWS // n                                          # this block's slice of each tile
    if tid == 0:
        for i in range(STAGES):
            mbarrier.init(at(s.full, i), 1)
            mbarrier.init(at(s.empty, i), n)                  # one arrival from every block
        fence.mbarrier_init()
    cluster.sync()                                            # every block's barriers exist
    if tid == 0:
        for i in range(STAGES):
            mbarrier.arrive_expect_tx(at(s.full, i), ROWS * COLS * 4)      # the whole tile arrives
            tma.load(desc, at(s.ring[i], rank * rows), (0, i * ROWS + rank * rows), at(s.full, i),
                     multicast=cluster.mask_all(n))
    acc = cuda.local.array(PER_THREAD, numba.float32)
    for k in range(PER_THREAD):
        acc[k] = 0
    for i in range(K):
        stage, phase = i % STAGES, (i // STAGES) & 1
        mbarrier.wait(at(s.full, stage), phase)
        accumulate(acc, s.ring[stage])
        cuda.syncthreads()
        if tid == 0:
            for q in range(n):                                # "I have read stage s" to every block
                mbarrier.arrive_remote(at(s.empty, stage), q)
            # refill the stage read one step ago: by now every block has usually read it too, so
            # this wait rarely stalls (waiting for the stage just read would put the blocks in
            # lock-step, one cluster round trip per tile)
            j = i - 1
            if j >= 0 and j + STAGES < K:
                prev = j % STAGES
                mbarrier.wait(at(s.empty, prev), (j // STAGES) & 1, sem="acquire", scope="cluster")
                mbarrier.arrive_expect_tx(at(s.full, prev), ROWS * COLS * 4)
                tma.load(desc, at(s.ring[prev], rank * rows), (0, (j + STAGES) * ROWS + rank * rows),
                         at(s.full, prev), multicast=cluster.mask_all(n))
    for k in range(PER_THREAD):
        out[cuda.blockIdx.x, cuda.threadIdx.x + k * THREADS] = acc[k]
    cluster.sync()                                            # no block leaves while others signal it


@cuda.jit
def plain_sum(desc, out):
    s = carve()
    tid = cuda.threadIdx.x
    if tid == 0:
        for i in range(STAGES):
            mbarrier.init(at(s.full, i), 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if tid == 0:
        for i in range(STAGES):
            mbarrier.arrive_expect_tx(at(s.full, i), ROWS * COLS * 4)
            tma.load(desc, s.ring[i], (0, i * ROWS), at(s.full, i))
    acc = cuda.local.array(PER_THREAD, numba.float32)
    for k in range(PER_THREAD):
        acc[k] = 0
    for i in range(K):
        stage, phase = i % STAGES, (i // STAGES) & 1
        mbarrier.wait(at(s.full, stage), phase)
        accumulate(acc, s.ring[stage])
        cuda.syncthreads()
        if tid == 0 and i + STAGES < K:
            mbarrier.arrive_expect_tx(at(s.full, stage), ROWS * COLS * 4)
            tma.load(desc, s.ring[stage], (0, (i + STAGES) * ROWS), at(s.full, stage))
    for k in range(PER_THREAD):
        out[cuda.blockIdx.x, cuda.threadIdx.x + k * THREADS] = acc[k]


def timed(fn, repeats):
    """Microseconds per call of ``fn`` (CUDA events; the simulator only runs it once, untimed)."""
    if SIMULATED:
        fn()
        return float("nan")
    start, stop = cuda.event(), cuda.event()
    fn()
    start.record()
    for _ in range(repeats):
        fn()
    stop.record()
    stop.synchronize()
    return cuda.event_elapsed_time(start, stop) / repeats * 1e3      # microseconds


def main(once=False):
    blocks = 2 if SIMULATED else 2 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    b = np.random.default_rng(0).standard_normal((K * ROWS, COLS)).astype(np.float32)
    d_b = cuda.to_device(b)
    expected = b.reshape(K, ROWS * COLS).astype(np.float64).sum(0)
    out = cuda.device_array((blocks, ROWS * COLS), np.float32)
    repeats = 1 if once or SIMULATED else 50
    plain_desc = TensorMap.tiled(d_b, (ROWS, COLS))
    t_plain = timed(lambda: launch(plain_sum, blocks, THREADS, plain_desc, out, shared_mem=PLAN.nbytes), repeats)
    ok = bool(np.allclose(out.copy_to_host(), expected[None, :], rtol=1e-4, atol=1e-3))
    print(f"no multicast     : {t_plain:8.1f} us  {'PASS' if ok else 'FAIL'}  "
          f"({blocks} blocks x {K} tiles x 16 KB from L2 = {blocks * K * 16 / 1024:.0f} MB)")
    for n in (2,) if SIMULATED else (2, 4):
        desc = TensorMap.tiled(d_b, (ROWS // n, COLS))
        out.copy_to_device(np.zeros((blocks, ROWS * COLS), np.float32))
        t = timed(lambda: launch(multicast_sum, blocks, THREADS, desc, out, cluster=(n, 1, 1),
                                 shared_mem=PLAN.nbytes), repeats)
        good = np.allclose(out.copy_to_host(), expected[None, :], rtol=1e-4, atol=1e-3)
        ok &= good
        print(f"multicast to {n}   : {t:8.1f} us  {'PASS' if good else 'FAIL'}  "
              f"({blocks // n} clusters x {K} tiles = {blocks // n * K * 16 / 1024:.0f} MB from L2); "
              f"time ratio plain / multicast = {t_plain / t:.2f}")
    if SIMULATED:
        print("(the simulator checks the data; times and traffic are the GPU's: run there)")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(once="--once" in sys.argv))
