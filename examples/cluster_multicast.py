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

from numba_tma import SharedMemoryPlan, TensorMap, at, cluster, launch, pipeline, tma

ROWS = COLS = 64                 # one tile: 64 x 64 float32
K = 8 if SIMULATED else 64      # tiles every block reads (1 MiB of B on the GPU)
STAGES = 4
THREADS = 128
PER_THREAD = ROWS * COLS // THREADS

SHARED = pipeline.TmaPipeline(STAGES, cluster=True)      # one consumer per block: its thread 0, after syncthreads
PLAIN = pipeline.TmaPipeline(STAGES, consumers=pipeline.same_thread())
PLAN = (SharedMemoryPlan().array("ring", (STAGES, ROWS, COLS), numba.float32)
        .pipeline("shared", SHARED).pipeline("plain", PLAIN))
carve = PLAN.carver()


@cuda.jit(device=True)
def accumulate(acc, tile):
    for k in range(PER_THREAD):
        e = cuda.threadIdx.x + k * THREADS
        acc[k] += tile[e // COLS, e % COLS]


@cuda.jit
def multicast_sum(desc, out):
    s = carve()
    ring = SHARED.create(s.shared)                            # every block's barriers, published
    tid, rank, n = cuda.threadIdx.x, cluster.ctarank(), cluster.nctarank()
    rows = ROWS // n                                          # this block's slice of each tile
    p = ring.producer_state()
    if tid == 0:
        for i in range(STAGES):
            ring.prime(p, ROWS * COLS * 4)                    # a fresh stage: the whole tile arrives
            tma.load(desc, at(s.ring[p.index], rank * rows), (0, i * ROWS + rank * rows), ring.full(p),
                     multicast=cluster.mask_all(n))
            p = p.advance()
    acc = cuda.local.array(PER_THREAD, numba.float32)
    for k in range(PER_THREAD):
        acc[k] = 0
    c = ring.consumer_state()
    for i in range(K):
        ring.wait(c)
        accumulate(acc, s.ring[c.index])
        cuda.syncthreads()
        if tid == 0:
            ring.release(c)                                   # "I have read this stage", to every block
            # refill the stage read one step ago (p lags c by one): by now every block has usually
            # read it too, so this wait rarely stalls (waiting for the stage just read would put
            # the blocks in lock-step, one cluster round trip per tile)
            j = i - 1
            if j >= 0 and j + STAGES < K:
                ring.acquire(p, ROWS * COLS * 4)
                tma.load(desc, at(s.ring[p.index], rank * rows), (0, (j + STAGES) * ROWS + rank * rows),
                         ring.full(p), multicast=cluster.mask_all(n))
                p = p.advance()
        c = c.advance()
    for k in range(PER_THREAD):
        out[cuda.blockIdx.x, cuda.threadIdx.x + k * THREADS] = acc[k]
    if tid == 0:
        ring.tail(p)                                          # no block leaves while others signal it


@cuda.jit
def plain_sum(desc, out):
    s = carve()
    ring = PLAIN.create(s.plain)
    tid = cuda.threadIdx.x
    p = ring.producer_state()
    if tid == 0:
        for i in range(STAGES):
            ring.prime(p, desc)
            tma.load(desc, s.ring[p.index], (0, i * ROWS), ring.full(p))
            p = p.advance()
    acc = cuda.local.array(PER_THREAD, numba.float32)
    for k in range(PER_THREAD):
        acc[k] = 0
    c = ring.consumer_state()
    for i in range(K):
        ring.wait(c)
        accumulate(acc, s.ring[c.index])
        cuda.syncthreads()
        if tid == 0 and i + STAGES < K:
            ring.acquire(p, desc)
            tma.load(desc, s.ring[p.index], (0, (i + STAGES) * ROWS), ring.full(p))
            p = p.advance()
        c = c.advance()
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
