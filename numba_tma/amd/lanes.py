"""The cross-lane emitters behind :mod:`numba_tma.amd.ops.lanes` (``emit_*``: each takes an
llvmlite ``IRBuilder`` and checks the arch first), the DPP controls and ``ds_swizzle`` patterns in
the ISA's syntax, and the reduction plans ``row_reduce`` / ``wave_reduce`` lower to.

The encodings and the per-arch legality come from LLVM's AMDGPU documentation
(AMDGPUModifierSyntax: ``dpp_ctrl`` for GFX9, ``dpp32_ctrl`` for GFX90A+ (gfx942,
gfx950), ``dpp16_ctrl`` and ``dpp8`` for GFX10+ (gfx1250), the ``ds_swizzle`` pattern)
and were compiled with llvmlite's LLVM 22 for each arch; an encoding LLVM refuses for
an arch ("wavefront shifts are not supported on GFX10+", "row_share and row_xmask are
not supported before GFX10") is refused here first, naming the argument.
"""
import re

from llvmlite import ir

from . import targets
from .errors import reject
from .llvm_ir import I1, I32, call_intrinsic, i32
from .llvm_ir import lane_id as _lane_index_ir

# -- DPP controls ----------------------------------------------------------------------

QUAD_PERM_LAST = 0xFF
ROW_SHL, ROW_SHR, ROW_ROR = 0x100, 0x110, 0x120
WAVE_SHL1, WAVE_ROL1, WAVE_SHR1, WAVE_ROR1 = 0x130, 0x134, 0x138, 0x13C
ROW_MIRROR, ROW_HALF_MIRROR = 0x140, 0x141
ROW_BCAST15, ROW_BCAST31 = 0x142, 0x143
ROW_SHARE = 0x150  # row_newbcast on gfx90a+ (1..15), row_share on gfx10+ (0..15)
ROW_XMASK = 0x160

_GFX9, _GFX10_PLUS = (targets.CDNA3, targets.CDNA4), (targets.GFX1250,)
_ALL = tuple(targets.ARCHS)

#: ISA name -> (encoding of n = 0, lowest n, highest n, archs); names without ":n" have
#: a fixed encoding (lowest = highest = None)
DPP_CONTROLS = {
    "row_shl": (ROW_SHL, 1, 15, _ALL),
    "row_shr": (ROW_SHR, 1, 15, _ALL),
    "row_ror": (ROW_ROR, 1, 15, _ALL),
    "wave_shl:1": (WAVE_SHL1, None, None, _GFX9),
    "wave_rol:1": (WAVE_ROL1, None, None, _GFX9),
    "wave_shr:1": (WAVE_SHR1, None, None, _GFX9),
    "wave_ror:1": (WAVE_ROR1, None, None, _GFX9),
    "row_mirror": (ROW_MIRROR, None, None, _ALL),
    "row_half_mirror": (ROW_HALF_MIRROR, None, None, _ALL),
    "row_bcast:15": (ROW_BCAST15, None, None, _GFX9),
    "row_bcast:31": (ROW_BCAST31, None, None, _GFX9),
    "row_newbcast": (ROW_SHARE, 1, 15, _GFX9),
    "row_share": (ROW_SHARE, 0, 15, _GFX10_PLUS),
    "row_xmask": (ROW_XMASK, 0, 15, _GFX10_PLUS),
}

_QUAD_PERM = re.compile(r"^quad_perm:\[\s*([0-3])\s*,\s*([0-3])\s*,\s*([0-3])\s*,\s*([0-3])\s*\]$")
_RANGED = re.compile(r"^(\w+):(\d+)$")


def quad_perm(l0, l1, l2, l3):
    """The DPP control ``quad_perm:[l0,l1,l2,l3]``: lane k of each group of 4 reads lane
    ``lk`` of the group (each 0..3)."""
    lanes = (l0, l1, l2, l3)
    for k, lane in enumerate(lanes):
        targets.check_int_range("quad_perm", f"l{k}", lane, 0, 3)
    return sum(lane << (2 * k) for k, lane in enumerate(lanes))


