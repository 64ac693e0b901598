"""Scheduling and barriers: what LLVM's scheduler may move across a point
(``amd_sched_barrier``, ``sched_group_barrier``), a wave's issue priority (``s_setprio``), the
workgroup barrier that orders LDS (``s_barrier``) and gfx1250's LDS barrier word
(``barrier_arrive``)."""
from numba.core import types

from ...declarations import Refusal
from .. import sync
from .._core import AmdOp, Array, Const, Sample, const, data, no_result
from ..targets import ALL, GFX1250, Requirement


def _sched_barrier(mask):
    value = const(mask, "amd_sched_barrier", "mask")

    def codegen(context, builder, sig, args):
        sync.emit_sched_barrier(builder, context.arch, value)
    return no_result(codegen)


amd_sched_barrier = AmdOp(
    "amd.amd_sched_barrier", _sched_barrier, (Const("mask", lo=0, hi=sync.SCHED_MASK_MAX),),
    need=Requirement(ALL, 15), llvm=("llvm.amdgcn.sched.barrier",), tlx=("tlx.amd_sched_barrier",),
    doc="""``llvm.amdgcn.sched.barrier(mask)``: let only the instruction classes in *mask*
    (see ``SCHED_CLASSES``) be scheduled across this point.  No ISA encoding; verbose
    assembly shows ``; sched_barrier mask(0x...)``.  All archs.

    Example::

        amd.amd_sched_barrier(0)    # nothing crosses
    """,
    samples=(Sample("amd.amd_sched_barrier(0)", "; sched_barrier mask(0x00000000)",
                    "LLVM AMDGPUUsage / IntrinsicsAMDGPU.td (sched_barrier: no encoding, an assembler comment)",
                    comments=True),
             Sample("amd.amd_sched_barrier(0x8)", "; sched_barrier mask(0x00000008)",
                    "LLVM IntrinsicsAMDGPU.td (sched_barrier mask bits: 0x8 = MFMA/WMMA)", comments=True)),
    refusals=(Refusal("amd.amd_sched_barrier(n)", "amd.amd_sched_barrier: argument 'mask' must be a compile-time constant; got int32"),),
).intrinsic()


def _sched_group_barrier(mask, size, sync_id):
    values = [const(v, "sched_group_barrier", n)
              for v, n in ((mask, "mask"), (size, "size"), (sync_id, "sync_id"))]

    def codegen(context, builder, sig, args):
        sync.emit_sched_group_barrier(builder, context.arch, *values)
    return no_result(codegen)


sched_group_barrier = AmdOp(
    "amd.sched_group_barrier", _sched_group_barrier,
    (Const("mask", lo=0, hi=sync.SCHED_MASK_MAX), Const("size", lo=0, hi=2**31 - 1),
     Const("sync_id", lo=0, hi=2**31 - 1)),
    need=Requirement(ALL, 15), llvm=("llvm.amdgcn.sched.group.barrier",),
    doc="""``llvm.amdgcn.sched.group.barrier(mask, size, sync_id)``: ask the scheduler for
    a group of *size* instructions of class *mask*.  Shows as
    ``; sched_group_barrier mask(...) size(...) SyncID(...)``.  All archs.

    Example::

        amd.sched_group_barrier(0x8, 1, 0)    # one MFMA
    """,
    samples=(Sample("amd.sched_group_barrier(0x8, 1, 0)", "; sched_group_barrier mask(0x00000008) size(1) SyncID(0)",
                    "LLVM AMDGPUUsage / IntrinsicsAMDGPU.td (sched_group_barrier: no encoding, an assembler "
                    "comment)", comments=True),
             Sample("amd.sched_group_barrier(0x100, 4, 2)",
                    "; sched_group_barrier mask(0x00000100) size(4) SyncID(2)",
                    "LLVM IntrinsicsAMDGPU.td (mask 0x100: DS read)", comments=True)),
    refusals=(Refusal("amd.sched_group_barrier(0x8, n, 0)", "amd.sched_group_barrier: argument 'size' must be a compile-time constant; got int32"),),
).intrinsic()


def _s_setprio(priority):
    value = const(priority, "s_setprio", "priority")

    def codegen(context, builder, sig, args):
        sync.emit_s_setprio(builder, context.arch, value)
    return no_result(codegen)


