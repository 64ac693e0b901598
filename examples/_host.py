"""Imported by the examples that run on both hosts, after ``_simulate_without_gpu``: the
environment variable ``NUMBA_TMA_HOST`` picks the compiler of their kernels.

    python examples/tma_tile_copy.py                        # numba-cuda (the default)
    NUMBA_TMA_HOST=mlir python examples/tma_tile_copy.py    # numba-cuda-mlir (docs/second_host.md)

``cuda``, ``types`` and the families (``numba_tma.mlir``'s under numba-cuda-mlir) come from that
host; ``jit`` is its ``cuda.jit`` (numba-cuda-mlir's for the GPU's arch-specific target,
``sm_90a`` on a Hopper); ``carver(plan)`` carves a ``SharedMemoryPlan`` in its kernels;
``launch(kernel, grid, block, *args, shared_mem=0)`` launches (``numba_tma.launch``, or
numba-cuda-mlir's own ``kernel[grid, block, 0, shared_mem]``); ``kernel_map(tmap)`` is how a kernel takes a ``TensorMap``: by value
under numba-cuda, in global memory under numba-cuda-mlir (``numba_tma.mlir.map_in_global``: numba-cuda-mlir
0.6 cannot pass a map by value below sm_100).  numba-cuda-mlir has no simulator: without a GPU,
``NUMBA_TMA_HOST=mlir`` stops with a message; with one, it says first which host compiles.
"""

import functools
import os

from _simulate_without_gpu import SIMULATED

HOST = os.environ.get("NUMBA_TMA_HOST", "numba-cuda")
if HOST not in ("numba-cuda", "mlir"):
    raise SystemExit(f"NUMBA_TMA_HOST must be 'numba-cuda' (the default) or 'mlir'; got {HOST!r}")
MLIR = HOST == "mlir"

if MLIR:
    if SIMULATED:
        raise SystemExit("NUMBA_TMA_HOST=mlir needs a CUDA GPU: numba-cuda-mlir has no simulator")
    print("compiled by numba-cuda-mlir (NUMBA_TMA_HOST=mlir)", flush=True)
    from numba_cuda_mlir import cuda, types

    from numba_tma.mlir import at, bulk, carver, fence, map_in_global, mbarrier, sync, tma

    _major, _minor = cuda.get_current_device().compute_capability
    jit = functools.partial(cuda.jit, chip=f"sm_{_major}{_minor}a")

    def launch(kernel, grid, block, *args, shared_mem=0):
        kernel[grid, block, 0, shared_mem](*args)

    def kernel_map(tmap):
        return map_in_global(tmap)
else:
    from numba import cuda
    from numba.cuda import types

    from numba_tma import at, bulk, fence, launch, mbarrier, sync, tma

    jit = cuda.jit

    def carver(plan):
        return plan.carver()

    def kernel_map(tmap):
        return tmap

__all__ = ["HOST", "MLIR", "at", "bulk", "carver", "cuda", "fence", "jit", "kernel_map", "launch", "mbarrier", "sync", "tma",
           "types"]
