"""Cross-lane ops (``numba_tma.amd.lanes``): the lane model against the ISA's rules, the
reduction plans against the model, the assembly of every op on every arch, and the
errors for bad arguments.

The expected lanes and instructions are written by hand from the ISA texts the ops cite
(LLVM's AMDGPUModifierSyntax for ``dpp_ctrl`` / ``dpp16_ctrl`` / ``dpp32_ctrl`` /
``dpp8`` / the swizzle pattern; the CDNA ISA's DS_SWIZZLE_B32, DS_PERMUTE_B32,
DS_BPERMUTE_B32 and V_PERMLANE16_SWAP_B32 pseudocode), not produced by the code under
test.  Nothing runs on AMD hardware.
"""
import re

import numba
import numpy as np
import pytest

import numba_tma.amd as amd
from amd_asm import ARCHS, GFX9, instructions
from numba_tma.amd import AMDArgumentError, UnsupportedArchError, lanes
from numba_tma.amd import lanes_model as model

ROW = np.arange(16)


def _wave(n=64, base=0):
    return np.arange(base, base + n, dtype=np.int32)


# -- the model, lane by lane, against the ISA's rules --------------------------------------

def test_dpp_row_shifts_and_rotate():
    """row_shr:n -- lane i of a row reads lane i - n; row_shl:n reads i + n; a lane whose
    source is outside its row keeps old (or reads 0 with bound_ctrl); row_ror wraps."""
    v = _wave(base=100)
    shr = model.dpp(v, 0x111, old=-1)  # row_shr:1
    assert list(shr[:16]) == [-1] + list(range(100, 115))
    assert list(shr[16:20]) == [-1, 116, 117, 118]  # row 1 starts over
    assert list(model.dpp(v, 0x111, bound_ctrl=True)[:3]) == [0, 100, 101]
    shl = model.dpp(v, 0x104, old=-1)  # row_shl:4
    assert list(shl[:16]) == list(range(104, 116)) + [-1, -1, -1, -1]
    ror = model.dpp(v, 0x121)  # row_ror:1
    assert list(ror[:16]) == [115] + list(range(100, 115))


def test_dpp_mirrors_and_quad_perm():
    v = _wave()
    assert list(model.dpp(v, 0x140)[16:32]) == list(range(31, 15, -1))  # row_mirror
    assert list(model.dpp(v, 0x141)[:16]) == [7, 6, 5, 4, 3, 2, 1, 0,  # row_half_mirror
                                              15, 14, 13, 12, 11, 10, 9, 8]
    # quad_perm:[1,0,3,2] = 0xB1; [2,3,0,1] = 0x4E; [3,2,1,0] = 0x1B
    assert list(model.dpp(v, 0xB1)[:8]) == [1, 0, 3, 2, 5, 4, 7, 6]
    assert list(model.dpp(v, 0x4E)[:8]) == [2, 3, 0, 1, 6, 7, 4, 5]
    assert list(model.dpp(v, 0x1B)[60:]) == [63, 62, 61, 60]


def test_dpp_wave_shifts_gfx9():
    v = _wave()
    assert list(model.dpp(v, 0x138, old=-1)[[0, 1, 16, 63]]) == [-1, 0, 15, 62]  # wave_shr:1
    assert list(model.dpp(v, 0x13C)[[0, 1, 63]]) == [63, 0, 62]  # wave_ror:1
    assert list(model.dpp(v, 0x130, old=-1)[[0, 62, 63]]) == [1, 63, -1]  # wave_shl:1
    assert list(model.dpp(v, 0x134)[[0, 63]]) == [1, 0]  # wave_rol:1


def test_dpp_row_broadcasts_and_masks():
    """row_bcast:15 -- lane 15 of each row to the next row (row 0 has no source);
    row_bcast:31 -- lane 31 to rows 2 and 3; rows outside row_mask keep old."""
    v = _wave()
    b15 = model.dpp(v, 0x142, row_mask=0xA, old=-1)
    assert set(b15[:16]) == {-1} and set(b15[16:32]) == {15}
    assert set(b15[32:48]) == {-1} and set(b15[48:]) == {47}
    b31 = model.dpp(v, 0x143, row_mask=0xC, old=-1)
    assert set(b31[:32]) == {-1} and set(b31[32:]) == {31}
    assert set(model.dpp(v, 0x143, old=-1)[:32]) == {-1}  # no source for rows 0, 1
    # bank_mask 0x5: banks 0 and 2 of each row (lanes 0-3, 8-11) move, the others keep old
    moved = model.dpp(v, 0x140, bank_mask=0x5, old=-1)
    assert list(moved[:16]) == [15, 14, 13, 12, -1, -1, -1, -1, 7, 6, 5, 4, -1, -1, -1, -1]


