"""Cross-lane ops: moving values between the lanes of a wave without going through LDS.

* ``readfirstlane`` / ``readlane``: one lane's value, wave-uniform (an SGPR);
* ``ds_bpermute`` / ``ds_permute`` / ``ds_swizzle``: the LDS unit's lane crossbar, which
  reads and writes no LDS memory (it counts on ``lgkmcnt``);
* ``dpp`` (DPP16 / DPP32 controls), ``dpp8`` and the ``permlane`` instructions of the
  arch: VALU moves;
* ``row_reduce`` / ``wave_reduce``: sum, max or min over groups of lanes or the whole
  wave, lowered to DPP as Triton's AMD back end lowers its warp reductions.

Every op takes its per-lane operand as a value of this lane and returns this lane's
result.  **All lanes of the wave must be active** (no op here sits inside a divergent
``if``): the ISA's rules for inactive lanes differ per instruction and are not modelled.
:mod:`.lanes_model` is a numpy model of each instruction, lane by lane.

The encodings and the per-arch legality come from LLVM's AMDGPU documentation
(AMDGPUModifierSyntax: ``dpp_ctrl`` for GFX9, ``dpp32_ctrl`` for GFX90A+ (gfx942,
gfx950), ``dpp16_ctrl`` and ``dpp8`` for GFX10+ (gfx1250), the ``ds_swizzle`` pattern)
and were compiled with llvmlite's LLVM 22 for each arch; an encoding LLVM refuses for
an arch ("wavefront shifts are not supported on GFX10+", "row_share and row_xmask are
not supported before GFX10") is refused here first, naming the argument.
"""
import re

from llvmlite import ir
from numba.core import types

from ..declarations import Refusal
from . import targets
from ._core import LANE_KINDS, AmdOp, Const, Flag, Int, LaneValue, Like, Sample, const, is_given
from .errors import AMDArgumentError
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


