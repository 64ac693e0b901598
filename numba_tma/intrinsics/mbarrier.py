"""mbarrier: shared-memory barriers that also count bytes delivered by TMA and bulk copies.

**Barrier arguments.** In Numba ``bars[0]`` is a loaded *value*, not an address, so every barrier
argument in numba_tma is a ``uint64`` (or ``int64``) shared array and the op uses its **element 0**.
Allocate several barriers in one array and name barrier ``i`` with a slice::

    bars = cuda.shared.array(4, numba.uint64)
    mbarrier.init(bars, 1)          # barrier 0
    mbarrier.init(bars[2:], 1)      # barrier 2

The array must live in shared memory (``cuda.shared.array``); the op converts its address to the
32-bit shared window.
"""

from numba.cuda import types

from ._core import Int, PtxOp, SharedArray, ptx_intrinsic

__all__ = ["init", "arrive", "arrive_expect_tx", "test_wait", "try_wait", "wait"]


def barrier(name="bar"):
    """The operand every barrier argument uses (element 0 of a uint64 shared array)."""
    return SharedArray(name, dtypes=(types.uint64, types.int64), what="a uint64 shared array (the mbarrier)")


INIT = PtxOp("mbarrier.init", "mbarrier.init.shared::cta.b64 [$0], $1;", min_cc=(8, 0), min_ptx=(7, 8))
init = ptx_intrinsic(
    INIT, [barrier(), Int("count", lo=1, hi=(1 << 20) - 1)],
    doc="""Initialise an mbarrier for ``count`` arrivals per phase (phase 0 starts).

    PTX: ``mbarrier.init.shared::cta.b64 [bar], count;`` — sm_80+, PTX ISA 7.8.
    Call from one thread, then ``fence.mbarrier_init()`` and a ``cuda.syncthreads()`` before other
    threads (or the TMA unit) use the barrier.

    Example::

        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
    """,
)

ARRIVE = PtxOp("mbarrier.arrive", "mbarrier.arrive.shared::cta.b64 _, [$0];", min_cc=(8, 0), min_ptx=(7, 8))
arrive = ptx_intrinsic(
    ARRIVE, [barrier()],
    doc="""Arrive once on the barrier (counts toward ``count`` of :func:`init`).

    PTX: ``mbarrier.arrive.shared::cta.b64 _, [bar];`` — sm_80+, PTX ISA 7.8.

    Example::

        mbarrier.arrive(bars)
    """,
)

ARRIVE_EXPECT_TX = PtxOp(
    "mbarrier.arrive_expect_tx",
    "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
    min_cc=(9, 0), min_ptx=(8, 0),
)
arrive_expect_tx = ptx_intrinsic(
    ARRIVE_EXPECT_TX, [barrier(), Int("nbytes", hi=(1 << 20) - 1)],
    doc="""Arrive once and tell the barrier to also wait for ``nbytes`` of async copies.

    PTX: ``mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], nbytes;`` — sm_90+, PTX ISA 8.0.
    The phase completes when all arrivals happened *and* TMA/bulk copies signalling this barrier
    delivered ``nbytes`` bytes (for a full TMA tile: the box's byte count).

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, 64 * 64 * 4)
            tma.load(desc, tile, (x, y), bars)
    """,
)

_PARITY_WAIT = "mbarrier.{kind}.parity.shared::cta.b64 p, [{bar}], {phase};"


def _probe(kind):
    """A parity check returning 0/1 in ``$0`` (operands: ``$1`` the barrier, ``$2`` the phase)."""
    return "{\n .reg .pred p;\n " + _PARITY_WAIT.format(kind=kind, bar="$1", phase="$2") + "\n selp.u32 $0, 1, 0, p;\n}"


TEST_WAIT = PtxOp("mbarrier.test_wait", _probe("test_wait"), min_cc=(8, 0), min_ptx=(7, 8))
test_wait = ptx_intrinsic(
    TEST_WAIT, [barrier(), Int("phase")], returns=types.boolean,
    doc="""Non-blocking check: has the phase with parity ``phase & 1`` completed?

    PTX: ``mbarrier.test_wait.parity.shared::cta.b64 p, [bar], phase;`` — sm_80+, PTX ISA 7.8.
    Use it to probe a barrier's state at one instant (``try_wait`` may wait a while first).

    Example::

        done = mbarrier.test_wait(bars, 0)
    """,
)

TRY_WAIT = PtxOp("mbarrier.try_wait", _probe("try_wait"), min_cc=(9, 0), min_ptx=(8, 0))
try_wait = ptx_intrinsic(
    TRY_WAIT, [barrier(), Int("phase")], returns=types.boolean,
    doc="""Wait a bounded, hardware-chosen time for the phase with parity ``phase & 1``.

    Returns ``True`` if the phase completed within that time. PTX:
    ``mbarrier.try_wait.parity.shared::cta.b64 p, [bar], phase;`` — sm_90+, PTX ISA 8.0.
    The wait is *potentially blocking*: on the H200 the thread may run on and the result may
    reflect a completion that happens later within the time limit (measured: a ``try_wait`` issued
    before a ``syncthreads`` whose result was used after the barrier completed returned ``True``).
    Use it in a retry loop; use :func:`test_wait` for an instantaneous probe.

    Example::

        while not mbarrier.try_wait(bars, phase):
            pass
    """,
)

WAIT = PtxOp(
    "mbarrier.wait",
    "{\n .reg .pred p;\n numba_tma_wait_${:uid}:\n "
    + _PARITY_WAIT.format(kind="try_wait", bar="$0", phase="$1")
    + "\n @!p bra numba_tma_wait_${:uid};\n}",
    min_cc=(9, 0), min_ptx=(8, 0),
)
wait = ptx_intrinsic(
    WAIT, [barrier(), Int("phase")],
    doc="""Block until the phase with parity ``phase & 1`` of the barrier completes.

    PTX: a ``mbarrier.try_wait.parity.shared::cta.b64`` loop — sm_90+, PTX ISA 8.0.
    Flip ``phase`` (``phase ^= 1``) each time the barrier is reused.

    Example::

        mbarrier.wait(bars, 0)
    """,
)