def test_dpp_share_and_xmask_gfx10_plus():
    """row_share:n (row_newbcast:n on gfx90a+) -- lane n of the row to the whole row;
    row_xmask:n -- lane i reads lane i ^ n of its row."""
    v = _wave(32)
    assert set(model.dpp(v, 0x153)[:16]) == {3} and set(model.dpp(v, 0x153)[16:]) == {19}
    assert list(model.dpp(v, 0x168)[:16]) == [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5,
                                              6, 7]
    assert list(model.dpp(v, 0x161)[16:20]) == [17, 16, 19, 18]


def test_dpp8():
    v = _wave(32)
    assert list(model.dpp8(v, (7, 6, 5, 4, 3, 2, 1, 0))[:16]) == [7, 6, 5, 4, 3, 2, 1, 0,
                                                                   15, 14, 13, 12, 11, 10, 9, 8]


def test_swizzle_quad_perm_and_bitmask_modes():
    """offset 0x80xx: 4 x 2-bit selects; below 0x8000: and | or << 5 | xor << 10, within
    each 32 lanes (the ISA's examples: SWAPX16 = xor 0x10, BCASTX8 = and 0x18)."""
    v = _wave()
    assert list(model.ds_swizzle(v, 0x801B)[:8]) == [3, 2, 1, 0, 7, 6, 5, 4]
    swap16 = model.ds_swizzle(v, 0x1F | 0x10 << 10)
    assert list(swap16[[0, 15, 16, 31, 32, 48]]) == [16, 31, 0, 15, 48, 32]
    bcast8 = model.ds_swizzle(v, 0x18 | 2 << 5)  # lane 2 of each 8
    assert list(bcast8[:16]) == [2] * 8 + [10] * 8 and bcast8[40] == 42
    reverse4 = model.ds_swizzle(v, 0x1F | 3 << 10)
    assert list(reverse4[:8]) == [3, 2, 1, 0, 7, 6, 5, 4]


def test_ds_permute_and_bpermute():
    """The ISA's 4-lane examples, stretched to a wave: bpermute gathers, permute scatters
    (highest-numbered sender wins, an unsent lane gets 0)."""
    v = _wave(base=10)
    addr = np.zeros(64, dtype=np.int32)
    addr[:4] = [0, 0, 3, 1]  # the ISA's VGPR[ADDR] = {0, 0, 12, 4} bytes, as lanes
    assert list(model.ds_bpermute(v, addr)[:4]) == [10, 10, 13, 11]
    out = model.ds_permute(v, np.r_[[0, 0, 3, 1], np.arange(4, 64)])
    assert list(out[:4]) == [11, 13, 0, 12]
    assert model.ds_bpermute(v, np.full(64, 65))[0] == 11  # modulo the wave


def test_permlanes():
    v, w = _wave(), _wave(base=100)
    a, b = model.permlane16_swap(v, w)
    assert list(a) == list(range(16)) + list(range(100, 116)) + list(range(32, 48)) + list(
        range(132, 148))
    assert list(b) == list(range(16, 32)) + list(range(116, 132)) + list(range(48, 64)) + list(
        range(148, 164))
    a, b = model.permlane32_swap(v, w)
    assert list(a) == list(range(32)) + list(range(100, 132))
    assert list(b) == list(range(32, 64)) + list(range(132, 164))
    v32 = _wave(32)
    assert list(model.permlanex16(v32, 0x76543210, 0xFEDCBA98)) == list(range(16, 32)) + list(
        range(16))
    assert list(model.permlane16(v32, 0x89ABCDEF, 0x01234567)[:16]) == list(range(15, -1, -1))


# -- encodings --------------------------------------------------------------------------

