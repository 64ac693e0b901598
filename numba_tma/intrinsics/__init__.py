"""NVIDIA device ops: Numba intrinsics that emit inline PTX, one module per hardware family."""

from . import bulk, cache, cluster, cp_async, dsmem, fence, mbarrier, mma, sync, tcgen05, tensormap, tma, wgmma
from ._core import ArchError, OpArgumentError
from .refs import at

__all__ = ["ArchError", "OpArgumentError", "at", "bulk", "cache", "cluster", "cp_async", "dsmem", "fence", "mbarrier", "mma", "sync",
           "tcgen05", "tensormap", "tma", "wgmma"]
