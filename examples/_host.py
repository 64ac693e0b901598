"""Imported by the examples that run on both hosts, after ``_simulate_without_gpu``: the
environment variable ``NUMBA_TMA_HOST`` picks the compiler of their kernels.

    python examples/tma_tile_copy.py                        # numba-cuda (the default)
    NUMBA_TMA_HOST=mlir python examples/tma_tile_copy.py    # numba-cuda-mlir (docs/second_host.md)

``cuda``, ``types`` and the families (``numba_tma.mlir``'s under numba-cuda-mlir) come from that
host; ``jit`` is its ``cuda.jit`` (numba-cuda-mlir's for the GPU's arch-specific target,
``sm_90a`` on a Hopper); ``carver(plan)`` carves a ``SharedMemoryPlan`` in its kernels;
``launch`` is ``numba_tma.launch`` on both (numba-cuda-mlir's kernels go to its own launcher after
the same checks); ``types`` and ``jit`` also
serve device functions (``types.uint32(x)``, ``jit(device=True, inline=True)``); ``kernel_map(tmap)`` is how a kernel takes a ``TensorMap``: by value
under numba-cuda, in global memory under numba-cuda-mlir (``numba_tma.mlir.map_in_global``: numba-cuda-mlir
0.6 cannot pass a map by value below sm_100).  numba-cuda-mlir has no simulator: without a GPU,
``NUMBA_TMA_HOST=mlir`` stops with a message; with one, it says first which host compiles.
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

    from numba_tma import launch
    from numba_tma.mlir import at, bulk, carver, cluster, fence, map_in_global, mbarrier, sync, tma, wgmma

    # the GPU's arch-specific target; with none (NUMBA_ENABLE_CUDASIM=0 set by hand: the CPU tests
    # compile the kernels through numba_tma.inspect), Hopper's
    _major, _minor = cuda.get_current_device().compute_capability if gpu_present() else (9, 0)
    jit = functools.partial(cuda.jit, chip=f"sm_{_major}{_minor}a")

    def kernel_map(tmap):
        return map_in_global(tmap)
else:
    from numba import cuda
    from numba.cuda import types

    from numba_tma import at, bulk, cluster, fence, launch, mbarrier, sync, tma, wgmma

    jit = cuda.jit

    def carver(plan):
        return plan.carver()

    def kernel_map(tmap):
        return tmap

__all__ = ["HOST", "MLIR", "at", "bulk", "carver", "cluster", "cuda", "fence", "jit", "kernel_map", "launch", "mbarrier",
           "sync", "tma", "types", "wgmma"]
