"""Buffer resources and ``buffer_load_to_local`` (gfx942, gfx950)."""
import math

from llvmlite import ir

from . import targets
from .dma import issue_masked
from .errors import reject
from .llvm_ir import GLOBAL, I16, I32, I64, LDS, RSRC, VOID, as_addrspace, call_intrinsic, i32, ptr

#: num_records Triton uses, so that voffset 0x80000000 is always out of range
NUM_RECORDS = 0x7FFFFFFE
#: voffset given to masked lanes: out of range, so the hardware writes zeros
MASKED_VOFFSET = -0x80000000
#: largest num_records for which MASKED_VOFFSET stays out of range
MAX_MASKED_NUM_RECORDS = 0x80000000


def emit_make_buffer_rsrc(builder, arch, base, num_records=NUM_RECORDS, stride=0, flags=None):
    """``llvm.amdgcn.make.buffer.rsrc.p8.p1`` -> a 128-bit V# in SGPRs (all archs).

    *flags* defaults to the arch's dword-3 value (0x27000 on gfx942/gfx950, 0x31027000
    on gfx1250, as Triton; LLVM 22 keeps only its bits 3:0 on gfx1250).  *num_records*
    (bytes) and *stride* may be ints or IR values; an int *num_records* must fit the
    arch's V# (32 bits on gfx942/gfx950, 45 bits on gfx1250), and at most 0x80000000
    if the resource feeds a masked ``buffer_load_to_local``, which checks it.
    """
    row = targets.require("make_buffer_rsrc", arch)
    if flags is None:
        flags = row.rsrc_flags
    targets.check_int_range("make_buffer_rsrc", "flags", flags, 0, 0xFFFFFFFF)
    if isinstance(stride, int):
        stride = ir.Constant(I16, targets.check_int_range(
            "make_buffer_rsrc", "stride", stride, 0, 0x3FFF))
    known = None
    if isinstance(num_records, int):
        known = targets.check_int_range(
            "make_buffer_rsrc", "num_records", num_records, 0, row.max_num_records, f" on {arch}")
        num_records = ir.Constant(I64, known)
    elif num_records.type != I64:
        raise reject("make_buffer_rsrc", "num_records", "must be i64", num_records.type)
    base = as_addrspace(builder, "make_buffer_rsrc", "base", base, GLOBAL)
    flags = i32(flags - (1 << 32) if flags & 0x80000000 else flags)
    rsrc = call_intrinsic(builder, "llvm.amdgcn.make.buffer.rsrc.p8.p1", ptr(RSRC),
                          [base, stride, num_records, flags])
    rsrc.amd_num_records = known  # None: a runtime value
    return rsrc


def _check_masking_range(op, rsrc):
    """Masked lanes rely on MASKED_VOFFSET being out of range of *rsrc*."""
    if not hasattr(rsrc, "amd_num_records"):
        return  # a V# made elsewhere: the caller vouches for its num_records
    known = rsrc.amd_num_records
    if known is None or known > MAX_MASKED_NUM_RECORDS:
        got = "a runtime value" if known is None else hex(known)
        raise reject(op, "mask", f"needs a buffer whose num_records is a compile-time int <= "
                     f"{MAX_MASKED_NUM_RECORDS:#x} (masked lanes use voffset 0x80000000, which must be out "
                     f"of range)", f"num_records = {got}")


def emit_buffer_load_to_local(builder, arch, rsrc, lds_base, voffset, groups, *,
                              width=4, mask=None, other=None, cache_modifier=""):
    """``llvm.amdgcn.raw.ptr.buffer.load.lds`` -> ``buffer_load_dword[x4] ... offen lds``.

    Each lane reads *width* bytes at byte offset *voffset* (i32, per lane) of the
    buffer *rsrc* and the wave writes them to LDS at ``lds_base + lane * width``
    (*lds_base* must be wave-uniform: it goes to M0).  Widths: 4 bytes on gfx942,
    4 or 16 on gfx950.  Lanes outside *mask* get an out-of-range voffset and the
    hardware writes zeros, and the DMA issues unconditionally (its group keeps a static
    size).  With a non-zero *other* the DMA goes behind an exec-mask branch, the masked
    lanes store *other* instead, and the group's size becomes uncertain (every wait of
    the compile becomes ``vmcnt(0)``).  *other* is zero when it is a constant +0 (a
    literal ``0``/``0.0`` from Python arrives as one).  gfx942/gfx950 only.
    """
    op = "buffer_load_to_local"
    row = targets.require(op, arch)
    targets.check_lds_dma_bytes(op, arch, width)
    aux = targets.cache_bits(op, arch, cache_modifier)
    if voffset.type != I32:
        raise reject(op, "voffset", "must be i32", voffset.type)
    lds_base = as_addrspace(builder, op, "lds_base", lds_base, LDS)
    if mask is not None:
        _check_masking_range(op, rsrc)
    zero_filled = mask is not None and (other is None or is_zero(other))
    if zero_filled:
        voffset = builder.select(mask, voffset, i32(MASKED_VOFFSET))
        mask = other = None

    def issue(_mask):  # a mask left here goes behind a branch (issue_masked)
        return call_intrinsic(builder, "llvm.amdgcn.raw.ptr.buffer.load.lds", VOID,
                              [rsrc, lds_base, i32(width), voffset, i32(0), i32(0),
                               i32(aux)])

    issue_masked(builder, row, op, groups, issue, mask, other, lds_base, width)


def is_zero(value):
    """A constant whose bits are all zero (so -0.0 is not zero)."""
    if not isinstance(value, ir.Constant) or value.constant != 0:
        return False
    return not isinstance(value.constant, float) or math.copysign(1.0, value.constant) > 0
