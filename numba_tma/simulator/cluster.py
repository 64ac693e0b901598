"""``numba_tma.cluster`` under the simulator.

A kernel launched with ``numba_tma.launch(..., cluster=...)`` runs the blocks of each cluster at
once (:mod:`.scheduler`): ranks and ids come from the cluster shape, the cluster barrier counts
every thread of the cluster, ``map_shared(a, r)`` is ``a`` in block ``r``.  Other launches are
clusters of one block.
"""

from __future__ import annotations

from .. import cluster_masks
from . import memory, scheduler
from .gates import arrive
from .state import SimulatorError, enter, peer, where


class _ClusterGates:
    """The cluster barrier's gates (shared by the cluster's blocks), where gates.arrive keeps them."""

    def __init__(self, cluster):
        self.cluster, self.gates = cluster, cluster.gates

    def changed(self):
        self.cluster.progress += 1


def cluster_arrive(relaxed=False):
    thread, state = enter()
    cluster = thread.block.cluster
    gate, generation = arrive(_ClusterGates(cluster), thread, ("cluster",), thread.block.size * cluster.size,
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
    scheduler.acquire(thread, gate.released)


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
    return memory.mapped(array, block)


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
