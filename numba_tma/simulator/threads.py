"""``numba_tma.sync``, ``cluster``, ``fence`` and ``cache`` under the simulator, and the
``cuda.syncwarp`` numba-cuda's simulator lacks.

**Clusters** are clusters of one block: ``ctarank() == 0``, ``nctarank() == 1``, the cluster
barrier is the block's threads, ``map_shared(a, 0)`` is ``a``; a rank other than 0 raises
(numba-cuda's simulator runs one block at a time, so blocks cannot meet).  **Named barriers**
count threads: ``nthreads`` threads arrive, then the waiters go on; barrier 0 is
``cuda.syncthreads()``'s and is refused here (the simulator's syncthreads cannot share it).
**elect_one** elects the lowest running lane of the warp (the simulator has no divergence).
**Fences** order nothing in a simulator with one coherent memory: they are no-ops.
"""

from __future__ import annotations

from . import hooks
from .hooks import SimulatorError
from .state import LOCK, enter, where


class _Gate:
    """A barrier of threads: ``expected`` arrivals per generation."""

    def __init__(self, expected):
        self.expected, self.arrived, self.generation = expected, set(), 0


def _arrive(state, thread, key, expected, op):
    gate = state.gates.setdefault(key, _Gate(expected))
    if gate.expected != expected:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} with {expected} threads, but the barrier's "
                             f"other threads said {gate.expected}")
    gate.arrived.add(thread)
    generation = gate.generation
    if len(gate.arrived) >= gate.expected:
        gate.arrived, gate.generation = set(), gate.generation + 1
        state.changed()
    return gate, generation


def _meet(key, expected, op, wait=True):
    thread, state = enter()
    with LOCK:
        gate, generation = _arrive(state, thread, key, expected, op)
        if wait:
            state.block_until(thread, lambda: gate.generation != generation,
                              lambda: f"{op}: {len(gate.arrived)} of {gate.expected} threads arrived")


def _check_named(op, barrier_id, nthreads):
    if not 1 <= barrier_id <= 15:
        raise SimulatorError(f"numba_tma simulator: {op}: barrier_id={barrier_id} must be 1-15 (0 is "
                             "cuda.syncthreads()'s barrier, which the simulator cannot share)")
    if nthreads <= 0 or nthreads % 32:
        raise SimulatorError(f"numba_tma simulator: {op}: nthreads={nthreads} must be a positive multiple of 32")


def named_barrier_sync(barrier_id, nthreads):
    _check_named("sync.named_barrier_sync", barrier_id, nthreads)
    _meet(("named", barrier_id), nthreads, f"sync.named_barrier_sync({barrier_id}, {nthreads})")


def named_barrier_arrive(barrier_id, nthreads):
    _check_named("sync.named_barrier_arrive", barrier_id, nthreads)
    _meet(("named", barrier_id), nthreads, f"sync.named_barrier_arrive({barrier_id}, {nthreads})", wait=False)


def _warp_lanes(thread):
    warp = hooks.linear_id(thread) // 32
    return [t for t in hooks.block_threads(thread) if hooks.linear_id(t) // 32 == warp]


def elect_one():
    """The warp's lowest lane: ``elect.sync`` is collective, so a lane that has already run past it
    (even exited) still counts; electing among the lanes still alive would elect twice."""
    thread, _ = enter()
    warp = hooks.linear_id(thread) // 32
    return hooks.linear_id(thread) == min(hooks.linear_id(t) for t in hooks.every_block_thread(thread)
                                          if hooks.linear_id(t) // 32 == warp)


def syncwarp(mask=0xFFFFFFFF):
    """A barrier of the warp's running lanes (those in ``mask``)."""
    thread, state = enter()
    lane = hooks.linear_id(thread) % 32
    if not (mask >> lane) & 1:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: cuda.syncwarp(mask={mask:#x}) from lane {lane}, "
                             "which the mask leaves out")
    key = ("warp", hooks.linear_id(thread) // 32)

    def lanes():
        return {t for t in _warp_lanes(thread) if (mask >> (hooks.linear_id(t) % 32)) & 1}

    with LOCK:
        gate = state.gates.setdefault(key, _Gate(0))
        gate.arrived.add(thread)
        generation = gate.generation

        def done():
            if gate.generation == generation and lanes() <= gate.arrived:
                gate.arrived, gate.generation = set(), gate.generation + 1
                state.changed()
            return gate.generation != generation

        state.block_until(thread, done, lambda: f"cuda.syncwarp: {len(gate.arrived)} of {len(lanes())} lanes arrived")


# -- cluster (of one block) ---------------------------------------------------------------------------

def _block_size(thread):
    x, y, z = hooks.block_dim(thread)
    return x * y * z


def cluster_arrive(relaxed=False):
    thread, state = enter()
    with LOCK:
        _, generation = _arrive(state, thread, ("cluster",), _block_size(thread), "cluster.arrive")
        state.gates[("cluster arrival", thread)] = generation


def cluster_wait():
    thread, state = enter()
    with LOCK:
        generation = state.gates.pop(("cluster arrival", thread), None)
        if generation is None:
            raise SimulatorError(f"numba_tma simulator: {where(thread)}: cluster.wait without a cluster.arrive first")
        gate = state.gates[("cluster",)]
        state.block_until(thread, lambda: gate.generation != generation,
                          lambda: f"cluster.wait: {len(gate.arrived)} of {gate.expected} threads arrived")


def cluster_sync():
    thread, _ = enter()
    _meet(("cluster",), _block_size(thread), "cluster.sync")


def _rank_zero(op, cta_rank):
    if cta_rank != 0:
        raise SimulatorError(f"numba_tma simulator: {op}: rank {cta_rank}: the simulator runs clusters of one block")


def map_shared(array, cta_rank):
    _rank_zero("cluster.map_shared", cta_rank)
    return array


def _axis(value):
    def read(axis="x"):
        thread = hooks.current_thread()
        return value(thread, "xyz".index(axis))
    return read


CLUSTER_OPS = dict(
    ctarank=lambda: 0, nctarank=lambda: 1, ctaid=_axis(lambda t, i: 0), nctaid=_axis(lambda t, i: 1),
    clusterid=_axis(lambda t, i: hooks.index(t, "block")[i]),
    nclusterid=_axis(lambda t, i: hooks.grid_dim(t)[i]),
    is_first_cta=lambda: True, arrive=cluster_arrive, wait=cluster_wait, sync=cluster_sync,
    cta_rank_of=lambda array: 0, map_shared=map_shared,
    mask_all=lambda size: (1 << size) - 1, mask_row=lambda cluster_x, row: ((1 << cluster_x) - 1) << (row * cluster_x),
    mask_column=lambda cluster_x, cluster_y, column: sum(1 << (column + y * cluster_x) for y in range(cluster_y)))

SYNC_OPS = dict(named_barrier_sync=named_barrier_sync, named_barrier_arrive=named_barrier_arrive, elect_one=elect_one)


def _fence(*args, **kwargs):
    """One coherent memory: nothing to order."""


FENCE_OPS = dict(mbarrier_init=_fence, proxy_async=_fence, acq_rel=_fence, sc=_fence, proxy_tensormap_acquire=_fence,
                 proxy_tensormap_release=_fence)
CACHE_OPS = dict(policy=lambda kind, fraction=1.0, rest=None: 0)
