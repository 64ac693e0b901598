"""Host time of a fresh map per launch, on the CPU alone: ``TensorMap.tiled`` / ``with_array`` /
``retarget`` and the kernel type numba reads from the map, over numba-cuda ``DeviceNDArray``s of
fake device memory (``tests/fake_gpu.device_array``: no GPU, no driver).

The map rows of ``bench_launch.py`` are these calls plus numba's launch; this measures the map's own
share anywhere.  Each row's figure is its fastest of ``--rounds`` interleaved rounds of ``--calls``
calls (the round least disturbed by other work on a shared machine).  To compare two trees, run
this script from each in turn, several processes each, interleaved::

    PYTHONPATH=. python benchmarks/bench_map_host.py            # table, microseconds per call
    PYTHONPATH=. python benchmarks/bench_map_host.py --json out.json
"""

import argparse
import itertools
import json
import os
import sys
import time

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "tests")]
import numpy as np  # noqa: E402
from fake_gpu import device_array  # noqa: E402
from numba import cuda  # noqa: E402

from numba_tma import TensorMap  # noqa: E402

SHAPE, BOX = (1024, 1024), (64, 64)


@cuda.jit
def with_map(desc, out):
    out[0] = desc.box_bytes


def rows():
    """``{name: zero-argument callable}``: one fresh map (or kernel type) per call."""
    a = device_array(SHAPE, np.float32, address=0x7F0000000000)
    b = device_array(SHAPE, np.float32, address=0x7F0000400000)
    desc, other = TensorMap.tiled(a, BOX), TensorMap.tiled(b, BOX)
    pool = [device_array(shape, dtype, address=0x7F0001000000 + k * 0x100000) for k, (shape, dtype) in enumerate(
        itertools.product([(256, 512), (512, 256), (1024, 64), (128, 1024)], [np.float32, np.float16, np.int32]))]
    nhwc = device_array((2, 16, 16, 64), np.float16, address=0x7F0002000000)
    turn = itertools.count()
    typeof = with_map.typeof_pyval
    return {
        "TensorMap.tiled(b, BOX)": lambda: TensorMap.tiled(b, BOX),
        "TensorMap.tiled(b, BOX) + typeof": lambda: typeof(TensorMap.tiled(b, BOX)),
        "TensorMap.tiled(b, (64, 32), swizzle='128B')": lambda: TensorMap.tiled(b, (64, 32), swizzle="128B"),
        "desc.with_array(b)": lambda: desc.with_array(b),
        "desc.with_array(b) + typeof": lambda: typeof(desc.with_array(b)),
        "desc.retarget(a or b)": lambda: desc.retarget((a, b)[next(turn) & 1]),
        "typeof(desc)": lambda: typeof(other),
        "tiled, 12 arrays in turn (shapes x dtypes)": lambda: TensorMap.tiled(pool[next(turn) % 12], (32, 32)),
        "tiled, box as a list": lambda: TensorMap.tiled(b, [64, 64]),
        "TensorMap.im2col(x, ...)": lambda: TensorMap.im2col(nhwc, (-1, -1), (1, 1), 64, 128),
    }


def fastest(stages, calls, rounds=9):
    """Seconds per call of each stage in its fastest of ``rounds`` interleaved rounds of ``calls`` (the
    round least disturbed by other work on a shared machine)."""
    for fn in stages.values():
        for _ in range(calls // 5):
            fn()
    spent = {name: [] for name in stages}
    for _ in range(rounds):
        for name, fn in stages.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            spent[name].append((time.perf_counter() - t0) / calls)
    return {name: min(t) for name, t in spent.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", help="also write the results (microseconds per call) to this file")
    args = ap.parse_args(argv)
    results = {name: t * 1e6 for name, t in fastest(rows(), args.calls, args.rounds).items()}
    for name, us in results.items():
        print(f"{name:44s} {us:7.2f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