def _dpp_syntax(op, ctrl):
    """*ctrl* (an ISA string such as ``"row_shr:4"``, or an encoding) -> (encoding,
    archs that have it, its ISA name)."""
    rule = ("ctrl must be a DPP control in the ISA's syntax, e.g. 'row_shr:1', "
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
                raise AMDArgumentError(f"{op}: ctrl {ctrl!r}: {m[1]} takes {lo}..{hi}, got {n}")
            return base + n, archs, text
        raise AMDArgumentError(f"{op}: {rule}; got {ctrl!r}")
    if isinstance(ctrl, bool) or not isinstance(ctrl, int):
        raise AMDArgumentError(f"{op}: {rule}; got {ctrl!r}")
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
    raise AMDArgumentError(f"{op}: {rule}; {code!r} is no DPP control")


def dpp_ctrl(op, ctrl, arch):
    """The encoding of DPP control *ctrl* on *arch*; raise naming the rule if *arch*
    lacks it (wave shifts and row broadcasts are gfx942/gfx950 only; row_share and
    row_xmask gfx1250 only)."""
    code, archs, name = _dpp_syntax(op, ctrl)
    if arch not in archs:
        if name.startswith("row_newbcast"):
            hint = f"; on gfx1250 the same broadcast is row_share:{code - ROW_SHARE}"
        elif name.startswith("row_share") and code != ROW_SHARE:
            hint = f"; on gfx942/gfx950 the same broadcast is row_newbcast:{code - ROW_SHARE}"
        elif arch == targets.GFX1250:
            hint = " (the GFX10+ DPP16 controls have no wave shifts or row broadcasts)"
        else:
            hint = " (row_share and row_xmask are GFX10+ DPP16 controls)"
        raise AMDArgumentError(f"{op}: ctrl {name} is available on {', '.join(archs)} only; "
                               f"requested arch is {arch}{hint}")
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
            raise AMDArgumentError(f"{op}: pattern {text!r}: swizzle({mode}, ...) takes "
                                   f"{count} integer(s)")
        return [int(a) for a in args]

    if mode == "QUAD_PERM":
        return swizzle_quad_perm(*ints(4))
    if mode == "BITMASK_PERM":
        if len(args) != 1 or not re.fullmatch(r'"[01pi]{5}"', args[0]):
            raise AMDArgumentError(f'{op}: pattern {text!r}: BITMASK_PERM takes a quoted '
                                   f'5-character mask of 0, 1, p, i (bit 4 first)')
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
            raise AMDArgumentError(f"{op}: pattern {text!r}: {mode} takes one of {sizes}")
        return swizzle_bitmask(0x1F, 0, n if mode == "SWAP" else n - 1)
    if mode == "BROADCAST":
        group, lane = ints(2)
        if group not in (2, 4, 8, 16, 32) or not 0 <= lane < group:
            raise AMDArgumentError(f"{op}: pattern {text!r}: BROADCAST takes a group size of "
                                   f"2, 4, 8, 16 or 32 and a lane below it")
        return swizzle_bitmask(0x20 - group, lane, 0)
    raise AMDArgumentError(
        f"{op}: pattern must be a 16-bit ds_swizzle offset or LLVM's swizzle(QUAD_PERM|"
        f"BITMASK_PERM|SWAP|REVERSE|BROADCAST, ...) syntax; got {text!r}")


def swizzle_pattern(op, pattern):
    """*pattern* (an int or LLVM's ``swizzle(...)`` text) -> the 16-bit offset, which
    must be quad-perm mode (``0x80xx``) or bitmask mode (below 0x8000)."""
    if isinstance(pattern, str):
        return _swizzle_from_text(op, pattern)
    targets.check_int_range(op, "pattern", pattern, 0, 0xFFFF)
    if pattern >= 0x8000 and pattern & 0xFF00 != SWIZZLE_QUAD_PERM:
        raise AMDArgumentError(
            f"{op}: pattern {pattern:#06x} is neither quad-perm mode (0x8000 | 4 x 2-bit "
            f"lane selects) nor bitmask mode (below 0x8000: and | or << 5 | xor << 10); "
            f"the FFT and rotate modes (0xE000.., 0xC000..) are not supported")
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
        lane = i32(targets.check_int_range("readlane", f"lane on {arch}", lane, 0,
                                           row.wave_size - 1))
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
        raise AMDArgumentError(f"{op}: selects must be a tuple of 8 lane numbers 0..7, "
                               f"got {selects!r}")
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
        raise AMDArgumentError(f"row_reduce: width must be one of {row_widths(arch)} on "
                               f"{arch}, got {width!r}")
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
        raise AMDArgumentError(f"{op_name}: op must be one of {REDUCTIONS}, got {op!r}")
    if kind not in ("f", "i", "u"):
        raise AMDArgumentError(f"{op_name}: kind must be 'f', 'i' or 'u', got {kind!r}")


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


# -- the ops ---------------------------------------------------------------------------

ALL, GFX1250 = targets.ALL, (targets.GFX1250,)
_REF = "AMD CDNA3 ISA (VOP1 / DS / DPP); LLVM AMDGPUModifierSyntax"
_V = "y[lane] = "   # a sample stores the op's result, so LLVM keeps it


def _arch(context):
    return context.arch


def _lane_index(context, builder, ty, value):
    return context.cast(builder, value, ty, types.int32)


def _same(emit):
    """The typing of an op whose result has the type of its ``value``."""
    def typing(value, **_):
        return value, emit
    return typing


def _wave_id_codegen(context, builder, sig, args):
    return emit_wave_id(builder, _arch(context), context.max_workgroup_size)


wave_id = AmdOp(
    "amd.wave_id", lambda: (types.int32, _wave_id_codegen), result="int", need=targets.Requirement(ALL, 22),
    llvm=("llvm.amdgcn.workitem.id.x", "llvm.amdgcn.readfirstlane.i32", "llvm.assume"), isa=("v_readfirstlane_b32",),
    doc="""This wave's index in its (1-D) workgroup, wave-uniform: ``workitem_id_x() //
    wave_size`` as LLVM knows to be the same in every lane of the wave.

    ISA: ``v_readfirstlane_b32`` of the quotient, once per kernel (LLVM hoists it), with an
    ``llvm.assume`` of its range (below ``ceil(max_workgroup_size / wave_size)`` of
    :func:`numba_tma.amd.compile`, or 1024 lanes).  All archs.  Use it for each wave's LDS
    region: an LDS-DMA destination computed from it (with constants and loop counters) is an
    SGPR, so ``M0`` is set on the scalar unit, and a slice of it is bounded, so Numba's slice
    clamp folds away.  ``workitem_id_x() // 64`` gives the same number, but LLVM sees it as
    lane-varying and moves every DMA's LDS address to ``M0`` with a ``v_readfirstlane_b32`` of
    its own.

    Example: ``mine = ring[amd.wave_id() * 2048:]``""",
    samples=(Sample(_V + "amd.wave_id()", "v_readfirstlane_b32 %s, %v", _REF),),
    refusals=(Refusal("amd.wave_id(1)", "wave_id takes ()"),),
).intrinsic()


def _lane_id_codegen(context, builder, sig, args):
    return emit_lane_id(builder, _arch(context))


lane_id = AmdOp(
    "amd.lane_id", lambda: (types.int32, _lane_id_codegen), result="int", need=targets.Requirement(ALL, 22),
    llvm=("llvm.amdgcn.mbcnt.lo", "llvm.amdgcn.mbcnt.hi"), isa=("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32"),
    doc="""This lane's index within its wave (0..63 on gfx942/gfx950, 0..31 on gfx1250).

    ISA: ``v_mbcnt_lo_u32_b32`` / ``v_mbcnt_hi_u32_b32`` (lo only on wave32).  All archs.

    Example: ``partner = amd.ds_bpermute(x, amd.lane_id() ^ 1)``""",
    samples=(Sample(_V + "numba.float32(amd.lane_id())",
                    {"gfx1250": "v_mbcnt_lo_u32_b32 %v, -1, 0",
                     "": ("v_mbcnt_lo_u32_b32 %v, -1, 0", "v_mbcnt_hi_u32_b32 %v, -1, %v")}, _REF),),
    refusals=(Refusal("amd.lane_id(1)", "lane_id takes ()"),),
).intrinsic()


readfirstlane = AmdOp(
    "amd.readfirstlane",
    _same(lambda context, builder, sig, args: emit_readfirstlane(builder, _arch(context), args[0])),
    (LaneValue("value", wide=True),), result="int | float", need=targets.Requirement(ALL, 22),
    llvm=("llvm.amdgcn.readfirstlane",), isa=("v_readfirstlane_b32",),
    doc="""The value of the wave's lowest active lane, in every lane: wave-uniform.

    ISA: ``v_readfirstlane_b32`` (two for a 64-bit value).  All archs.  *value*: int32,
    uint32, float32 or their 64-bit types.  The result is in an SGPR, so LLVM treats what is
    computed from it as uniform: an LDS address passed through it sets ``M0`` with a plain
    ``s_mov`` instead of a ``v_readfirstlane`` before each LDS DMA (docs/amd.md, M0 once per
    wave).

    Example: ``base = amd.readfirstlane(numba.int32(slot * 256))``""",
    samples=(Sample(_V + "amd.readfirstlane(x[lane])", "v_readfirstlane_b32 %s, %v", _REF),),
    refusals=(Refusal(_V + "amd.readfirstlane(x)", "readfirstlane: value must be an int32, uint32 or float32"),),
).intrinsic()


def _readlane(value, lane):
    if isinstance(lane, types.IntegerLiteral) and not 0 <= lane.literal_value < 64:
        raise AMDArgumentError(f"readlane: lane must be a lane of the wave, 0..63 (0..31 on "
                               f"gfx1250), got {lane.literal_value}")
    constant = lane.literal_value if isinstance(lane, types.IntegerLiteral) else None

    def codegen(context, builder, sig, args):
        index = constant if constant is not None else _lane_index(context, builder, sig.args[1], args[1])
        return emit_readlane(builder, _arch(context), args[0], index)
    return value, codegen


readlane = AmdOp(
    "amd.readlane", _readlane, (LaneValue("value", wide=True), Int("lane")), result="int | float", need=targets.Requirement(ALL, 22),
    llvm=("llvm.amdgcn.readlane",), isa=("v_readlane_b32",),
    doc="""The value of lane *lane* of the wave, in every lane: wave-uniform.

    ISA: ``v_readlane_b32``.  All archs.  *lane*: a constant below the wave size (64 on
    gfx942/gfx950, 32 on gfx1250; checked), or a wave-uniform integer (a lane-varying one is
    taken from the first active lane).

    Example: ``total = amd.readlane(partial, 63)``""",
    samples=(Sample(_V + "amd.readlane(x[lane], 5)", "v_readlane_b32 %s, %v, 5", _REF),),
    refusals=(Refusal(_V + "amd.readlane(x[lane], 64)", "readlane: lane must be a lane of the wave"),),
).intrinsic()


def _crossbar(emit):
    def codegen(context, builder, sig, args):
        return emit(builder, _arch(context), args[0], _lane_index(context, builder, sig.args[1], args[1]))
    return _same(codegen)


ds_bpermute = AmdOp(
    "amd.ds_bpermute", _crossbar(emit_ds_bpermute), (LaneValue("value"), Int("src_lane")),
    result="int | float", need=targets.Requirement(ALL, 22), llvm=("llvm.amdgcn.ds.bpermute",), isa=("ds_bpermute_b32",),
    doc="""Gather: this lane gets *value* of lane *src_lane* (modulo the wave size).

    ISA: ``ds_bpermute_b32``, which takes the byte address ``4 * src_lane`` (emitted here) and
    reads no LDS memory; it waits on ``lgkmcnt``.  All archs.  *value*: int32, uint32 or
    float32; *src_lane*: an integer, per lane.

    Example: ``right = amd.ds_bpermute(x, lane + 1)`` (lane 63 reads lane 0)""",
    samples=(Sample(_V + "amd.ds_bpermute(x[lane], lane * 3)", "ds_bpermute_b32 %v, %v, %v", _REF),),
    refusals=(Refusal(_V + "amd.ds_bpermute(x[lane], 1.5)", "ds_bpermute: src_lane must be an integer"),),
).intrinsic()

ds_permute = AmdOp(
    "amd.ds_permute", _crossbar(emit_ds_permute), (LaneValue("value"), Int("dst_lane")),
    result="int | float", need=targets.Requirement(ALL, 22), llvm=("llvm.amdgcn.ds.permute",), isa=("ds_permute_b32",),
    doc="""Scatter: this lane's *value* goes to lane *dst_lane* (modulo the wave size); when
    several lanes send to one lane the highest-numbered sender wins (the ISA's
    pseudocode; its prose leaves it to "standard LDS arbitration rules"), and a lane that
    receives nothing gets 0.

    ISA: ``ds_permute_b32``, byte address ``4 * dst_lane``; no LDS memory is touched.  All
    archs.

    Example: ``y = amd.ds_permute(x, 63 - lane)`` (reverse the wave)""",
    samples=(Sample(_V + "amd.ds_permute(x[lane], lane * 5)", "ds_permute_b32 %v, %v, %v", _REF),),
    refusals=(Refusal(_V + "amd.ds_permute(x[lane], 1.5)", "ds_permute: dst_lane must be an integer"),),
).intrinsic()


def _ds_swizzle(value, pattern):
    code = swizzle_pattern("ds_swizzle", const(pattern, "ds_swizzle: pattern"))

    def codegen(context, builder, sig, args):
        return emit_ds_swizzle(builder, _arch(context), args[0], code)
    return value, codegen


ds_swizzle = AmdOp(
    "amd.ds_swizzle", _ds_swizzle, (LaneValue("value"), Const("pattern", annotation="int | str")),
    result="int | float", need=targets.Requirement(ALL, 22), llvm=("llvm.amdgcn.ds.swizzle",), isa=("ds_swizzle_b32",),
    doc="""This lane gets *value* of the lane that the constant *pattern* names.

    ISA: ``ds_swizzle_b32 vdst, vsrc offset:pattern``; no LDS memory is touched; waits on
    ``lgkmcnt``.  All archs.  *pattern*: a 16-bit offset in quad-perm mode
    (``swizzle_quad_perm(l0, l1, l2, l3)``: lane k of each 4 reads lane lk) or bitmask mode
    (``swizzle_bitmask(and_mask, or_mask, xor_mask)``: in each 32 lanes, lane i reads
    ``((i & and) | or) ^ xor``), or LLVM's text for one, e.g. ``"swizzle(SWAP,16)"``,
    ``"swizzle(BROADCAST,8,0)"``, ``"swizzle(REVERSE,4)"``, ``'swizzle(BITMASK_PERM,"01pi0")'``.
    The FFT and rotate modes are refused.

    Example: ``other_half = amd.ds_swizzle(x, "swizzle(SWAP,16)")``""",
    samples=(Sample(_V + 'amd.ds_swizzle(x[lane], "swizzle(SWAP,16)")',
                    "ds_swizzle_b32 %v, %v offset:swizzle(SWAP,16)", _REF),),
    refusals=(Refusal(_V + "amd.ds_swizzle(x[lane], 0xE000)", "ds_swizzle: pattern 0xe000 is neither"),),
).intrinsic()


def _dpp(value, ctrl, row_mask, bank_mask, bound_ctrl, old):
    ctrl_value = const(ctrl, "dpp: ctrl")
    _dpp_syntax("dpp", ctrl_value)  # the syntax now, the arch when lowered
    masks = [const(row_mask, "row_mask"), const(bank_mask, "bank_mask")]
    bound = const(bound_ctrl, "bound_ctrl")
    given_old = is_given(old)

    def codegen(context, builder, sig, args):
        return emit_dpp(builder, _arch(context), args[0], ctrl_value, *masks, bound,
                        old=args[5] if given_old else None)
    return value, codegen


dpp = AmdOp(
    "amd.dpp", _dpp,
    (LaneValue("value"), Const("ctrl", annotation="str | int"), Const("row_mask", 0xF, lo=0, hi=0xF),
     Const("bank_mask", 0xF, lo=0, hi=0xF), Flag("bound_ctrl", False), Like("old", "value", default=None)),
    result="int | float", need=targets.Requirement(ALL, 22),  # which controls, per arch: DPP_CONTROLS
    llvm=("llvm.amdgcn.update.dpp",), isa=("v_mov_b32_dpp",),
    doc="""Move *value* between lanes with a DPP control: this lane gets the value of the
    lane *ctrl* names, within its row of 16 lanes (or the wave, for wave shifts).

    ISA: ``v_mov_b32_dpp``; LLVM folds it into the VALU op that uses the result where it can
    (``v_add_f32_dpp``).  *ctrl*: constant, in the ISA's syntax or as its encoding:

    * all archs: ``quad_perm:[a,b,c,d]``, ``row_shl:n``, ``row_shr:n``, ``row_ror:n``
      (n 1..15), ``row_mirror``, ``row_half_mirror``;
    * gfx942, gfx950 (GFX9, wave64): ``wave_shl:1``, ``wave_rol:1``, ``wave_shr:1``,
      ``wave_ror:1``, ``row_bcast:15``, ``row_bcast:31``, ``row_newbcast:n`` (1..15);
    * gfx1250 (GFX10+ DPP16, wave32): ``row_share:n``, ``row_xmask:n`` (0..15).

    A lane of a row outside *row_mask* or a bank outside *bank_mask* (4-bit masks) is not
    written and keeps *old* (default: its own *value*); so is a lane whose source is
    invalid (outside the row for ``row_shl``/``row_shr``; rows 0 and 1 for
    ``row_bcast:31``), unless *bound_ctrl*, which gives it 0.  *value*: int32, uint32 or
    float32.  :mod:`numba_tma.amd.lanes_model` models it lane by lane.

    Example: ``left = amd.dpp(x, "row_shr:1", bound_ctrl=True)`` (lane 0 of a row gets 0)""",
    samples=(Sample(_V + 'amd.dpp(x[lane], "row_shr:1", bound_ctrl=True)',
                    "v_mov_b32_dpp %v, %v row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1", _REF),),
    refusals=(Refusal(_V + 'amd.dpp(x[lane], "row_shr:16")', "dpp: ctrl 'row_shr:16': row_shr takes 1..15"),
              Refusal(_V + 'amd.dpp(x[lane], "row_shr:1", row_mask=16)', "dpp: row_mask must be an int in [0, 15]")),
).intrinsic()


def _dpp8(value, selects):
    code_selects = const(selects, "dpp8: selects")
    dpp8_selects("dpp8", code_selects)

    def codegen(context, builder, sig, args):
        return emit_dpp8(builder, _arch(context), args[0], code_selects)
    return value, codegen


dpp8 = AmdOp(
    "amd.dpp8", _dpp8, (LaneValue("value"), Const("selects", annotation="tuple[int, ...]")),
    result="int | float", need=targets.Requirement(GFX1250, 22),  # a GFX10+ encoding: "Cannot select" on gfx9
    llvm=("llvm.amdgcn.mov.dpp8",), isa=("v_mov_b32_dpp dpp8",),
    doc="""This lane gets *value* of lane ``(lane & ~7) | selects[lane & 7]``: a permutation
    within each group of 8 lanes.

    ISA: ``v_mov_b32_dpp vdst, vsrc dpp8:[s0,...,s7]``.  gfx1250 only (DPP8 is a GFX10+
    encoding).  *selects*: a constant tuple of 8 lanes 0..7.  *value*: int32, uint32 or
    float32.

    Example: ``r = amd.dpp8(x, (7, 6, 5, 4, 3, 2, 1, 0))`` (reverse each 8 lanes)""",
    samples=(Sample(_V + "amd.dpp8(x[lane], (7, 6, 5, 4, 3, 2, 1, 0))",
                    "v_mov_b32_dpp %v, %v dpp8:[7,6,5,4,3,2,1,0]", _REF),),
    refusals=(Refusal(_V + "amd.dpp8(x[lane], (1, 2))", "dpp8: selects must be a tuple of 8 lane numbers"),),
).intrinsic()


def _permlane(name, emit):
    def typing(value, sel_lo, sel_hi, fi, bound_ctrl):
        consts = []
        for sel, arg in ((sel_lo, "sel_lo"), (sel_hi, "sel_hi")):
            if isinstance(sel, types.IntegerLiteral):
                targets.check_int_range(name, arg, sel.literal_value, 0, 0xFFFFFFFF)
                consts.append(sel.literal_value)
            else:
                consts.append(None)
        flags = [const(fi, "fi"), const(bound_ctrl, "bound_ctrl")]

        def codegen(context, builder, sig, args):
            sels = [c if c is not None else _lane_index(context, builder, sig.args[k + 1], args[k + 1])
                    for k, c in enumerate(consts)]
            return emit(builder, _arch(context), args[0], *sels, None, *flags)
        return value, codegen
    return typing


_PERMLANE_OPERANDS = (LaneValue("value"), Int("sel_lo"), Int("sel_hi"), Flag("fi", False), Flag("bound_ctrl", False))

permlane16 = AmdOp(
    "amd.permlane16", _permlane("permlane16", emit_permlane16), _PERMLANE_OPERANDS,
    result="int | float", need=targets.Requirement(GFX1250, 22), llvm=("llvm.amdgcn.permlane16",), isa=("v_permlane16_b32",),
    doc="""Lane k of each row of 16 gets *value* of lane ``sel[k]`` of the same row, ``sel[k]``
    being nibble k of the 64-bit ``sel_hi:sel_lo`` (lanes 0-7 from *sel_lo*).

    ISA: ``v_permlane16_b32 vdst, vsrc, sel_lo, sel_hi``.  gfx1250 only.  *sel_lo*, *sel_hi*:
    wave-uniform 32-bit integers (constants are checked).  *fi* (fetch inactive) and
    *bound_ctrl*: constant bools, as the ISA's.

    Example: ``r = amd.permlane16(x, 0x89ABCDEF, 0x01234567)`` (reverse each row: lane 0 reads 15)""",
    samples=(Sample(_V + "amd.permlane16(x[lane], 0x76543210, 0xFEDCBA98)",
                    "v_permlane16_b32 %v, %v, %s, 0xfedcba98", _REF),),
    refusals=(Refusal(_V + "amd.permlane16(x[lane], 1 << 32, 0)", "permlane16: sel_lo must be an int in"),),
).intrinsic()

permlanex16 = AmdOp(
    "amd.permlanex16", _permlane("permlanex16", emit_permlanex16), _PERMLANE_OPERANDS,
    result="int | float", need=targets.Requirement(GFX1250, 22), llvm=("llvm.amdgcn.permlanex16",), isa=("v_permlanex16_b32",),
    doc="""As :func:`permlane16`, but lane k of each row reads lane ``sel[k]`` of the *other* row of
    its pair (row 0 reads row 1, row 1 reads row 0).

    ISA: ``v_permlanex16_b32``.  gfx1250 only.

    Example: ``other = amd.permlanex16(x, 0x76543210, 0xFEDCBA98)`` (lane i gets lane i ^ 16)""",
    samples=(Sample(_V + "amd.permlanex16(x[lane], 0x76543210, 0xFEDCBA98)",
                    "v_permlanex16_b32 %v, %v, %s, 0xfedcba98", _REF),),
    refusals=(Refusal(_V + "amd.permlanex16(x[lane], 0, 0, fi=1)", "permlanex16: fi must be True or False"),),
).intrinsic()


def _swap(emit):
    def typing(a, b):
        pair = types.UniTuple(a, 2)

        def codegen(context, builder, sig, args):
            new_a, new_b = emit(builder, _arch(context), args[0], args[1])
            return context.make_tuple(builder, pair, (new_a, new_b))
        return pair, codegen
    return typing


permlane16_swap = AmdOp(
    "amd.permlane16_swap", _swap(emit_permlane16_swap), (LaneValue("a"), Like("b", "a")),
    result="tuple[int | float, int | float]", need=targets.Requirement((targets.CDNA4, targets.GFX1250), 22), llvm=("llvm.amdgcn.permlane16.swap",),
    isa=("v_permlane16_swap_b32",),
    doc="""Swap rows between two values: the odd rows (lanes 16-31, 48-63) of *a* trade places with
    the even rows (lanes 0-15, 32-47) of *b*; returns the new ``(a, b)``.

    ISA: ``v_permlane16_swap_b32``.  gfx950, gfx1250.

    Example: ``lo, hi = amd.permlane16_swap(x, x)`` (lo: rows 0,0,2,2 of x; hi: rows 1,1,3,3)""",
    samples=(Sample("a, b = amd.permlane16_swap(x[lane], x[lane])\n" + _V + "a + b",
                    "v_permlane16_swap_b32_e32 %v, %v", _REF),),
    refusals=(Refusal("a, b = amd.permlane16_swap(x[lane], lane)", "permlane16_swap: b must have the type of a"),),
).intrinsic()

permlane32_swap = AmdOp(
    "amd.permlane32_swap", _swap(emit_permlane32_swap), (LaneValue("a"), Like("b", "a")),
    result="tuple[int | float, int | float]", need=targets.Requirement((targets.CDNA4,), 22), llvm=("llvm.amdgcn.permlane32.swap",),
    isa=("v_permlane32_swap_b32",),
    doc="""Swap half waves between two values: lanes 32-63 of *a* trade places with lanes 0-31 of
    *b*; returns the new ``(a, b)``.

    ISA: ``v_permlane32_swap_b32``.  gfx950 only (wave64).

    Example: ``lo, hi = amd.permlane32_swap(x, x)`` (lo: lanes 0-31 twice; hi: 32-63 twice)""",
    samples=(Sample("a, b = amd.permlane32_swap(x[lane], x[lane])\n" + _V + "a + b",
                    "v_permlane32_swap_b32_e32 %v, %v", _REF),),
    refusals=(Refusal("a, b = amd.permlane32_swap(x[lane], lane)", "permlane32_swap: b must have the type of a"),),
).intrinsic()


def _reduction_op(op_name, op):
    name = const(op, f"{op_name}: op")
    if name not in REDUCTIONS:
        raise AMDArgumentError(f"{op_name}: op must be one of {REDUCTIONS}, got {name!r}")
    return name


def _row_reduce(value, op, width):
    name = _reduction_op("row_reduce", op)
    size = const(width, "row_reduce: width")
    if isinstance(size, bool) or size not in (2, 4, 8, 16, 32, 64):
        raise AMDArgumentError(f"row_reduce: width must be 2, 4, 8, 16, 32 or (gfx942, gfx950) 64, got {size!r}")

    def codegen(context, builder, sig, args):
        return emit_row_reduce(builder, _arch(context), args[0], name, size, LANE_KINDS[value])
    return value, codegen


row_reduce = AmdOp(
    "amd.row_reduce", _row_reduce, (LaneValue("value"), Const("op", annotation="str"), Const("width", 16)),
    result="int | float", need=targets.Requirement(ALL, 22), llvm=("llvm.amdgcn.update.dpp",), isa=("v_add_f32_dpp", "v_max_f32_dpp"),
    doc="""Reduce *value* over each aligned group of *width* lanes (lanes ``g*width`` to
    ``g*width + width - 1``); every lane of the group gets the group's result.

    *op*: ``"sum"``, ``"max"`` or ``"min"`` (constant); *value*: int32, uint32 (unsigned
    max/min) or float32 (``max``/``min`` are IEEE maxNum/minNum: a NaN is ignored unless
    all are NaN; a float sum's rounding follows the pairing order below, and every lane of
    a group gets the same bits).  *width*: constant 2, 4, 8, 16, 32, or 64 on gfx942 and
    gfx950 (the whole wave: see :func:`wave_reduce`).

    ISA, per halving of the group: one DPP op folded into the VALU op
    (``v_add_f32_dpp v, v, v row_mirror``, then ``row_half_mirror``,
    ``quad_perm:[1,0,3,2]``, ``quad_perm:[2,3,0,1]``: 4 instructions for 16 lanes, where
    Triton's lowering of ``tl.sum`` spends 5); width 32 adds ``ds_swizzle`` SWAP 16
    (gfx942), ``v_permlane16_swap_b32`` (gfx950) or ``v_permlanex16_b32`` (gfx1250);
    width 64 adds ``row_bcast:15``, ``row_bcast:31`` and ``v_readlane_b32`` 63.  All
    archs.  The plan is :func:`numba_tma.amd.lanes.reduction_plan`.

    Example: ``s = amd.row_reduce(x, "sum", 16)`` (the sum of each row of 16 lanes)""",
    samples=(Sample(_V + 'amd.row_reduce(x[lane], "sum", 4)',
                    ("v_add_f32_dpp %v, %v, %v quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf bound_ctrl:1",
                     "v_add_f32_dpp %v, %v, %v quad_perm:[2,3,0,1] row_mask:0xf bank_mask:0xf bound_ctrl:1"), _REF),),
    refusals=(Refusal(_V + 'amd.row_reduce(x[lane], "sum", 3)', "row_reduce: width must be 2, 4, 8, 16, 32"),
              Refusal(_V + 'amd.row_reduce(x[lane], "prod")', "row_reduce: op must be one of")),
).intrinsic()


def _wave_reduce(value, op):
    name = _reduction_op("wave_reduce", op)

    def codegen(context, builder, sig, args):
        return emit_wave_reduce(builder, _arch(context), args[0], name, LANE_KINDS[value])
    return value, codegen


wave_reduce = AmdOp(
    "amd.wave_reduce", _wave_reduce, (LaneValue("value"), Const("op", annotation="str")),
    result="int | float", need=targets.Requirement(ALL, 22), llvm=("llvm.amdgcn.update.dpp", "llvm.amdgcn.readlane"),
    isa=("v_max_f32_dpp", "v_readlane_b32"),
    doc="""Reduce *value* over the whole wave (64 lanes on gfx942/gfx950, 32 on gfx1250);
    the result is wave-uniform (an SGPR) and the same in every lane.

    *op*: ``"sum"``, ``"max"`` or ``"min"``; *value*: int32, uint32 or float32, as
    :func:`row_reduce`.  ISA: the 16-lane DPP steps of :func:`row_reduce`, then on
    gfx942/gfx950 ``row_bcast:15`` / ``row_bcast:31`` folded into the op and
    ``v_readlane_b32 s, v, 63`` (Triton's full-wave lowering), on gfx1250
    ``v_permlanex16_b32`` and ``v_readlane_b32 s, v, 31``.  All archs.

    Example: ``total = amd.wave_reduce(partial, "max")``""",
    samples=(Sample(_V + 'amd.wave_reduce(x[lane], "max")',
                    {"gfx1250": "v_readlane_b32 %s, %v, 31", "": "v_readlane_b32 %s, %v, 63"}, _REF),),
    refusals=(Refusal(_V + 'amd.wave_reduce(x[lane], "prod")', "wave_reduce: op must be one of"),),
).intrinsic()
