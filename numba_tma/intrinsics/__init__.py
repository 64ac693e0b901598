"""NVIDIA device ops: Numba intrinsics that emit inline PTX, one module per hardware family."""

from . import bulk, cache, fence, mbarrier, tma
from ._core import ArchError, OpArgumentError
from .refs import at

__all__ = ["ArchError", "OpArgumentError", "at", "bulk", "cache", "fence", "mbarrier", "tma"]
