"""The mbarrier model the families' twins share: finding a block's barrier (published to the
cluster for use from another block), arrivals, the transaction count, and async copies that
complete on a barrier (:func:`deliver_later`, into the blocks a multicast names).

A state token is ``phase << 20 | pending arrivals before the arrival`` (20 bits hold any count).
"""

from __future__ import annotations

import numpy as np

from . import memory, scheduler
from .state import Barrier, Copy, SimulatorError, peer, remote, where

TOKEN_SHIFT = 20


class StateToken(int):
    """A state token, as the compiled ``arrive*`` return it: an integer the parity waits refuse."""


def address(op, bar):
    """The shared address of the barrier ``bar`` (element 0 of a uint64 shared array)."""
    if not isinstance(bar, memory.SharedArray) or bar.dtype not in (np.uint64, np.int64):
        raise SimulatorError(f"numba_tma simulator: {op}: bar must be a uint64 shared array (cuda.shared.array), "
                             f"got {type(bar).__name__} of {getattr(bar, 'dtype', '?')}")
    return memory.address(bar)


def barrier(state, thread, op, bar) -> Barrier:
    """The barrier at ``bar`` (element 0), which must have been initialised in this block; used
    from another block, it must have been fenced (``fence.mbarrier_init``) and then published by a
    cluster barrier after its init."""
    found = state.barriers.get(address(op, bar))
    block = state.block
    if block is not thread.block:
        _published(thread, op, bar, block, found)
        return found
    if found is None:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} on {memory.name(bar)}, which is not an "
                             "initialised mbarrier of this block (mbarrier.init first, then fence.mbarrier_init() "
                             "and cuda.syncthreads() before other threads use it)")
    return found


_INIT_FENCE = ("mbarrier.init is made visible to other blocks and to the async proxy by fence.mbarrier_init (a "
               "release of the initialising thread's inits at cluster scope), not by the barriers that order "
               "ordinary memory")


def _published(thread, op, bar, block, found):
    """A use of ``found`` (the barrier at ``bar`` in ``block``) from another block: its init, fenced,
    then a completed cluster barrier the initialising thread arrived at after the fence."""
    what = f"{where(thread)}: {op} on {memory.name(bar)} of block {block.index}"
    if found is None:
        raise SimulatorError(
            f"numba_tma simulator: {what}, which is not initialised there yet: a barrier used from another block "
            "must be initialised, fenced and published to the cluster first. Missing step: mbarrier.init, "
            "fence.mbarrier_init() and then cluster.sync() in every block (a cluster-wide barrier) before any block "
            "uses another's barriers")
    published = found.published
    if published is not None and published[0].generation > published[1] and not published[2]:
        raise SimulatorError(
            f"numba_tma simulator: {what}, whose mbarrier.init by {where(found.initialiser)} was not followed by "
            f"fence.mbarrier_init() before the cluster barrier that published it: {_INIT_FENCE}, so this block may "
            "see an uninitialised barrier. Missing step: fence.mbarrier_init() after mbarrier.init in the "
            "initialising thread, before its cluster.sync() (or cluster.arrive())")
    if published is None or published[0].generation <= published[1]:
        fence = "" if found.fenced else "fence.mbarrier_init() after mbarrier.init, then "
        raise SimulatorError(
            f"numba_tma simulator: {what}, which was initialised there, but no cluster barrier has completed since "
            "(cuda.syncthreads() orders one block only): a barrier used from another block must be initialised, "
            f"fenced and published to the cluster first. Missing step: {fence}cluster.sync() in every block (a "
            "cluster-wide barrier) before any block uses another's barriers")


def check_init_fenced(thread, op, b):
    """The async proxy (a TMA or bulk copy's complete_tx) uses ``b``: its init must have been made
    visible to the async proxy by a fence after it (``fence.mbarrier_init``, or the initialising
    thread's ``fence.proxy_async`` covering shared memory).  Another thread's ordinary use after a
    ``cuda.syncthreads()`` needs no fence (the block barrier orders the init)."""
    if b.fenced or b.proxy_fenced:
        return
    raise SimulatorError(
        f"numba_tma simulator: {where(thread)}: {op} completes its bytes on {b.label} through the async proxy, but "
        f"its mbarrier.init by {where(b.initialiser)} was not followed by fence.mbarrier_init(): "
        f"{_INIT_FENCE}, so the copy's complete_tx may reach a barrier the async proxy sees uninitialised. Missing "
        "step: fence.mbarrier_init() after mbarrier.init in the initialising thread, before the cuda.syncthreads() "
        "(or cluster.sync()) that publishes the barrier (fence.proxy_async(\"shared::cta\") there covers this "
        "block's async proxy too)")