@pytest.mark.parametrize("text,code", [
    ("row_shr:1", 0x111), ("row_shl:15", 0x10F), ("row_ror:8", 0x128),
    ("quad_perm:[1,0,3,2]", 0xB1), ("quad_perm:[ 3, 2, 1, 0 ]", 0x1B), ("row_mirror", 0x140),
    ("row_half_mirror", 0x141), ("wave_shr:1", 0x138), ("row_bcast:15", 0x142),
    ("row_bcast:31", 0x143), ("row_newbcast:3", 0x153), ("row_share:0", 0x150),
    ("row_xmask:8", 0x168),
])
def test_dpp_controls_encode_as_the_isa_table(text, code):
    assert lanes.dpp_syntax("dpp", text)[0] == code


@pytest.mark.parametrize("text,code", [
    ("swizzle(SWAP,16)", 0x401F), ("swizzle(QUAD_PERM,3,2,1,0)", 0x801B),
    ("swizzle(BROADCAST,8,2)", 0x18 | 2 << 5), ("swizzle(REVERSE,4)", 0x1F | 3 << 10),
    ('swizzle(BITMASK_PERM,"01pi0")', 0x06 | 0x08 << 5 | 0x02 << 10),
])
def test_swizzle_text_encodes_as_llvm_documents(text, code):
    assert lanes.swizzle_pattern("ds_swizzle", text) == code


# -- the reduction plans, run on the model ---------------------------------------------

def _values(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        return rng.standard_normal(n).astype(np.float32)
    if dtype == np.int32:
        return rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)


PLANS = [(arch, width) for arch in ARCHS for width in lanes.row_widths(arch)]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
@pytest.mark.parametrize("op", lanes.REDUCTIONS)
@pytest.mark.parametrize("arch,width", PLANS)
def test_reduction_plan_reduces_every_group(arch, width, op, dtype):
    """Every lane of each group of *width* lanes ends with the group's reduction; for
    float32 every lane of a group holds the same bits (sums may differ from numpy's
    order in the last bits); int32 sums wrap."""
    wave = amd.ARCHS[arch].wave_size
    for seed in range(3):
        values = _values(dtype, wave, seed)
        got = model.run_plan(lanes.reduction_plan(arch, width), values, op)
        want = model.group_reduce(values, op, width)
        if dtype == np.float32 and op == "sum":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        else:
            assert np.array_equal(got, want)
        groups = got.view(np.uint32).reshape(-1, width)
        assert (groups == groups[:, :1]).all()


@pytest.mark.parametrize("arch", ARCHS)
def test_wave_plan_reads_the_total_from_one_lane(arch):
    plan = lanes.wave_plan(arch)
    wave = amd.ARCHS[arch].wave_size
    assert plan[-1] == ("readlane", wave - 1)
    values = _values(np.int32, wave, 7)
    got = model.run_plan(plan, values, "sum")
    assert set(got) == {values.sum(dtype=np.int32)}  # wrapping, as v_add_u32


def test_float_max_ignores_nan_unless_all_nan():
    v = np.full(64, np.nan, dtype=np.float32)
    v[5] = 2.0
    got = model.run_plan(lanes.reduction_plan("gfx942", 16), v, "max")
    assert got[0] == 2.0 and np.isnan(got[16])


# -- assembly, per op and arch ----------------------------------------------------------

_TYPES = {"f": "float32", "i": "int32", "u": "uint32"}


def _compile(body, arch, kind="f"):
    """A kernel ``kern(x, y)``: ``v = x[lane]``, *body* (which sets ``r``), ``y[lane] = r``."""
    namespace = {"amd": amd, "numba": numba}
    source = ("def kern(x, y):\n    lane = amd.workitem_id_x()\n    v = x[lane]\n" +
              "".join(f"    {line}\n" for line in body.splitlines()) + "    y[lane] = r\n")
    exec(source, namespace)
    ty = _TYPES[kind]
    return amd.compile(namespace["kern"], f"void({ty}[::1], {ty}[::1])", arch).asm


def _lines(asm, pattern):
    return [line for line in instructions(asm) if re.search(pattern, line)]


_V, _S = r"v\d+", r"s\d+"


