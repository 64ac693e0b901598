"""numba-cuda's warp-level functions, which its simulator lacks, with the GPU's semantics:
``cuda.shfl_sync`` / ``shfl_up_sync`` / ``shfl_down_sync`` / ``shfl_xor_sync``, the votes
``all_sync`` / ``any_sync`` / ``eq_sync`` / ``ballot_sync``, ``match_any_sync`` /
``match_all_sync``, ``activemask``, ``lanemask_lt`` and ``syncwarp(mask)`` (:data:`FUNCTIONS`,
installed on the kernel's ``cuda`` module by :func:`.numba_sim.install`).

The lanes of the mask meet at the call (:func:`.warp.meet`, which reports a lane that cannot).
Arguments and results have the types the compiled functions give them (numba-cuda's typing and
lowering, 0.30): a shuffle moves an int32, int64, float32 or float64 and returns the same type;
``ballot_sync`` and ``match_any_sync`` return an int32 (lane 31 is its sign bit), ``all_sync`` /
``any_sync`` / ``eq_sync`` a bool, ``match_all_sync`` ``(int32, bool)``, ``activemask`` and
``lanemask_lt`` a uint32.  A shuffle's source lane is computed as PTX's ``shfl.sync`` computes
it with the clamp numba-cuda passes (``b``'s low 5 bits; ``up`` keeps the lane's own value below
lane 0, ``down`` above lane 31); a source lane outside the mask, or exited, is reported (its
value is undefined on the GPU).  The votes and matches count the lanes of the mask that have not
exited, as PTX's ``vote.sync`` and ``match.sync`` do.  A value of a type the compiled function
refuses is refused, naming the argument and the rule.
"""

from __future__ import annotations

import numpy as np

from . import scheduler, warp
from .state import SimulatorError

_SHUFFLED = (np.int32, np.int64, np.float32, np.float64)     # numba-cuda's shfl types (i4, i8, f4, f8)
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _refuse(op, name, rule, value):
    return SimulatorError(f"numba_tma simulator: {op}: argument '{name}' {rule}; got {value} "
                          f"({type(value).__name__})")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _mask(op, mask) -> int:
    """The 32-bit member mask (the compiled call truncates the integer to 32 bits)."""
    if not _is_int(mask):
        raise _refuse(op, "mask", "must be an integer (a 32-bit lane mask)", mask)
    return int(mask) & warp.FULL


def _shuffled(op, value):
    if isinstance(value, (bool, np.bool_)) or not (
            isinstance(value, _SHUFFLED) or type(value) is float
            or (type(value) is int and _INT64[0] <= value <= _INT64[1])):
        raise _refuse(op, "value", "must be an int32, int64, float32 or float64 (the types numba-cuda's shuffles "
                      "move)", value)
    return value


def _as_type_of(op, mine, theirs, source):
    """Lane ``source``'s value in the type of this lane's (one variable's type in compiled code)."""
    if type(theirs) is type(mine):
        return theirs
    if isinstance(mine, (int, np.integer)) != isinstance(theirs, (int, np.integer)):
        raise SimulatorError(f"numba_tma simulator: {op}: this lane shuffles {type(mine).__name__} and lane {source} "
                             f"{type(theirs).__name__}: the lanes must shuffle values of one type")
    return type(mine)(theirs)


def _shuffle(op, mode, mask, value, b):
    mask = _mask(op, mask)
    value = _shuffled(op, value)
    if not _is_int(b):
        raise _refuse(op, {"idx": "src_lane", "bfly": "lane_mask"}.get(mode, "delta"), "must be an integer", b)
    lane, values = warp.meet(op, mask, value)
    bval = int(b) & 31                  # shfl.sync reads b[4:0]
    source = {"idx": bval, "up": lane - bval, "down": lane + bval, "bfly": lane ^ bval}[mode]
    if not 0 <= source <= 31:
        return value                    # up below lane 0 / down past lane 31: the lane's own value
    if source not in values:
        thread = scheduler.current()
        why = ("the mask leaves out" if not mask >> source & 1 else "has exited"
               if warp.warp_lanes(thread)[source] is not None
               else f"the block does not have ({thread.block.size} threads)")
        raise SimulatorError(f"numba_tma simulator: {op}(mask={mask:#010x}): lane {lane} of warp "
                             f"{thread.thread_id // 32} of block {thread.block.index} reads lane {source}, which "
                             f"{why}: its value is undefined on the GPU (keep the source lane inside the mask and "
                             "running until the call)")
    return _as_type_of(op, value, values[source], source)


def shfl_sync(mask, value, src_lane):
    return _shuffle("cuda.shfl_sync", "idx", mask, value, src_lane)


def shfl_up_sync(mask, value, delta):
    return _shuffle("cuda.shfl_up_sync", "up", mask, value, delta)


def shfl_down_sync(mask, value, delta):
    return _shuffle("cuda.shfl_down_sync", "down", mask, value, delta)


def shfl_xor_sync(mask, value, lane_mask):
    return _shuffle("cuda.shfl_xor_sync", "bfly", mask, value, lane_mask)


def _int32(bits) -> np.int32:
    """A 32-bit mask as the int32 the compiled function returns."""
    return np.uint32(bits).astype(np.int32)


def _vote(op, mask, predicate) -> dict:
    mask = _mask(op, mask)
    if not isinstance(predicate, (int, np.integer, bool, np.bool_)):
        raise _refuse(op, "predicate", "must be an integer or a bool", predicate)
    return warp.meet(op, mask, bool(predicate))[1]


def all_sync(mask, predicate):
    return all(_vote("cuda.all_sync", mask, predicate).values())


def any_sync(mask, predicate):
    return any(_vote("cuda.any_sync", mask, predicate).values())


def eq_sync(mask, predicate):
    return len(set(_vote("cuda.eq_sync", mask, predicate).values())) == 1


def ballot_sync(mask, predicate):
    return _int32(sum(1 << lane for lane, vote in _vote("cuda.ballot_sync", mask, predicate).items() if vote))


def _bits(op, value):
    """What match.sync compares: the value's bits in the type the compiled call converts it to."""
    if isinstance(value, (np.floating, float)):
        width = np.float32 if isinstance(value, (np.float32, np.float16)) else np.float64
        return "float", np.asarray(value, width).tobytes()
    if isinstance(value, (int, np.integer, bool, np.bool_)):
        return "int", int(value)
    raise _refuse(op, "value", "must be an integer or a float", value)


def _match(op, mask, value) -> tuple:
    mask = _mask(op, mask)
    lane, values = warp.meet(op, mask, _bits(op, value))
    return lane, values


def match_any_sync(mask, value):
    lane, values = _match("cuda.match_any_sync", mask, value)
    return _int32(sum(1 << other for other, bits in values.items() if bits == values[lane]))


def match_all_sync(mask, value):
    _, values = _match("cuda.match_all_sync", mask, value)
    same = len(set(values.values())) == 1
    return _int32(sum(1 << lane for lane in values) if same else 0), same


def activemask():
    return np.uint32(warp.gather())


def lanemask_lt():
    return np.uint32((1 << scheduler.current().thread_id % 32) - 1)


def syncwarp(mask=warp.FULL):
    warp.meet("cuda.syncwarp", _mask("cuda.syncwarp", mask), None, ordering=True)


FUNCTIONS = {f.__name__: f for f in (shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, all_sync, any_sync,
                                     eq_sync, ballot_sync, match_any_sync, match_all_sync, activemask, lanemask_lt,
                                     syncwarp)}
