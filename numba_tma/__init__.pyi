"""numba-tma: Hopper/Blackwell asynchronous-memory ops for ``@cuda.jit`` kernels.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from numba_tma.errors import ArchError as ArchError
from numba_tma.launch import ClusterKernel as ClusterKernel
from numba_tma.errors import LaunchError as LaunchError
from numba_tma.graphs import LaunchGraph as LaunchGraph
from numba_tma.graphs import LaunchNode as LaunchNode
from numba_tma.errors import OpArgumentError as OpArgumentError
from numba_tma.errors import OpError as OpError
from numba_tma.shared_memory import SharedMemoryPlan as SharedMemoryPlan
from numba_tma.errors import SharedMemoryPlanError as SharedMemoryPlanError
from numba_tma.descriptors.tensor_map import TensorMap as TensorMap
from numba_tma.descriptors.errors import TensorMapError as TensorMapError
from numba_tma.intrinsics.refs import at as at
from numba_tma.launch import cluster_kernel as cluster_kernel
from numba_tma.debugging import debug as debug
from numba_tma import descriptors as descriptors
from numba_tma.launch import launch as launch
from numba_tma.launch import prepare_launch as prepare_launch
from numba_tma import bulk as bulk
from numba_tma import cache as cache
from numba_tma import cluster as cluster
from numba_tma import cp_async as cp_async
from numba_tma import dsmem as dsmem
from numba_tma import fence as fence
from numba_tma import mbarrier as mbarrier
from numba_tma import mma as mma
from numba_tma import sync as sync
from numba_tma import tcgen05 as tcgen05
from numba_tma import tensormap as tensormap
from numba_tma import tma as tma
from numba_tma import wgmma as wgmma

FAMILIES: tuple[str, ...]
SIMULATOR: bool
__version__: str
__all__: list[str]