@pytest.mark.parametrize("arch", ARCHS)
def test_readfirstlane_and_readlane(arch):
    asm = _compile("r = amd.readfirstlane(v) + amd.readlane(v, 5)", arch)
    assert _lines(asm, rf"^v_readfirstlane_b32 {_S}, {_V}$")
    assert _lines(asm, rf"^v_readlane_b32 {_S}, {_V}, 5$")
    def wide(x, y):
        lane = amd.workitem_id_x()
        y[lane] = amd.readfirstlane(x[lane])

    asm = amd.compile(wide, "void(int64[::1], int64[::1])", arch).asm
    halves = _lines(asm, rf"^v_readfirstlane_b32 {_S}, {_V}$")
    assert len(halves) == 2  # one per 32-bit half, into two SGPRs
    assert len({h.split()[1] for h in halves}) == 2


@pytest.mark.parametrize("arch", ARCHS)
def test_ds_permutes(arch):
    asm = _compile("r = amd.ds_bpermute(v, lane * 3) + amd.ds_permute(v, lane * 5)", arch)
    assert _lines(asm, rf"^ds_bpermute_b32 {_V}, {_V}, {_V}$")
    assert _lines(asm, rf"^ds_permute_b32 {_V}, {_V}, {_V}$")


@pytest.mark.parametrize("arch", ARCHS)
def test_ds_swizzle_patterns(arch):
    asm = _compile('r = amd.ds_swizzle(v, "swizzle(SWAP,16)") + amd.ds_swizzle(v, 0x801B)',
                   arch)
    assert _lines(asm, rf"^ds_swizzle_b32 {_V}, {_V} offset:swizzle\(SWAP,16\)$")
    assert _lines(asm, rf"^ds_swizzle_b32 {_V}, {_V} offset:swizzle\(QUAD_PERM,3,2,1,0\)$")


_MASKS = "row_mask:0xf bank_mask:0xf"


@pytest.mark.parametrize("arch,body,line", [
    *[(a, 'r = amd.dpp(v, "row_shr:1", bound_ctrl=True)',
       rf"^v_mov_b32_dpp {_V}, {_V} row_shr:1 {_MASKS} bound_ctrl:1$") for a in ARCHS],
    *[(a, 'r = amd.dpp(v, "quad_perm:[3,2,1,0]")',
       rf"^v_mov_b32_dpp {_V}, {_V} quad_perm:\[3,2,1,0\] {_MASKS}$") for a in ARCHS],
    *[(a, 'r = amd.dpp(v, "row_half_mirror", bank_mask=0x3)',
       rf"^v_mov_b32_dpp {_V}, {_V} row_half_mirror row_mask:0xf bank_mask:0x3$")
      for a in ARCHS],
    *[(a, 'r = amd.dpp(v, "row_bcast:15", row_mask=0xA)',
       rf"^v_mov_b32_dpp {_V}, {_V} row_bcast:15 row_mask:0xa bank_mask:0xf$") for a in GFX9],
    *[(a, 'r = amd.dpp(v, "wave_ror:1")', rf"^v_mov_b32_dpp {_V}, {_V} wave_ror:1 {_MASKS}$")
      for a in GFX9],
    *[(a, 'r = amd.dpp(v, "row_newbcast:3")',
       rf"^v_mov_b32_dpp {_V}, {_V} row_newbcast:3 {_MASKS}$") for a in GFX9],
    ("gfx1250", 'r = amd.dpp(v, "row_xmask:8")',
     rf"^v_mov_b32_dpp {_V}, {_V} row_xmask:8 {_MASKS}$"),
    ("gfx1250", 'r = amd.dpp(v, "row_share:3")',
     rf"^v_mov_b32_dpp {_V}, {_V} row_share:3 {_MASKS}$"),
    ("gfx1250", "r = amd.dpp8(v, (7, 6, 5, 4, 3, 2, 1, 0))",
     rf"^v_mov_b32_dpp {_V}, {_V} dpp8:\[7,6,5,4,3,2,1,0\]$"),
    ("gfx1250", "r = amd.permlane16(v, 0x89ABCDEF, 0x01234567)",
     rf"^v_permlane16_b32 {_V}, {_V}, "),
    ("gfx1250", "r = amd.permlanex16(v, 0x76543210, 0xFEDCBA98)",
     rf"^v_permlanex16_b32 {_V}, {_V}, {_S}, 0xfedcba98"),
    *[(a, "a, b = amd.permlane16_swap(v, v)\nr = a + b", rf"^v_permlane16_swap_b32_e32 {_V}, {_V}$")
      for a in ("gfx950", "gfx1250")],
    ("gfx950", "a, b = amd.permlane32_swap(v, v)\nr = a + b",
     rf"^v_permlane32_swap_b32_e32 {_V}, {_V}$"),
])
def test_dpp_and_permlane_instructions(arch, body, line):
    assert _lines(_compile(body, arch), line)