def dpp_syntax(op, ctrl):
    """*ctrl* (an ISA string such as ``"row_shr:4"``, or an encoding) -> (encoding,
    archs that have it, its ISA name)."""
    rule = ("must be a DPP control in the ISA's syntax, e.g. 'row_shr:1', "
            "'quad_perm:[1,0,3,2]', 'row_mirror', 'row_bcast:15', 'row_xmask:8' "
            "(docs/amd.md, Cross-lane ops), or its 9-bit encoding")
    if isinstance(ctrl, str):
        text = ctrl.strip()
        m = _QUAD_PERM.match(text)
        if m:
            return quad_perm(*(int(g) for g in m.groups())), _ALL, text
        if text in DPP_CONTROLS and DPP_CONTROLS[text][1] is None:
            return DPP_CONTROLS[text][0], DPP_CONTROLS[text][3], text
        m = _RANGED.match(text)
        if m and m[1] in DPP_CONTROLS and DPP_CONTROLS[m[1]][1] is not None:
            base, lo, hi, archs = DPP_CONTROLS[m[1]]
            n = int(m[2])
            if not lo <= n <= hi:
                raise reject(op, "ctrl", f"must be a DPP control: {m[1]} takes {lo}..{hi}", repr(ctrl))
            return base + n, archs, text
        raise reject(op, "ctrl", rule, repr(ctrl))
    if isinstance(ctrl, bool) or not isinstance(ctrl, int):
        raise reject(op, "ctrl", rule, repr(ctrl))
    return _dpp_encoding(op, ctrl, rule)


def _dpp_encoding(op, code, rule):
    """An integer DPP control -> (code, archs, name); refused when no arch has it."""
    if 0 <= code <= QUAD_PERM_LAST:
        lanes = [(code >> (2 * k)) & 3 for k in range(4)]
        return code, _ALL, f"quad_perm:[{','.join(map(str, lanes))}]"
    for name, (base, lo, hi, archs) in DPP_CONTROLS.items():
        if lo is None and code == base:
            return code, archs, name
    for name, (base, lo, hi, archs) in DPP_CONTROLS.items():
        if lo is not None and base + lo <= code <= base + hi and name != "row_newbcast":
            if name == "row_share" and code != ROW_SHARE:  # 0x151..0x15F: both spellings
                return code, _ALL, f"row_share:{code - base} (row_newbcast:{code - base})"
            return code, archs, f"{name}:{code - base}"
    raise reject(op, "ctrl", rule, f"{code!r}, which is no DPP control")


def dpp_ctrl(op, ctrl, arch):
    """The encoding of DPP control *ctrl* on *arch*; raise naming the rule if *arch*
    lacks it (wave shifts and row broadcasts are gfx942/gfx950 only; row_share and
    row_xmask gfx1250 only)."""
    code, archs, name = dpp_syntax(op, ctrl)
    if arch not in archs:
        if name.startswith("row_newbcast"):
            hint = f" (on gfx1250 the same broadcast is row_share:{code - ROW_SHARE})"
        elif name.startswith("row_share") and code != ROW_SHARE:
            hint = f" (on gfx942/gfx950 the same broadcast is row_newbcast:{code - ROW_SHARE})"
        elif arch == targets.GFX1250:
            hint = " (the GFX10+ DPP16 controls have no wave shifts or row broadcasts)"
        else:
            hint = " (row_share and row_xmask are GFX10+ DPP16 controls)"
        raise reject(op, "ctrl", f"must be a DPP control that the requested arch, {arch}, has: {name} is "
                     f"available on {', '.join(archs)} only{hint}", name)
    return code


def _check_masks(op, row_mask, bank_mask):
    targets.check_int_range(op, "row_mask", row_mask, 0, 0xF)
    targets.check_int_range(op, "bank_mask", bank_mask, 0, 0xF)


# -- ds_swizzle patterns ---------------------------------------------------------------

SWIZZLE_QUAD_PERM = 0x8000


def swizzle_quad_perm(l0, l1, l2, l3):
    """``ds_swizzle`` pattern ``swizzle(QUAD_PERM,l0,l1,l2,l3)``: lane k of each group of
    4 reads lane ``lk`` of the group."""
    return SWIZZLE_QUAD_PERM | quad_perm(l0, l1, l2, l3)


def swizzle_bitmask(and_mask, or_mask, xor_mask):
    """``ds_swizzle`` bitmask pattern: within each group of 32 lanes, lane i reads lane
    ``((i & and_mask) | or_mask) ^ xor_mask`` (masks 0..31)."""
    for name, value in (("and_mask", and_mask), ("or_mask", or_mask), ("xor_mask", xor_mask)):
        targets.check_int_range("swizzle_bitmask", name, value, 0, 0x1F)
    return and_mask | or_mask << 5 | xor_mask << 10


