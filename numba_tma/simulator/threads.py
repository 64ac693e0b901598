"""``numba_tma.sync``, ``cluster``, ``fence`` and ``cache`` under the simulator, and the
``cuda.syncwarp`` numba-cuda's simulator lacks.

**Clusters**: a kernel launched with ``numba_tma.launch(..., cluster=...)`` runs the blocks of
each cluster at once (:func:`.hooks.run_clusters`): ranks and ids come from the cluster shape,
the cluster barrier counts every thread of the cluster, ``map_shared(a, r)`` is ``a`` in block
``r``.  Other launches are clusters of one block.  **Named barriers**
count threads: ``nthreads`` threads arrive, then the waiters go on; barrier 0 is
``cuda.syncthreads()``'s and is refused here (the simulator's syncthreads cannot share it).
**elect_one** (:mod:`.elect`) elects the lowest lane among those executing it together.
**Fences** order nothing in a simulator with one coherent memory: they are no-ops.
"""

from __future__ import annotations

from .. import cluster_masks
from . import elect, hooks, memory
from .hooks import SimulatorError
from .state import CHANGED, LOCK, enter, peer, where


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
    if barrier_id == 0:
        raise SimulatorError(f"numba_tma simulator: {op}: barrier_id={barrier_id} must be 1-15 (0 is "
                             "cuda.syncthreads()'s barrier, which the simulator cannot share)")


def named_barrier_sync(barrier_id, nthreads):
    _check_named("sync.named_barrier_sync", barrier_id, nthreads)
    _meet(("named", barrier_id), nthreads, f"sync.named_barrier_sync({barrier_id}, {nthreads})")


def named_barrier_arrive(barrier_id, nthreads):
    _check_named("sync.named_barrier_arrive", barrier_id, nthreads)
    _meet(("named", barrier_id), nthreads, f"sync.named_barrier_arrive({barrier_id}, {nthreads})", wait=False)


def _warp_lanes(thread):
    warp = hooks.linear_id(thread) // 32
    return [t for t in hooks.block_threads(thread) if hooks.linear_id(t) // 32 == warp]


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


# -- clusters -----------------------------------------------------------------------------------------

def _block_size(thread):
    x, y, z = hooks.block_dim(thread)
    return x * y * z


class _ClusterGates:
    """The cluster barrier's gates (shared by the cluster's blocks), where _arrive keeps them."""

    def __init__(self, cluster):
        self.gates = cluster.gates

    def changed(self):
        CHANGED.notify_all()


def _cluster_barrier(thread, state):
    """``(where the cluster barrier's gate lives, threads it expects)``."""
    cluster = hooks.cluster_of(thread)
    if cluster is None:
        return state, _block_size(thread)
    return _ClusterGates(cluster), _block_size(thread) * cluster.size


def cluster_arrive(relaxed=False):
    thread, state = enter()
    with LOCK:
        holder, expected = _cluster_barrier(thread, state)
        gate, generation = _arrive(holder, thread, ("cluster",), expected, "cluster.arrive")
        state.changed()
        state.gates[("cluster arrival", thread)] = (gate, generation)


def cluster_wait():
    thread, state = enter()
    with LOCK:
        arrival = state.gates.pop(("cluster arrival", thread), None)
        if arrival is None:
            raise SimulatorError(f"numba_tma simulator: {where(thread)}: cluster.wait without a cluster.arrive first")
        gate, generation = arrival
        state.block_until(thread, lambda: gate.generation != generation,
                          lambda: f"cluster.wait: {len(gate.arrived)} of {gate.expected} threads of the cluster "
                                  "arrived")


def cluster_sync():
    cluster_arrive()
    cluster_wait()


def _rank(thread) -> int:
    cluster = hooks.cluster_of(thread)
    return 0 if cluster is None else cluster.rank(hooks.index(thread, "block"))


def _shape(thread) -> tuple:
    cluster = hooks.cluster_of(thread)
    return (1, 1, 1) if cluster is None else cluster.shape


def map_shared(array, cta_rank):
    thread, _ = enter()
    if not isinstance(array, memory.SharedArray) or array.caller is None:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: cluster.map_shared: array must be a shared "
                             f"array; got {memory.name(array)}")
    manager, _ = peer("cluster.map_shared", thread, cta_rank)
    return hooks.peer_array(array, manager)


def cta_rank_of(array):
    """The rank of the block whose shared memory ``array`` lies in."""
    thread, _ = enter()
    cluster = hooks.cluster_of(thread)
    if cluster is None or getattr(array, "owner", None) is None:
        return 0
    return cluster.managers.index(array.owner)


def _axis(value):
    def read(axis="x"):
        thread = hooks.current_thread()
        return value(thread, "xyz".index(axis))
    return read


CLUSTER_OPS = dict(
    ctarank=lambda: _rank(hooks.current_thread()),
    nctarank=lambda: (lambda s: s[0] * s[1] * s[2])(_shape(hooks.current_thread())),
    ctaid=_axis(lambda t, i: hooks.index(t, "block")[i] % _shape(t)[i]),
    nctaid=_axis(lambda t, i: _shape(t)[i]),
    clusterid=_axis(lambda t, i: hooks.index(t, "block")[i] // _shape(t)[i]),
    nclusterid=_axis(lambda t, i: hooks.grid_dim(t)[i] // _shape(t)[i]),
    is_first_cta=lambda: _rank(hooks.current_thread()) == 0, arrive=cluster_arrive, wait=cluster_wait,
    sync=cluster_sync, cta_rank_of=cta_rank_of, map_shared=map_shared,
    mask_all=cluster_masks.mask_all, mask_row=cluster_masks.mask_row, mask_column=cluster_masks.mask_column)

SYNC_OPS = dict(named_barrier_sync=named_barrier_sync, named_barrier_arrive=named_barrier_arrive,
                elect_one=elect.elect_one)


# The simulator has one coherent memory and completes a barrier's init at once: a fence has
# nothing to order (its arguments are checked by its declaration).

def fence_mbarrier_init():
    pass


def fence_proxy_async(space):
    pass


def fence_acq_rel(scope):
    pass


def fence_sc(scope):
    pass


def fence_proxy_tensormap_acquire(desc, scope):
    pass


def fence_proxy_tensormap_release(scope):
    pass


FENCE_OPS = dict(mbarrier_init=fence_mbarrier_init, proxy_async=fence_proxy_async, acq_rel=fence_acq_rel,
                 sc=fence_sc, proxy_tensormap_acquire=fence_proxy_tensormap_acquire,
                 proxy_tensormap_release=fence_proxy_tensormap_release)
CACHE_OPS = dict(policy=lambda kind, fraction=1.0, rest=None: 0)
