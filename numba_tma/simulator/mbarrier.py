"""``numba_tma.mbarrier`` under the simulator: phases, pending arrivals, the transaction count.

A state token is ``phase << 20 | pending arrivals before the arrival`` (20 bits hold any count).
"""

from __future__ import annotations

import numpy as np

from . import memory, scheduler
from .state import Barrier, Copy, SimulatorError, enter, peer, remote, where

_TOKEN_SHIFT = 20


def _address(op, bar):
    if not isinstance(bar, memory.SharedArray) or bar.dtype not in (np.uint64, np.int64):
        raise SimulatorError(f"numba_tma simulator: {op}: bar must be a uint64 shared array (cuda.shared.array), "
                             f"got {type(bar).__name__} of {getattr(bar, 'dtype', '?')}")
    return memory.address(bar)


def barrier(state, thread, op, bar) -> Barrier:
    """The barrier at ``bar`` (element 0), which must have been initialised in this block; used
    from another block, it must have been published by a cluster barrier after its init."""
    found = state.barriers.get(_address(op, bar))
    block = state.block
    if block is not thread.block:
        if found is None or found.published is None or found.published[0].generation <= found.published[1]:
            done = "is not initialised there yet" if found is None else (
                "was initialised there, but no cluster barrier has completed since (cuda.syncthreads() orders "
                "one block only)")
            fence = "" if found is None or found.fenced else ", fence.mbarrier_init()"
            raise SimulatorError(
                f"numba_tma simulator: {where(thread)}: {op} on {memory.name(bar)} of block {block.index}, which "
                f"{done}: a barrier used from another block must be initialised, fenced and published to the "
                f"cluster first. Missing step: mbarrier.init{fence or ', fence.mbarrier_init()'} and then "
                "cluster.sync() in every block (a cluster-wide barrier) before any block uses another's barriers")
        if not found.fenced:
            raise SimulatorError(
                f"numba_tma simulator: {where(thread)}: {op} on {memory.name(bar)} of block {block.index}, "
                "initialised without fence.mbarrier_init(): the init may not be visible to other blocks. Missing "
                "step: fence.mbarrier_init() after mbarrier.init, before the cluster.sync()")
        return found
    if found is None:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} on {memory.name(bar)}, which is not an "
                             "initialised mbarrier of this block (mbarrier.init first, then fence.mbarrier_init() "
                             "and cuda.syncthreads() before other threads use it)")
    return found


class StateToken(int):
    """A state token, as the compiled ``arrive*`` return it: an integer the parity waits refuse."""


def _arrive(thread, state, op, bar, count, drop=0, nbytes=0):
    b = barrier(state, thread, op, bar)
    if nbytes:
        b.expected += nbytes
    if count > b.pending:
        raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op} arrives {count} times on {b.describe()}:"
                             f" more arrivals than the phase still expects")
    token = StateToken(b.phase << _TOKEN_SHIFT | b.pending)
    b.clock = scheduler.joined(b.clock, scheduler.release(thread))
    b.count -= drop
    b.pending -= count
    _check_overdelivery(b, f"{op} by {where(thread)} completed the arrivals")
    b.advance()
    state.changed()
    return token


def init(bar, count):
    thread, state = enter()
    if not 1 <= count < 1 << 20:
        raise SimulatorError(f"numba_tma simulator: mbarrier.init: count={count} must be in [1, 2**20 - 1]")
    state.barriers[_address("mbarrier.init", bar)] = Barrier(memory.name(bar), count, thread.block, thread)
    state.changed()


def inval(bar):
    thread, state = enter()
    barrier(state, thread, "mbarrier.inval", bar)
    del state.barriers[memory.address(bar)]


def arrive(bar, count=1, sem=None, scope=None, no_complete=False):
    thread, state = enter()
    if no_complete:
        b = barrier(state, thread, "mbarrier.arrive", bar)
        if count >= b.pending:
            raise SimulatorError(f"numba_tma simulator: {where(thread)}: mbarrier.arrive(no_complete=True) would "
                                 f"complete the phase of {b.describe()}")
    return _arrive(thread, state, "mbarrier.arrive", bar, count)


