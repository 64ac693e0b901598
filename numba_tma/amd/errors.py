"""Exceptions raised by the AMD path.

Every check happens in Python *before* LLVM sees the IR: LLVM's AMDGPU back end
aborts the whole process (SIGABRT, no exception) when asked to select an
intrinsic that the target lacks, so nothing here is left for LLVM to reject.
"""


class AMDError(Exception):
    """Base class of every error raised by ``numba_tma.amd``."""


class UnsupportedArchError(AMDError):
    """An op was requested for an architecture that does not have it.

    The message names the op, the architectures that have it and the one requested.
    """


class LLVMVersionError(AMDError):
    """The LLVM inside llvmlite is outside the range an op is known to work with."""


class AMDArgumentError(AMDError, ValueError):
    """An argument broke a rule of the op; the message names the argument and the rule."""