def test_dpp_old_is_what_unwritten_lanes_keep():
    asm = _compile('r = amd.dpp(v, "row_shr:1", old=numba.float32(7.0))', "gfx942")
    assert _lines(asm, r"^v_mov_b32_e32 v\d+, 0x40e00000$")  # 7.0, set before the move
    assert _lines(asm, rf"^v_mov_b32_dpp {_V}, {_V} row_shr:1 {_MASKS}$")


_ROW16 = ["row_mirror", r"row_half_mirror", r"quad_perm:\[1,0,3,2\]", r"quad_perm:\[2,3,0,1\]"]
_WIDTH_CTRLS = {2: _ROW16[2:3], 4: _ROW16[2:], 8: _ROW16[1:], 16: _ROW16}


def _dpp_controls(asm):
    """The DPP controls of the assembly, in order."""
    found = []
    for line in instructions(asm):
        m = re.search(r"_dpp v\d+, v\d+(?:, v\d+)? (\S+)", line)
        if m:
            found.append(m[1])
    return found


@pytest.mark.parametrize("width", [2, 4, 8, 16])
@pytest.mark.parametrize("arch", ARCHS)
def test_row_reduce_sum_is_one_fused_dpp_add_per_halving(arch, width):
    asm = _compile(f'r = amd.row_reduce(v, "sum", {width})', arch)
    fused = _lines(asm, r"^v_add_f32_dpp ")
    assert [re.sub(r"\\", "", c) for c in _WIDTH_CTRLS[width]] == _dpp_controls(asm)
    assert len(fused) == len(_WIDTH_CTRLS[width])
    for line, ctrl in zip(fused, _WIDTH_CTRLS[width]):
        assert re.match(rf"^v_add_f32_dpp ({_V}), \1, \1 {ctrl} {_MASKS}( bound_ctrl:1)?$", line)


@pytest.mark.parametrize("arch,kind,op,mnemonic", [
    *[(a, "i", "max", "v_max_i32_dpp") for a in ARCHS],
    *[(a, "u", "min", "v_min_u32_dpp") for a in ARCHS],
    *[(a, "i", "sum", "v_add_u32_dpp") for a in GFX9],
    ("gfx1250", "i", "sum", "v_add_nc_u32_dpp"),
])
def test_row_reduce_integer_ops_fuse_into_the_dpp_op(arch, kind, op, mnemonic):
    asm = _compile(f'r = amd.row_reduce(v, "{op}", 16)', arch, kind)
    assert len(_lines(asm, rf"^{mnemonic} ")) == 4
    assert [re.sub(r"\\", "", c) for c in _ROW16] == _dpp_controls(asm)


@pytest.mark.parametrize("arch,op", [(a, op) for a in ARCHS for op in ("max", "min")])
def test_row_reduce_float_max_min_are_maxnum_minnum(arch, op):
    """IEEE maxNum/minNum: LLVM keeps the DPP moves separate (it quiets NaNs first)."""
    asm = _compile(f'r = amd.row_reduce(v, "{op}", 16)', arch)
    mnemonic = {"gfx1250": f"v_{op}_num_f32"}.get(arch, f"v_{op}_f32")
    assert len(_lines(asm, rf"^v_mov_b32_dpp ")) == 4 and _lines(asm, rf"^{mnemonic}")


