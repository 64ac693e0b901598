"""``async_load``: global memory -> LDS DMA without a buffer resource."""
from llvmlite import ir

from . import targets
from .dma import issue_masked
from .llvm_ir import GLOBAL, I8, I32, LDS, VOID, as_addrspace, call_intrinsic, i32, lane_id


# The LDS address of a masked lane on gfx1250: beyond every LDS, so the lane's write is
# dropped (Triton's lowering uses the same address).
MASKED_LDS_ADDRESS = 0x7FFFFFFF


def _gfx9_global_load_lds(builder, row, src, lds_base, width, aux, mask):
    # One wave-uniform LDS base in M0; lane i lands at lds_base + i * width.
    # A mask is applied by issue_masked's branch.
    return call_intrinsic(builder, "llvm.amdgcn.global.load.lds", VOID,
                          [src, lds_base, i32(width), i32(0), i32(aux)])


def _gfx1250_global_load_async_to_lds(builder, row, src, lds_base, width, aux, mask):
    # The LDS address is per lane (a VGPR): give lane i the same slot as on gfx9, and
    # a masked lane an address out of range.
    offset = builder.mul(lane_id(builder, row.wave_size), i32(width))
    lds_lane = builder.gep(lds_base, [offset], source_etype=I8)
    if mask is not None:
        nowhere = ir.Constant(I32, MASKED_LDS_ADDRESS).inttoptr(lds_lane.type)
        lds_lane = builder.select(mask, lds_lane, nowhere)
    return call_intrinsic(builder, f"llvm.amdgcn.global.load.async.to.lds.b{8 * width}",
                          VOID, [src, lds_lane, i32(0), i32(aux)])


_INTRINSIC_FOR_ARCH = {
    targets.CDNA3: _gfx9_global_load_lds,
    targets.CDNA4: _gfx9_global_load_lds,
    targets.GFX1250: _gfx1250_global_load_async_to_lds,
}


def emit_async_load(builder, arch, src, lds_base, groups, *, width=4, mask=None,
                    other=None, cache_modifier=""):
    """Per-lane global -> LDS copy of *width* bytes from *src* (a per-lane pointer).

    gfx942/gfx950: ``llvm.amdgcn.global.load.lds`` -> ``global_load_lds_dword[x4]``
    (4 bytes; 16 on gfx950).  gfx1250: ``llvm.amdgcn.global.load.async.to.lds.bN``
    -> ``global_load_async_to_lds_bN`` (1, 4, 8 or 16 bytes).  Lane i writes
    ``lds_base + i * width``.  Lanes outside *mask* write nothing to LDS and, with
    *other*, store it into their slot.  On gfx942/gfx950 a mask puts the DMA behind a
    branch (the LDS base is wave-wide, M0); on gfx1250 the DMA stays unconditional,
    with the masked lanes' LDS address at MASKED_LDS_ADDRESS, so its commit group keeps
    its size.  A masked lane's *src* is still issued on gfx1250, as in Triton.
    """
    op = "async_load"
    row = targets.require(op, arch)
    targets.check_lds_dma_bytes(op, arch, width)
    aux = targets.cache_bits(op, arch, cache_modifier)
    src = as_addrspace(builder, op, "src", src, GLOBAL)
    lds_base = as_addrspace(builder, op, "lds_base", lds_base, LDS)
    emit = _INTRINSIC_FOR_ARCH[arch]

    def issue(mask_):
        return emit(builder, row, src, lds_base, width, aux, mask_)

    issue_masked(builder, row, op, groups, issue, mask, other, lds_base, width,
                 masks_lanes=row.name == targets.GFX1250)
