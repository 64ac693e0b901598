"""numba-tma: Hopper/Blackwell asynchronous-memory ops for ``@cuda.jit`` kernels.

Example::

    from numba_tma import TensorMap, fence, mbarrier, tma

Each op family is importable as ``numba_tma.<family>`` (``import numba_tma.mbarrier``,
``from numba_tma.tma import load``); its code lives in ``numba_tma.intrinsics.<family>``.
"""

import sys

from . import descriptors
from .descriptors import TensorMapError
from .descriptors.tensor_map import TensorMap
from .launch import ClusterKernel, LaunchError, cluster_kernel, launch, prepare_launch
from .graphs import LaunchGraph, LaunchNode
from .shared_memory import SharedMemoryPlan, SharedMemoryPlanError
from .errors import ArchError, OpArgumentError, OpError
from .debugging import debug
from .ops import (FAMILIES, SIMULATOR, at, bulk, cache, cluster, cp_async, dsmem, fence, mbarrier, mma, sync,
                  tcgen05, tensormap, tma, wgmma)

for _family in FAMILIES:   # the public module path of each family
    sys.modules[f"{__name__}.{_family}"] = globals()[_family]

__all__ = ["ArchError", "ClusterKernel", "LaunchError", "LaunchGraph", "LaunchNode", "OpArgumentError", "OpError",
           "SharedMemoryPlan", "SharedMemoryPlanError", "TensorMap", "TensorMapError", "at", "cluster_kernel", "debug",
           "descriptors", "launch", "prepare_launch",
           *FAMILIES]
__version__ = "0.1.0"