@pytest.mark.parametrize("arch,line", [
    ("gfx942", rf"^ds_swizzle_b32 {_V}, {_V} offset:swizzle\(SWAP,16\)$"),
    ("gfx950", rf"^v_permlane16_swap_b32_e32 {_V}, {_V}$"),
    ("gfx1250", rf"^v_permlanex16_b32 {_V}, {_V}, {_S}, 0xfedcba98"),
])
def test_row_reduce_32_lanes_crosses_rows_per_arch(arch, line):
    asm = _compile('r = amd.row_reduce(v, "sum", 32)', arch)
    assert _dpp_controls(asm) == [re.sub(r"\\", "", c) for c in _ROW16]
    assert _lines(asm, line)
    if arch == "gfx1250":  # lanesel lo: lane k reads lane k of the other row
        assert _lines(asm, rf"^s_mov_b32 {_S}, 0x76543210$")


@pytest.mark.parametrize("arch", GFX9)
def test_wave_reduce_gfx9_is_tritons_row_broadcasts_then_readlane_63(arch):
    asm = _compile('r = amd.wave_reduce(v, "max")', arch, "i")
    assert _dpp_controls(asm) == [re.sub(r"\\", "", c) for c in _ROW16] + ["row_bcast:15",
                                                                            "row_bcast:31"]
    assert _lines(asm, rf"^v_max_i32_dpp {_V}, {_V}, {_V} row_bcast:15 row_mask:0xa bank_mask:0xf$")
    assert _lines(asm, rf"^v_max_i32_dpp {_V}, {_V}, {_V} row_bcast:31 row_mask:0xc bank_mask:0xf$")
    assert _lines(asm, rf"^v_readlane_b32 {_S}, {_V}, 63$")
    # the float sum: the row-masked moves stay separate (LLVM folds no float identity)
    fsum = _compile('r = amd.wave_reduce(v, "sum")', arch)
    assert len(_lines(fsum, r"^v_add_f32_dpp ")) == 4
    assert _lines(fsum, rf"^v_mov_b32_dpp {_V}, {_V} row_bcast:31 row_mask:0xc bank_mask:0xf$")


def test_wave_reduce_gfx1250_is_permlanex16_then_readlane_31():
    asm = _compile('r = amd.wave_reduce(v, "sum")', "gfx1250", "u")
    assert len(_lines(asm, r"^v_add_nc_u32_dpp ")) == 4
    assert _lines(asm, rf"^v_permlanex16_b32 {_V}, {_V}, {_S}, 0xfedcba98")
    assert _lines(asm, rf"^v_readlane_b32 {_S}, {_V}, 31$")
    assert not _lines(asm, r"row_bcast")


@pytest.mark.parametrize("arch", GFX9)
def test_row_reduce_64_is_the_wave_reduction(arch):
    asm = _compile('r = amd.row_reduce(v, "sum", 64)', arch, "i")
    assert _lines(asm, rf"^v_readlane_b32 {_S}, {_V}, 63$")


@pytest.mark.parametrize("arch", ARCHS)
def test_wave_id_and_lane_id(arch):
    asm = _compile("r = numba.float32(amd.wave_id() * 100 + amd.lane_id())", arch)
    assert len(_lines(asm, r"^v_readfirstlane_b32 ")) == 1
    assert _lines(asm, r"^v_mbcnt_lo_u32_b32 ")
    assert bool(_lines(asm, r"^v_mbcnt_hi_u32_b32 ")) == (arch in GFX9)


def test_wave_id_range_lets_llvm_fold_a_bound_check():
    """With max_workgroup_size=256 (4 waves of 64) ``wave_id() < 4`` is known to be true
    (the assume survives the readfirstlane): no compare is left.  Without it, waves 4 to
    15 may exist and the compare stays."""
    def kern(x, y):
        w = amd.wave_id()
        if w < 4:
            y[0] = x[0]

    def compares(size):
        asm = amd.compile(kern, "void(float32[::1], float32[::1])", "gfx942",
                          max_workgroup_size=size).asm
        return _lines(asm, r"^[sv]_cmp")

    assert not compares(256)
    assert compares(None)


# -- arguments --------------------------------------------------------------------------

def _raises(body, match, arch="gfx942", kind="f"):
    with pytest.raises(AMDArgumentError, match=match):
        _compile(body, arch, kind)