def arrive_on(thread, state, op, bar, count, drop=0, nbytes=0, sem=None):
    """``count`` arrivals of ``op`` on ``bar`` (``drop`` of them also leave the barrier's count;
    ``nbytes`` announced first) with release semantics, or (``sem="relaxed"``) publishing only
    what the thread's last fence covered; returns the state token."""
    b = barrier(state, thread, op, bar)
    if nbytes:
        b.expected += nbytes
    if count > b.pending:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} arrives {count} times on {b.describe()}:"
                             f" more arrivals than the phase still expects")
    token = StateToken(b.phase << TOKEN_SHIFT | b.pending)
    published = scheduler.relaxed_release(thread, b.block) if sem == "relaxed" else scheduler.release(thread)
    b.clock = scheduler.joined(b.clock, published)
    b.count -= drop
    b.pending -= count
    _check_overdelivery(b, f"{op} by {where(thread)} completed the arrivals")
    _advance(state, b)
    state.changed()
    return token


def in_block(array, block):
    """``array`` (a shared array of the calling block) as it lies in ``block``."""
    if not isinstance(array, memory.SharedArray) or array.caller is None:
        return array               # not shared memory: the op's own checks say so
    return memory.peer_array(array, block)


def targets(op, thread, state, mask=None):
    """The blocks an async copy writes to, as (block, state): the issuing block, or the blocks
    of its cluster whose rank bits are set in the multicast ``mask``."""
    if mask is None:
        return [(thread.block, state)]
    size, mask = thread.block.cluster.size, int(mask)
    if not 0 < mask < 1 << size:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op}: multicast={mask:#x} must name blocks of "
                             f"this cluster of {size} (bits 0-{size - 1}, at least one)")
    return [peer(op, thread, rank) for rank in range(size) if mask >> rank & 1]


def deliver_later(op, thread, blocks, dst, bar, nbytes, write, async_proxy=True):
    """An async copy of ``nbytes`` into ``dst`` (at the same place in each block of ``blocks``, as
    given by :func:`targets`), completing on ``bar`` there, when that block next waits:
    ``write(view)`` writes the bytes into that block's view of ``dst``.  ``async_proxy``: the copy
    completes through the async proxy (TMA, bulk copies), which must see the barrier's init fenced."""
    for block, state in blocks:
        view, at = in_block(dst, block), in_block(bar, block)
        b = barrier(state, thread, op, at)
        if async_proxy:
            check_init_fenced(thread, op, b)
        memory.check_overwrite(op, thread, view, nbytes)
        start = memory.address(view)
        what = memory.name(view)
        record = remote(op, thread, state, b, what)

        def complete(view=view, at=at, state=state, b=b, record=record, start=start):
            write(view)
            memory.clear_marks(view, nbytes)
            b.fills[start] = start + nbytes
            if record is not None:
                record.phase = b.phase
            deliver_bytes(state, thread, op, at, nbytes)

        copy = Copy(op, thread, complete, (start, start + nbytes), bar=b, what=what)
        state.issue(copy)
        if record is not None and b.pending and block.rng is not None and block.rng.random() < 0.5:
            state.deliver_one(copy)      # adversarial: the bytes land in the other block before it announces them


def deliver_bytes(state, thread, op, bar, nbytes):
    """``nbytes`` arrive on the barrier (a copy's complete_tx)."""
    b = barrier(state, thread, op, bar)
    b.delivered += nbytes
    _check_overdelivery(b, f"{op} issued by {where(thread)} delivered {nbytes} bytes")
    _advance(state, b)
    state.changed()


def _advance(state, b):
    """``b``'s phase completes if its arrivals and bytes are in; not while a copy issued in it is still
    in flight: its bytes were not announced (too few expected bytes, or an arrival without them), so
    the waiters go on before it lands and its bytes count towards the next phase."""
    if b.pending or b.tx:
        return
    late = [c for c in state.in_flight if c.bar is b and c.phase == b.phase]
    if late:
        nbytes = sum(c.dst[1] - c.dst[0] for c in late)
        copies = ", ".join(f"the {c.op} issued by {c.issuer}{f' into {c.what}' if c.what else ''}" for c in late)
        raise SimulatorError(
            f"numba_tma simulator: phase {b.phase} of {b.label} in block {b.block.index} completes with "
            f"{b.expected} bytes announced (arrive_expect_tx / expect_tx) and delivered, while {copies} ({nbytes} "
            "more bytes, issued in this phase) is still in flight: too few expected bytes, so the waiters go on "
            "before those bytes land and read the tile stale. Missing step: announce every byte the copies of a "
            f"phase bring ({b.expected + nbytes} here): desc.box_bytes for each tma.load, summed over the loads "
            "completing on the barrier (a pipeline: ring.acquire(state, (desc_a, desc_b)) with every map loaded "
            "into the stage)")
    b.advance()


def _check_overdelivery(b, what):
    """The transaction count may dip below zero while the phase still waits for arrivals (a
    multicast copy from another block can land before this block's ``arrive_expect_tx``, as on
    the GPU, whose count is signed); once every arrival is in, below zero means more bytes
    arrived than were announced."""
    if b.tx < 0 and b.pending == 0:
        raise SimulatorError(f"numba_tma simulator: the transaction count of {b.label} went negative: {what}, and "
                             f"{b.describe()}: expect_tx (or arrive_expect_tx) must announce at least the bytes the "
                             "copies deliver")
