"""Warp and block synchronisation beyond ``cuda.syncthreads()``: named barriers (producer and
consumer warp groups meet without stopping the whole block) and electing one lane of a warp."""

from numba.cuda import types

from ._core import Refusal, Int, PtxOp, Requirement, Sample, exported, literal, reject

SM70 = Requirement((7, 0), (6, 0))


def _check_named(op, barrier_id, nthreads):
    count = literal(nthreads)
    if isinstance(count, int) and (count <= 0 or count % 32):
        raise reject(op, "nthreads", "must be a positive multiple of 32 (whole warps)", count)


_NAMED_DOC = """
    ``barrier_id``: 0-15 (0 is the one ``cuda.syncthreads()`` uses: pick others).  ``nthreads``:
    how many threads take part, a multiple of 32 (both checked when constant); every warp taking
    part must call it with all its threads.
"""

named_barrier_sync = PtxOp(
    "sync.named_barrier_sync", "bar.sync {barrier_id}, {nthreads};",
    (Int("barrier_id", hi=15), Int("nthreads", lo=32, hi=1024)), need=SM70,
    check=lambda barrier_id, nthreads, **_: _check_named("sync.named_barrier_sync", barrier_id, nthreads),
    tlx=("tlx.named_barrier_wait", "cute.arch.barrier", "cuda::ptx::barrier_sync"),
    samples=(Sample("sync.named_barrier_sync(1, 64)", "BAR.SYNC.DEFER_BLOCKING", ptx="bar.sync %r, %r;",
                    isa="9.7.13.1 bar, barrier"),),
    doc="""Wait at named barrier ``barrier_id`` until ``nthreads`` threads have arrived (this thread
    counts).
    """ + _NAMED_DOC + """
    Example::

        sync.named_barrier_sync(1, 256)       # the two consumer warp groups meet
    """,
    refusals=(Refusal('sync.named_barrier_sync(1, 48)',
                      "sync.named_barrier_sync: argument 'nthreads' must be a positive multiple of 32"),),
).intrinsic()

named_barrier_arrive = PtxOp(
    "sync.named_barrier_arrive", "bar.arrive {barrier_id}, {nthreads};",
    (Int("barrier_id", hi=15), Int("nthreads", lo=32, hi=1024)), need=SM70,
    check=lambda barrier_id, nthreads, **_: _check_named("sync.named_barrier_arrive", barrier_id, nthreads),
    tlx=("tlx.named_barrier_arrive", "cute.arch.barrier_arrive", "cuda::ptx::barrier_arrive"),
    samples=(Sample("sync.named_barrier_arrive(2, 96)", "BAR.ARV", ptx="bar.arrive %r, %r;",
                    isa="9.7.13.1 bar, barrier"),),
    doc="""Arrive at named barrier ``barrier_id`` without waiting (a producer signalling consumers
    that wait with :func:`named_barrier_sync` on the same id and count).
    """ + _NAMED_DOC + """
    Example::

        sync.named_barrier_arrive(1, 256)
    """,
    refusals=(Refusal('sync.named_barrier_arrive(16, 64)',
                      "sync.named_barrier_arrive: argument 'barrier_id' must be in [0, 15]"),),
).intrinsic()

elect_one = PtxOp(
    "sync.elect_one",
    "{{\n .reg .b32 m;\n .reg .pred p;\n activemask.b32 m;\n elect.sync _|p, m;\n selp.u32 {out}, 1, 0, p;\n}}",
    returns=types.boolean,
    tlx=("cute.arch.elect_one", "cuda::ptx::elect_sync"),
    samples=(Sample("out[0] = sync.elect_one()", "ELECT",
                    ptx=("activemask.b32 m;", "elect.sync _|p, m;", "selp.u32 %r, 1, 0, p;"),
                    isa="9.7.13.11 activemask; 9.7.13.14 elect.sync; 9.7.6.3 selp"),),
    doc="""``True`` in exactly one active lane of the warp (the lowest, as the hardware elects it),
    ``False`` in the others: the lane that issues a TMA or barrier operation for its warp.  The
    active lanes are those executing it together (``activemask``), so it also works under a
    partial mask.

    Example::

        if sync.elect_one():
            tma.load(desc, tile, coords, bars)
    """,
    refusals=(Refusal('out[0] = sync.elect_one(0xFFFFFFFF)',
                      'numba_tma: sync.elect_one takes (): too many positional arguments'),),
).intrinsic()

__all__ = exported("sync")