_SWIZZLE = re.compile(r"^swizzle\(\s*(\w+)\s*((?:,\s*[^,()]+\s*)*)\)$")


def _swizzle_from_text(op, text):
    """LLVM's symbolic ``swizzle(MODE, ...)`` syntax -> the 16-bit pattern."""
    m = _SWIZZLE.match(text.strip())
    args = [a.strip() for a in m[2].split(",")[1:]] if m else []
    mode = m[1] if m else None

    def ints(count):
        if len(args) != count or not all(re.fullmatch(r"\d+", a) for a in args):
            raise reject(op, "pattern", f"must be a swizzle({mode}, ...) of {count} integer(s)", repr(text))
        return [int(a) for a in args]

    if mode == "QUAD_PERM":
        return swizzle_quad_perm(*ints(4))
    if mode == "BITMASK_PERM":
        if len(args) != 1 or not re.fullmatch(r'"[01pi]{5}"', args[0]):
            raise reject(op, "pattern", "must be a BITMASK_PERM of a quoted 5-character mask of 0, 1, p, i "
                         "(bit 4 first)", repr(text))
        and_mask, or_mask, xor_mask = 0x1F, 0, 0
        for k, c in enumerate(args[0][1:-1]):
            bit = 1 << (4 - k)
            if c in "01":
                and_mask &= ~bit
            if c == "1":
                or_mask |= bit
            if c == "i":
                xor_mask |= bit
        return swizzle_bitmask(and_mask, or_mask, xor_mask)
    if mode in ("SWAP", "REVERSE"):
        (n,) = ints(1)
        sizes = (1, 2, 4, 8, 16) if mode == "SWAP" else (2, 4, 8, 16, 32)
        if n not in sizes:
            raise reject(op, "pattern", f"must be a {mode} of one of {sizes}", repr(text))
        return swizzle_bitmask(0x1F, 0, n if mode == "SWAP" else n - 1)
    if mode == "BROADCAST":
        group, lane = ints(2)
        if group not in (2, 4, 8, 16, 32) or not 0 <= lane < group:
            raise reject(op, "pattern", "must be a BROADCAST of a group size of 2, 4, 8, 16 or 32 and a "
                         "lane below it", repr(text))
        return swizzle_bitmask(0x20 - group, lane, 0)
    raise reject(op, "pattern", "must be a 16-bit ds_swizzle offset or LLVM's swizzle(QUAD_PERM|"
                 "BITMASK_PERM|SWAP|REVERSE|BROADCAST, ...) syntax", repr(text))


def swizzle_pattern(op, pattern):
    """*pattern* (an int or LLVM's ``swizzle(...)`` text) -> the 16-bit offset, which
    must be quad-perm mode (``0x80xx``) or bitmask mode (below 0x8000)."""
    if isinstance(pattern, str):
        return _swizzle_from_text(op, pattern)
    targets.check_int_range(op, "pattern", pattern, 0, 0xFFFF)
    if pattern >= 0x8000 and pattern & 0xFF00 != SWIZZLE_QUAD_PERM:
        raise reject(op, "pattern", "must be quad-perm mode (0x8000 | 4 x 2-bit lane selects) or bitmask "
                     "mode (below 0x8000: and | or << 5 | xor << 10); the FFT and rotate modes (0xE000.., "
                     "0xC000..) are not supported", f"{pattern:#06x}")
    return pattern


# -- value types -----------------------------------------------------------------------

def _as_i32(builder, value):
    """A 32-bit float or int IR value as i32 (the LDS crossbar and permlanes move i32)."""
    return builder.bitcast(value, I32) if isinstance(value.type, ir.FloatType) else value


def _from_i32(builder, value, ty):
    return builder.bitcast(value, ty) if isinstance(ty, ir.FloatType) else value


def _suffix(ty):
    return {ir.FloatType: "f32", ir.DoubleType: "f64"}.get(type(ty)) or f"i{ty.width}"


# -- emitters --------------------------------------------------------------------------

#: the largest workgroup LLVM's AMDGPU back end accepts (``amdgpu-flat-work-group-size``)
MAX_WORKGROUP_SIZE = 1024