@pytest.mark.parametrize("body,match", [
    ("r = amd.readfirstlane(lane > 3)", r"amd.readfirstlane: argument 'value' must be an int32, uint32 or "
                                        r"float32 \(or int64, uint64, float64\) value; got bool"),
    ('r = amd.dpp(numba.float64(v), "row_shr:1")',
     r"amd.dpp: argument 'value' must be an int32, uint32 or float32 value \(convert with "
     r"numba.float32\(...\)\); got float64"),
    ('r = numba.float32(amd.row_reduce(lane * 2, "sum"))',
     r"amd.row_reduce: argument 'value' must be .* value \(Numba computes integer arithmetic in 64 bits: .*\); got int64"),
    ('r = amd.row_reduce(v, "prod")', r"amd.row_reduce: argument 'op' must be one of \('sum', 'max', 'min'\); "
                                      r"got 'prod'"),
    ('r = amd.row_reduce(v, "sum", 12)', r"amd.row_reduce: argument 'width' must be 2, 4, 8, 16, 32 or"),
    ('r = amd.wave_reduce(v, "avg")', r"amd.wave_reduce: argument 'op' must be one of"),
    ('r = amd.dpp(v, "row_shr:0")', r"amd.dpp: argument 'ctrl' must be a DPP control: row_shr takes 1\.\.15; got 'row_shr:0'"),
    ('r = amd.dpp(v, "row_shift:1")', r"amd.dpp: argument 'ctrl' must be a DPP control in the ISA's syntax"),
    ("r = amd.dpp(v, 0x144)", r"amd.dpp: argument 'ctrl' must be a DPP control .*; got 324, which is no DPP control"),
    ('r = amd.dpp(v, "row_mirror", row_mask=16)', r"amd.dpp: argument 'row_mask' must be an int in \[0, 15\]"),
    ('r = amd.dpp(v, "row_mirror", old=lane)', r"amd.dpp: argument 'old' must have the type of value"),
    ('r = amd.ds_swizzle(v, 0xE001)', r"amd.ds_swizzle: argument 'pattern' must be quad-perm mode .* or bitmask mode .*; got 0xe001"),
    ('r = amd.ds_swizzle(v, 0x10000)', r"amd.ds_swizzle: argument 'pattern' must be an int in \[0, 65535\]"),
    ('r = amd.ds_swizzle(v, "swizzle(SWAP,3)")', r"amd.ds_swizzle: argument 'pattern' must be a SWAP of one of \(1, 2, 4, 8, 16\); got 'swizzle\(SWAP,3\)'"),
    ('r = amd.ds_swizzle(v, "swizzle(ROTATE,0,1)")', r"amd.ds_swizzle: argument 'pattern' must be a 16-bit"),
    ("r = amd.ds_bpermute(v, 1.5)", r"amd.ds_bpermute: argument 'src_lane' must be an integer; got float64"),
    ("r = amd.readlane(v, 64)", r"amd.readlane: argument 'lane' must be a lane of the wave, 0\.\.63"),
])
def test_bad_arguments_name_the_argument_and_the_rule(body, match):
    _raises(body, match)


@pytest.mark.parametrize("arch,body,match", [
    ("gfx1250", 'r = amd.dpp(v, "row_bcast:15")',
     r"amd.dpp: argument 'ctrl' must be a DPP control that the requested arch, gfx1250, has: row_bcast:15 is "
     r"available on gfx942, gfx950 only \(the GFX10\+ DPP16 controls have no wave shifts or row broadcasts\); "
     r"got row_bcast:15"),
    ("gfx1250", 'r = amd.dpp(v, "wave_shr:1")', r"amd.dpp: argument 'ctrl' must be a DPP control that the requested arch, gfx1250, has: wave_shr:1 is available on gfx942"),
    ("gfx1250", 'r = amd.dpp(v, "row_newbcast:3")',
     r"on gfx1250 the same broadcast is row_share:3"),
    ("gfx942", 'r = amd.dpp(v, "row_xmask:1")',
     r"amd.dpp: argument 'ctrl' must be a DPP control that the requested arch, gfx942, has: row_xmask:1 is "
     r"available on gfx1250 only"),
    ("gfx950", 'r = amd.dpp(v, "row_share:2")', r"on gfx942/gfx950 the same broadcast is "
                                                r"row_newbcast:2"),
    ("gfx942", "r = amd.dpp(v, 0x150)", r"argument 'ctrl' must be a DPP control that the requested arch, gfx942, has: row_share:0 is available on gfx1250 only"),
    ("gfx1250", 'r = amd.row_reduce(v, "sum", 64)',
     r"amd.row_reduce: argument 'width' must be one of \(2, 4, 8, 16, 32\) on gfx1250; got 64"),
    ("gfx1250", "r = amd.readlane(v, 40)",
     r"amd.readlane: argument 'lane' must be an int in \[0, 31\] on gfx1250; got 40"),
])
def test_arch_rules_are_checked_before_llvm(arch, body, match):
    _raises(body, match, arch)


