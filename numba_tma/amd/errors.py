"""The errors of the AMD path: numba_tma's one hierarchy (:mod:`numba_tma.errors`).

Every check happens in Python *before* LLVM sees the IR: LLVM's AMDGPU back end
aborts the whole process (SIGABRT, no exception) when asked to select an
intrinsic that the target lacks, so nothing here is left for LLVM to reject.

* a wrong argument, of an op or of ``compile``: :class:`~numba_tma.errors.OpArgumentError`
  (the message names the argument and the rule);
* an op the architecture lacks, an unknown arch, or an LLVM inside llvmlite outside the
  versions an op is known to work with: :class:`~numba_tma.errors.ArchError`.

``AMDError`` (their base), ``AMDArgumentError``, ``UnsupportedArchError`` and ``LLVMVersionError``
are the names these had before the two vendors shared one hierarchy, kept as aliases for existing
code.
"""
from ..errors import ArchError, OpArgumentError, OpError

AMDError = OpError
AMDArgumentError = OpArgumentError
UnsupportedArchError = ArchError
LLVMVersionError = ArchError


def reject(op: str, arg: str, rule: str, got) -> OpArgumentError:
    """The error for argument ``arg`` of ``op`` (``"amd.op"``, or an emitter's name, which gets
    the ``amd.`` prefix) breaking ``rule``, in the wording of both vendors:
    ``numba_tma: amd.op: argument 'arg' rule; got value``."""
    op = op if op.startswith("amd.") else f"amd.{op}"
    return OpArgumentError(f"numba_tma: {op}: argument '{arg}' {rule}; got {got}")
