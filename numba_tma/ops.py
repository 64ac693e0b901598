"""The op families this process runs — the one place that chooses between numba-tma's compiled
intrinsics (:mod:`numba_tma.intrinsics`) and, under numba-cuda's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``, read once by :mod:`numba_tma.numba_cuda_hooks`), their Python twins
(:mod:`numba_tma.simulator`).  ``numba_tma.<family>`` and the user-level modules (``tlx``,
``testing``) take their ops from here.
"""

from .numba_cuda_hooks import SIMULATED as SIMULATOR

FAMILIES = ("bulk", "cache", "cluster", "cp_async", "dsmem", "fence", "mbarrier", "mma", "sync", "tcgen05", "tensormap",
            "tma", "wgmma")

if SIMULATOR:   # numba-cuda's CUDA simulator runs kernels as Python: the ops' Python twins
    from .simulator import FAMILIES as _TWINS
    from .simulator import at

    bulk, cache, cluster, cp_async, dsmem, fence, mbarrier, mma, sync, tcgen05, tensormap, tma, wgmma = (
        _TWINS[f] for f in FAMILIES)
else:
    from .intrinsics import (at, bulk, cache, cluster, cp_async, dsmem, fence, mbarrier, mma, sync, tcgen05, tensormap,
                             tma, wgmma)

__all__ = ["FAMILIES", "SIMULATOR", "at", *FAMILIES]
