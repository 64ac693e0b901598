"""A numpy model of the AMD cross-lane instructions of :mod:`.lanes`, lane by lane.

Each function takes one value per lane of a wave (a 1-D numpy array of 64 values on
gfx942/gfx950, 32 on gfx1250) and returns what each lane holds after the instruction,
with **every lane of the wave active** (EXEC all ones), the case the ops of
:mod:`.lanes` are documented for.  The rules are the ISA's, as LLVM's AMDGPU
documentation (AMDGPUModifierSyntax: ``dpp_ctrl``, ``dpp32_ctrl``, ``dpp16_ctrl``,
``dpp8``, the ``ds_swizzle`` pattern) and the LLVM intrinsic reference
(``llvm.amdgcn.permlane16.swap``, ``permlane32.swap``, ``ds.permute``) state them:

* lanes form *rows* of 16 and, within a row, *banks* of 4;
* a DPP lane whose source is invalid (outside its row for the row shifts, no source for
  the broadcasts) reads 0 with ``bound_ctrl``, and otherwise is not written (keeps
  *old*); so is a lane of a row or bank left out of ``row_mask`` / ``bank_mask``.

No AMD GPU was used: the model is checked against hand-written expectations from those
rules (tests/amd/test_amd_lanes.py), and the reduction plans of :mod:`.lanes` are
checked against it.  It is not a simulator of kernels.
"""
import numpy as np

ROW = 16  # lanes per DPP row
BANK = 4  # lanes per DPP bank


def _check_wave(values):
    values = np.asarray(values)
    if values.ndim != 1 or len(values) not in (32, 64):
        raise ValueError(f"one value per lane of a wave (32 or 64 lanes), got shape "
                         f"{values.shape}")
    return values


def readfirstlane(values):
    """``v_readfirstlane_b32``: the value of the lowest active lane (lane 0 here)."""
    return _check_wave(values)[0]


def readlane(values, lane):
    """``v_readlane_b32``: the value of *lane* (taken modulo the wave size)."""
    values = _check_wave(values)
    return values[lane % len(values)]


def ds_bpermute(values, src_lane):
    """``ds_bpermute_b32`` (backward permute, a gather): lane i gets
    ``values[src_lane[i] mod wave]``.  The ISA takes the byte address ``4 * src_lane``
    and uses its bits above 1, modulo the wave size."""
    values = _check_wave(values)
    return values[np.asarray(src_lane) % len(values)]


def ds_permute(values, dst_lane):
    """``ds_permute_b32`` (forward permute, a scatter): lane i's value goes to lane
    ``dst_lane[i] mod wave``; when several lanes write one lane the highest-numbered
    writer wins; a lane nobody writes gets 0."""
    values = _check_wave(values)
    out = np.zeros_like(values)
    for i, dst in enumerate(np.asarray(dst_lane) % len(values)):
        out[dst] = values[i]  # ascending order: the highest writer stays
    return out


def swizzle_source(pattern, lane):
    """Source lane of *lane* for a ``ds_swizzle_b32`` *pattern* (quad-perm or bitmask
    mode)."""
    if pattern & 0xFF00 == 0x8000:  # quad-perm mode: 4 x 2-bit selects, offset[7:0]
        return (lane & ~3) | ((pattern >> (2 * (lane & 3))) & 3)
    if pattern < 0x8000:  # bitmask mode, within each group of 32 lanes
        and_mask, or_mask, xor_mask = pattern & 0x1F, (pattern >> 5) & 0x1F, (pattern >> 10) & 0x1F
        return (lane & ~0x1F) | (((lane & and_mask) | or_mask) ^ xor_mask)
    raise ValueError(f"pattern {pattern:#06x} is neither quad-perm nor bitmask mode")


def ds_swizzle(values, pattern):
    """``ds_swizzle_b32 offset:pattern``: lane i gets the value of
    :func:`swizzle_source` (pattern, i)."""
    values = _check_wave(values)
    return values[[swizzle_source(pattern, i) for i in range(len(values))]]