def emit_wave_id(builder, arch, max_workgroup_size=None):
    """This wave's index in a 1-D workgroup, ``workitem.id.x / wave_size`` through
    ``llvm.amdgcn.readfirstlane`` (one ``v_readfirstlane_b32``): an SGPR, so what is
    computed from it is wave-uniform for LLVM.  An ``llvm.assume`` gives it its range,
    below ``ceil(max_workgroup_size / wave_size)`` (1024 lanes when None), which the
    readfirstlane would hide."""
    row = targets.require("wave_id", arch)
    size = MAX_WORKGROUP_SIZE if max_workgroup_size is None else max_workgroup_size
    targets.check_int_range("wave_id", "max_workgroup_size", size, 1, MAX_WORKGROUP_SIZE)
    tid = call_intrinsic(builder, "llvm.amdgcn.workitem.id.x", I32, [])
    wave = call_intrinsic(builder, "llvm.amdgcn.readfirstlane.i32", I32,
                          [builder.udiv(tid, i32(row.wave_size))])
    waves = -(-size // row.wave_size)
    call_intrinsic(builder, "llvm.assume", ir.VoidType(),
                   [builder.icmp_unsigned("<", wave, i32(waves))])
    return wave


def emit_lane_id(builder, arch):
    """This lane's index in its wave: ``v_mbcnt_lo_u32_b32`` (and ``_hi`` on wave64)."""
    row = targets.require("lane_id", arch)
    return _lane_index_ir(builder, row.wave_size)


def emit_readfirstlane(builder, arch, value):
    """``llvm.amdgcn.readfirstlane`` -> ``v_readfirstlane_b32`` (two for 64 bits): the
    value of the lowest active lane, in an SGPR.  All archs."""
    targets.require("readfirstlane", arch)
    return call_intrinsic(builder, f"llvm.amdgcn.readfirstlane.{_suffix(value.type)}",
                          value.type, [value])


def emit_readlane(builder, arch, value, lane):
    """``llvm.amdgcn.readlane`` -> ``v_readlane_b32``: the value of *lane* (an int, or
    an i32 that must be wave-uniform), in an SGPR.  All archs."""
    row = targets.require("readlane", arch)
    if isinstance(lane, int):
        lane = i32(targets.check_int_range("readlane", "lane", lane, 0, row.wave_size - 1, f" on {arch}"))
    return call_intrinsic(builder, f"llvm.amdgcn.readlane.{_suffix(value.type)}",
                          value.type, [value, lane])


def emit_ds_bpermute(builder, arch, value, src_lane):
    """``llvm.amdgcn.ds.bpermute`` -> ``ds_bpermute_b32``: this lane gets *value* of lane
    *src_lane* (i32, modulo the wave size).  The ISA takes the byte address
    ``4 * src_lane``; this emits the shift.  All archs."""
    targets.require("ds_bpermute", arch)
    address = builder.shl(src_lane, i32(2))
    moved = call_intrinsic(builder, "llvm.amdgcn.ds.bpermute", I32,
                           [address, _as_i32(builder, value)])
    return _from_i32(builder, moved, value.type)


def emit_ds_permute(builder, arch, value, dst_lane):
    """``llvm.amdgcn.ds.permute`` -> ``ds_permute_b32``: this lane's *value* goes to lane
    *dst_lane* (modulo the wave size); the highest writer wins; an unwritten lane gets
    0.  All archs."""
    targets.require("ds_permute", arch)
    address = builder.shl(dst_lane, i32(2))
    moved = call_intrinsic(builder, "llvm.amdgcn.ds.permute", I32,
                           [address, _as_i32(builder, value)])
    return _from_i32(builder, moved, value.type)


def emit_ds_swizzle(builder, arch, value, pattern):
    """``llvm.amdgcn.ds.swizzle`` -> ``ds_swizzle_b32 ... offset:swizzle(...)``; all archs."""
    targets.require("ds_swizzle", arch)
    pattern = swizzle_pattern("ds_swizzle", pattern)
    moved = call_intrinsic(builder, "llvm.amdgcn.ds.swizzle", I32,
                           [_as_i32(builder, value), i32(pattern)])
    return _from_i32(builder, moved, value.type)


def emit_dpp(builder, arch, value, ctrl, row_mask=0xF, bank_mask=0xF, bound_ctrl=False,
             old=None):
    """``llvm.amdgcn.update.dpp(old, value, ctrl, row_mask, bank_mask, bound_ctrl)`` ->
    ``v_mov_b32_dpp`` (LLVM folds it into the VALU op that uses it where it can, e.g.
    ``v_add_f32_dpp``).  *old* (default: *value*) is what a lane keeps when it is not
    written.  *ctrl*: an ISA string or encoding legal on *arch* (:func:`dpp_ctrl`)."""
    targets.require("dpp", arch)
    code = dpp_ctrl("dpp", ctrl, arch)
    _check_masks("dpp", row_mask, bank_mask)
    old = value if old is None else old
    return call_intrinsic(builder, f"llvm.amdgcn.update.dpp.{_suffix(value.type)}",
                          value.type, [old, value, i32(code), i32(row_mask), i32(bank_mask),
                                       ir.Constant(I1, int(bool(bound_ctrl)))])


def dpp8_selects(op, selects):
    """The 24-bit ``dpp8`` immediate of 8 lane selects (each 0..7)."""
    if not (isinstance(selects, tuple) and len(selects) == 8):
        raise reject(op, "selects", "must be a tuple of 8 lane numbers 0..7", repr(selects))
    for k, lane in enumerate(selects):
        targets.check_int_range(op, f"selects[{k}]", lane, 0, 7)
    return sum(lane << (3 * k) for k, lane in enumerate(selects))


def emit_dpp8(builder, arch, value, selects):
    """``llvm.amdgcn.mov.dpp8`` -> ``v_mov_b32_dpp ... dpp8:[...]``: lane i reads lane
    ``(i & ~7) | selects[i & 7]``.  gfx1250 only (a GFX10+ encoding)."""
    targets.require("dpp8", arch)
    code = dpp8_selects("dpp8", selects)
    moved = call_intrinsic(builder, "llvm.amdgcn.mov.dpp8.i32", I32,
                           [_as_i32(builder, value), i32(code)])
    return _from_i32(builder, moved, value.type)


def _emit_permlane(op, builder, arch, value, sel_lo, sel_hi, old, fi, bound_ctrl):
    targets.require(op, arch)
    sels = []
    for name, sel in (("sel_lo", sel_lo), ("sel_hi", sel_hi)):
        if isinstance(sel, int):
            sel = targets.check_int_range(op, name, sel, 0, 0xFFFFFFFF)
            sel = i32(sel - (1 << 32) if sel & 0x80000000 else sel)
        sels.append(sel)
    src = _as_i32(builder, value)
    old = src if old is None else _as_i32(builder, old)
    moved = call_intrinsic(builder, f"llvm.amdgcn.{op}.i32", I32,
                           [old, src, *sels, ir.Constant(I1, int(bool(fi))),
                            ir.Constant(I1, int(bool(bound_ctrl)))])
    return _from_i32(builder, moved, value.type)


def emit_permlane16(builder, arch, value, sel_lo, sel_hi, old=None, fi=False,
                    bound_ctrl=False):
    """``llvm.amdgcn.permlane16`` -> ``v_permlane16_b32``: lane k of each row reads lane
    ``sel[k]`` of its row (nibble k of ``sel_hi:sel_lo``, wave-uniform).  gfx1250."""
    return _emit_permlane("permlane16", builder, arch, value, sel_lo, sel_hi, old, fi,
                          bound_ctrl)


def emit_permlanex16(builder, arch, value, sel_lo, sel_hi, old=None, fi=False,
                     bound_ctrl=False):
    """``llvm.amdgcn.permlanex16`` -> ``v_permlanex16_b32``: as permlane16, reading the
    other row of each pair.  gfx1250."""
    return _emit_permlane("permlanex16", builder, arch, value, sel_lo, sel_hi, old, fi,
                          bound_ctrl)


def _emit_swap(op, builder, arch, a, b):
    targets.require(op, arch)
    pair = ir.LiteralStructType([I32, I32])
    swapped = call_intrinsic(builder, f"llvm.amdgcn.{op.replace('_', '.')}", pair,
                             [_as_i32(builder, a), _as_i32(builder, b),
                              ir.Constant(I1, 0), ir.Constant(I1, 0)])
    return (_from_i32(builder, builder.extract_value(swapped, 0), a.type),
            _from_i32(builder, builder.extract_value(swapped, 1), b.type))


def emit_permlane16_swap(builder, arch, a, b):
    """``llvm.amdgcn.permlane16.swap`` -> ``v_permlane16_swap_b32``: the odd rows of *a*
    trade places with the even rows of *b*; returns (a, b).  gfx950, gfx1250."""
    return _emit_swap("permlane16_swap", builder, arch, a, b)


def emit_permlane32_swap(builder, arch, a, b):
    """``llvm.amdgcn.permlane32.swap`` -> ``v_permlane32_swap_b32``: rows 2-3 of *a*
    trade places with rows 0-1 of *b*; returns (a, b).  gfx950."""
    return _emit_swap("permlane32_swap", builder, arch, a, b)


# -- reductions ------------------------------------------------------------------------

REDUCTIONS = ("sum", "max", "min")
_QP_1032, _QP_2301 = quad_perm(1, 0, 3, 2), quad_perm(2, 3, 0, 1)
#: lanesel of ``v_permlanex16_b32`` for "lane k reads lane k of the other row"
_IDENTITY_LO, _IDENTITY_HI = 0x76543210, 0xFEDCBA98


def row_widths(arch):
    """The group widths :func:`emit_row_reduce` takes on *arch*."""
    return (2, 4, 8, 16, 32) + ((64,) if targets.get_arch(arch).wave_size == 64 else ())


def reduction_plan(arch, width):
    """The steps that reduce each aligned group of *width* lanes on *arch*.

    Each step moves values between lanes and combines the moved value with each lane's
    own (``combine(own, moved)``):

    * within a DPP row (widths 2-16), one DPP move per halving, each pairing lane i with
      one partner: ``row_mirror`` (i <-> 15 - i), ``row_half_mirror`` (i <-> 7 - i in
      each half row), ``quad_perm:[1,0,3,2]``, ``quad_perm:[2,3,0,1]``.  As each pairing
      is its own inverse and the reductions commute, the lanes of a group end with
      bit-identical values;
    * 32 lanes: ``ds_swizzle`` SWAP 16 on gfx942, ``v_permlane16_swap`` on gfx950,
      ``v_permlanex16`` (each lane reads the same lane of the other row) on gfx1250;
    * 64 lanes (gfx942/gfx950): Triton's ``row_bcast:15`` (rows 1 and 3) and
      ``row_bcast:31`` (rows 2 and 3) after the 16-lane steps, then ``v_readlane`` of
      lane 63, which holds the total.  After a step with row or bank masks, the lanes
      outside them keep the identity of the reduction (int32, uint32) or an unspecified
      value (float32: LLVM folds the move into the op only then); only lane 63, inside
      both masks, is read.

    In the DPP steps with full masks every lane has a valid source, so *old* and
    ``bound_ctrl`` do not matter; they are the reduction's identity and False (LLVM
    then folds the move into the op, e.g. ``v_add_f32_dpp ... bound_ctrl:1``).

    ``("dpp", ctrl, row_mask, bank_mask, bound_ctrl)``, ``("swizzle", pattern)``,
    ``("permlane16_swap",)``, ``("permlanex16", sel_lo, sel_hi)``, ``("readlane", lane)``.
    """
    if width not in row_widths(arch):
        raise reject("row_reduce", "width", f"must be one of {row_widths(arch)} on {arch}", repr(width))
    row16 = min(width, 16)
    steps = []
    if row16 >= 16:
        steps.append(("dpp", ROW_MIRROR, 0xF, 0xF, False))
    if row16 >= 8:
        steps.append(("dpp", ROW_HALF_MIRROR, 0xF, 0xF, False))
    steps.append(("dpp", _QP_1032, 0xF, 0xF, False))
    if row16 >= 4:
        steps.append(("dpp", _QP_2301, 0xF, 0xF, False))
    if width == 32:
        steps.append({targets.CDNA3: ("swizzle", swizzle_bitmask(0x1F, 0, 0x10)),
                      targets.CDNA4: ("permlane16_swap",),
                      targets.GFX1250: ("permlanex16", _IDENTITY_LO, _IDENTITY_HI)}[arch])
    if width == 64:
        steps += [("dpp", ROW_BCAST15, 0xA, 0xF, False), ("dpp", ROW_BCAST31, 0xC, 0xF, False),
                  ("readlane", 63)]
    return steps


def wave_plan(arch):
    """:func:`reduction_plan` of the whole wave, ending in a ``v_readlane`` of its last
    lane so that the result is wave-uniform (an SGPR)."""
    wave = targets.get_arch(arch).wave_size
    plan = reduction_plan(arch, wave)
    return plan if plan[-1][0] == "readlane" else plan + [("readlane", wave - 1)]


_MAX32 = {"i": 2**31 - 1, "u": 2**32 - 1}
_MIN32 = {"i": -2**31, "u": 0}


def _identity(op, kind, ty):
    if op == "sum":
        return ir.Constant(ty, 0.0 if kind == "f" else 0)
    if kind == "f":
        return ir.Constant(ty, float("-inf") if op == "max" else float("inf"))
    value = _MIN32[kind] if op == "max" else _MAX32[kind]
    return ir.Constant(ty, value - (1 << 32) if value >= 2**31 else value)


_INT_OPS = {("max", "i"): "smax", ("min", "i"): "smin", ("max", "u"): "umax",
            ("min", "u"): "umin"}


def _combine(builder, op, kind, a, b):
    if op == "sum":
        return builder.fadd(a, b) if kind == "f" else builder.add(a, b)
    if kind == "f":  # IEEE maxNum / minNum: a NaN operand is ignored
        name = "maxnum" if op == "max" else "minnum"
        return call_intrinsic(builder, f"llvm.{name}.f32", a.type, [a, b])
    return call_intrinsic(builder, f"llvm.{_INT_OPS[op, kind]}.i32", a.type, [a, b])


def _run_plan(builder, arch, plan, value, op, kind):
    for step in plan:
        name = step[0]
        if name == "dpp":
            _, ctrl, row_mask, bank_mask, bound_ctrl = step
            old = _identity(op, kind, value.type)
            if kind == "f" and (row_mask, bank_mask) != (0xF, 0xF):
                # lanes outside the masks are left unspecified (no later step reads
                # them): LLVM folds the move into the op only with an undefined old
                # value, as it recognizes no float identity (it does the integer ones)
                old = ir.Constant(value.type, ir.Undefined)
            moved = call_intrinsic(
                builder, f"llvm.amdgcn.update.dpp.{_suffix(value.type)}", value.type,
                [old, value, i32(ctrl), i32(row_mask), i32(bank_mask),
                 ir.Constant(I1, int(bound_ctrl))])
            value = _combine(builder, op, kind, value, moved)
        elif name == "swizzle":
            moved = _from_i32(builder, call_intrinsic(
                builder, "llvm.amdgcn.ds.swizzle", I32, [_as_i32(builder, value), i32(step[1])]),
                value.type)
            value = _combine(builder, op, kind, value, moved)
        elif name == "permlanex16":
            moved = _emit_permlane("permlanex16", builder, arch, value, step[1], step[2],
                                   None, True, False)
            value = _combine(builder, op, kind, value, moved)
        elif name == "permlane16_swap":
            value = _combine(builder, op, kind, *_emit_swap("permlane16_swap", builder, arch,
                                                            value, value))
        elif name == "readlane":
            value = call_intrinsic(builder, f"llvm.amdgcn.readlane.{_suffix(value.type)}",
                                   value.type, [value, i32(step[1])])
    return value


def _check_reduction(op_name, op, kind):
    if op not in REDUCTIONS:
        raise reject(op_name, "op", f"must be one of {REDUCTIONS}", repr(op))
    if kind not in ("f", "i", "u"):
        raise reject(op_name, "kind", "must be 'f', 'i' or 'u'", repr(kind))


def emit_row_reduce(builder, arch, value, op, width, kind):
    """Reduce *value* (i32 or float, *kind* ``"f"``, ``"i"`` (signed) or ``"u"``) over
    each aligned group of *width* lanes with *op* (``"sum"``, ``"max"``, ``"min"``);
    every lane of a group gets the group's result (see :func:`reduction_plan`)."""
    targets.require("row_reduce", arch)
    _check_reduction("row_reduce", op, kind)
    return _run_plan(builder, arch, reduction_plan(arch, width), value, op, kind)


def emit_wave_reduce(builder, arch, value, op, kind):
    """Reduce *value* over the whole wave; the result is wave-uniform (an SGPR)."""
    targets.require("wave_reduce", arch)
    _check_reduction("wave_reduce", op, kind)
    return _run_plan(builder, arch, wave_plan(arch), value, op, kind)
