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

The encodings and the per-arch legality (:mod:`numba_tma.amd.lanes`, the emitters) come from
LLVM's AMDGPU documentation; an encoding LLVM refuses for an arch is refused here first,
naming the argument.
"""
from numba.core import types

from ...declarations import Refusal
from .. import targets
from .._core import LANE_KINDS, AmdOp, Const, Flag, Int, LaneValue, Like, Sample, const, is_given
from ..lanes import (REDUCTIONS, dpp8_selects, dpp_syntax, emit_dpp, emit_dpp8, emit_ds_bpermute, emit_ds_permute,
                     emit_ds_swizzle, emit_lane_id, emit_permlane16, emit_permlane16_swap, emit_permlane32_swap,
                     emit_permlanex16, emit_readfirstlane, emit_readlane, emit_row_reduce, emit_wave_id,
                     emit_wave_reduce, swizzle_pattern)

ALL, GFX1250 = targets.ALL, (targets.GFX1250,)
_REF = "AMD CDNA3 ISA (VOP1 / DS / DPP); LLVM AMDGPUModifierSyntax"
_V = "y[lane] = "   # a sample stores the op's result, so LLVM keeps it


def _lane_index(context, builder, ty, value):
    return context.cast(builder, value, ty, types.int32)


def _same(emit):
    """The typing of an op whose result has the type of its ``value``."""
    def typing(value, **_):
        return value, emit
    return typing


def _wave_id_codegen(context, builder, sig, args):
    return emit_wave_id(builder, context.arch, context.max_workgroup_size)


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

    Example::

        mine = ring[amd.wave_id() * 2048:]
    """,
    samples=(Sample(_V + "amd.wave_id()", "v_readfirstlane_b32 %s, %v", _REF),),
    refusals=(Refusal("amd.wave_id(1)", "wave_id takes ()"),),
).intrinsic()


def _lane_id_codegen(context, builder, sig, args):
    return emit_lane_id(builder, context.arch)


lane_id = AmdOp(
    "amd.lane_id", lambda: (types.int32, _lane_id_codegen), result="int", need=targets.Requirement(ALL, 22),
    llvm=("llvm.amdgcn.mbcnt.lo", "llvm.amdgcn.mbcnt.hi"), isa=("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32"),
    doc="""This lane's index within its wave (0..63 on gfx942/gfx950, 0..31 on gfx1250).

    ISA: ``v_mbcnt_lo_u32_b32`` / ``v_mbcnt_hi_u32_b32`` (lo only on wave32).  All archs.

    Example::

        partner = amd.ds_bpermute(x, amd.lane_id() ^ 1)
    """,
    samples=(Sample(_V + "numba.float32(amd.lane_id())",
                    {"gfx1250": "v_mbcnt_lo_u32_b32 %v, -1, 0",
                     "": ("v_mbcnt_lo_u32_b32 %v, -1, 0", "v_mbcnt_hi_u32_b32 %v, -1, %v")}, _REF),),
    refusals=(Refusal("amd.lane_id(1)", "lane_id takes ()"),),
).intrinsic()


readfirstlane = AmdOp(
    "amd.readfirstlane",
    _same(lambda context, builder, sig, args: emit_readfirstlane(builder, context.arch, args[0])),
    (LaneValue("value", wide=True),), result="int | float", need=targets.Requirement(ALL, 22),
    llvm=("llvm.amdgcn.readfirstlane",), isa=("v_readfirstlane_b32",),
    doc="""The value of the wave's lowest active lane, in every lane: wave-uniform.

    ISA: ``v_readfirstlane_b32`` (two for a 64-bit value).  All archs.  *value*: int32,
    uint32, float32 or their 64-bit types.  The result is in an SGPR, so LLVM treats what is
    computed from it as uniform: an LDS address passed through it sets ``M0`` with a plain
    ``s_mov`` instead of a ``v_readfirstlane`` before each LDS DMA (docs/amd.md, M0 once per
    wave).

    Example::

        base = amd.readfirstlane(numba.int32(slot * 256))
    """,
    samples=(Sample(_V + "amd.readfirstlane(x[lane])", "v_readfirstlane_b32 %s, %v", _REF),),
    refusals=(Refusal(_V + "amd.readfirstlane(x)", "amd.readfirstlane: argument 'value' must be an int32, uint32 or float32"),),
).intrinsic()


def _readlane(value, lane):
    constant = lane.literal_value if isinstance(lane, types.IntegerLiteral) else None

    def codegen(context, builder, sig, args):
        index = constant if constant is not None else _lane_index(context, builder, sig.args[1], args[1])
        return emit_readlane(builder, context.arch, args[0], index)
    return value, codegen


