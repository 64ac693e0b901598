"""``cp.async`` (sm_80): per-thread asynchronous copies of 4, 8 or 16 bytes from global to shared
memory, completing through cp.async groups or an mbarrier — the pre-TMA way to stream tiles, and
what numba/numba#6673 asks for."""

from ._core import IMMEDIATE, Refusal, Const, GlobalArray, Int, Optional, PtxOp, Qualifier, Requirement, Sample, SharedArray, exported, \
    literal, reject
from .mbarrier import barrier

SM80 = Requirement((8, 0), (7, 0))
_NON_BULK = "9.7.9.25.3"   # PTX ISA 9.1: non-bulk copy (the assembly rows' hand-written PTX)


def _check_load(nbytes, cache, **_):
    if literal(nbytes) not in (4, 8, 16):
        raise reject("cp_async.load", "nbytes", "must be 4, 8 or 16", literal(nbytes))
    if cache == "cg" and literal(nbytes) != 16:
        raise reject("cp_async.load", "nbytes", "must be 16 with cache='cg' (it bypasses L1 in 16-byte units)",
                     literal(nbytes))


load = PtxOp(
    "cp_async.load", "cp.async.{cache}.shared.global [{dst}], [{src}], {nbytes}{src_nbytes};",
    (SharedArray("dst", what="a shared array (the destination)"), GlobalArray("src"),
     Const("nbytes", 4, 16, rule="must be 4, 8 or 16 (bytes)"), Optional(Int("src_nbytes", hi=16), None)),
    qualifiers=(Qualifier("cache", {"ca": "ca", "cg": "cg"}, "ca"),), need=SM80,
    check=_check_load,
    tlx=("tlx.async_load", "cute.nvgpu.cpasync.CopyG2SOp", "cuda::memcpy_async (per-thread)"),
    samples=(Sample("cp_async.load(smem, desc, 16)", "LDGSTS.E",     # .BYPASS with cache="cg"
                    ptx="cp.async.ca.shared.global [%r], [%rd], 16;", isa=f"{_NON_BULK}.1 cp.async"),
             Sample("cp_async.load(smem, desc, 8, src_nbytes=out[1])", "LDGSTS.E.64.ZFILL", only={"cache": "ca"},
                    ptx="cp.async.ca.shared.global [%r], [%rd], 8, %r;", isa=f"{_NON_BULK}.1 cp.async")),
    doc="""Copy ``nbytes`` (a constant: 4, 8 or 16) from global memory ``src`` to shared memory
    ``dst`` (both element 0, aligned to ``nbytes``) asynchronously.  ``src_nbytes`` (at most
    ``nbytes``) reads only that many bytes and fills the rest of ``dst`` with zeros — for masked
    edges.  ``cache="ca"`` caches in L1 and L2, ``"cg"`` only in L2 (16-byte copies only).
    Complete with :func:`commit_group` + :func:`wait_group`, or :func:`mbarrier_arrive`.

    Example::

        cp_async.load(tile[ty:], a[row, col:], 16, src_nbytes=16 if col < n else 0)
        cp_async.commit_group()
        cp_async.wait_all()
        cuda.syncthreads()
    """,
    refusals=(Refusal('cp_async.load(smem, desc, 12)',
                      "cp_async.load: argument 'nbytes' must be 4, 8 or 16"),
              Refusal("cp_async.load(smem, desc, 8, cache='cg')",
                      "cp_async.load: argument 'nbytes' must be 16 with cache='cg'"),),
).intrinsic()


commit_group = PtxOp(
    "cp_async.commit_group", "cp.async.commit_group;", need=SM80,
    tlx=("cute.arch.cp_async_commit_group",),
    samples=(Sample("cp_async.load(smem, desc, 16)\ncp_async.commit_group()\ncp_async.wait_group(0)", "DEPBAR.LE",
                    ptx="cp.async.commit_group;", isa=f"{_NON_BULK}.2 cp.async.commit_group"),),
    doc="""Close the group of this thread's ``cp_async.load`` copies issued since the last commit.

    Example::

        cp_async.commit_group()
    """,
    refusals=(Refusal('cp_async.commit_group(0)',
                      'numba_tma: cp_async.commit_group takes (): too many positional arguments'),),
).intrinsic()

wait_group = PtxOp(
    "cp_async.wait_group", "cp.async.wait_group {n};", (Const("n", 0, 7),), need=SM80,
    tlx=("tlx.async_load_wait_group", "cute.arch.cp_async_wait_group"),
    samples=(Sample("cp_async.load(smem, desc, 16)\ncp_async.commit_group()\ncp_async.wait_group(1)", "DEPBAR.LE",
                    ptx="cp.async.wait_group 1;", isa=f"{_NON_BULK}.3 cp.async.wait_group / cp.async.wait_all"),),
    doc="""Wait until at most ``n`` (a constant, 0-7) of this thread's cp.async groups are pending.
    Other threads' copies need a ``cuda.syncthreads()`` too before they are read.

    Example::

        cp_async.wait_group(1)        # all but the newest group have landed
    """,
    refusals=(Refusal('cp_async.wait_group(8)',
                      "cp_async.wait_group: argument 'n' must be in [0, 7]"),
              Refusal('cp_async.wait_group(out[0])',
                      "cp_async.wait_group: argument 'n' must be a compile-time integer constant", constant_only=IMMEDIATE),),
).intrinsic()

wait_all = PtxOp(
    "cp_async.wait_all", "cp.async.wait_all;", need=SM80,
    tlx=("cuda::pipeline (wait all)",),
    samples=(Sample("cp_async.load(smem, desc, 16)\ncp_async.wait_all()", "DEPBAR.LE",
                    ptx="cp.async.wait_all;", isa=f"{_NON_BULK}.3 cp.async.wait_group / cp.async.wait_all"),),
    doc="""Wait for all of this thread's cp.async copies (committed or not).

    Example::

        cp_async.wait_all()
        cuda.syncthreads()
    """,
    refusals=(Refusal('cp_async.wait_all(0)',
                      'numba_tma: cp_async.wait_all takes (): too many positional arguments'),),
).intrinsic()

mbarrier_arrive = PtxOp(
    "cp_async.mbarrier_arrive", "cp.async.mbarrier.arrive{noinc}.shared::cta.b64 [{bar}];", (barrier(),),
    qualifiers=(Qualifier("noinc", {False: "", True: ".noinc"}, False),), need=Requirement((8, 0), (7, 8)),
    tlx=("cuda::ptx::cp_async_mbarrier_arrive",),
    samples=(Sample("cp_async.load(smem, desc, 16)\ncp_async.mbarrier_arrive(bar)", "ARRIVES.LDGSTSBAR.64",
                    ptx="cp.async.mbarrier.arrive.shared::cta.b64 [%r];",
                    isa="9.7.13.15.15 cp.async.mbarrier.arrive"),),
    doc="""Make the barrier track this thread's cp.async copies issued so far: it receives an
    arrival when they complete.  Without ``noinc`` the arrival is added to the count the phase
    expects (so :func:`mbarrier.init`'s count need not include it); with ``noinc=True`` it counts
    toward the initialised count.

    Example::

        cp_async.load(tile[i:], a[i:], 16)
        cp_async.mbarrier_arrive(bars, noinc=True)
        mbarrier.wait(bars, 0)
    """,
    refusals=(Refusal('cp_async.mbarrier_arrive(bar, noinc=2)',
                      "cp_async.mbarrier_arrive: argument 'noinc' must be a constant, one of False, True"),),
).intrinsic()

__all__ = exported("cp_async")
