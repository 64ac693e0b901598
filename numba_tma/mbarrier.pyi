"""mbarrier: shared-memory barriers that also count bytes delivered by TMA and bulk copies.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used

def arrive(bar: SharedArray, count: int | None = 1, sem: Literal[None, 'release', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None, no_complete: Literal[False, True] = False) -> int:
    """Arrive on the barrier (``count`` arrivals toward :func:`init`'s count, default 1) and
    return the barrier's state token before the arrival (a :class:`StateToken`, for :func:`test_wait_token`,
    :func:`try_wait_token` and :func:`pending_count`; ignore it if not needed).  ``no_complete=True``
    (with ``count``) promises the arrival does not complete the phase — the PTX ISA defines
    :func:`pending_count` only for the tokens of such arrivals.

    ``sem`` / ``scope``: the memory ordering of the arrival (``"release"``, the default, or
    ``"relaxed"``, PTX ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX
    says neither.

    Example::

        mbarrier.arrive(bars)
        token = mbarrier.arrive(bars, count=2, sem="relaxed", scope="cluster")

    PTX::

        mbarrier.arrive.shared::cta.b64 out, [bar][, count];

    Requires sm_80 or newer, PTX ISA 7.8.
    With ``sem='release'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.
    With ``count``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.barrier_arrive``, ``cute.arch.mbarrier_arrive``, ``cuda::ptx::mbarrier_arrive``.
    """


def arrive_drop(bar: SharedArray, count: int | None = 1, sem: Literal[None, 'release', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None) -> int:
    """Arrive and also lower the count every later phase expects by ``count`` (a thread that
    leaves the pipeline); returns the state token.

    ``sem`` / ``scope``: the memory ordering of the arrival (``"release"``, the default, or
    ``"relaxed"``, PTX ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX
    says neither.

    Example::

        mbarrier.arrive_drop(bars)          # this warp is done with the ring

    PTX::

        mbarrier.arrive_drop.shared::cta.b64 out, [bar][, count];

    Requires sm_80 or newer, PTX ISA 7.8.
    With ``sem='release'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.
    With ``count``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cuda::ptx::mbarrier_arrive_drop``.
    """


def arrive_drop_expect_tx(bar: SharedArray, nbytes: int, sem: Literal[None, 'release', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None) -> int:
    """:func:`arrive_drop` that also expects ``nbytes`` of async copies; returns the state token.

    Example::

        mbarrier.arrive_drop_expect_tx(bars, desc.box_bytes)

    PTX::

        mbarrier.arrive_drop.expect_tx.shared::cta.b64 out, [bar], nbytes;

    Requires sm_90 or newer, PTX ISA 8.0.
    With ``sem='release'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cuda::ptx::mbarrier_arrive_drop_expect_tx``.
    """


def arrive_expect_tx(bar: SharedArray, nbytes: int, sem: Literal[None, 'release', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None) -> int:
    """Arrive once and tell the barrier to also wait for ``nbytes`` of async copies; returns the
    state token.  The phase completes when all arrivals happened *and* TMA/bulk copies signalling
    this barrier delivered ``nbytes`` bytes (for a full TMA tile: ``desc.box_bytes``).

    ``sem`` / ``scope``: the memory ordering of the arrival (``"release"``, the default, or
    ``"relaxed"``, PTX ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX
    says neither.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (x, y), bars)

    PTX::

        mbarrier.arrive.expect_tx.shared::cta.b64 out, [bar], nbytes;

    Requires sm_90 or newer, PTX ISA 8.0.
    With ``sem='release'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.barrier_expect_bytes``, ``cute.arch.mbarrier_arrive_and_expect_tx``, ``cuda::ptx::mbarrier_arrive_expect_tx``.
    """


def arrive_remote(bar: SharedArray, cta_rank: int, count: int | None = 1, sem: Literal['release', 'relaxed'] = 'release') -> None:
    """Arrive on the barrier at ``bar``'s offset in block ``cta_rank`` of this cluster (``mapa``,
    then a cluster-scope arrival); no state token comes back.  The remote barrier must be
    initialised first (``fence.mbarrier_init()`` and a ``cluster.sync()`` after ``init``).

    Example::

        mbarrier.arrive_remote(empty, producer_rank)      # tell the producer CTA the slot is free

    PTX::

        {
        .reg .b32 remote;
        mapa.shared::cluster.u32 remote, bar, cta_rank;
        mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote][, count];
        }

    Requires sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``count``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.barrier_arrive(remote_cta_rank=)``, ``cute.arch.mbarrier_arrive (cta_id)``, ``cuda::ptx::mbarrier_arrive (shared::cluster)``.
    """


def complete_tx(bar: SharedArray, nbytes: int, scope: Literal['cta', 'cluster'] = 'cta') -> None:
    """Count ``nbytes`` as delivered on the barrier, as an async copy would (without one): the
    split form of a transaction, for producers that write shared memory themselves.

    Example::

        mbarrier.expect_tx(bars, 256)
        ...                                  # 256 bytes written by this thread
        mbarrier.complete_tx(bars, 256)

    PTX::

        mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], nbytes;

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cuda::ptx::mbarrier_complete_tx``.
    """


def expect_tx(bar: SharedArray, nbytes: int, scope: Literal['cta', 'cluster'] = 'cta') -> None:
    """Raise the bytes the current phase waits for by ``nbytes``, without arriving (for producers
    whose arrival is counted elsewhere).  ``scope``: ``"cta"`` or ``"cluster"``.

    Example::

        mbarrier.expect_tx(bars, desc.box_bytes)
        tma.load(desc, tile, (x, y), bars)

    PTX::

        mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], nbytes;

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.arch.mbarrier_expect_tx``, ``cuda::ptx::mbarrier_expect_tx``.
    """


def init(bar: SharedArray, count: int) -> None:
    """Initialise an mbarrier for ``count`` arrivals per phase (phase 0 starts).

    Call from one thread, then ``fence.mbarrier_init()`` and a ``cuda.syncthreads()`` before other
    threads (or the TMA unit) use the barrier.

    Example::

        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()

    PTX::

        mbarrier.init.shared::cta.b64 [bar], count;

    Requires sm_80 or newer, PTX ISA 7.8.

    Also known as: ``tlx.alloc_barriers``, ``cute.arch.mbarrier_init``, ``cuda::ptx::mbarrier_init``.
    """


def inval(bar: SharedArray) -> None:
    """Invalidate a barrier so its shared memory can be used for something else (or the barrier
    initialised again).

    Example::

        mbarrier.inval(bars)
        mbarrier.init(bars, 2)

    PTX::

        mbarrier.inval.shared::cta.b64 [bar];

    Requires sm_80 or newer, PTX ISA 7.8.

    Also known as: ``cute.arch.mbarrier_inval``, ``cuda::ptx::mbarrier_inval``.
    """


def pending_count(token: int) -> int:
    """The arrivals the barrier still expected when the state token was taken (before that
    arrival).  The PTX ISA defines it only for tokens of ``arrive(..., no_complete=True)``.

    Example::

        token = mbarrier.arrive(bars, count=1, no_complete=True)
        left = mbarrier.pending_count(token)

    PTX::

        mbarrier.pending_count.b64 out, token;

    Requires sm_80 or newer, PTX ISA 7.0.

    Also known as: ``cuda::ptx::mbarrier_pending_count``.
    """


def test_wait(bar: SharedArray, phase: int, sem: Literal[None, 'acquire', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None) -> bool:
    """Non-blocking check: has the phase with parity ``phase & 1`` completed?

    Use it to probe a barrier's state at one instant (``try_wait`` may wait a while first).

    ``sem`` / ``scope``: the ordering of the wait (``"acquire"``, the default, or ``"relaxed"``, PTX
    ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX says neither.

    Example::

        done = mbarrier.test_wait(bars, 0)

    PTX::

        {
        .reg .pred p;
        mbarrier.test_wait.parity.shared::cta.b64 p, [bar], phase;
        selp.u32 out, 1, 0, p;
        }

    Requires sm_80 or newer, PTX ISA 7.8.
    With ``sem='acquire'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cuda::ptx::mbarrier_test_wait_parity``.
    """


def test_wait_token(bar: SharedArray, token: int, sem: Literal[None, 'acquire', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None) -> bool:
    """Non-blocking check: has the phase the state ``token`` (from :func:`arrive`) was taken in
    completed?

    ``sem`` / ``scope``: the ordering of the wait (``"acquire"``, the default, or ``"relaxed"``, PTX
    ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX says neither.

    Example::

        token = mbarrier.arrive(bars)
        done = mbarrier.test_wait_token(bars, token)

    PTX::

        {
        .reg .pred p;
        mbarrier.test_wait.shared::cta.b64 p, [bar], token;
        selp.u32 out, 1, 0, p;
        }

    Requires sm_80 or newer, PTX ISA 7.8.
    With ``sem='acquire'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cuda::ptx::mbarrier_test_wait``.
    """


def try_wait(bar: SharedArray, phase: int, suspend_ns: int | None = None, sem: Literal[None, 'acquire', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None) -> bool:
    """Wait a bounded, hardware-chosen time (or up to ``suspend_ns``, a hint) for the phase with
    parity ``phase & 1``.

    Returns ``True`` if the phase completed within that time.  The wait is *potentially
    blocking*: on the H200 the thread may run on and the result may reflect a completion that
    happens later within the time limit (measured: a ``try_wait`` issued before a ``syncthreads``
    whose result was used after the barrier completed returned ``True``).  Use it in a retry loop;
    use :func:`test_wait` for an instantaneous probe.

    ``sem`` / ``scope``: the ordering of the wait (``"acquire"``, the default, or ``"relaxed"``, PTX
    ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX says neither.

    Example::

        while not mbarrier.try_wait(bars, phase):
            pass

    PTX::

        {
        .reg .pred p;
        mbarrier.try_wait.parity.shared::cta.b64 p, [bar], phase[, suspend_ns];
        selp.u32 out, 1, 0, p;
        }

    Requires sm_90 or newer, PTX ISA 8.0.
    With ``sem='acquire'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.arch.mbarrier_try_wait``, ``cuda::ptx::mbarrier_try_wait_parity``.
    """


def try_wait_token(bar: SharedArray, token: int, suspend_ns: int | None = None, sem: Literal[None, 'acquire', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None) -> bool:
    """:func:`try_wait` on the phase a state ``token`` (from :func:`arrive`) was taken in.

    ``sem`` / ``scope``: the ordering of the wait (``"acquire"``, the default, or ``"relaxed"``, PTX
    ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX says neither.

    Example::

        token = mbarrier.arrive(bars)
        while not mbarrier.try_wait_token(bars, token):
            pass

    PTX::

        {
        .reg .pred p;
        mbarrier.try_wait.shared::cta.b64 p, [bar], token[, suspend_ns];
        selp.u32 out, 1, 0, p;
        }

    Requires sm_90 or newer, PTX ISA 8.0.
    With ``sem='acquire'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.arch.mbarrier_try_wait (token)``, ``cuda::ptx::mbarrier_try_wait``.
    """


def wait(bar: SharedArray, phase: int, sem: Literal[None, 'acquire', 'relaxed'] = None, scope: Literal[None, 'cta', 'cluster'] = None) -> None:
    """Block until the phase with parity ``phase & 1`` of the barrier completes (a ``try_wait``
    loop).  Flip ``phase`` (``phase ^= 1``) each time the barrier is reused.

    ``sem`` / ``scope``: the ordering of the wait (``"acquire"``, the default, or ``"relaxed"``, PTX
    ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX says neither.

    Example::

        mbarrier.wait(bars, 0)

    PTX::

        {
        .reg .pred p;
        numba_tma_wait_N:
        mbarrier.try_wait.parity.shared::cta.b64 p, [bar], phase;
        @!p bra numba_tma_wait_N;
        }

    Requires sm_90 or newer, PTX ISA 8.0.
    With ``sem='acquire'``: sm_90 or newer, PTX ISA 8.0.
    With ``sem='relaxed'``: sm_90 or newer, PTX ISA 8.6.
    With ``scope='cta'``: sm_90 or newer, PTX ISA 8.0.
    With ``scope='cluster'``: sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.barrier_wait``, ``cute.arch.mbarrier_wait``.
    """