def dpp_source(ctrl, lane, wave):
    """Source lane of *lane* for the DPP control *ctrl* (an encoding of
    :mod:`.lanes`), or None when the source is invalid."""
    row, pos = lane // ROW, lane % ROW
    base = row * ROW
    if ctrl <= 0xFF:  # quad_perm
        return (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3)
    kind, n = ctrl & 0x1F0, ctrl & 0xF
    if kind == 0x100 and n:  # row_shl:n -- lane i reads i + n of its row
        return lane + n if pos + n < ROW else None
    if kind == 0x110 and n:  # row_shr:n -- lane i reads i - n of its row
        return lane - n if pos >= n else None
    if kind == 0x120 and n:  # row_ror:n -- rotate right within the row
        return base + (pos - n) % ROW
    if ctrl == 0x130:  # wave_shl:1
        return lane + 1 if lane + 1 < wave else None
    if ctrl == 0x134:  # wave_rol:1
        return (lane + 1) % wave
    if ctrl == 0x138:  # wave_shr:1
        return lane - 1 if lane else None
    if ctrl == 0x13C:  # wave_ror:1
        return (lane - 1) % wave
    if ctrl == 0x140:  # row_mirror
        return base + ROW - 1 - pos
    if ctrl == 0x141:  # row_half_mirror
        return base + (pos & 8) + 7 - (pos & 7)
    if ctrl == 0x142:  # row_bcast:15 -- lane 15 of the previous row
        return base - 1 if row else None
    if ctrl == 0x143:  # row_bcast:31 -- lane 31, to rows 2 and 3
        return 31 if row >= 2 else None
    if kind == 0x150:  # row_newbcast:n (gfx90a+) / row_share:n (gfx10+)
        return base + n
    if kind == 0x160:  # row_xmask:n (gfx10+)
        return base + (pos ^ n)
    raise ValueError(f"dpp ctrl {ctrl:#x} has no model")


