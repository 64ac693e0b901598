"""``numba_tma.dsmem`` under the simulator: async writes into the shared memory of a block of the
cluster (rank ``cta_rank``), in flight until delivered on that block's barrier (see :mod:`.state`).
"""

from __future__ import annotations

import numpy as np

from . import memory
from .delivery import combine
from .barriers import deliver_later
from .state import RUNNING, SimulatorError, enter, peer


def _deliver_later(op, dst, data, bar, cta_rank, combine_with=None, async_proxy=False):
    """An async write of ``data`` (bytes) by ``op`` at ``dst``'s element 0 in block ``cta_rank``,
    completing on ``bar`` there, later (``async_proxy``: a bulk copy, ``cp.async.bulk``)."""
    thread, _ = enter()
    if not isinstance(dst, memory.SharedArray):
        raise SimulatorError(f"numba_tma simulator: {op}: dst must be a shared array; got {memory.name(dst)}")
    nbytes = len(data)

    def write(view):
        target = memory.byte_view(view)[:nbytes]
        target[:] = data if combine_with is None else combine_with(target.copy(), data)

    deliver_later(op, thread, [peer(op, thread, cta_rank)], dst, bar, nbytes, write, async_proxy)


def _values(dst, value):
    values = value if isinstance(value, tuple) else (value,)
    return np.array(values).astype(dst.dtype).view(np.uint8)


def store_async(dst, value, bar, cta_rank):
    _deliver_later(RUNNING.op, dst, _values(dst, value), bar, cta_rank)


def reduce_async(dst, value, bar, cta_rank, op):
    dtype = np.dtype(dst.dtype)
    _deliver_later(RUNNING.op, dst, _values(dst, value), bar, cta_rank,
                   lambda old, new: combine(op, dtype, old, new).view(np.uint8))


def copy_async(dst, src, nbytes, bar, cta_rank):
    name = RUNNING.op
    memory.check_fenced(name, enter()[0], src, nbytes)
    _deliver_later(name, dst, memory.byte_view(src)[:nbytes].copy(), bar, cta_rank, async_proxy=True)


def reduce_copy_async(dst, src, nbytes, bar, cta_rank, op):
    name = RUNNING.op     # (``op`` is the reduction)
    memory.check_fenced(name, enter()[0], src, nbytes)
    dtype = np.dtype(src.dtype)
    _deliver_later(name, dst, memory.byte_view(src)[:nbytes].copy(), bar, cta_rank,
                   lambda old, new: combine(op, dtype, old, new).view(np.uint8), async_proxy=True)
