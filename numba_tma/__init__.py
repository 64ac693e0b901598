"""numba-tma: Hopper/Blackwell asynchronous-memory ops for ``@cuda.jit`` kernels.

    from numba_tma import TensorMap, fence, mbarrier, tma
"""

from .descriptors import TensorMapError
from .descriptors.tensor_map import TensorMap
from .intrinsics import ArchError, OpArgumentError, fence, mbarrier, tma

__all__ = ["ArchError", "OpArgumentError", "TensorMap", "TensorMapError", "fence", "mbarrier", "tma"]
__version__ = "0.1.0"
