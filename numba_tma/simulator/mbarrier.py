"""``numba_tma.mbarrier`` under the simulator: phases, pending arrivals and the transaction count
(the model the copy families share too: :mod:`.barriers`), parity and token waits."""

from __future__ import annotations

from . import memory, scheduler
from .barriers import TOKEN_SHIFT, address, arrive_on, barrier, deliver_bytes, in_block
from .state import RUNNING, Barrier, SimulatorError, enter, peer, remote, where


def init(bar, count):
    thread, state = enter()
    op = RUNNING.op
    if not 1 <= count < 1 << 20:
        raise SimulatorError(f"numba_tma simulator: {op}: count={count} must be in [1, 2**20 - 1]")
    state.barriers[address(op, bar)] = Barrier(memory.name(bar), count, thread.block, thread)
    state.changed()


def inval(bar):
    thread, state = enter()
    barrier(state, thread, RUNNING.op, bar)
    del state.barriers[memory.address(bar)]


def arrive(bar, count=1, sem=None, scope=None, no_complete=False):
    thread, state = enter()
    op = RUNNING.op
    if no_complete:
        b = barrier(state, thread, op, bar)
        if count >= b.pending:
            raise SimulatorError(f"numba_tma simulator: {where(thread)}: {op}(no_complete=True) would "
                                 f"complete the phase of {b.describe()}")
    return arrive_on(thread, state, op, bar, count, sem=sem)


def arrive_expect_tx(bar, nbytes, sem=None, scope=None):
    thread, state = enter()
    return arrive_on(thread, state, RUNNING.op, bar, 1, nbytes=nbytes, sem=sem)


def arrive_drop(bar, count=1, sem=None, scope=None):
    thread, state = enter()
    return arrive_on(thread, state, RUNNING.op, bar, count, drop=count, sem=sem)


def arrive_drop_expect_tx(bar, nbytes, sem=None, scope=None):
    thread, state = enter()
    return arrive_on(thread, state, RUNNING.op, bar, 1, drop=1, nbytes=nbytes, sem=sem)


def arrive_remote(bar, cta_rank, count=1, sem="release"):
    thread, _ = enter()
    op = RUNNING.op
    block, state = peer(op, thread, cta_rank)
    at = in_block(bar, block)
    b = barrier(state, thread, op, at)
    record = remote(op, thread, state, b, None)
    if record is not None:
        record.phase = b.phase
    arrive_on(thread, state, op, at, count, sem=sem)


def expect_tx(bar, nbytes, scope="cta"):
    thread, state = enter()
    barrier(state, thread, RUNNING.op, bar).expected += nbytes
    state.changed()


def complete_tx(bar, nbytes, scope="cta"):
    thread, state = enter()
    deliver_bytes(state, thread, RUNNING.op, bar, nbytes)


def _parity_done(b, parity):
    return (b.phase & 1) != (parity & 1)


def _token_done(b, token):
    return b.phase > token >> TOKEN_SHIFT


def _deliver_for(state, b, done):
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
        _deliver_for(state, b, done)
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
    op = RUNNING.op
    return _probe(op, bar, lambda b: _parity_done(b, phase), f"{op}(parity {phase & 1})", False, phase)


def test_wait_token(bar, token, sem=None, scope=None):
    op = RUNNING.op
    return _probe(op, bar, lambda b: _token_done(b, token), op, False)


def try_wait(bar, phase, suspend_ns=None, sem=None, scope=None):
    op = RUNNING.op
    return _probe(op, bar, lambda b: _parity_done(b, phase), f"{op}(parity {phase & 1})", True, phase)


def try_wait_token(bar, token, suspend_ns=None, sem=None, scope=None):
    op = RUNNING.op
    return _probe(op, bar, lambda b: _token_done(b, token), op, True)


def wait(bar, phase, sem=None, scope=None):
    thread, state = enter()
    op = RUNNING.op
    b = barrier(state, thread, op, bar)

    def done(b=b):
        return _parity_done(b, phase)

    if done():
        _wrong_parity(thread, op, b, phase)
        _waited(thread, b, b.phase - 1)
        return
    target = b.phase
    _deliver_for(state, b, lambda b: done())
    scheduler.wait(thread, done, lambda: f"{op}(parity {phase & 1}) on {b.describe()}{_hint(thread, b, phase)}")
    _waited(thread, b, target)


def pending_count(token):
    return int(token) & ((1 << TOKEN_SHIFT) - 1)
