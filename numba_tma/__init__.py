"""numba-tma: Hopper/Blackwell asynchronous-memory ops for ``@cuda.jit`` kernels.

    from numba_tma import mbarrier, fence, tma
"""

from .intrinsics import ArchError, OpArgumentError, fence, mbarrier, tma

__all__ = ["ArchError", "OpArgumentError", "fence", "mbarrier", "tma"]
__version__ = "0.1.0"