def dpp(values, ctrl, row_mask=0xF, bank_mask=0xF, bound_ctrl=False, old=None):
    """``v_mov_b32_dpp`` with *ctrl*: what each lane holds afterwards.

    A lane of a row not in *row_mask* or of a bank not in *bank_mask* keeps *old*; so
    does a lane whose source is invalid, unless *bound_ctrl*, which gives it 0.  *old*
    defaults to *values* (LLVM's ``update.dpp`` takes it as an operand)."""
    values = _check_wave(values)
    wave = len(values)
    old = values if old is None else np.broadcast_to(np.asarray(old, values.dtype), values.shape)
    out = np.array(old, copy=True)
    for lane in range(wave):
        if not (row_mask >> (lane // ROW)) & 1 or not (bank_mask >> ((lane // BANK) % 4)) & 1:
            continue
        src = dpp_source(ctrl, lane, wave)
        if src is None:
            if bound_ctrl:
                out[lane] = 0
            continue
        out[lane] = values[src]
    return out


def dpp8(values, selects):
    """``v_mov_b32_dpp dpp8:[s0..s7]``: lane i reads lane ``(i & ~7) | selects[i & 7]``."""
    values = _check_wave(values)
    return values[[(i & ~7) | selects[i & 7] for i in range(len(values))]]


def _lane_selects(sel_lo, sel_hi):
    both = (sel_hi & 0xFFFFFFFF) << 32 | (sel_lo & 0xFFFFFFFF)
    return [(both >> (4 * k)) & 0xF for k in range(ROW)]


def permlane16(values, sel_lo, sel_hi):
    """``v_permlane16_b32``: lane k of each row reads lane ``sel[k]`` of the same row,
    ``sel[k]`` being nibble k of ``sel_hi:sel_lo`` (lanes 0-7 from *sel_lo*)."""
    values = _check_wave(values)
    sel = _lane_selects(sel_lo, sel_hi)
    return values[[(i // ROW) * ROW + sel[i % ROW] for i in range(len(values))]]


def permlanex16(values, sel_lo, sel_hi):
    """``v_permlanex16_b32``: as :func:`permlane16`, reading the *other* row of each
    pair of rows (row 0 reads row 1 and row 1 reads row 0)."""
    values = _check_wave(values)
    sel = _lane_selects(sel_lo, sel_hi)
    return values[[((i // ROW) ^ 1) * ROW + sel[i % ROW] for i in range(len(values))]]


def _rows(values):
    return [values[r * ROW:(r + 1) * ROW] for r in range(len(values) // ROW)]


def permlane16_swap(a, b):
    """``v_permlane16_swap_b32``: the odd rows of *a* trade places with the even rows of
    *b*; returns the new (a, b)."""
    ra, rb = _rows(_check_wave(a).copy()), _rows(_check_wave(b).copy())
    for r in range(0, len(ra), 2):
        ra[r + 1], rb[r] = rb[r].copy(), ra[r + 1].copy()
    return np.concatenate(ra), np.concatenate(rb)


def permlane32_swap(a, b):
    """``v_permlane32_swap_b32`` (wave64): rows 2 and 3 of *a* trade places with rows 0
    and 1 of *b*; returns the new (a, b)."""
    a, b = _check_wave(a), _check_wave(b)
    if len(a) != 64:
        raise ValueError("permlane32_swap works on a wave of 64 lanes")
    return np.concatenate([a[:32], b[:32]]), np.concatenate([a[32:], b[32:]])


def combine(op, x, y):
    """The reduction *op* ("sum", "max", "min") of two lane arrays, in their dtype
    (float32 sums are rounded as the hardware's ``v_add_f32``; int32 wraps)."""
    with np.errstate(over="ignore"):
        if op == "sum":
            return (x + y).astype(x.dtype)
        if op == "max":
            return np.fmax(x, y)  # maxNum: a NaN operand is ignored
        if op == "min":
            return np.fmin(x, y)
    raise ValueError(f"unknown reduction {op!r}")


def run_plan(plan, values, op):
    """Run a reduction *plan* of :func:`numba_tma.amd.lanes.reduction_plan` on *values*
    with *op*: each step moves values between lanes and combines them with each lane's
    own; a ``readlane`` step ends the plan and gives every lane that lane's value."""
    values = _check_wave(values)
    for step in plan:
        kind = step[0]
        if kind == "dpp":
            _, ctrl, row_mask, bank_mask, bound_ctrl = step
            old = identity_of(op, values.dtype)
            if values.dtype.kind == "f" and (row_mask, bank_mask) != (0xF, 0xF):
                old = np.nan  # unspecified in the emitted code: it must not be read
            moved = dpp(values, ctrl, row_mask, bank_mask, bound_ctrl, old=old)
            values = combine(op, values, moved)
        elif kind == "swizzle":
            values = combine(op, values, ds_swizzle(values, step[1]))
        elif kind == "permlanex16":
            values = combine(op, values, permlanex16(values, step[1], step[2]))
        elif kind == "permlane16_swap":
            values = combine(op, *permlane16_swap(values, values))
        elif kind == "permlane32_swap":
            values = combine(op, *permlane32_swap(values, values))
        elif kind == "readlane":
            values = np.full_like(values, readlane(values, step[1]))
        else:
            raise ValueError(f"unknown plan step {step!r}")
    return values


def identity_of(op, dtype):
    """The value *op* leaves unchanged, in *dtype* (0 for sums, the lowest value for
    max, the highest for min; +0.0 for float sums, which leaves -0.0 as +0.0: no step
    of a plan with full masks reads it)."""
    dtype = np.dtype(dtype)
    if op == "sum":
        return dtype.type(0)
    if dtype.kind == "f":
        return dtype.type(-np.inf if op == "max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if op == "max" else info.max)


def group_reduce(values, op, width):
    """What each lane should hold after reducing its aligned group of *width* lanes:
    numpy's own reduction of the group (in float32 for float32 values, so the result
    may differ from a plan's in the last bits, as any other summation order would)."""
    values = _check_wave(values)
    ufunc = {"sum": np.add, "max": np.fmax, "min": np.fmin}[op]
    groups = values.reshape(-1, width)
    with np.errstate(over="ignore"):
        reduced = ufunc.reduce(groups, axis=1, dtype=values.dtype)
    return np.repeat(reduced, width).astype(values.dtype)