readlane = AmdOp(
    "amd.readlane", _readlane, (LaneValue("value", wide=True), Int("lane", lo=0, hi=63, rule="must be a lane of the wave, 0..63 (0..31 on gfx1250)")),
    result="int | float", need=targets.Requirement(ALL, 22),
    llvm=("llvm.amdgcn.readlane",), isa=("v_readlane_b32",),
    doc="""The value of lane *lane* of the wave, in every lane: wave-uniform.

    ISA: ``v_readlane_b32``.  All archs.  *lane*: a constant below the wave size (64 on
    gfx942/gfx950, 32 on gfx1250; checked), or a wave-uniform integer (a lane-varying one is
    taken from the first active lane).

    Example::

        total = amd.readlane(partial, 63)
    """,
    samples=(Sample(_V + "amd.readlane(x[lane], 5)", "v_readlane_b32 %s, %v, 5", _REF),),
    refusals=(Refusal(_V + "amd.readlane(x[lane], 64)", "amd.readlane: argument 'lane' must be a lane of the wave"),),
).intrinsic()


def _crossbar(emit):
    def codegen(context, builder, sig, args):
        return emit(builder, context.arch, args[0], _lane_index(context, builder, sig.args[1], args[1]))
    return _same(codegen)


ds_bpermute = AmdOp(
    "amd.ds_bpermute", _crossbar(emit_ds_bpermute), (LaneValue("value"), Int("src_lane")),
    result="int | float", need=targets.Requirement(ALL, 22), llvm=("llvm.amdgcn.ds.bpermute",), isa=("ds_bpermute_b32",),
    doc="""Gather: this lane gets *value* of lane *src_lane* (modulo the wave size).

    ISA: ``ds_bpermute_b32``, which takes the byte address ``4 * src_lane`` (emitted here) and
    reads no LDS memory; it waits on ``lgkmcnt``.  All archs.  *value*: int32, uint32 or
    float32; *src_lane*: an integer, per lane.

    Example::

        right = amd.ds_bpermute(x, lane + 1)    # lane 63 reads lane 0
    """,
    samples=(Sample(_V + "amd.ds_bpermute(x[lane], lane * 3)", "ds_bpermute_b32 %v, %v, %v", _REF),),
    refusals=(Refusal(_V + "amd.ds_bpermute(x[lane], 1.5)", "amd.ds_bpermute: argument 'src_lane' must be an integer"),),
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

    Example::

        y = amd.ds_permute(x, 63 - lane)    # reverse the wave
    """,
    samples=(Sample(_V + "amd.ds_permute(x[lane], lane * 5)", "ds_permute_b32 %v, %v, %v", _REF),),
    refusals=(Refusal(_V + "amd.ds_permute(x[lane], 1.5)", "amd.ds_permute: argument 'dst_lane' must be an integer"),),
).intrinsic()


def _ds_swizzle(value, pattern):
    code = swizzle_pattern("ds_swizzle", const(pattern, "ds_swizzle", "pattern"))

    def codegen(context, builder, sig, args):
        return emit_ds_swizzle(builder, context.arch, args[0], code)
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

    Example::

        other_half = amd.ds_swizzle(x, "swizzle(SWAP,16)")
    """,
    samples=(Sample(_V + 'amd.ds_swizzle(x[lane], "swizzle(SWAP,16)")',
                    "ds_swizzle_b32 %v, %v offset:swizzle(SWAP,16)", _REF),),
    refusals=(Refusal(_V + "amd.ds_swizzle(x[lane], 0xE000)", "amd.ds_swizzle: argument 'pattern' must be quad-perm mode"),),
).intrinsic()


def _dpp(value, ctrl, row_mask, bank_mask, bound_ctrl, old):
    ctrl_value = const(ctrl, "dpp", "ctrl")
    dpp_syntax("dpp", ctrl_value)  # the syntax now, the arch when lowered
    masks = [const(row_mask, "dpp", "row_mask"), const(bank_mask, "dpp", "bank_mask")]
    bound = const(bound_ctrl, "dpp", "bound_ctrl")
    given_old = is_given(old)

    def codegen(context, builder, sig, args):
        return emit_dpp(builder, context.arch, args[0], ctrl_value, *masks, bound,
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

    Example::

        left = amd.dpp(x, "row_shr:1", bound_ctrl=True)    # lane 0 of a row gets 0
    """,
    samples=(Sample(_V + 'amd.dpp(x[lane], "row_shr:1", bound_ctrl=True)',
                    "v_mov_b32_dpp %v, %v row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1", _REF),),
    refusals=(Refusal(_V + 'amd.dpp(x[lane], "row_shr:16")', "amd.dpp: argument 'ctrl' must be a DPP control: row_shr takes 1..15; got 'row_shr:16'"),
              Refusal(_V + 'amd.dpp(x[lane], "row_shr:1", row_mask=16)', "amd.dpp: argument 'row_mask' must be an int in [0, 15]")),
).intrinsic()


def _dpp8(value, selects):
    code_selects = const(selects, "dpp8", "selects")
    dpp8_selects("dpp8", code_selects)

    def codegen(context, builder, sig, args):
        return emit_dpp8(builder, context.arch, args[0], code_selects)
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

    Example::

        r = amd.dpp8(x, (7, 6, 5, 4, 3, 2, 1, 0))    # reverse each 8 lanes
    """,
    samples=(Sample(_V + "amd.dpp8(x[lane], (7, 6, 5, 4, 3, 2, 1, 0))",
                    "v_mov_b32_dpp %v, %v dpp8:[7,6,5,4,3,2,1,0]", _REF),),
    refusals=(Refusal(_V + "amd.dpp8(x[lane], (1, 2))", "amd.dpp8: argument 'selects' must be a tuple of 8 lane numbers"),),
).intrinsic()


