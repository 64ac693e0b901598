"""numba_tma's ops under numba-cuda's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``).

The simulator runs a kernel as Python, one thread per CUDA thread, block after block (the blocks
of a cluster at once), on numpy arrays; the compiled intrinsics cannot run there, so ``import numba_tma`` under the simulator
exports these Python twins instead (every public op of every family; ``tests/
test_simulator_coverage.py`` checks none is missing), with the hardware's semantics and
diagnostics the GPU cannot give:

* :mod:`.mbarrier` — phases, pending arrivals, the transaction count, parity and token waits;
* :mod:`.tma` — TMA box and im2col copies decoded from the descriptor's bytes (OOB fill,
  element strides, swizzle placement, TF32), stores, reductions, gather4 / scatter4;
* :mod:`.bulk` — bulk copies and reductions; :mod:`.dsmem` — async writes into another block of
  the cluster; :mod:`.cp_async` — cp.async with its groups and barrier arrivals;
* :mod:`.sync` — named barriers, elect_one, ``cuda.syncwarp``; :mod:`.cluster` — clusters (their
  blocks run at once); :mod:`.fence`; :mod:`.cache` — cache policies;
* :mod:`.tensormap` — descriptor edits on the 128 bytes;
* :mod:`.state` — the per-block state of barriers; :mod:`.memory` — shared arrays that catch
  misaligned tiles and reads of bytes a copy has not delivered;
* :mod:`.delivery` — what the copy families share: operand checks, reduction arithmetic;
  :mod:`.gates` — the barriers of threads sync and cluster are made of;
* :mod:`.scheduler` — numba_tma's own block and cluster scheduler: one simulated thread at a
  time, the blocks of a cluster at once, when async copies complete (later;
  ``NUMBA_TMA_SIM_SEED`` randomises it), deadlock reports, an error ending the launch;
* :mod:`.numba_sim` — the adapter: the only module naming numba-cuda's simulator internals.

One module per family, as ``intrinsics/``.  Layers, each importing only those below it:
``numba_sim``; ``scheduler``; ``memory``; ``state``; ``elect``, ``gates``, ``delivery``;
``mbarrier``; ``arguments``, ``tensormap``, ``tma``, ``bulk``, ``dsmem``, ``cp_async``, ``sync``,
``cluster``, ``fence``, ``cache``; this package, which wires numba-cuda's simulator to them
(:func:`.numba_sim.install`).

Every diagnostic is a :class:`SimulatorError` naming the block, the thread, the op and the barrier.
See ``docs/simulator.md``.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from ..numba_cuda_hooks import import_declarations
from . import (arguments, bulk, cache, cluster, cp_async, dsmem, fence, mbarrier, memory, numba_sim, scheduler,
               sync, tensormap, tma)
from .scheduler import SimulatorError

numba_sim.install(scheduler.run_block, memory.shared_array, sync.syncwarp,
                  memory.global_stored if memory.MARKS else None)

__all__ = ["FAMILIES", "SimulatorError", "at"]


def at(array, index):
    """The address of ``array[index]`` (an element, or the sub-array ``array[index]``), as an array
    starting there and running to the end of ``array`` (as the GPU's address does: an op may write
    past the sub-array); a non-contiguous array gives the sub-array itself."""
    if array.ndim == 1:
        return array[index:]
    if not array.flags.c_contiguous:
        return array[index]
    step = array.strides[0] // array.itemsize
    return array.reshape(-1)[index * step:]


_INTRINSICS = import_declarations()     # the compiled ops' declarations: the twins' docstrings


def _plain(value):
    """A numpy integer as the int it holds (in tuples too): the twins then do Python's exact
    integer arithmetic on addresses, as the compiled ops take any integer type."""
    if isinstance(value, np.integer):
        return int(value)
    return tuple(map(_plain, value)) if type(value) is tuple else value


def _twin(family, name, twin):
    """``twin`` (one twin may serve several ops) as the op ``family.name``: numpy integers taken as
    ints, named and documented as the compiled op: its declaration's docstring (tma's bulk-group
    aliases: the bulk op's), or the public object's (the cluster helpers).  A declared op's twin
    takes the declaration's signature and its argument rules (:mod:`.arguments`), and receives
    every argument positionally, in the declaration's order, defaults filled in."""
    declared = _INTRINSICS._core.OPS
    op = declared.get(f"{family}.{name}") or declared.get(f"bulk.{name}" if family == "tma" else "")

    if op is None:
        @functools.wraps(twin)
        def call(*args, **kwargs):
            return twin(*map(_plain, args), **{k: _plain(v) for k, v in kwargs.items()})
    else:
        @functools.wraps(twin)
        def call(*args, **kwargs):
            # the declaration's signature and rules, then the semantics with every argument in order
            return twin(*map(_plain, arguments.bind_and_check(op, tuple(map(_plain, args)),
                                                              {k: _plain(v) for k, v in kwargs.items()})))

        call.__signature__ = op.signature

    call.__name__ = call.__qualname__ = name
    call.__module__ = f"numba_tma.{family}"
    call.__doc__ = op.docstring() if op else getattr(_INTRINSICS, family).__dict__[name].__doc__
    return call


def _family(name, ops):
    return SimpleNamespace(__name__=f"numba_tma.{name}", **{op: _twin(name, op, twin) for op, twin in ops.items()})


FAMILIES = {
    "mbarrier": _family("mbarrier", mbarrier.OPS),
    "fence": _family("fence", fence.FENCE_OPS),
    "tma": _family("tma", {**tma.OPS, "commit_group": bulk.BULK_OPS["commit_group"],
                           "wait_group": bulk.BULK_OPS["wait_group"],
                           "wait_group_read": bulk.BULK_OPS["wait_group_read"]}),
    "bulk": _family("bulk", bulk.BULK_OPS),
    "cp_async": _family("cp_async", cp_async.CP_ASYNC_OPS),
    "sync": _family("sync", sync.SYNC_OPS),
    "cluster": _family("cluster", cluster.CLUSTER_OPS),
    "dsmem": _family("dsmem", dsmem.DSMEM_OPS),
    "cache": _family("cache", cache.CACHE_OPS),
    "tensormap": _family("tensormap", tensormap.OPS),
}
