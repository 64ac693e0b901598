"""numba-tma: Hopper/Blackwell asynchronous-memory ops for ``@cuda.jit`` kernels.

    from numba_tma import TensorMap, fence, mbarrier, tma

Each op family is importable as ``numba_tma.<family>`` (``import numba_tma.mbarrier``,
``from numba_tma.tma import load``); its code lives in ``numba_tma.intrinsics.<family>``.
"""

import sys

from . import descriptors
from .descriptors import TensorMapError
from .descriptors.tensor_map import TensorMap
from .launch import LaunchError, launch
from .intrinsics import ArchError, OpArgumentError, at, bulk, cache, cluster, cp_async, fence, mbarrier, sync, tensormap, tma

FAMILIES = ("bulk", "cache", "cluster", "cp_async", "fence", "mbarrier", "sync", "tensormap", "tma")
for _family in FAMILIES:   # the public module path of each family
    sys.modules[f"{__name__}.{_family}"] = getattr(sys.modules[__name__], _family)

__all__ = ["ArchError", "LaunchError", "OpArgumentError", "TensorMap", "at", "launch", "TensorMapError", "descriptors", *FAMILIES]
__version__ = "0.1.0"