def arrive_expect_tx(bar, nbytes, sem=None, scope=None):
    thread, state = enter()
    return _arrive(thread, state, "mbarrier.arrive_expect_tx", bar, 1, nbytes=nbytes)


def arrive_drop(bar, count=1, sem=None, scope=None):
    thread, state = enter()
    return _arrive(thread, state, "mbarrier.arrive_drop", bar, count, drop=count)


def arrive_drop_expect_tx(bar, nbytes, sem=None, scope=None):
    thread, state = enter()
    return _arrive(thread, state, "mbarrier.arrive_drop_expect_tx", bar, 1, drop=1, nbytes=nbytes)


def arrive_remote(bar, cta_rank, count=1, sem="release"):
    thread, _ = enter()
    block, state = peer("mbarrier.arrive_remote", thread, cta_rank)
    at = in_block(bar, block)
    b = barrier(state, thread, "mbarrier.arrive_remote", at)
    record = remote("mbarrier.arrive_remote", thread, state, b, None)
    if record is not None:
        record.phase = b.phase
    _arrive(thread, state, "mbarrier.arrive_remote", at, count)


def expect_tx(bar, nbytes, scope="cta"):
    thread, state = enter()
    barrier(state, thread, "mbarrier.expect_tx", bar).expected += nbytes
    state.changed()


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


def deliver_later(op, thread, blocks, dst, bar, nbytes, write):
    """An async copy of ``nbytes`` into ``dst`` (at the same place in each block of ``blocks``, as
    given by :func:`targets`), completing on ``bar`` there, when that block next waits:
    ``write(view)`` writes the bytes into that block's view of ``dst``."""
    for block, state in blocks:
        view, at = in_block(dst, block), in_block(bar, block)
        b = barrier(state, thread, op, at)
        memory.check_overwrite(op, thread, view, nbytes)
        start = memory.address(view)
        what = memory.name(view)
        record = remote(op, thread, state, b, what)

        def complete(view=view, at=at, state=state, b=b, record=record):
            write(view)
            memory.clear_marks(view, nbytes)
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
    b.advance()
    state.changed()


def _check_overdelivery(b, what):
    """The transaction count may dip below zero while the phase still waits for arrivals (a
    multicast copy from another block can land before this block's ``arrive_expect_tx``, as on
    the GPU, whose count is signed); once every arrival is in, below zero means more bytes
    arrived than were announced."""
    if b.tx < 0 and b.pending == 0:
        raise SimulatorError(f"numba_tma simulator: the transaction count of {b.label} went negative: {what}, and "
                             f"{b.describe()}: expect_tx (or arrive_expect_tx) must announce at least the bytes the "
                             "copies deliver")


def complete_tx(bar, nbytes, scope="cta"):
    thread, state = enter()
    deliver_bytes(state, thread, "mbarrier.complete_tx", bar, nbytes)


def _parity_done(b, parity):
    return (b.phase & 1) != (parity & 1)


def _token_done(b, token):
    return b.phase > token >> _TOKEN_SHIFT


def deliver_for(state, b, done):
    """Completions held back to the latest legal moment: a wait that would block delivers the copies
    in flight on its own barrier only (in the run's order), one at a time until it need not; nothing
    else lands early (the other copies stay in flight until their own waits, or until every thread
    is blocked)."""
    if done(b):
        return
    block = state.block
    mine = [c for c in block.pending if c.bar is b]
    if not mine:
        return
    if block.rng is not None:
        order = block.rng.random()
        if order < 0.5:
            mine.reverse()                      # the latest-issued copy first
        else:
            block.rng.shuffle(mine)
    for copy in mine:
        if copy in block.pending and not any(c in block.pending for c in copy.after):
            state.deliver_one(copy)
            if done(b):
                return


