"""The pipeline examples against the hand-written rings they replaced (benchmarks/reference_rings.py),
in one run on the GPU, interleaved, the median of 7 rounds:

* the copy ring (examples/tma_copy_store.py): GB/s, beside torch ``copy_``;
* the warp-specialised ring (examples/warp_specialized_ring.py): GB/s;
* the cluster multicast ring (examples/cluster_multicast.py): microseconds per launch, clusters of 2 and 4.

Every result is checked before it is timed.  Prints one table; the issue's target: each pipeline
kernel within 2 % of its reference.

    python benchmarks/bench_pipeline.py
"""

import os
import statistics
import sys

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "examples"), os.path.dirname(__file__)]

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import cluster_multicast as mc  # noqa: E402
import reference_rings as ref  # noqa: E402
import tma_copy_store as cs  # noqa: E402
import warp_specialized_ring as ws  # noqa: E402
from numba_tma import TensorMap, launch  # noqa: E402
from numba_tma.testing import gpu_seconds  # noqa: E402

ROUNDS = 7


def median_times(fns, repeats):
    """``{name: median seconds}`` over ROUNDS rounds, the functions interleaved in each round."""
    times = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(gpu_seconds(fn, repeats))
    return {name: statistics.median(t) for name, t in times.items()}


def copy_rows():
    rows = cols = 16384
    host = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    a, b = cuda.to_device(host), cuda.device_array_like(host)
    src, dst = cs.maps(a, b)
    counter = cuda.to_device(np.zeros(2, np.uint32))
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * cs.PER_SM
    tiles_x = cols // cs.BOX_C
    n_tiles = tiles_x * (rows // cs.BOX_R)

    def reference():
        launch(ref.copy_ring, blocks, 32, src, dst, tiles_x, n_tiles, counter, shared_mem=ref.copy_plan.nbytes)

    def ours():
        cs.tma_copy(src, dst, host.shape, counter, blocks)

    fns = {"reference": reference, "pipeline": ours}
    try:
        import torch

        x = torch.as_tensor(a, device="cuda")
        y = torch.empty_like(x)
        fns["torch copy_"] = lambda: y.copy_(x)
    except ImportError:
        pass
    for name in ("reference", "pipeline"):
        b.copy_to_device(np.zeros_like(host))
        fns[name]()
        assert np.array_equal(b.copy_to_host(), host), name
    t = median_times(fns, 20)
    return {name: 2 * host.nbytes / s / 1e9 for name, s in t.items()}, "GB/s"


def warp_specialised_rows():
    rows, cols = 8192, 4096
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    out = cuda.device_array_like(x)
    src = TensorMap.tiled(cuda.to_device(x), (ws.ROWS, ws.COLS))
    n_tiles = (rows // ws.ROWS) * (cols // ws.COLS)
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 2
    fns = {"reference": lambda: ref.twice_plus_one[blocks, 32 * (1 + ref.CONSUMERS)](src, out, n_tiles),
           "pipeline": lambda: ws.run(src, out, n_tiles, blocks)}
    for name, fn in fns.items():
        out.copy_to_device(np.zeros_like(x))
        fn()
        assert np.array_equal(out.copy_to_host(), 2 * x + 1), name
    t = median_times(fns, 20)
    return {name: 2 * x.nbytes / s / 1e9 for name, s in t.items()}, "GB/s"


def multicast_rows(n):
    blocks = 2 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    b = np.random.default_rng(0).standard_normal((mc.K * mc.ROWS, mc.COLS)).astype(np.float32)
    expected = b.reshape(mc.K, mc.ROWS * mc.COLS).astype(np.float64).sum(0)
    desc = TensorMap.tiled(cuda.to_device(b), (mc.ROWS // n, mc.COLS))
    out = cuda.device_array((blocks, mc.ROWS * mc.COLS), np.float32)
    fns = {"reference": lambda: launch(ref.multicast_sum, blocks, ref.MC_THREADS, desc, out, cluster=(n, 1, 1),
                                       shared_mem=ref.mc_plan.nbytes),
           "pipeline": lambda: launch(mc.multicast_sum, blocks, mc.THREADS, desc, out, cluster=(n, 1, 1),
                                      shared_mem=mc.PLAN.nbytes)}
    for name, fn in fns.items():
        out.copy_to_device(np.zeros((blocks, mc.ROWS * mc.COLS), np.float32))
        fn()
        assert np.allclose(out.copy_to_host(), expected[None, :], rtol=1e-4, atol=1e-3), name
    t = median_times(fns, 50)
    return {name: s * 1e6 for name, s in t.items()}, "us"


def main():
    if cuda.is_available() is False:
        print("bench_pipeline: needs a GPU")
        return 0
    assert mc.K == ref.MC_K, "the example and its reference read the same tiles"
    print(f"bench_pipeline: median of {ROUNDS} interleaved rounds, {cuda.get_current_device().name}")
    print(f"{'kernel':34s} {'reference':>10s} {'pipeline':>10s} {'ratio':>7s}  other")
    rows = [("copy ring (TMA load -> store)", copy_rows()), ("warp-specialised ring", warp_specialised_rows()),
            ("cluster multicast ring, n=2", multicast_rows(2)), ("cluster multicast ring, n=4", multicast_rows(4))]
    for label, (values, unit) in rows:
        r, p = values["reference"], values["pipeline"]
        ratio = p / r if unit == "GB/s" else r / p                 # >1: the pipeline is faster
        extra = "  ".join(f"{k} {v:.0f} {unit} (pipeline/{k} {p / v:.3f})" for k, v in values.items()
                          if k not in ("reference", "pipeline"))
        print(f"{label:34s} {r:10.1f} {p:10.1f} {ratio:7.3f}  {unit}  {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
