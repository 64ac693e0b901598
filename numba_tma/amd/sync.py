"""Scheduling barriers, the workgroup barrier and the gfx1250 LDS-barrier arrive."""
from llvmlite import ir

from . import targets
from .errors import AMDArgumentError
from .llvm_ir import I64, LDS, VOID, as_addrspace, call_intrinsic, i32, lane_id

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


def emit_s_barrier(builder, arch):
    """``llvm.amdgcn.s.barrier`` -> ``s_barrier`` (gfx9) or
    ``s_barrier_signal -1; s_barrier_wait -1`` (gfx1250)."""
    targets.require("s_barrier", arch)
    return call_intrinsic(builder, "llvm.amdgcn.s.barrier", VOID, [])


def emit_barrier_arrive(builder, arch, barrier, arrive_count=1):
    """Arrive once per wave on an LDS barrier word (lane 0 of the wave does it).

    ``llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64`` -> ``ds_atomic_barrier_arrive_rtn_b64``;
    gfx1250 only, and like TLX on AMD only ``arrive_count=1``.
    """
    op = "barrier_arrive"
    row = targets.require(op, arch)
    if arrive_count != 1:
        raise AMDArgumentError(f"{op}: arrive_count must be 1 on AMD, got {arrive_count!r}")
    barrier = as_addrspace(builder, op, "barrier", barrier, LDS)
    with builder.if_then(builder.icmp_unsigned("==", lane_id(builder, row.wave_size), i32(0))):
        call_intrinsic(builder, "llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64", I64,
                       [barrier, ir.Constant(I64, arrive_count)])