def _wrong_parity(thread, op, b, parity):
    """A parity wait that returns at once refers to phase ``b.phase - 1``: if this thread already
    waited for that phase, the GPU returns at once and the kernel most likely forgot to flip the
    parity."""
    target = b.phase - 1
    last = b.seen.get(thread)
    if last is not None and target <= last:
        raise SimulatorError(
            f"numba_tma simulator: {where(thread)}: {op}(parity {parity & 1}) on {b.label} returns at once on the "
            f"GPU: phase {target} (the last of parity {parity & 1}) has completed, and this thread already waited "
            f"for it; the barrier is in phase {b.phase}. Likely a wrong parity: the phase this thread waits for "
            f"next is {last + 1} (parity {(last + 1) & 1}); flip the parity after each completed wait "
            f"(parity = (k // stages) & 1 for the k-th use of a ring slot)")


def _waited(thread, b, phase):
    scheduler.acquire(thread, b.released)
    b.seen[thread] = phase
    if phase > b.observed:
        b.observed = phase


def _hint(thread, b, parity):
    last = b.seen.get(thread)
    if last is not None and (last & 1) == (parity & 1) == (b.phase & 1) and b.phase >= last + 2:
        return (f" (this thread last waited for phase {last}, of the same parity: waiting on parity {parity & 1} "
                f"again waits for phase {b.phase}; a wrong parity?)")
    return ""


def _probe(op, bar, done, what, deliver, parity=None):
    """A non-blocking check; a failed one lets the other threads run before it returns False."""
    thread, state = enter()
    b = barrier(state, thread, op, bar)
    if deliver:
        deliver_for(state, b, done)
    if done(b):
        if parity is not None:
            target = b.phase - 1
            if thread not in _polling(b):
                _wrong_parity(thread, op, b, parity)
            _polling(b).discard(thread)
            _waited(thread, b, target)
        else:
            _waited(thread, b, b.phase - 1)
        return True
    if parity is not None:
        _polling(b).add(thread)
    scheduler.poll(thread, lambda: done(b), lambda: f"polls {what} on {b.describe()}")
    return False


def _polling(b):
    """The threads whose last probe of ``b`` failed (a probe loop on the current phase)."""
    found = getattr(b, "_polling", None)
    if found is None:
        found = b._polling = set()
    return found


def test_wait(bar, phase, sem=None, scope=None):
    return _probe("mbarrier.test_wait", bar, lambda b: _parity_done(b, phase),
                  f"mbarrier.test_wait(parity {phase & 1})", False, phase)


def test_wait_token(bar, token, sem=None, scope=None):
    return _probe("mbarrier.test_wait_token", bar, lambda b: _token_done(b, token), "mbarrier.test_wait_token",
                  False)


def try_wait(bar, phase, suspend_ns=None, sem=None, scope=None):
    return _probe("mbarrier.try_wait", bar, lambda b: _parity_done(b, phase),
                  f"mbarrier.try_wait(parity {phase & 1})", True, phase)


def try_wait_token(bar, token, suspend_ns=None, sem=None, scope=None):
    return _probe("mbarrier.try_wait_token", bar, lambda b: _token_done(b, token), "mbarrier.try_wait_token",
                  True)


def wait(bar, phase, sem=None, scope=None):
    thread, state = enter()
    b = barrier(state, thread, "mbarrier.wait", bar)

    def done(b=b):
        return _parity_done(b, phase)

    if done():
        _wrong_parity(thread, "mbarrier.wait", b, phase)
        _waited(thread, b, b.phase - 1)
        return
    target = b.phase
    deliver_for(state, b, lambda b: done())
    scheduler.wait(thread, done, lambda: f"mbarrier.wait(parity {phase & 1}) on {b.describe()}{_hint(thread, b, phase)}")
    _waited(thread, b, target)


def pending_count(token):
    return int(token) & ((1 << _TOKEN_SHIFT) - 1)


OPS = dict(init=init, inval=inval, arrive=arrive, arrive_expect_tx=arrive_expect_tx, arrive_drop=arrive_drop,
           arrive_drop_expect_tx=arrive_drop_expect_tx, arrive_remote=arrive_remote, expect_tx=expect_tx,
           complete_tx=complete_tx, test_wait=test_wait, test_wait_token=test_wait_token, try_wait=try_wait,
           try_wait_token=try_wait_token, wait=wait, pending_count=pending_count)
