"""``numba_tma.sync``, ``cluster``, ``fence`` and ``cache`` under the simulator, and the
``cuda.syncwarp`` numba-cuda's simulator lacks.

**Clusters**: a kernel launched with ``numba_tma.launch(..., cluster=...)`` runs the blocks of
each cluster at once (:mod:`.scheduler`): ranks and ids come from the cluster shape,
the cluster barrier counts every thread of the cluster, ``map_shared(a, r)`` is ``a`` in block
``r``.  Other launches are clusters of one block.  **Named barriers**
count threads: ``nthreads`` threads arrive, then the waiters go on; barrier 0 is
``cuda.syncthreads()``'s and is refused here (the simulator's syncthreads cannot share it).
**elect_one** (:mod:`.elect`) elects the lowest lane among those executing it together.
**Fences** order nothing in a simulator with one coherent memory: they are no-ops.
"""

from __future__ import annotations

from .. import cluster_masks
from . import elect, memory, scheduler
from .state import SimulatorError, enter, peer, where


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
    gate, generation = _arrive(state, thread, key, expected, op)
    if wait:
        scheduler.wait(thread, lambda: gate.generation != generation,
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
    """The lanes of ``thread``'s warp that have not exited."""
    warp = thread.thread_id // 32
    return [t for t in thread.block.threads[32 * warp:32 * warp + 32] if t.status != scheduler.DONE]


def syncwarp(mask=0xFFFFFFFF):
    """A barrier of the warp's running lanes (those in ``mask``)."""
    thread, state = enter()
    lane = thread.thread_id % 32
    if not (mask >> lane) & 1:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: cuda.syncwarp(mask={mask:#x}) from lane {lane}, "
                             "which the mask leaves out")
    key = ("warp", thread.thread_id // 32)

    def lanes():
        return {t for t in _warp_lanes(thread) if (mask >> (t.thread_id % 32)) & 1}

    gate = state.gates.setdefault(key, _Gate(0))
    gate.arrived.add(thread)
    generation = gate.generation

    def done():
        if gate.generation == generation and lanes() <= gate.arrived:
            gate.arrived, gate.generation = set(), gate.generation + 1
            state.changed()
        return gate.generation != generation

    scheduler.wait(thread, done, lambda: f"cuda.syncwarp: {len(gate.arrived)} of {len(lanes())} lanes arrived")


# -- clusters -----------------------------------------------------------------------------------------

class _ClusterGates:
    """The cluster barrier's gates (shared by the cluster's blocks), where _arrive keeps them."""

    def __init__(self, cluster):
        self.cluster, self.gates = cluster, cluster.gates

    def changed(self):
        self.cluster.progress += 1


def cluster_arrive(relaxed=False):
    thread, state = enter()
    cluster = thread.block.cluster
    gate, generation = _arrive(_ClusterGates(cluster), thread, ("cluster",), thread.block.size * cluster.size,
                               "cluster.arrive")
    state.changed()
    state.gates[("cluster arrival", thread)] = (gate, generation)
    for b in state.barriers.values():        # barriers this thread initialised (and fenced): published
        if b.initialiser is thread and b.fenced and b.published is None:
            b.published = (gate, generation)
    for record in cluster.gates.get("remote", ()):   # ops into other blocks: ordered before this barrier
        if record.thread is thread and record.cover is None:
            record.cover = (gate, generation)


def cluster_wait():
    thread, state = enter()
    arrival = state.gates.pop(("cluster arrival", thread), None)
    if arrival is None:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: cluster.wait without a cluster.arrive first")
    gate, generation = arrival
    scheduler.wait(thread, lambda: gate.generation != generation,
                   lambda: f"cluster.wait: {len(gate.arrived)} of {gate.expected} threads of the cluster arrived")


def cluster_sync():
    cluster_arrive()
    cluster_wait()


def _rank(thread) -> int:
    return thread.block.rank


def _shape(thread) -> tuple:
    return thread.block.cluster.shape


def map_shared(array, cta_rank):
    thread, _ = enter()
    if not isinstance(array, memory.SharedArray) or array.caller is None:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: cluster.map_shared: array must be a shared "
                             f"array; got {memory.name(array)}")
    block, _ = peer("cluster.map_shared", thread, cta_rank)
    return memory.peer_array(array, block)


def cta_rank_of(array):
    """The rank of the block whose shared memory ``array`` lies in."""
    enter()
    owner = getattr(array, "owner", None)
    return 0 if owner is None else owner.rank


def _axis(value):
    def read(axis="x"):
        return value(scheduler.current(), "xyz".index(axis))
    return read


CLUSTER_OPS = dict(
    ctarank=lambda: _rank(scheduler.current()),
    nctarank=lambda: scheduler.current().block.cluster.size,
    ctaid=_axis(lambda t, i: t.block.index[i] % _shape(t)[i]),
    nctaid=_axis(lambda t, i: _shape(t)[i]),
    clusterid=_axis(lambda t, i: t.block.index[i] // _shape(t)[i]),
    nclusterid=_axis(lambda t, i: t.block.launch.grid_dim[i] // _shape(t)[i]),
    is_first_cta=lambda: _rank(scheduler.current()) == 0, arrive=cluster_arrive, wait=cluster_wait,
    sync=cluster_sync, cta_rank_of=cta_rank_of, map_shared=map_shared,
    mask_all=cluster_masks.mask_all, mask_row=cluster_masks.mask_row, mask_column=cluster_masks.mask_column)

SYNC_OPS = dict(named_barrier_sync=named_barrier_sync, named_barrier_arrive=named_barrier_arrive,
                elect_one=elect.elect_one)


# The simulator has one coherent memory and completes a barrier's init at once; fence.proxy_async
# orders the block's generic writes for the async proxy (memory.py checks TMA / bulk sources).

def fence_mbarrier_init():
    thread, state = enter()
    for b in state.barriers.values():
        b.fenced = True


def fence_proxy_async(space):
    thread, _ = enter()
    if space in (None, "shared::cta"):
        memory.fence_generic(thread.block)
    elif space == "shared::cluster":
        for block in thread.block.cluster.blocks:
            memory.fence_generic(block)


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
