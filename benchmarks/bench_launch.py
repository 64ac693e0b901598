"""Host cost of launching a one-block kernel: numba-tma's launch paths against numba's own launch of
the same kernel, in one process, interleaved.

Needs a GPU.  Each round launches every row's kernel ``LAUNCHES`` times back to back (without
waiting for the GPU: the figure is the host's cost per launch) and the rows take turns; a row's
figure is the median over ``ROUNDS`` rounds, its ratio to the row it is compared with (the issue's
targets: ``numba_tma.launch`` within 1.1x of numba's launch of the same kernel, a fresh map per
launch within 1.2x of a plain launch).  The rotating rows launch over a pool of arrays of varied
shapes and dtypes, a fresh map each launch; Triton's launch of a one-element kernel is a peer row.

The graph rows (``numba_tma.LaunchGraph``): a sequence of 9 launches (a map by value, a cluster of
2, 100 KB of dynamic shared memory, three times) launched one by one with ``numba_tma.launch`` and
replayed as one captured graph, each figure per kernel (a call's time over 9); and a one-kernel
graph re-pointed at the other of two maps (``set_args``) before every replay, against launching
that kernel on the other map with ``numba_tma.launch``.  A replay enqueues its 9 kernels in one
call, so once the GPU's queue is full the replayed row runs at the GPU's pace, not the host's.

    python benchmarks/bench_launch.py            # table
    python benchmarks/bench_launch.py --json out.json
"""

import argparse
import itertools
import json
import statistics
import time

import numpy as np
from numba import cuda

from numba_tma import LaunchGraph, TensorMap, launch

LAUNCHES = 1000
ROUNDS = 7
SHAPE, BOX = (1024, 1024), (64, 64)


@cuda.jit
def with_map(desc, out):
    out[0] = desc.box_bytes


@cuda.jit
def with_array(a, out):
    out[0] = a.shape[0]


def host_seconds(fn, per=1):
    """Host seconds per call of ``fn`` over LAUNCHES calls (the GPU idle at the start), over ``per``
    (the kernels one call launches)."""
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(LAUNCHES):
        fn()
    seconds = (time.perf_counter() - t0) / LAUNCHES / per
    cuda.synchronize()
    return seconds


SEQUENCE = 3      # times (map, cluster, 100 KB shared) in the graph rows' sequence


def sequence(a, desc, out):
    """The graph rows' launches: ``(kernel, grid, args, options)``, 3 * SEQUENCE of them."""
    return [(with_map, 1, (desc, out), {}), (with_array, 2, (a, out), {"cluster": (2, 1, 1)}),
            (with_array, 1, (a, out), {"shared_mem": 100 * 1024})] * SEQUENCE


def graph_rows(a, desc, maps, out, turn):
    """``(name, function, against, kernels per call)`` of the graph rows."""
    steps = sequence(a, desc, out)
    graph = LaunchGraph()
    for kernel, grid, args, options in steps:
        graph.launch(kernel, grid, 32, *args, **options)
    graph.build()
    single = LaunchGraph()
    node = single.launch(with_map, 1, 32, maps[0], out)
    single.build()

    def launched():
        for kernel, grid, args, options in steps:
            launch(kernel, grid, 32, *args, **options)

    def repointed():
        single.set_args(node, maps[next(turn) & 1], out)
        single.replay()

    one_by_one = f"{len(steps)} numba_tma.launch (map/cluster/100 KB), per kernel"
    one_map = "numba_tma.launch(k, 1, 32, map), two alternating"
    return [(one_by_one, launched, None, len(steps)),
            (f"the same {len(steps)} replayed as a LaunchGraph, per kernel", graph.replay, one_by_one, len(steps)),
            (one_map, lambda: launch(with_map, 1, 32, maps[next(turn) & 1], out), None, 1),
            ("1-kernel LaunchGraph: set_args(other map) + replay", repointed, one_map, 1)]


def triton_row():
    try:
        import torch
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def one(out_ptr, n):
        tl.store(out_ptr, n)

    out = torch.zeros(1, dtype=torch.int64, device="cuda")
    one[(1,)](out, 1)
    return lambda: one[(1,)](out, 1)


def rows():
    """``(name, function, the row it is compared with, kernels per call)``."""
    a = cuda.to_device(np.zeros(SHAPE, np.float32))
    b = cuda.to_device(np.zeros(SHAPE, np.float32))
    out = cuda.device_array(1, np.int64)
    desc = TensorMap.tiled(a, BOX)
    maps = [TensorMap.tiled(a, BOX), TensorMap.tiled(b, BOX)]
    pool = [cuda.to_device(np.zeros(shape, dtype)) for shape, dtype in
            itertools.product([(256, 512), (512, 256), (1024, 64), (128, 1024)], [np.float32, np.float16, np.int32])]
    turn = itertools.count()
    base, grid2, smem = "numba k[1, 32](array)", "numba k[2, 32](array)", "numba k[1, 32, 0, 48 KB](array)"
    table = [
        (base, lambda: with_array[1, 32](a, out), None),
        ("numba_tma.launch(k, 1, 32, array)", lambda: launch(with_array, 1, 32, a, out), base),
        (grid2, lambda: with_array[2, 32](a, out), None),
        ("numba_tma.launch, cluster=(2, 1, 1)", lambda: launch(with_array, 2, 32, a, out, cluster=(2, 1, 1)), grid2),
        (smem, lambda: with_array[1, 32, 0, 48 * 1024](a, out), None),
        ("numba_tma.launch, 100 KB shared", lambda: launch(with_array, 1, 32, a, out, shared_mem=100 * 1024), smem),
        ("numba k[1, 32](map), reused", lambda: with_map[1, 32](desc, out), base),
        ("two maps, alternating", lambda: with_map[1, 32](maps[next(turn) & 1], out), base),
        ("TensorMap.tiled every launch", lambda: with_map[1, 32](TensorMap.tiled(b, BOX), out), base),
        ("desc.with_array every launch", lambda: with_map[1, 32](desc.with_array(b), out), base),
        ("desc.retarget every launch", lambda: with_map[1, 32](maps[next(turn) & 1].retarget(b), out), base),
        ("rotating arrays (12 shapes x dtypes), fresh map",
         lambda: with_map[1, 32](TensorMap.tiled(pool[next(turn) % len(pool)], (32, 32)), out), base),
        ("numba_tma.launch, rotating arrays and maps",
         lambda: launch(with_map, 1, 32, TensorMap.tiled(pool[next(turn) % len(pool)], (32, 32)), out), base),
    ]
    peer = triton_row()
    if peer is not None:
        table.append(("Triton launch (peer), 1 program", peer, base))
    return [row + (1,) for row in table] + graph_rows(a, desc, maps, out, turn)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    table = rows()
    for _, fn, _, _ in table:                  # compile and warm every path first
        for _ in range(50):
            fn()
    times = {name: [] for name, _, _, _ in table}
    for _ in range(ROUNDS):
        for name, fn, _, per in table:
            times[name].append(host_seconds(fn, per))
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"bench_launch: host time per launch, median of {ROUNDS} interleaved rounds of {LAUNCHES}, "
          f"{cuda.get_current_device().name}")
    print(f"{'launch of a 1-block kernel':52s} {'us':>7s} {'ratio':>6s}  to")
    for name, _, against, _ in table:
        ratio = f"{median[name] / median[against]:6.2f}" if against else "      "
        print(f"{name:52s} {median[name] * 1e6:7.2f} {ratio}  {against or ''}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({name: {"us": median[name] * 1e6, "against": against} for name, _, against, _ in table}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
