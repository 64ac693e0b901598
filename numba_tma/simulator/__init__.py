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
* :mod:`.sync` — named barriers, elect_one; :mod:`.cluster` — clusters (their
  blocks run at once); :mod:`.fence`; :mod:`.cache` — cache policies;
* :mod:`.tensormap` — descriptor edits on the 128 bytes;
* :mod:`.tcgen05` — refused: Blackwell's tensor memory and MMA (sm_100a) are not modelled;
* :mod:`.state` — the per-block state of barriers, the op each thread runs; :mod:`.memory` —
  shared arrays that catch misaligned tiles and reads of bytes a copy has not delivered;
* :mod:`.delivery` — what the copy families share: operand checks, reduction arithmetic;
  :mod:`.barriers` — the mbarrier model (arrivals, transactions, copies completing on a barrier);
  :mod:`.gates` — the barriers of threads sync and cluster are made of, and the warp MMAs'
  register exchange;
* :mod:`.warp_ops` — numba-cuda's warp-level functions its simulator lacks (``cuda.shfl_sync``
  and the other shuffles, the votes, the matches, ``activemask``, ``lanemask_lt``,
  ``syncwarp``), on :mod:`.warp`, where a warp's lanes meet at such a call;
* :mod:`.scheduler` — numba_tma's own block and cluster scheduler: one simulated thread at a
  time, the blocks of a cluster at once, when async copies complete (later;
  ``NUMBA_TMA_SIM_SEED`` randomises it), deadlock reports, an error ending the launch;
* :mod:`.numba_sim` — the adapter: the only module naming numba-cuda's simulator internals;
* :mod:`.backend` — the simulator backend :mod:`numba_tma.ops` chooses under the simulator (launches,
  launch graphs, the shared-memory carver, ``tlx.alloc_barriers`` run as Python).

One module per family, as ``intrinsics/``.  Layers, each importing only those below it:
``numba_sim``; ``scheduler``; ``memory``; ``state``; ``elect``, ``warp``, ``warp_ops``, ``gates``,
``delivery``, ``barriers``, ``wgmma`` (whose value types ``arguments`` knows), ``mma``; ``arguments`` and the families ``mbarrier``, ``tensormap``, ``tma``, ``bulk``,
``dsmem``, ``cp_async``, ``sync``, ``cluster``, ``fence``, ``cache``, ``tcgen05``; this package, which wires
numba-cuda's simulator to them (:func:`.numba_sim.install`) and the declarations to their twins;
``backend``, above it.

**The declarations say which twins there are** (:func:`twins_of`): the twin of an op declared
with ``twin=True``, ``family.name``, is the function ``name`` of the family's module here (the
semantics only: the wiring gives it the declaration's signature, argument rules, docstring and
name); a family's ``ALIASES`` (another family's ops it re-exports: ``tma.commit_group``) are that
op's twin, and its ``HELPERS`` (public functions without a declaration: ``cluster.map_shared``)
the functions of those names.  A declared op without its function, or a public function of a
family module that is none of these, fails the import.  A twin learns which op it runs from
:data:`.state.RUNNING` (``RUNNING.op``, the name the kernel called), set before it runs: its
messages name the op from there, never a literal.

Every diagnostic is a :class:`SimulatorError` naming the block, the thread, the op and the barrier.
See ``docs/simulator.md``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from types import SimpleNamespace

import numpy as np

from . import arguments, memory, numba_sim, scheduler
from .scheduler import SimulatorError
from .state import RUNNING
from .warp_ops import FUNCTIONS as WARP_FUNCTIONS

numba_sim.install(scheduler.run_block, memory.shared_array, WARP_FUNCTIONS,
                  memory.global_stored if memory.MARKS else None)

__all__ = ["FAMILIES", "SimulatorError", "at", "simulated_family", "twins_of"]


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


with numba_sim.lent_device_stubs():     # the compiled ops' declarations: the twins' rules and docstrings
    from .. import intrinsics as _INTRINSICS


