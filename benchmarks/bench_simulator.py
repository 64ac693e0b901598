"""How fast numba-cuda's CUDA simulator runs a numba-tma kernel with numba-tma's simulator
extension: the transpose of docs/getting-started.md ("Transposes": unswizzled 64x64-word tiles,
each warp walking a 32x32 block along its diagonals; ``benchmarks/kernels.py``
``make_transpose_wide``) on fp32 data, one tile per block of 256 threads, every simulator check
on (alignment, in-flight reads, barrier accounting, deadlock detection), the result checked
against numpy.

    taskset -c 0 python benchmarks/bench_simulator.py            # 512 x 768: 96 blocks x 256 threads
    python benchmarks/bench_simulator.py --shape 1536 4096       # 1536 blocks
    python benchmarks/bench_simulator.py --profile 30            # cProfile's top 30 (cumulative)

Prints the launch's seconds, wall clock and CPU time of the process (the CPU time does not count
other programs' load on a shared machine); the kernel is launched once on a small grid first, so
import and first-call costs are not counted.  The figure is stated in docs/simulator.md.
"""

import argparse
import os
import pathlib
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"         # before numba is imported
sys.path.insert(0, str(pathlib.Path(__file__).parent))

import numpy as np                               # noqa: E402
from numba import cuda                           # noqa: E402

import numba_tma                                 # noqa: E402
from numba_tma import TensorMap                  # noqa: E402
from kernels import TRANSPOSE_GROUP, make_transpose_wide   # noqa: E402

TILE = 64                                        # fp32 tiles: 64 rows x 64 words


def transpose(x, kern, shared):
    """``x.T`` through the kernel (one 64x64 tile per block, 256 threads)."""
    dx, dt = cuda.to_device(x), cuda.to_device(np.zeros(x.shape[::-1], x.dtype))
    tiles_x = x.shape[1] // TILE
    blocks = tiles_x * (x.shape[0] // TILE)
    start, cpu = time.perf_counter(), time.process_time()
    numba_tma.launch(kern, blocks, 256, TensorMap.tiled(dx, (TILE, TILE)), TensorMap.tiled(dt, (TILE, TILE)),
                     tiles_x, shared_mem=shared)
    return dt.copy_to_host(), blocks, (time.perf_counter() - start, time.process_time() - cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", type=int, nargs=2, default=(512, 768), metavar=("ROWS", "COLS"),
                    help=f"the source's shape (multiples of {TILE}; rows of {TILE * TRANSPOSE_GROUP})")
    ap.add_argument("--repeat", type=int, default=1, help="launches to time (the best is printed too)")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile one launch, print the top N")
    opts = ap.parse_args()
    rows, cols = opts.shape
    if rows % (TILE * TRANSPOSE_GROUP) or cols % TILE:
        ap.error(f"rows must be a multiple of {TILE * TRANSPOSE_GROUP}, cols of {TILE}")
    assert numba_tma.SIMULATOR
    kern, shared = make_transpose_wide(False, threads=256, group=TRANSPOSE_GROUP)
    rng = np.random.default_rng(0)
    warm = rng.standard_normal((TILE * TRANSPOSE_GROUP, TILE)).astype(np.float32)
    assert np.array_equal(transpose(warm, kern, shared)[0], warm.T)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    if opts.profile:   # every thread of the launch profiled (cProfile sees only the thread enabling it)
        import cProfile
        import pstats
        import threading

        profiles = []

        def start(*_):
            sys.setprofile(None)
            profiles.append(cProfile.Profile())
            profiles[-1].enable()

        threading.setprofile(start)
        profiles.append(cProfile.Profile())
        profiles[0].enable()
        got, blocks, seconds = transpose(x, kern, shared)
        profiles[0].disable()
        threading.setprofile(None)
        stats = pstats.Stats(*profiles)
        stats.sort_stats("tottime").print_stats(opts.profile)
        stats.sort_stats("cumulative").print_stats(opts.profile)
        times = [seconds]
    else:
        times = []
        for _ in range(opts.repeat):
            got, blocks, seconds = transpose(x, kern, shared)
            times.append(seconds)
    assert np.array_equal(got, x.T), "the transpose is wrong"
    walls, cpus = [w for w, _ in times], [c for _, c in times]
    print(f"simulator transpose {rows}x{cols} fp32, {blocks} blocks x 256 threads: "
          + ", ".join(f"{w:.2f}" for w in walls) + f" s (best {min(walls):.2f} s; CPU time "
          + ", ".join(f"{c:.2f}" for c in cpus) + f" s; {len(os.sched_getaffinity(0))} cores; data checked "
          "against numpy)")


if __name__ == "__main__":
    main()
