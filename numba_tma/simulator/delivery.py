"""What the copy families' twins (:mod:`.tma`, :mod:`.bulk`, :mod:`.dsmem`, :mod:`.cp_async`)
share: the checks of a copy's operands (shared or global, aligned, large enough) and the
arithmetic of a reduction applied to the bytes a copy delivers (PTX's semantics, bf16 included).
"""

from __future__ import annotations

import numpy as np

from . import memory
from .state import SimulatorError


def check_operand(op, array, role, nbytes, align, shared):
    if shared and not isinstance(array, memory.SharedArray):
        raise SimulatorError(f"numba_tma simulator: {op}: {role} must be a shared array (cuda.shared.array); got "
                             f"{memory.name(array)}")
    if not shared and isinstance(array, memory.SharedArray):
        raise SimulatorError(f"numba_tma simulator: {op}: {role} must be in global memory; got {memory.name(array)}")
    addr = memory.address(memory.host(array))
    if addr % align:
        raise SimulatorError(f"numba_tma simulator: {op}: {role} {memory.name(array)} is not {align}-byte aligned")
    if memory.host(array).nbytes < nbytes:
        raise SimulatorError(f"numba_tma simulator: {op}: {role} holds {memory.host(array).nbytes} bytes, fewer than "
                             f"nbytes={nbytes}")


def _bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _to_bf16(values):
    bits = values.astype(np.float32).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def combine(op, dtype, old, new):
    """``op(old, new)`` element-wise with the PTX reduction's semantics (``dtype``: numpy, or
    ``"bfloat16"`` for bf16 bit patterns); integers wrap."""
    if dtype == "bfloat16":
        return _to_bf16(combine(op, np.dtype(np.float32), _bf16(old), _bf16(new)))
    old, new = old.view(dtype), new.view(dtype)
    if op == "add":
        return (old + new).astype(dtype)
    if op in ("min", "max"):
        return (np.minimum if op == "min" else np.maximum)(old, new)
    if op == "inc":
        return np.where(old >= new, 0, old + 1).astype(dtype)
    if op == "dec":
        return np.where((old == 0) | (old > new), new, old - 1).astype(dtype)
    return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](old, new)
