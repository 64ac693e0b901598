"""NVIDIA device ops: Numba intrinsics that emit inline PTX, one module per hardware family."""

from . import fence, mbarrier, tma
from ._core import ArchError

__all__ = ["ArchError", "fence", "mbarrier", "tma"]
