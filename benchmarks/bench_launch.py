"""Host cost of launching a kernel that takes a TensorMap, against the same kernel taking an array.

Needs a GPU.  Each row launches a one-block kernel ``LAUNCHES`` times back to back and reports the
host's time per launch (best of ``REPEATS``) and the ratio to the plain-array row of the same run.
``LAUNCHES`` stays well below the driver's queue of pending launches and the loop is timed without
waiting for the GPU, so the figure is the host's cost per launch, not the GPU's kernel throughput.  The map kernel and the array kernel have the same body (one element written); only the
argument differs.

    python benchmarks/bench_launch.py            # table
    python benchmarks/bench_launch.py --json out.json
"""

import argparse
import json
import time

import numpy as np
from numba import cuda

from numba_tma import TensorMap, launch

LAUNCHES = 400
REPEATS = 25
SHAPE, BOX = (1024, 1024), (64, 64)


@cuda.jit
def with_map(desc, out):
    out[0] = desc.box_bytes


@cuda.jit
def with_array(a, out):
    out[0] = a.shape[0]


def per_launch(fn):
    """Best of REPEATS: host seconds per launch of ``fn`` called LAUNCHES times (the GPU is idle
    at the start of each repeat and the loop does not wait for it)."""
    best = float("inf")
    for _ in range(REPEATS):
        cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(LAUNCHES):
            fn()
        best = min(best, (time.perf_counter() - t0) / LAUNCHES)
    cuda.synchronize()
    return best


def rows():
    a = cuda.to_device(np.zeros(SHAPE, np.float32))
    b = cuda.to_device(np.zeros(SHAPE, np.float32))
    out = cuda.device_array(1, np.int64)
    desc = TensorMap.tiled(a, BOX)
    with_map[1, 32](desc, out)          # compile both before timing
    with_array[1, 32](a, out)
    maps = [TensorMap.tiled(a, BOX), TensorMap.tiled(b, BOX)]
    flip = iter(range(1 << 62))
    return [
        ("array argument (baseline)", lambda: with_array[1, 32](a, out)),
        ("one TensorMap, reused", lambda: with_map[1, 32](desc, out)),
        ("two TensorMaps, alternating", lambda: with_map[1, 32](maps[next(flip) & 1], out)),
        ("fresh TensorMap.tiled every launch", lambda: with_map[1, 32](TensorMap.tiled(b, BOX), out)),
        ("desc.with_array every launch", lambda: with_map[1, 32](desc.with_array(b), out)),
        ("desc.retarget every launch (in place)", lambda: with_map[1, 32](maps[next(flip) & 1].retarget(b), out)),
        ("numba_tma.launch, array argument", lambda: launch(with_array, 1, 32, a, out)),
        ("numba_tma.launch, cluster=(2, 1, 1)", lambda: launch(with_array, 2, 32, a, out, cluster=(2, 1, 1))),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    results = {name: per_launch(fn) for name, fn in rows()}
    base = next(iter(results.values()))
    print(f"{'launch of a 1-block kernel':40s} {'us/launch':>10s} {'x array':>8s}")
    for name, t in results.items():
        print(f"{name:40s} {t * 1e6:10.2f} {t / base:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v * 1e6 for k, v in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
