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

from ._core import Int, PtxOp, Requirement, Sample, SharedArray, exported

SM80 = Requirement((8, 0), (7, 8))


def barrier(name="bar"):
    """The operand every barrier argument uses (element 0 of a uint64 shared array)."""
    return SharedArray(name, dtypes=(types.uint64, types.int64), what="a uint64 shared array (the mbarrier)")


init = PtxOp(
    "mbarrier.init", "mbarrier.init.shared::cta.b64 [{bar}], {count};",
    (barrier(), Int("count", lo=1, hi=(1 << 20) - 1)), need=SM80,
    tlx=("tlx.alloc_barriers", "cute.arch.mbarrier_init", "cuda::ptx::mbarrier_init"),
    samples=(Sample("mbarrier.init(bar, 1)", {"sm_80": "STS.64", "": "SYNCS.EXCH.64"}),),
    doc="""Initialise an mbarrier for ``count`` arrivals per phase (phase 0 starts).

    Call from one thread, then ``fence.mbarrier_init()`` and a ``cuda.syncthreads()`` before other
    threads (or the TMA unit) use the barrier.

    Example::

        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
    """,
).intrinsic()

arrive = PtxOp(
    "mbarrier.arrive", "mbarrier.arrive.shared::cta.b64 _, [{bar}];", (barrier(),), need=SM80,
    tlx=("tlx.barrier_arrive", "cute.arch.mbarrier_arrive", "cuda::ptx::mbarrier_arrive"),
    samples=(Sample("mbarrier.arrive(bar)", {"sm_80": "ATOMS.ARRIVE.64", "": "SYNCS.ARRIVE.TRANS64.A1T0"}),),
    doc="""Arrive once on the barrier (counts toward ``count`` of :func:`init`).

    Example::

        mbarrier.arrive(bars)
    """,
).intrinsic()

arrive_expect_tx = PtxOp(
    "mbarrier.arrive_expect_tx", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{bar}], {nbytes};",
    (barrier(), Int("nbytes", hi=(1 << 20) - 1)),
    tlx=("tlx.barrier_expect_bytes", "cute.arch.mbarrier_arrive_and_expect_tx", "cuda::ptx::mbarrier_arrive_expect_tx"),
    samples=(Sample("mbarrier.arrive_expect_tx(bar, 4096)", "SYNCS.ARRIVE.TRANS64"),),
    doc="""Arrive once and tell the barrier to also wait for ``nbytes`` of async copies.

    The phase completes when all arrivals happened *and* TMA/bulk copies signalling this barrier
    delivered ``nbytes`` bytes (for a full TMA tile: the box's byte count, ``desc.box_bytes``).

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (x, y), bars)
    """,
).intrinsic()


def _probe(kind):
    """A parity check returning 0/1."""
    return ("{{\n .reg .pred p;\n mbarrier." + kind + ".parity.shared::cta.b64 p, [{bar}], {phase};\n"
            " selp.u32 {out}, 1, 0, p;\n}}")


test_wait = PtxOp(
    "mbarrier.test_wait", _probe("test_wait"), (barrier(), Int("phase")), need=SM80, returns=types.boolean,
    tlx=("cuda::ptx::mbarrier_test_wait_parity",),
    samples=(Sample("out[0] = mbarrier.test_wait(bar, 1)", {"sm_80": "LDS", "": "SYNCS.PHASECHK.TRANS64"}),),
    doc="""Non-blocking check: has the phase with parity ``phase & 1`` completed?

    Use it to probe a barrier's state at one instant (``try_wait`` may wait a while first).

    Example::

        done = mbarrier.test_wait(bars, 0)
    """,
).intrinsic()

try_wait = PtxOp(
    "mbarrier.try_wait", _probe("try_wait"), (barrier(), Int("phase")), returns=types.boolean,
    tlx=("cute.arch.mbarrier_try_wait", "cuda::ptx::mbarrier_try_wait_parity"),
    samples=(Sample("out[0] = mbarrier.try_wait(bar, 0)", "SYNCS.PHASECHK.TRANS64.TRYWAIT"),),
    doc="""Wait a bounded, hardware-chosen time for the phase with parity ``phase & 1``.

    Returns ``True`` if the phase completed within that time.  The wait is *potentially
    blocking*: on the H200 the thread may run on and the result may reflect a completion that
    happens later within the time limit (measured: a ``try_wait`` issued before a ``syncthreads``
    whose result was used after the barrier completed returned ``True``).  Use it in a retry loop;
    use :func:`test_wait` for an instantaneous probe.

    Example::

        while not mbarrier.try_wait(bars, phase):
            pass
    """,
).intrinsic()

wait = PtxOp(
    "mbarrier.wait",
    "{{\n .reg .pred p;\n numba_tma_wait_{uid}:\n mbarrier.try_wait.parity.shared::cta.b64 p, [{bar}], {phase};\n"
    " @!p bra numba_tma_wait_{uid};\n}}",
    (barrier(), Int("phase")),
    tlx=("tlx.barrier_wait", "cute.arch.mbarrier_wait"),
    samples=(Sample("mbarrier.wait(bar, out[0])", "SYNCS.PHASECHK.TRANS64.TRYWAIT"),),
    doc="""Block until the phase with parity ``phase & 1`` of the barrier completes (a ``try_wait``
    loop).  Flip ``phase`` (``phase ^= 1``) each time the barrier is reused.

    Example::

        mbarrier.wait(bars, 0)
    """,
).intrinsic()

__all__ = exported("mbarrier")