def _permlane(name, emit):
    def typing(value, sel_lo, sel_hi, fi, bound_ctrl):
        consts = [sel.literal_value if isinstance(sel, types.IntegerLiteral) else None for sel in (sel_lo, sel_hi)]
        flags = [const(fi, name, "fi"), const(bound_ctrl, name, "bound_ctrl")]

        def codegen(context, builder, sig, args):
            sels = [c if c is not None else _lane_index(context, builder, sig.args[k + 1], args[k + 1])
                    for k, c in enumerate(consts)]
            return emit(builder, context.arch, args[0], *sels, None, *flags)
        return value, codegen
    return typing


_PERMLANE_OPERANDS = (LaneValue("value"), Int("sel_lo", lo=0, hi=0xFFFFFFFF), Int("sel_hi", lo=0, hi=0xFFFFFFFF),
                      Flag("fi", False), Flag("bound_ctrl", False))

permlane16 = AmdOp(
    "amd.permlane16", _permlane("permlane16", emit_permlane16), _PERMLANE_OPERANDS,
    result="int | float", need=targets.Requirement(GFX1250, 22), llvm=("llvm.amdgcn.permlane16",), isa=("v_permlane16_b32",),
    doc="""Lane k of each row of 16 gets *value* of lane ``sel[k]`` of the same row, ``sel[k]``
    being nibble k of the 64-bit ``sel_hi:sel_lo`` (lanes 0-7 from *sel_lo*).

    ISA: ``v_permlane16_b32 vdst, vsrc, sel_lo, sel_hi``.  gfx1250 only.  *sel_lo*, *sel_hi*:
    wave-uniform 32-bit integers (constants are checked).  *fi* (fetch inactive) and
    *bound_ctrl*: constant bools, as the ISA's.

    Example::

        r = amd.permlane16(x, 0x89ABCDEF, 0x01234567)    # reverse each row: lane 0 reads 15
    """,
    samples=(Sample(_V + "amd.permlane16(x[lane], 0x76543210, 0xFEDCBA98)",
                    "v_permlane16_b32 %v, %v, %s, 0xfedcba98", _REF),),
    refusals=(Refusal(_V + "amd.permlane16(x[lane], 1 << 32, 0)", "amd.permlane16: argument 'sel_lo' must be an int in"),),
).intrinsic()

permlanex16 = AmdOp(
    "amd.permlanex16", _permlane("permlanex16", emit_permlanex16), _PERMLANE_OPERANDS,
    result="int | float", need=targets.Requirement(GFX1250, 22), llvm=("llvm.amdgcn.permlanex16",), isa=("v_permlanex16_b32",),
    doc="""As :func:`permlane16`, but lane k of each row reads lane ``sel[k]`` of the *other* row of
    its pair (row 0 reads row 1, row 1 reads row 0).

    ISA: ``v_permlanex16_b32``.  gfx1250 only.

    Example::

        other = amd.permlanex16(x, 0x76543210, 0xFEDCBA98)    # lane i gets lane i ^ 16
    """,
    samples=(Sample(_V + "amd.permlanex16(x[lane], 0x76543210, 0xFEDCBA98)",
                    "v_permlanex16_b32 %v, %v, %s, 0xfedcba98", _REF),),
    refusals=(Refusal(_V + "amd.permlanex16(x[lane], 0, 0, fi=1)", "amd.permlanex16: argument 'fi' must be True or False"),),
).intrinsic()


