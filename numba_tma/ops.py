"""The backend and the op families this process runs — the one place that reads numba-cuda's
simulator switch (``NUMBA_ENABLE_CUDASIM=1``, in numba-cuda's configuration, read when numba is
imported) and chooses, once: numba-cuda's compiler, a GPU and numba-tma's compiled intrinsics
(:mod:`numba_tma.gpu`, :mod:`numba_tma.intrinsics`), or numba-cuda's CUDA simulator and the ops'
Python twins (:mod:`numba_tma.simulator`).  ``numba_tma.<family>`` and the user-level modules take
their ops and the backend (:data:`BACKEND`, a :class:`numba_tma.backend.Backend`) from here; none
branches on the switch.
"""

from .numba_cuda import config

FAMILIES = ("bulk", "cache", "cluster", "cp_async", "dsmem", "fence", "mbarrier", "mma", "sync", "tcgen05", "tensormap",
            "tma", "wgmma")

SIMULATOR = bool(config.ENABLE_CUDASIM)
"""Whether numba-cuda's CUDA simulator runs this process's kernels (``numba_tma.SIMULATOR``)."""

if SIMULATOR:   # numba-cuda's CUDA simulator runs kernels as Python: the ops' Python twins
    from .simulator import FAMILIES as _TWINS
    from .simulator import at
    from .simulator.backend import SimulatorBackend as _Backend

    bulk, cache, cluster, cp_async, dsmem, fence, mbarrier, mma, sync, tcgen05, tensormap, tma, wgmma = (
        _TWINS[f] for f in FAMILIES)
else:
    from .gpu import GpuBackend as _Backend
    from .intrinsics import (at, bulk, cache, cluster, cp_async, dsmem, fence, mbarrier, mma, sync, tcgen05, tensormap,
                             tma, wgmma)

BACKEND = _Backend()
"""What runs kernels here (launches, graphs, the code a kernel calls)."""
BACKEND.install()

__all__ = ["BACKEND", "FAMILIES", "SIMULATOR", "at", *FAMILIES]