s_setprio = AmdOp(
    "amd.s_setprio", _s_setprio, (Const("priority", lo=0, hi=sync.SETPRIO_MAX),),
    need=Requirement(ALL, 15), llvm=("llvm.amdgcn.s.setprio",), isa=("s_setprio",),
    doc="""Set this wave's instruction-issue priority.  *priority*: constant 0 (lowest, the
    default) .. 3 (highest); it holds until the next ``s_setprio``.  Used to let MFMA-issuing
    waves go ahead of memory-issuing ones (ping-pong schedules).  All archs.

    Example::

        amd.s_setprio(1)
        ...                     # the MFMAs to hurry
        amd.s_setprio(0)
    """,
    samples=(Sample("amd.s_setprio(3)", "s_setprio 3", "CDNA3 ISA 4.x SOPP s_setprio"),),
    refusals=(Refusal("amd.s_setprio(4)", "amd.s_setprio: argument 'priority' must be an int in [0, 3]"),),
).intrinsic()


def _s_barrier():
    def codegen(context, builder, sig, args):
        sync.emit_s_barrier(builder, context.arch, one_wave=context.one_wave)
    return no_result(codegen)


s_barrier = AmdOp(
    "amd.s_barrier", _s_barrier, need=Requirement(ALL, 15),
    llvm=("llvm.amdgcn.s.waitcnt", "llvm.amdgcn.s.barrier"),
    isa=("s_waitcnt lgkmcnt(0)", "s_barrier", "s_barrier_signal -1", "s_barrier_wait -1"),
    doc="""Workgroup barrier that orders LDS: this wave's LDS reads and writes complete
    before any wave of the workgroup passes it.

    * gfx942/gfx950: ``s_waitcnt lgkmcnt(0)`` then ``s_barrier`` (LLVM merges the wait into a
      preceding ``s_waitcnt``, e.g. ``s_waitcnt vmcnt(2) lgkmcnt(0)``).
    * gfx1250: ``fence syncscope("workgroup") release`` / ``acquire`` narrowed to LDS
      (``!mmra amdgpu-synchronize-as local``) around ``llvm.amdgcn.s.barrier`` ->
      ``s_wait_dscnt 0x0`` (left out when no LDS access is pending), then
      ``s_barrier_signal -1`` + ``s_barrier_wait -1``.

    So "write LDS, barrier, another wave reads" and "read a slot, barrier, DMA refills
    it" are safe.  It waits neither for global memory nor for LDS DMA (vmcnt,
    asynccnt, tensorcnt): wait for a DMA with its wait op first.  In a kernel compiled
    with ``max_workgroup_size`` at most the wave size only the LDS wait is emitted:
    ``llvm.amdgcn.s.barrier`` is convergent, which keeps LLVM from unrolling the loop
    around it, and LLVM drops it in a one-wave workgroup anyway.

    Example::

        amd.async_load_wait_group(1)
        amd.s_barrier()
    """,
    samples=(Sample("tile[lane] = 1.0\namd.s_barrier()\ny[lane] = tile[lane ^ 1]",
                    {"gfx1250": ("s_wait_dscnt 0x0", "s_barrier_signal -1", "s_barrier_wait -1"),
                     "": ("s_waitcnt lgkmcnt(0)", "s_barrier")},
                    "CDNA3 ISA 4.x s_barrier / s_waitcnt; LLVM AMDGPUUsage (GFX12 split barriers)"),),
    refusals=(Refusal("amd.s_barrier(1)", "s_barrier takes ()"),),
).intrinsic()


def _barrier_arrive(bar, arrive_count):
    count = const(arrive_count, "barrier_arrive", "arrive_count")

    def codegen(context, builder, sig, args):
        sync.emit_barrier_arrive(builder, context.arch, data(context, builder, sig.args[0], args[0]), count)
    return no_result(codegen)


barrier_arrive = AmdOp(
    "amd.barrier_arrive", _barrier_arrive, (Array("bar", "lds", types.int64), Const("arrive_count", 1)),
    need=Requirement((GFX1250,), 22), llvm=("llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64",),
    isa=("ds_atomic_barrier_arrive_rtn_b64",), tlx=("tlx.barrier_arrive",),
    doc="""Arrive on the LDS barrier word ``bar[0]`` (an int64 :func:`lds_array`), once per
    wave (lane 0 of the wave does it).  gfx1250 only; *arrive_count* must be 1 (as TLX on AMD).

    Example::

        amd.barrier_arrive(bar)
    """,
    samples=(Sample("amd.barrier_arrive(bar)", "ds_atomic_barrier_arrive_rtn_b64 %v, %v, %v",
                    "LLVM AMDGPUUsage / IntrinsicsAMDGPU.td (ds_atomic_barrier_arrive_rtn_b64, GFX1250)"),),
    refusals=(Refusal("amd.barrier_arrive(tile)", "amd.barrier_arrive: argument 'bar' must be an int64 LDS array"),),
).intrinsic()