def _plain(value):
    """A numpy integer as the int it holds (in tuples too), once the op's rules have typed it as
    the compiled op types it (an ``np.int32`` is an ``int32``, not a constant): the twins then do
    Python's exact integer arithmetic on addresses, as the compiled ops take any integer type."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, np.integer):
        return int(value)
    return tuple(map(_plain, value)) if kind is tuple else value


_PLAIN = frozenset({int, float, bool, str, type(None), np.float32})   # (what _plain returns as it is)


def _twin(qualified, op, twin, doc):
    """``twin`` run as the op ``qualified`` (``"family.name"``; one twin may serve several ops):
    ``RUNNING.op`` set to it, numpy integers taken as ints, named and documented as the compiled
    op (``doc``).  A declared op's twin (``op``: its declaration) takes the declaration's signature
    and its argument rules (:mod:`.arguments`, given the values as the kernel passed them: numpy
    scalars keep their type), and receives every argument positionally, in the declaration's
    order, defaults filled in."""
    running = RUNNING
    if op is None:
        @functools.wraps(twin)
        def call(*args, **kwargs):
            running.op = qualified
            return twin(*map(_plain, args), **{k: _plain(v) for k, v in kwargs.items()})
    else:
        @functools.wraps(twin)
        def call(*args, **kwargs):
            running.op = qualified
            # the declaration's signature and rules, then the semantics with every argument in order
            return twin(*map(_plain, arguments.bind_and_check(op, args, kwargs)))

        call.__signature__ = op.signature

    family, call.__name__ = qualified.split(".")
    call.__qualname__ = call.__name__
    call.__module__ = f"numba_tma.{family}"
    call.__doc__ = doc
    return call


def _module_twins(module) -> dict:
    """The public functions defined in ``module``, by name."""
    return {name: f for name, f in vars(module).items()
            if inspect.isfunction(f) and not name.startswith("_") and f.__module__ == module.__name__}


def twins_of(family, public, module, modules) -> dict:
    """``{name: (declaration or None, semantics function)}`` for the ops of ``numba_tma.<family>``
    (``public``: the compiled family module; ``module``: its simulator module; ``modules(f)``: the
    simulator module of family ``f``, for ``public.ALIASES``), by the rule of this package's
    docstring.  Raises ``LookupError`` naming what breaks it."""
    declared = _INTRINSICS._core.OPS
    wanted = {op.short_name: (op, module) for op in declared.values() if op.family == family and op.twin}
    for alias in getattr(public, "ALIASES", ()):         # another family's op, by the module it names
        op = declared[f"{getattr(public, alias).__module__.rsplit('.', 1)[1]}.{alias}"]
        wanted[alias] = (op, modules(op.family))
    wanted.update((helper, (None, module)) for helper in getattr(public, "HELPERS", ()))
    missing = [f"{family}.{name} (no function {name} in {where.__name__})" for name, (_, where) in wanted.items()
               if not callable(getattr(where, name, None))]
    stray = sorted(set(_module_twins(module)) - set(wanted))
    if missing or stray:
        raise LookupError(f"numba_tma simulator: the twins of numba_tma.{family} do not match its declarations: "
                          + "; ".join([*(f"declared without a twin: {m}" for m in missing),
                                       *(f"{module.__name__}.{name} is a public function but no op of {family} "
                                         "(make it private, or move it below the families)" for name in stray)]))
    return {name: (op, getattr(where, name)) for name, (op, where) in wanted.items()}


def _module(family):
    return importlib.import_module(f"{__name__}.{family}")


def simulated_family(family, public, module, modules=_module) -> SimpleNamespace:
    """What kernels call as ``numba_tma.<family>`` under the simulator: the twins of ``public``'s
    ops (the compiled family module) found in ``module`` (its simulator module) by
    :func:`twins_of`, each run as its op (the declaration's signature, rules and docstring)."""
    twins = twins_of(family, public, module, modules)
    return SimpleNamespace(__name__=f"numba_tma.{family}", **{
        name: _twin(f"{family}.{name}", op, twin, op.docstring() if op else public.__dict__[name].__doc__)
        for name, (op, twin) in twins.items()})


FAMILIES = {family: simulated_family(family, getattr(_INTRINSICS, family), _module(family))
            for family in sorted({op.family for op in _INTRINSICS._core.OPS.values() if op.twin})}
