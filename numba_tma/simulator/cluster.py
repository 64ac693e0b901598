"""``numba_tma.cluster`` under the simulator.

A kernel launched with ``numba_tma.launch(..., cluster=...)`` runs the blocks of each cluster at
once (:mod:`.scheduler`): ranks and ids come from the cluster shape, the cluster barrier counts
every thread of the cluster, ``map_shared(a, r)`` is ``a`` in block ``r``.  Other launches are
clusters of one block.
"""

from __future__ import annotations

from .. import cluster_masks
from . import gates, memory, scheduler
from .state import RUNNING, SimulatorError, enter, peer, where


class _ClusterGates:
    """The cluster barrier's gates (shared by the cluster's blocks), where gates.arrive keeps them."""

    def __init__(self, cluster):
        self.cluster, self.gates = cluster, cluster.gates

    def changed(self):
        self.cluster.progress += 1


def _arrive(op):
    thread, state = enter()
    cluster = thread.block.cluster
    gate, generation = gates.arrive(_ClusterGates(cluster), thread, ("cluster",), thread.block.size * cluster.size,
                                    op)
    state.changed()
    state.gates[("cluster arrival", thread)] = (gate, generation)
    for b in state.barriers.values():        # barriers this thread initialised: published (fenced or not)
        if b.initialiser is thread and (b.published is None or not b.published[2]):
            b.published = (gate, generation, b.fenced)
    for record in cluster.gates.get("remote", ()):   # ops into other blocks: ordered before this barrier
        if record.thread is thread and record.cover is None:
            record.cover = (gate, generation)


def _wait(op):
    thread, state = enter()
    arrival = state.gates.pop(("cluster arrival", thread), None)
    if arrival is None:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} without a cluster.arrive first")
    gate, generation = arrival
    scheduler.wait(thread, lambda: gate.generation != generation,
                   lambda: f"{op}: {len(gate.arrived)} of {gate.expected} threads of the cluster arrived")
    scheduler.acquire(thread, gate.released)


def arrive(relaxed=False):
    _arrive(RUNNING.op)


def wait():
    _wait(RUNNING.op)


def sync():
    op = RUNNING.op
    _arrive(op)
    _wait(op)


def _rank(thread) -> int:
    return thread.block.rank


def _shape(thread) -> tuple:
    return thread.block.cluster.shape


def ctarank():
    return _rank(scheduler.current())


def nctarank():
    return scheduler.current().block.cluster.size


def is_first_cta():
    return _rank(scheduler.current()) == 0


def ctaid(axis="x"):
    t, i = scheduler.current(), "xyz".index(axis)
    return t.block.index[i] % _shape(t)[i]


def nctaid(axis="x"):
    return _shape(scheduler.current())["xyz".index(axis)]


def clusterid(axis="x"):
    t, i = scheduler.current(), "xyz".index(axis)
    return t.block.index[i] // _shape(t)[i]


def nclusterid(axis="x"):
    t, i = scheduler.current(), "xyz".index(axis)
    return t.block.launch.grid_dim[i] // _shape(t)[i]


def map_shared(array, cta_rank):
    thread, _ = enter()
    op = RUNNING.op
    if not isinstance(array, memory.SharedArray) or array.caller is None:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op}: array must be a shared "
                             f"array; got {memory.name(array)}")
    block, _ = peer(op, thread, cta_rank)
    return memory.mapped(array, block)


def cta_rank_of(array):
    """The rank of the block whose shared memory ``array`` lies in."""
    enter()
    owner = getattr(array, "owner", None)
    return 0 if owner is None else owner.rank


mask_all, mask_row, mask_column = cluster_masks.mask_all, cluster_masks.mask_row, cluster_masks.mask_column
