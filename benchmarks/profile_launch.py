"""Where a launch's host time goes: cProfile of 1000 launches of each path of bench_launch.py, the 22
functions with the most time of their own, and the unprofiled time per call (on the GPU host).

    python benchmarks/profile_launch.py [--stages]      # --stages: only the fresh-map launch's stages
    python benchmarks/profile_launch.py --host-only     # no GPU: the host-side stages over fake arrays

``--host-only`` times, with no GPU or driver, what a fresh map costs before numba's launcher takes it
(over objects with only a ``__cuda_array_interface__``, 8 addresses in turn) next to numba's own
typing of such an array argument: the per-call work the fast paths remove, measured anywhere (each
stage's fastest of 9 interleaved rounds).
"""
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

sys.path[:0] = [os.path.dirname(__file__)]
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import bench_launch as bl  # noqa: E402
from bench_map_host import fastest  # noqa: E402
from numba_tma import TensorMap, launch  # noqa: E402
from numba_tma.descriptors import by_value  # noqa: E402


class FakeArray:
    """Only the ``__cuda_array_interface__`` of a C-contiguous device array (no memory behind it), its
    shape a tuple of its own (as each numba, CuPy or PyTorch array has)."""

    def __init__(self, address, shape=bl.SHAPE, typestr="<f4"):
        self.__cuda_array_interface__ = {"shape": tuple([*shape]), "typestr": typestr, "data": (address, False),
                                         "strides": None, "version": 3}


def host_only():
    fakes = [FakeArray(0x7F0000000000 + k * 2**20) for k in range(8)]
    turn = iter(range(1 << 62))
    fake = lambda: fakes[next(turn) & 7]   # noqa: E731
    desc = TensorMap.tiled(fake(), bl.BOX)
    stages = {
        "numba typeof_pyval(CAI array)": lambda: bl.with_array.typeof_pyval(fake()),
        "numba typeof_pyval(desc)": lambda: bl.with_map.typeof_pyval(desc),
        "TensorMap.tiled(fake, BOX)": lambda: TensorMap.tiled(fake(), bl.BOX),
        "TensorMap.tiled(fake, BOX) + typeof_pyval": lambda: bl.with_map.typeof_pyval(TensorMap.tiled(fake(), bl.BOX)),
        "desc.with_array(fake)": lambda: desc.with_array(fake()),
        "desc.with_array(fake) + typeof_pyval": lambda: bl.with_map.typeof_pyval(desc.with_array(fake())),
        "desc.retarget(fake)": lambda: desc.retarget(fake()),
    }
    for name, t in fastest(stages, 5000).items():
        print(f"host {name:42s} {t * 1e6:6.2f} us")


if "--host-only" in sys.argv:
    host_only()
    sys.exit(0)
a = cuda.to_device(np.zeros(bl.SHAPE, np.float32))
b = cuda.to_device(np.zeros(bl.SHAPE, np.float32))
out = cuda.device_array(1, np.int64)
desc = TensorMap.tiled(a, bl.BOX)
bl.with_map[1, 32](desc, out); bl.with_array[1, 32](a, out)
launch(bl.with_array, 1, 32, a, out); launch(bl.with_array, 2, 32, a, out, cluster=(2, 1, 1))
# the fresh-map launch in stages (unprofiled, per call, interleaved: the median of 5 rounds)
stages = {
    "numba k[1,32](a, out)": lambda: bl.with_array[1, 32](a, out),
    "numba k[1,32](desc, out)": lambda: bl.with_map[1, 32](desc, out),
    "b.__cuda_array_interface__": lambda: b.__cuda_array_interface__,
    "desc._address_of(b)": lambda: desc._address_of(b),
    "desc.retarget(b)": lambda: desc.retarget(b),
    "by_value.argument(desc, 0)": lambda: by_value.argument(desc, 0),
    "desc.retarget(b), launched": lambda: bl.with_map[1, 32](desc.retarget(b), out),
    "desc.with_array(b)": lambda: desc.with_array(b),
    "desc.with_array(b), launched": lambda: bl.with_map[1, 32](desc.with_array(b), out),
    "TensorMap.tiled(b, BOX)": lambda: TensorMap.tiled(b, bl.BOX),
    "  + ._numba_type_": lambda: TensorMap.tiled(b, bl.BOX)._numba_type_,
    "  + dispatcher typeof_pyval": lambda: bl.with_map.typeof_pyval(TensorMap.tiled(b, bl.BOX)),
    "  + by_value.argument (its twin)": lambda: by_value.argument(TensorMap.tiled(b, bl.BOX), 0),
    "  + launched": lambda: bl.with_map[1, 32](TensorMap.tiled(b, bl.BOX), out),
}
for fn in stages.values():
    for _ in range(200):
        fn()
spent = {name: [] for name in stages}
for _ in range(5):
    for name, fn in stages.items():
        cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(1000):
            fn()
        spent[name].append((time.perf_counter() - t0) / 1000)
        cuda.synchronize()
for name, t in spent.items():
    print(f"stage {name:36s} {statistics.median(t) * 1e6:6.2f} us")
if "--stages" in sys.argv:
    sys.exit(0)
rows = {
    "numba k[1,32](a, out)": lambda: bl.with_array[1, 32](a, out),
    "numba_tma.launch(k, 1, 32, a, out)": lambda: launch(bl.with_array, 1, 32, a, out),
    "numba_tma.launch cluster 2": lambda: launch(bl.with_array, 2, 32, a, out, cluster=(2, 1, 1)),
    "TensorMap.tiled(b, BOX) alone": lambda: TensorMap.tiled(b, bl.BOX),
    "desc.with_array(b) alone": lambda: desc.with_array(b),
    "numba k[1,32](desc, out)": lambda: bl.with_map[1, 32](desc, out),
    "numba k[1,32](TensorMap.tiled(b, BOX), out)": lambda: bl.with_map[1, 32](TensorMap.tiled(b, bl.BOX), out),
    "numba k[1,32](desc.with_array(b), out)": lambda: bl.with_map[1, 32](desc.with_array(b), out),
}
for name, fn in rows.items():
    for _ in range(200):
        fn()
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(1000):
        fn()
    t = (time.perf_counter() - t0) / 1000
    cuda.synchronize()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(1000):
        fn()
    pr.disable()
    cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(22)
    print(f"===== {name}: {t * 1e6:.1f} us per call (unprofiled)")
    print("\n".join(l for l in s.getvalue().splitlines()[6:34] if l.strip()))
