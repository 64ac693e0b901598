"""What every LDS-DMA op shares: alias scopes, commit groups, waits, masking.

On LLVM 22 there is no ``asyncmark``: an async group is a count of DMA instructions,
and ``wait_group(N)`` becomes ``s_waitcnt vmcnt(K)`` (gfx942/gfx950) or
``s_wait_asynccnt K`` (gfx1250) where K is the number of DMA instructions that may
still be in flight: those of the N youngest committed groups plus the ones not yet
committed.  The DMA calls carry ``!alias.scope`` and LDS reads carry ``!noalias``
against it, so LLVM does not add its own ``vmcnt(0)`` before every LDS read.
"""
from llvmlite import ir

from . import targets
from .errors import AMDArgumentError
from .llvm_ir import I1, I8, I16, I32, LDS, VOID, call_intrinsic, i32, lane_id

_DOMAIN, _COPIES, _LOCAL_READS = "amdg.AsyncOps", "amdg.AsyncCopies", "amdg.LocalLoads"
MAX_COUNT = 63  # vmcnt and asynccnt are 6-bit counters


def _scope_list(module, name):
    domain = module.add_metadata([ir.MetaDataString(module, _DOMAIN)])
    scope = module.add_metadata([ir.MetaDataString(module, name), domain])
    return module.add_metadata([scope])


def mark_async_copy(instr):
    """Tag a DMA call as writing the async-copy alias scope."""
    instr.set_metadata("alias.scope", _scope_list(instr.module, _COPIES))


def mark_local_read(instr):
    """Tag an LDS load as not aliasing in-flight DMA (the program waited for it)."""
    module = instr.module
    instr.set_metadata("alias.scope", _scope_list(module, _LOCAL_READS))
    instr.set_metadata("noalias", _scope_list(module, _COPIES))


class AsyncGroups:
    """Per-LLVM-function record of DMA instructions and the groups they were committed in.

    Only instructions that are certain to issue are counted: a DMA behind a lane mask
    may be skipped when its whole wave is masked, so it adds nothing to a group and the
    waits covering it become conservative (they wait for more, never for less).
    """

    def __init__(self):
        self.committed = []
        self.open = 0

    def issued(self, certain=True):
        self.open += int(certain)

    def commit(self):
        self.committed.append(self.open)
        self.open = 0

    def in_flight_allowed(self, pendings):
        """Instructions that may stay in flight once at most *pendings* groups are."""
        youngest = sorted(self.committed)[:pendings]  # smallest: safe inside loops too
        return min(MAX_COUNT, self.open + sum(youngest))


def _s_waitcnt_vmcnt(builder, count):
    # vmcnt[3:0] in bits 3:0, vmcnt[5:4] in bits 15:14; expcnt/lgkmcnt left at "no wait".
    imm = ~0xC00F & 0xFFFFFFFF | (count & 0xF) | ((count >> 4) & 0x3) << 14
    imm = imm - (1 << 32) if imm & 0x80000000 else imm
    return call_intrinsic(builder, "llvm.amdgcn.s.waitcnt", VOID, [i32(imm)])


def _s_wait_asynccnt(builder, count):
    return call_intrinsic(builder, "llvm.amdgcn.s.wait.asynccnt", VOID,
                          [ir.Constant(I16, count)])


_WAIT_FOR_DMA = {
    targets.CDNA3: _s_waitcnt_vmcnt,
    targets.CDNA4: _s_waitcnt_vmcnt,
    targets.GFX1250: _s_wait_asynccnt,
}


def emit_async_load_commit_group(builder, arch, groups):
    """Close the open group of LDS-DMA instructions (emits no instruction on LLVM 22)."""
    targets.require("async_load_commit_group", arch)
    groups.commit()


def emit_async_load_wait_group(builder, arch, groups, pendings):
    """Wait until at most *pendings* committed groups are in flight.

    gfx942/gfx950: ``llvm.amdgcn.s.waitcnt`` -> ``s_waitcnt vmcnt(K)``;
    gfx1250: ``llvm.amdgcn.s.wait.asynccnt`` -> ``s_wait_asynccnt K``.
    Returns K, the instruction count waited for.
    """
    targets.require("async_load_wait_group", arch)
    targets.check_int_range("async_load_wait_group", "pendings", pendings, 0, MAX_COUNT)
    count = groups.in_flight_allowed(pendings)
    _WAIT_FOR_DMA[arch](builder, count)
    return count


def _bits(ty):
    if isinstance(ty, ir.IntType):
        return ty.width
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}.get(type(ty))


def _slot_value(builder, op, other, width):
    """*other* as the value one lane stores into its ``width``-byte LDS slot."""
    bits = _bits(other.type)
    if bits == 8 * width:
        return other
    if bits == 32 and width % 4 == 0:
        word = other if other.type == I32 else builder.bitcast(other, I32)
        vec = ir.Constant(ir.VectorType(I32, width // 4), None)
        for k in range(width // 4):
            vec = builder.insert_element(vec, word, i32(k))
        return vec
    raise AMDArgumentError(
        f"{op}: other must have {8 * width} bits, or 32 bits to fill each dword of a "
        f"{width}-byte slot; got {other.type}"
    )


def issue_masked(builder, row, op, groups, issue, mask, other, lds_base, width):
    """Run ``issue()`` (which emits one DMA instruction) on the lanes where *mask* holds.

    Lanes outside *mask* write nothing; with *other* they store it into their slot
    ``lds_base + lane * width`` with a plain LDS store instead.
    """
    if mask is None:
        mark_async_copy(issue())
        groups.issued()
        return
    if mask.type != I1:
        raise AMDArgumentError(f"{op}: mask must be an i1 value, got {mask.type}")
    value = None if other is None else _slot_value(builder, op, other, width)
    with builder.if_else(mask) as (active, masked):
        with active:
            mark_async_copy(issue())
        with masked:
            if value is not None:
                offset = builder.mul(lane_id(builder, row.wave_size), i32(width))
                slot = builder.gep(lds_base, [offset], source_etype=I8)
                slot = builder.bitcast(slot, value.type.as_pointer(LDS))
                builder.store(value, slot, align=min(width, 16))
    groups.issued(certain=False)
