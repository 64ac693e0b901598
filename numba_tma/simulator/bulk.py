"""``numba_tma.bulk`` under the simulator.

Bulk loads are in flight until delivered (see :mod:`.state`); shared -> global copies (bulk
stores and reductions, TMA stores) read their source when issued, the earliest time the hardware
may, so the bulk async-group waits (``numba_tma.tma``'s group ops too) have nothing left to wait
for.
"""

from __future__ import annotations

import numpy as np

from ..reductions import BULK_REDUCE_TYPES
from . import memory
from .delivery import check_operand, combine
from .barriers import deliver_later, targets
from .state import RUNNING, SimulatorError, enter

_PTX = {"uint32": "u32", "int32": "s32", "uint64": "u64", "int64": "s64", "float32": "f32", "float64": "f64",
        "float16": "f16"}


def _bulk_checks(op, dst, src, nbytes, load):
    check_operand(op, dst, "dst", nbytes, 16, shared=load)
    check_operand(op, src, "src", nbytes, 16, shared=not load)


def load(dst, src, nbytes, bar, cache_hint=None, multicast=None):
    op = RUNNING.op
    thread, state = enter()
    _bulk_checks(op, dst, src, nbytes, load=True)
    if thread.block.launch.global_marks:
        memory.check_global_read(op, thread, memory.address(memory.host(src)) + np.arange(nbytes))
    data = memory.byte_view(memory.host(src))[:nbytes].copy()

    def write(view):
        memory.byte_view(view)[:nbytes] = data

    deliver_later(op, thread, targets(op, thread, state, multicast), dst, bar, nbytes, write)


def _issue_store(op, dst, src, nbytes):
    """The checks and records of a shared -> global copy, issued by the calling thread."""
    thread, state = enter()
    _bulk_checks(op, dst, src, nbytes, load=False)
    memory.check_fenced(op, thread, src, nbytes)
    state.stored(op, thread, src, nbytes)


def store(dst, src, nbytes, cache_hint=None):
    _issue_store(RUNNING.op, dst, src, nbytes)
    memory.byte_view(memory.host(dst))[:nbytes] = memory.byte_view(src)[:nbytes]


def store_bytemask(dst, src, nbytes, mask, cache_hint=None):
    _issue_store(RUNNING.op, dst, src, nbytes)
    keep = np.tile(((int(mask) >> np.arange(16)) & 1).astype(bool), nbytes // 16)
    target = memory.byte_view(memory.host(dst))[:nbytes]
    target[keep] = memory.byte_view(src)[:nbytes][keep]


def reduce(dst, src, nbytes, op, cache_hint=None):
    name = RUNNING.op     # (``op`` is the reduction)
    _issue_store(name, dst, src, nbytes)
    ptx = _PTX.get(np.dtype(src.dtype).name)
    if op not in BULK_REDUCE_TYPES or ptx not in BULK_REDUCE_TYPES[op]:
        raise SimulatorError(f"numba_tma simulator: {name}: op {op!r} does not take {src.dtype} elements "
                             f"(PTX ISA; see numba_tma.{name})")
    target = memory.byte_view(memory.host(dst))[:nbytes]
    target[:] = combine(op, np.dtype(src.dtype), target.copy(), memory.byte_view(src)[:nbytes].copy()).view(np.uint8)


def prefetch(src, nbytes, cache_hint=None):
    pass        # an L2 hint: nothing to simulate (its size rule is the declaration's)


# Shared -> global copies complete when issued here: the bulk async-groups have nothing to wait for.

def commit_group():
    thread, state = enter()
    mine = state.stores.get(thread)
    if mine is not None and mine[0]:
        mine[1].append(mine[0])
        mine[0] = []


def wait_group(n):
    thread, state = enter()
    mine = state.stores.get(thread)
    if mine is not None and len(mine[1]) > n:     # the data is written at issue; the exit check counts groups
        for group in mine[1][:len(mine[1]) - n]:
            state.read_done(group)
        del mine[1][:len(mine[1]) - n]


def wait_group_read(n):
    wait_group(n)
