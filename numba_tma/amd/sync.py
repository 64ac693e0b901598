"""Scheduling barriers, the workgroup barrier and the gfx1250 LDS-barrier arrive."""
from llvmlite import ir

from . import targets
from .errors import reject
from .llvm_ir import I64, LDS, VOID, as_addrspace, call_intrinsic, i32, lane_id

#: highest wave priority ``s_setprio`` takes (the hardware keeps 2 bits: 0..3)
SETPRIO_MAX = 3

#: instruction classes a ``sched_barrier`` lets cross it (IntrinsicsAMDGPU.td)
SCHED_CLASSES = {
    "none": 0x0,
    "non_memory": 0x1,
    "valu": 0x2,
    "salu": 0x4,
    "mfma": 0x8,
    "vmem": 0x10,
    "vmem_read": 0x20,
    "vmem_write": 0x40,
    "ds": 0x80,
    "ds_read": 0x100,
    "ds_write": 0x200,
    "transcendental": 0x400,
}
SCHED_MASK_MAX = 0x7FF  # the OR of every class above


def emit_sched_barrier(builder, arch, mask):
    """``llvm.amdgcn.sched.barrier(mask)``: a scheduling fence, no ISA encoding.

    Verbose assembly shows ``; sched_barrier mask(0x...)``.  All archs.
    """
    targets.require("amd_sched_barrier", arch)
    targets.check_int_range("amd_sched_barrier", "mask", mask, 0, SCHED_MASK_MAX)
    return call_intrinsic(builder, "llvm.amdgcn.sched.barrier", VOID, [i32(mask)])


def emit_sched_group_barrier(builder, arch, mask, size, sync_id):
    """``llvm.amdgcn.sched.group.barrier(mask, size, sync_id)``; all archs."""
    op = "sched_group_barrier"
    targets.require(op, arch)
    targets.check_int_range(op, "mask", mask, 0, SCHED_MASK_MAX)
    targets.check_int_range(op, "size", size, 0, 2**31 - 1)
    targets.check_int_range(op, "sync_id", sync_id, 0, 2**31 - 1)
    return call_intrinsic(builder, "llvm.amdgcn.sched.group.barrier", VOID,
                          [i32(mask), i32(size), i32(sync_id)])


def emit_s_setprio(builder, arch, priority):
    """``llvm.amdgcn.s.setprio(i16 priority)`` -> ``s_setprio <priority>``: set this
    wave's issue priority (0 lowest .. 3 highest) until the next ``s_setprio``.  All
    archs.  *priority* is an immediate, checked here (LLVM would take any i16)."""
    targets.require("s_setprio", arch)
    targets.check_int_range("s_setprio", "priority", priority, 0, SETPRIO_MAX)
    return call_intrinsic(builder, "llvm.amdgcn.s.setprio", VOID,
                          [ir.Constant(ir.IntType(16), priority)])


class _Fence(ir.Fence):
    """llvmlite's ``fence``, printed with its metadata (``ir.Fence`` leaves it out)."""

    def descr(self, buf):
        buf.append(f'fence syncscope("{self.targetscope}") {self.ordering}'
                   f'{self._stringify_metadata(leading_comma=True)}\n')


def _lds_fence(builder, ordering):
    """``fence syncscope("workgroup") <ordering>, !mmra !{"amdgpu-synchronize-as", "local"}``:
    a workgroup fence narrowed to LDS, so it waits for no global load or store."""
    module = builder.module
    fence = _Fence(builder.block, ordering, "workgroup")
    fence.set_metadata("mmra", module.add_metadata(
        [ir.MetaDataString(module, "amdgpu-synchronize-as"), ir.MetaDataString(module, "local")]))
    builder._insert(fence)  # as IRBuilder.fence does with an ir.Fence
    return fence


#: ``s_waitcnt`` immediate with lgkmcnt (bits 11:8) = 0 and the other counters at "no
#: wait": Triton's ``~(0x1f << 8)`` for the CDNA local barrier
_LGKMCNT_0 = ~(0x1F << 8)