def _swap(emit):
    def typing(a, b):
        pair = types.UniTuple(a, 2)

        def codegen(context, builder, sig, args):
            new_a, new_b = emit(builder, context.arch, args[0], args[1])
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

    Example::

        lo, hi = amd.permlane16_swap(x, x)    # lo: rows 0,0,2,2 of x; hi: rows 1,1,3,3
    """,
    samples=(Sample("a, b = amd.permlane16_swap(x[lane], x[lane])\n" + _V + "a + b",
                    "v_permlane16_swap_b32_e32 %v, %v", _REF),),
    refusals=(Refusal("a, b = amd.permlane16_swap(x[lane], lane)", "amd.permlane16_swap: argument 'b' must have the type of a"),),
).intrinsic()

permlane32_swap = AmdOp(
    "amd.permlane32_swap", _swap(emit_permlane32_swap), (LaneValue("a"), Like("b", "a")),
    result="tuple[int | float, int | float]", need=targets.Requirement((targets.CDNA4,), 22), llvm=("llvm.amdgcn.permlane32.swap",),
    isa=("v_permlane32_swap_b32",),
    doc="""Swap half waves between two values: lanes 32-63 of *a* trade places with lanes 0-31 of
    *b*; returns the new ``(a, b)``.

    ISA: ``v_permlane32_swap_b32``.  gfx950 only (wave64).

    Example::

        lo, hi = amd.permlane32_swap(x, x)    # lo: lanes 0-31 twice; hi: 32-63 twice
    """,
    samples=(Sample("a, b = amd.permlane32_swap(x[lane], x[lane])\n" + _V + "a + b",
                    "v_permlane32_swap_b32_e32 %v, %v", _REF),),
    refusals=(Refusal("a, b = amd.permlane32_swap(x[lane], lane)", "amd.permlane32_swap: argument 'b' must have the type of a"),),
).intrinsic()


_REDUCTION = Const("op", annotation="str", choices=REDUCTIONS)


def _row_reduce(value, op, width):
    name, size = const(op, "row_reduce", "op"), const(width, "row_reduce", "width")

    def codegen(context, builder, sig, args):
        return emit_row_reduce(builder, context.arch, args[0], name, size, LANE_KINDS[value])
    return value, codegen


row_reduce = AmdOp(
    "amd.row_reduce", _row_reduce, (LaneValue("value"), _REDUCTION,
                                        Const("width", 16, choices=(2, 4, 8, 16, 32, 64),
                                              rule="must be 2, 4, 8, 16, 32 or (gfx942, gfx950) 64")),
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

    Example::

        s = amd.row_reduce(x, "sum", 16)    # the sum of each row of 16 lanes
    """,
    samples=(Sample(_V + 'amd.row_reduce(x[lane], "sum", 4)',
                    ("v_add_f32_dpp %v, %v, %v quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf bound_ctrl:1",
                     "v_add_f32_dpp %v, %v, %v quad_perm:[2,3,0,1] row_mask:0xf bank_mask:0xf bound_ctrl:1"), _REF),),
    refusals=(Refusal(_V + 'amd.row_reduce(x[lane], "sum", 3)', "amd.row_reduce: argument 'width' must be 2, 4, 8, 16, 32"),
              Refusal(_V + 'amd.row_reduce(x[lane], "prod")', "amd.row_reduce: argument 'op' must be one of")),
).intrinsic()


def _wave_reduce(value, op):
    name = const(op, "wave_reduce", "op")

    def codegen(context, builder, sig, args):
        return emit_wave_reduce(builder, context.arch, args[0], name, LANE_KINDS[value])
    return value, codegen


wave_reduce = AmdOp(
    "amd.wave_reduce", _wave_reduce, (LaneValue("value"), _REDUCTION),
    result="int | float", need=targets.Requirement(ALL, 22), llvm=("llvm.amdgcn.update.dpp", "llvm.amdgcn.readlane"),
    isa=("v_max_f32_dpp", "v_readlane_b32"),
    doc="""Reduce *value* over the whole wave (64 lanes on gfx942/gfx950, 32 on gfx1250);
    the result is wave-uniform (an SGPR) and the same in every lane.

    *op*: ``"sum"``, ``"max"`` or ``"min"``; *value*: int32, uint32 or float32, as
    :func:`row_reduce`.  ISA: the 16-lane DPP steps of :func:`row_reduce`, then on
    gfx942/gfx950 ``row_bcast:15`` / ``row_bcast:31`` folded into the op and
    ``v_readlane_b32 s, v, 63`` (Triton's full-wave lowering), on gfx1250
    ``v_permlanex16_b32`` and ``v_readlane_b32 s, v, 31``.  All archs.

    Example::

        total = amd.wave_reduce(partial, "max")
    """,
    samples=(Sample(_V + 'amd.wave_reduce(x[lane], "max")',
                    {"gfx1250": "v_readlane_b32 %s, %v, 31", "": "v_readlane_b32 %s, %v, 63"}, _REF),),
    refusals=(Refusal(_V + 'amd.wave_reduce(x[lane], "prod")', "amd.wave_reduce: argument 'op' must be one of"),),
).intrinsic()
