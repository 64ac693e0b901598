"""What debug mode costs: the same TMA tile-copy kernel compiled without and with
``numba_tma.debug()``, timed in one run (CUDA events, median of 20, 8192 x 8192 float32).

    python benchmarks/bench_debug.py
"""

import numba
import numpy as np
from numba import cuda

from numba_tma import TensorMap, debug, fence, mbarrier, tma

N, BOX = 8192, 64


def tile_copy(desc, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((BOX, BOX), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()                     # the barrier exists before anyone waits on it
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, desc.box_bytes)
        tma.load(desc, tile, (cuda.blockIdx.x * BOX, cuda.blockIdx.y * BOX), bars)
    mbarrier.wait(bars, 0)
    r0, c0 = cuda.blockIdx.y * BOX, cuda.blockIdx.x * BOX
    for e in range(cuda.threadIdx.x, BOX * BOX, cuda.blockDim.x):
        out[r0 + e // BOX, c0 + e % BOX] = tile[e // BOX, e % BOX]


def median_ms(kernel, desc, out):
    grid = (N // BOX, N // BOX)
    kernel[grid, 256](desc, out)
    times = []
    for _ in range(20):
        start, stop = cuda.event(), cuda.event()
        start.record()
        kernel[grid, 256](desc, out)
        stop.record()
        stop.synchronize()
        times.append(cuda.event_elapsed_time(start, stop))
    return float(np.median(times))


def main():
    a = cuda.to_device(np.random.default_rng(0).standard_normal((N, N)).astype(np.float32))
    out = cuda.device_array_like(a)
    desc = TensorMap.tiled(a, (BOX, BOX))
    release = cuda.jit(tile_copy)
    checked = cuda.jit(tile_copy)
    with debug():
        checked[(N // BOX, N // BOX), 256](desc, out)          # compiled inside: with the checks
    t_release, t_debug = median_ms(release, desc, out), median_ms(checked, desc, out)
    assert np.array_equal(out.copy_to_host(), a.copy_to_host())
    gbps = lambda t: 2 * a.nbytes / t / 1e6                     # noqa: E731
    print(f"release  {t_release:.3f} ms  {gbps(t_release):.0f} GB/s")
    print(f"debug    {t_debug:.3f} ms  {gbps(t_debug):.0f} GB/s   cost: x{t_debug / t_release:.3f}")


if __name__ == "__main__":
    main()