def _gfx9_lds_barrier(builder, one_wave):
    """``s_waitcnt lgkmcnt(0)``, ``s_barrier``.  No fence is needed to keep LLVM from
    moving LDS accesses across: neither intrinsic carries a memory attribute."""
    wait = call_intrinsic(builder, "llvm.amdgcn.s.waitcnt", VOID, [i32(_LGKMCNT_0)])
    if one_wave:
        return wait
    return call_intrinsic(builder, "llvm.amdgcn.s.barrier", VOID, [])


def _fenced_lds_barrier(builder, one_wave):
    """LDS release fence, ``llvm.amdgcn.s.barrier``, LDS acquire fence: on gfx1250
    ``s_wait_dscnt 0x0`` (when LDS accesses are pending), ``s_barrier_signal -1``,
    ``s_barrier_wait -1``; the acquire fence emits nothing.  *one_wave*: the fences
    only (they keep LLVM from moving LDS accesses across)."""
    _lds_fence(builder, "release")
    barrier = None if one_wave else call_intrinsic(builder, "llvm.amdgcn.s.barrier", VOID, [])
    acquire = _lds_fence(builder, "acquire")
    return acquire if barrier is None else barrier


# arch -> the emitter of its LDS-ordering barrier (see emit_s_barrier)
_LDS_BARRIER = {
    targets.CDNA3: _gfx9_lds_barrier,
    targets.CDNA4: _gfx9_lds_barrier,
    targets.GFX1250: _fenced_lds_barrier,
}


def emit_s_barrier(builder, arch, one_wave=False):
    """Workgroup barrier that orders LDS: this wave's LDS reads and writes complete
    before any wave passes it.

    * gfx942/gfx950: ``llvm.amdgcn.s.waitcnt`` (lgkmcnt only) + ``llvm.amdgcn.s.barrier``
      -> ``s_waitcnt lgkmcnt(0)``, ``s_barrier`` (LLVM may merge the wait into a preceding
      ``s_waitcnt``, e.g. ``s_waitcnt vmcnt(2) lgkmcnt(0)``).  This is Triton's CDNA
      ``local_barrier``.  A workgroup release fence would also wait for every LDS DMA in
      flight (LLVM 22 makes a release wait ``vmcnt`` for "direct loads to LDS",
      llvm-project PR 150887), which turns a pipeline's ``wait_group(2); s_barrier()``
      into ``s_waitcnt vmcnt(0)``.
    * gfx1250: LDS-only workgroup fences (``!mmra amdgpu-synchronize-as local``) around
      ``llvm.amdgcn.s.barrier`` -> ``s_wait_dscnt 0x0``, ``s_barrier_signal -1``,
      ``s_barrier_wait -1`` (Triton's ``ttg.barrier local``).  LLVM leaves the wait out
      when no LDS access can be outstanding.

    Neither waits for global memory or for DMA (vmcnt, asynccnt, tensorcnt): wait for
    DMA with its wait op before the barrier.  With *one_wave* (the workgroup is one
    wave) only the LDS wait is emitted, without the convergent ``llvm.amdgcn.s.barrier``
    that LLVM would drop anyway, so LLVM may unroll the loop around it.  Returns the
    last call or fence emitted.
    """
    targets.require("s_barrier", arch)
    return _LDS_BARRIER[arch](builder, one_wave)


def emit_barrier_arrive(builder, arch, barrier, arrive_count=1):
    """Arrive once per wave on an LDS barrier word (lane 0 of the wave does it).

    ``llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64`` -> ``ds_atomic_barrier_arrive_rtn_b64``;
    gfx1250 only, and like TLX on AMD only ``arrive_count=1``.
    """
    op = "barrier_arrive"
    row = targets.require(op, arch)
    if isinstance(arrive_count, bool) or arrive_count != 1:
        raise reject(op, "arrive_count", "must be 1 on AMD", repr(arrive_count))
    barrier = as_addrspace(builder, op, "barrier", barrier, LDS)
    with builder.if_then(builder.icmp_unsigned("==", lane_id(builder, row.wave_size), i32(0))):
        call_intrinsic(builder, "llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64", I64,
                       [barrier, ir.Constant(I64, arrive_count)])
