"""Imported by the examples that run on both hosts, after ``_simulate_without_gpu``: the
environment variable ``NUMBA_TMA_HOST`` picks the compiler of their kernels.

    python examples/tma_tile_copy.py                        # numba-cuda (the default)
    NUMBA_TMA_HOST=mlir python examples/tma_tile_copy.py    # numba-cuda-mlir (docs/second_host.md)

The examples import numba_tma (``from numba_tma import tma, ...``, ``plan.carver()``) the same way
on both hosts; what comes from here is the compiler's own: ``cuda`` and ``types`` of that host;
``jit``, its ``cuda.jit`` (numba-cuda-mlir's for the GPU's arch-specific target, ``sm_90a`` on a
Hopper), which also serves device functions (``types.uint32(x)``, ``jit(device=True,
inline=True)``); and ``kernel_map(tmap)``, how a kernel takes a ``TensorMap``: by value under
numba-cuda, in global memory under numba-cuda-mlir (``numba_tma.mlir.map_in_global``:
numba-cuda-mlir 0.6 cannot pass a map by value below sm_100).  ``numba_tma.launch`` launches the
kernels of both (numba-cuda-mlir's go to its own launcher after the same checks).
numba-cuda-mlir has no simulator: without a GPU, ``NUMBA_TMA_HOST=mlir`` stops with a message;
with one, it says first which host compiles.
"""

import functools
import os

from _simulate_without_gpu import SIMULATED, gpu_present

HOST = os.environ.get("NUMBA_TMA_HOST", "numba-cuda")
if HOST not in ("numba-cuda", "mlir"):
    raise SystemExit(f"NUMBA_TMA_HOST must be 'numba-cuda' (the default) or 'mlir'; got {HOST!r}")
MLIR = HOST == "mlir"

if MLIR:
    if SIMULATED:
        raise SystemExit("NUMBA_TMA_HOST=mlir needs a CUDA GPU: numba-cuda-mlir has no simulator")
    print("compiled by numba-cuda-mlir (NUMBA_TMA_HOST=mlir)", flush=True)
    from numba_cuda_mlir import cuda, types

    from numba_tma.mlir import map_in_global

    # the GPU's arch-specific target; with none (NUMBA_ENABLE_CUDASIM=0 set by hand: the CPU tests
    # compile the kernels through numba_tma.inspect), Hopper's
    _major, _minor = cuda.get_current_device().compute_capability if gpu_present() else (9, 0)
    jit = functools.partial(cuda.jit, chip=f"sm_{_major}{_minor}a")

    def kernel_map(tmap):
        return map_in_global(tmap)
else:
    from numba import cuda
    from numba.cuda import types

    jit = cuda.jit

    def kernel_map(tmap):
        return tmap

__all__ = ["HOST", "MLIR", "cuda", "jit", "kernel_map", "types"]