@pytest.mark.parametrize("arch,body,op", [
    *[(a, "r = amd.dpp8(v, (0, 1, 2, 3, 4, 5, 6, 7))", "dpp8") for a in GFX9],
    *[(a, "r = amd.permlanex16(v, 0, 0)", "permlanex16") for a in GFX9],
    *[(a, "r = amd.permlane16(v, 0, 0)", "permlane16") for a in GFX9],
    ("gfx942", "a, b = amd.permlane16_swap(v, v)\nr = a", "permlane16_swap"),
    ("gfx942", "a, b = amd.permlane32_swap(v, v)\nr = a", "permlane32_swap"),
    ("gfx1250", "a, b = amd.permlane32_swap(v, v)\nr = a", "permlane32_swap"),
])
def test_ops_an_arch_lacks_are_refused(arch, body, op):
    with pytest.raises(UnsupportedArchError, match=f"{op} is available on .* requested arch is "
                                                   f"{arch}"):
        _compile(body, arch)


WRONG = [None, -1, 1.5, True, "", "x", (), (1, "x")]

# (op, argument) -> (arch, body with {v}, values that are valid for it)
CONSTANTS = {
    ("dpp", "ctrl"): ("gfx942", "r = amd.dpp(v, {v})", ()),
    ("dpp", "row_mask"): ("gfx942", 'r = amd.dpp(v, "row_mirror", row_mask={v})', ()),
    ("dpp", "bank_mask"): ("gfx942", 'r = amd.dpp(v, "row_mirror", bank_mask={v})', ()),
    ("dpp", "bound_ctrl"): ("gfx942", 'r = amd.dpp(v, "row_mirror", bound_ctrl={v})', (True,)),
    ("ds_swizzle", "pattern"): ("gfx942", "r = amd.ds_swizzle(v, {v})", ()),
    ("dpp8", "selects"): ("gfx1250", "r = amd.dpp8(v, {v})", ()),
    ("permlanex16", "fi"): ("gfx1250", "r = amd.permlanex16(v, 0, 0, fi={v})", (True,)),
    ("row_reduce", "op"): ("gfx942", "r = amd.row_reduce(v, {v})", ()),
    ("row_reduce", "width"): ("gfx942", 'r = amd.row_reduce(v, "sum", {v})', ()),
    ("wave_reduce", "op"): ("gfx942", "r = amd.wave_reduce(v, {v})", ()),
}


@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize("op_argument", CONSTANTS, ids="-".join)
def test_constant_arguments_fuzz(op_argument, value):
    """Each wrong value raises AMDArgumentError naming the argument; nothing else escapes
    (a valid value compiles)."""
    arch, body, valid = CONSTANTS[op_argument]
    if any(type(value) is type(v) and value == v for v in valid):
        _compile(body.format(v=repr(value)), arch)
        return
    _raises(body.format(v=repr(value)), op_argument[1], arch)


def test_a_runtime_constant_argument_is_refused_naming_it():
    _raises("r = amd.ds_swizzle(v, lane)", r"amd.ds_swizzle: argument 'pattern' must be a compile-time constant")
    _raises('r = amd.row_reduce(v, "sum", lane)', r"amd.row_reduce: argument 'width' must be a compile-time")


def test_emitters_check_the_arch_first(kernel):
    k = kernel("gfx942")
    with pytest.raises(UnsupportedArchError, match="dpp8 is available on gfx1250 only"):
        lanes.emit_dpp8(k.builder, k.arch, k.tid(), (0, 1, 2, 3, 4, 5, 6, 7))
    with pytest.raises(AMDArgumentError, match="amd.row_reduce: argument 'op' must be one of"):
        lanes.emit_row_reduce(k.builder, k.arch, k.tid(), "avg", 16, "i")
