"""Time to build one CUtensorMap: pure-Python encoder, cached TensorMap, the driver, cuda.core.

Runs anywhere; rows that need a GPU (the driver through cuda.bindings, cuda.core's
``StridedMemoryView.as_tensor_map``) are skipped with a note when none is present.  Every row
builds the same descriptor: a 4096 x 4096 float16 tensor, 64 x 64 box, 128B swizzle, L2 128B.

    python benchmarks/bench_encode.py            # table
    python benchmarks/bench_encode.py --json out.json

Add a row by appending ``(name, setup)`` to ``ROWS``: ``setup(ctx)`` returns a zero-argument
callable that builds one descriptor, or raises ``Unavailable``.
"""

import argparse
import json
import sys
import timeit

from numba_tma.descriptors import encode_tiled

SHAPE = (4096, 4096)                      # C order
BOX = (64, 64)
ITEMSIZE = 2


class Unavailable(Exception):
    """A row that cannot run here (no GPU, missing package)."""


def _device_pointer(ctx):
    """Allocate the tensor once (cuda.core) and remember it; raise Unavailable without a GPU."""
    if "view" not in ctx:
        try:
            import numpy as np
            from cuda.core import Device
            from cuda.core.utils import StridedMemoryView
            dev = Device(0)
            dev.set_current()
            buf = dev.allocate(SHAPE[0] * SHAPE[1] * ITEMSIZE, stream=dev.default_stream)
            ctx["buf"] = buf
            ctx["view"] = StridedMemoryView.from_buffer(buf, SHAPE, dtype=np.dtype("float16"))
        except Exception as exc:  # no driver, no device, old cuda.core
            raise Unavailable(f"no GPU tensor ({type(exc).__name__}: {exc})") from None
    return int(ctx["view"].ptr)


def _args(ptr):
    return ("float16", ptr, [SHAPE[1], SHAPE[0]], [SHAPE[1] * ITEMSIZE], [BOX[1], BOX[0]])


def pure(ctx):
    ptr = 0x7F00_0000_0000
    if ctx.get("gpu"):
        ptr = _device_pointer(ctx)
    args = _args(ptr)
    return lambda: encode_tiled(*args, swizzle="128B", l2_promotion="128B")


def pure_enums(ctx):
    from numba_tma.descriptors import DataType, L2Promotion, Swizzle
    args = (DataType.FLOAT16,) + _args(_device_pointer(ctx) if ctx.get("gpu") else 0x7F00_0000_0000)[1:]
    return lambda: encode_tiled(*args, swizzle=Swizzle.SWIZZLE_128B, l2_promotion=L2Promotion.L2_128B)


def driver_bindings(ctx):
    from numba_tma.descriptors import driver
    args = _args(_device_pointer(ctx))
    fn = lambda: driver.encode_tiled(*args, swizzle="128B", l2_promotion="128B")  # noqa: E731
    ctx["driver_bytes"] = fn()
    return fn


def driver_raw(ctx):
    """The bare cuda.bindings call with every argument prebuilt: the driver's floor."""
    from cuda.bindings import driver as drv
    ptr = _device_pointer(ctx)
    u64, u32 = drv.cuuint64_t, drv.cuuint32_t
    args = (drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, ptr, [u64(SHAPE[1]), u64(SHAPE[0])],
            [u64(SHAPE[1] * ITEMSIZE)], [u32(BOX[1]), u32(BOX[0])], [u32(1), u32(1)],
            drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
            drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    return lambda: drv.cuTensorMapEncodeTiled(*args)


def cuda_core(ctx):
    _device_pointer(ctx)
    view = ctx["view"]
    try:
        from cuda.core._tensor_map import TensorMapL2Promotion, TensorMapSwizzle
    except ImportError as exc:
        raise Unavailable(f"cuda.core without tensor maps ({exc})") from None
    kw = dict(box_dim=BOX, swizzle=TensorMapSwizzle.SWIZZLE_128B, l2_promotion=TensorMapL2Promotion.L2_128B)
    fn = lambda: view.as_tensor_map(**kw)  # noqa: E731
    fn()
    return fn


class _Array:
    """The tensor as TensorMap sees a CUDA array (its __cuda_array_interface__)."""

    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"shape": SHAPE, "typestr": "<f2", "data": (ptr, False),
                                         "strides": None, "version": 3}


def tensor_map_cached(ctx):
    """TensorMap.tiled on an array whose layout was seen before: address splice only."""
    from numba_tma import TensorMap
    array = _Array(_device_pointer(ctx) if ctx.get("gpu") else 0x7F00_0000_0000)
    fn = lambda: TensorMap.tiled(array, BOX, swizzle="128B", l2_promotion="128B")  # noqa: E731
    fn()
    return fn


def tensor_map_with_array(ctx):
    """An existing TensorMap re-pointed at another array of the same layout."""
    from numba_tma import TensorMap
    ptr = _device_pointer(ctx) if ctx.get("gpu") else 0x7F00_0000_0000
    desc, other = TensorMap.tiled(_Array(ptr), BOX, swizzle="128B"), _Array(ptr + 4096)
    return lambda: desc.with_array(other)


ROWS = [
    ("pure Python encoder (string args)", pure),
    ("pure Python encoder (enum args)", pure_enums),
    ("driver via numba_tma...driver", driver_bindings),
    ("cuTensorMapEncodeTiled, args prebuilt", driver_raw),
    ("cuda.core as_tensor_map", cuda_core),
    ("TensorMap.tiled, layout cached", tensor_map_cached),
    ("TensorMap.with_array", tensor_map_with_array),
]


def measure(fn, min_time=0.2):
    """Best-of-5 seconds per call, with the call count chosen to run ~min_time per repeat."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return min(timer.repeat(repeat=5, number=number)) / number


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    ctx = {}
    try:
        _device_pointer(ctx)
        ctx["gpu"] = True
    except Unavailable as exc:
        print(f"note: {exc}; GPU rows skipped", file=sys.stderr)
    results = {}
    for name, setup in ROWS:
        try:
            fn = setup(ctx)
        except Unavailable as exc:
            print(f"{name:38s} skipped: {exc}")
            continue
        results[name] = measure(fn)
    base = results[ROWS[0][0]]
    print(f"\n{'descriptor build':38s} {'us/call':>9s} {'x pure':>8s}")
    for name, t in results.items():
        print(f"{name:38s} {t * 1e6:9.2f} {t / base:8.2f}")
    if "driver_bytes" in ctx:
        same = ctx["driver_bytes"] == pure(ctx)()
        print(f"\npure encoder bytes == driver bytes: {same}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v * 1e6 for k, v in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
