"""gfx1250 TDM: descriptor bits field by field, updates, fused hints, instructions."""
import re

import pytest
from llvmlite import ir

from amd_asm import find
from numba_tma.amd import AMDArgumentError, codegen, tdm
from numba_tma.amd.llvm_ir import GLOBAL, I32, VOID, i32, ptr
from numba_tma.amd.tdm_layout import TileSpec, pack, unpack, validate_warp_hints

BASE = 0x0123456789AB0  # global address of the tensor


def _dword_bits(groups, group, dword, lo, width):
    """Bits [lo, lo+width) of dword *dword* of group *group* (documented positions)."""
    return (groups[group] >> (32 * dword + lo)) & ((1 << width) - 1)


def _fold(build):
    """Run *build(builder) -> TDMDescriptor* with constant inputs, let LLVM fold it and
    return the four groups as ints."""
    module = codegen.new_module("fold", "gfx1250")
    fn = ir.Function(module, ir.FunctionType(VOID, [ptr(GLOBAL)]), "f")
    builder = ir.IRBuilder(fn.append_basic_block())
    desc = build(builder)
    for i, group in enumerate(desc.groups):
        slot = builder.gep(fn.args[0], [i32(4 * i)], source_etype=ir.IntType(64))
        builder.store(group, builder.bitcast(slot, group.type.as_pointer(GLOBAL)))
    builder.ret_void()
    text = codegen.compile_ir(module, "gfx1250", keep=("f",)).llvm_ir
    stores = re.findall(r"store i(\d+) (-?\d+), ptr addrspace\(1\) %(?:\S+?)(?:, align \d+)?$",
                        text, re.MULTILINE)
    assert len(stores) == 4, text
    return [int(v) % (1 << int(bits)) for bits, v in stores]


def _build(spec, shape, strides, **kwargs):
    def build(builder):
        base = ir.Constant(ir.IntType(64), BASE).inttoptr(ptr(GLOBAL))
        return tdm.emit_make_tensor_descriptor(builder, "gfx1250", spec, base, shape, strides,
                                               **kwargs)
    return build


def test_descriptor_2d_fields_at_documented_bits():
    spec = TileSpec(2, (32, 64), pad_interval=64, pad_amount=8)  # f16: 32 dw / 4 dw
    g = _fold(_build(spec, [1000, 70000], [70016, 1], multicast_mask=0x5))
    assert _dword_bits(g, 0, 0, 0, 2) == 1  # pred
    assert _dword_bits(g, 0, 2, 0, 32) | _dword_bits(g, 0, 3, 0, 25) << 32 == BASE
    assert _dword_bits(g, 0, 3, 30, 2) == 2  # type
    assert _dword_bits(g, 1, 0, 0, 16) == 0x5  # multicast mask
    assert _dword_bits(g, 1, 0, 16, 2) == 1  # log2(2 bytes)
    assert _dword_bits(g, 1, 0, 18, 1) == 0  # no barrier
    assert _dword_bits(g, 1, 0, 20, 1) == 1  # pad enable
    assert _dword_bits(g, 1, 0, 22, 3) == 4  # log2(32 dwords) - 1
    assert _dword_bits(g, 1, 0, 25, 7) == 3  # 4 dwords - 1
    dim0 = _dword_bits(g, 1, 1, 16, 16) | _dword_bits(g, 1, 2, 0, 16) << 16
    dim1 = _dword_bits(g, 1, 2, 16, 16) | _dword_bits(g, 1, 3, 0, 16) << 16
    assert (dim0, dim1) == (70000, 1000)  # dim0 = innermost, crosses a dword
    assert _dword_bits(g, 1, 3, 16, 16) == 64  # tile_dim0
    assert _dword_bits(g, 1, 4, 0, 16) == 32  # tile_dim1
    stride0 = _dword_bits(g, 1, 5, 0, 32) | _dword_bits(g, 1, 6, 0, 16) << 32
    assert stride0 == 70016  # stride of dim 1, in elements
    assert g[2] == 0 and g[3] == 0


def test_descriptor_5d_groups_2_and_3():
    shape, strides = [3, 5, 7, 9, 11], [3465, 693, 99, 11, 1]
    g = _fold(_build(TileSpec(4, (1, 2, 3, 4, 8)), shape, strides))
    assert _dword_bits(g, 1, 0, 16, 2) == 2
    assert _dword_bits(g, 1, 4, 16, 16) == 3  # tile_dim2
    stride1 = _dword_bits(g, 1, 6, 16, 16) | _dword_bits(g, 1, 7, 0, 32) << 16
    assert stride1 == 99
    assert _dword_bits(g, 2, 0, 0, 32) == 7  # tensor_dim2
    assert _dword_bits(g, 2, 1, 0, 32) == 5  # tensor_dim3
    assert _dword_bits(g, 2, 2, 0, 32) | _dword_bits(g, 2, 3, 0, 16) << 32 == 693
    assert _dword_bits(g, 2, 3, 16, 16) == 2  # tile_dim3
    assert _dword_bits(g, 3, 0, 0, 32) | _dword_bits(g, 3, 1, 0, 16) << 32 == 3465
    assert _dword_bits(g, 3, 1, 16, 16) | _dword_bits(g, 3, 2, 0, 16) << 16 == 3
    assert _dword_bits(g, 3, 2, 16, 16) == 1  # tile_dim4


def test_ir_builder_agrees_with_reference_packer():
    spec = TileSpec(4, (16, 16, 16))
    g = _fold(_build(spec, [40, 50, 60], [3000, 60, 1]))
    expected = dict(spec.static_fields(), pred=1, global_addr=BASE, tensor_dim0=60,
                    tensor_dim1=50, tensor_dim2=40, tensor_dim0_stride=60,
                    tensor_dim1_stride=3000)
    assert g == pack(expected)
    assert unpack(g)["tensor_dim2"] == 40


def test_update_add_offsets_clamp_set_bounds_pred():
    spec = TileSpec(2, (32, 64))

    def moved(builder):
        desc = _build(spec, [100, 200], [256, 1])(builder)
        return tdm.emit_update_tensor_descriptor(builder, "gfx1250", desc,
                                                 add_offsets=[i32(10), i32(300)], pred=0)

    f = unpack(_fold(moved))
    assert f["global_addr"] == BASE + (10 * 256 + 300) * 2
    assert (f["tensor_dim1"], f["tensor_dim0"]) == (90, 0)  # clamped at 0
    assert f["pred"] == 0

    def rebounded(builder):
        desc = _build(spec, [100, 200], [256, 1])(builder)
        return tdm.emit_update_tensor_descriptor(builder, "gfx1250", desc,
                                                 add_offsets=[i32(10), i32(0)],
                                                 set_bounds=[7, 9], clamp_bounds=False)

    f = unpack(_fold(rebounded))
    assert (f["tensor_dim1"], f["tensor_dim0"]) == (7, 9)
    assert f["global_addr"] == BASE + 10 * 256 * 2


_I64 = ir.IntType(64)


@pytest.mark.parametrize("dim", [0, 5, 1000, 2**31 - 1])
def test_bound_clamp_is_max_of_zero_and_the_difference(dim):
    """Issue 11.4: the clamp runs in 32-bit arithmetic (off the vector unit); for every
    64-bit offset it equals max(0, dim - off) truncated to the 32-bit field."""
    spec = TileSpec(4, (8, 8))
    offsets = [0, 3, 999, 1000, 1001, 2**31 - 1, 2**31, 2**32 - 1, 2**32 + 3, 2**40,
               -1, -5, -(2**31), -(2**31) - 1, -(2**33)]

    def moved(off):
        def build(builder):
            desc = _build(spec, [dim, 8], [8, 1])(builder)
            return tdm.emit_update_tensor_descriptor(builder, "gfx1250", desc,
                                                     add_offsets=[ir.Constant(_I64, off), 0])
        return build

    got = [unpack(_fold(moved(off)))["tensor_dim1"] for off in offsets]
    assert got == [max(0, dim - off) % 2**32 for off in offsets]


@pytest.mark.parametrize("hints", [(0x0F, 0xF0), (0x55, 0xAA), (0x3, 0xC, 0x30, 0xC0)])
def test_valid_warp_hints(hints):
    validate_warp_hints(hints)


@pytest.mark.parametrize("hints,rule", [
    ((0x0F,), "argument 'members' must be 2 to 4 members; got 1 members"),
    ((1, 2, 4, 8, 16), "argument 'members' must be 2 to 4 members; got 5 members"),
    ((0x0, 0xF0), r"argument 'members\[0\]' must have a warp_used_hint that is a non-empty wave mask below 1 << 32; got 0"),
    ((0x69, 0x06), r"argument 'members\[0\]' must have an axis-aligned warp_used_hint .*; got 0x69"),
    ((0x0F, 0x0C), r"argument 'members\[1\]' must have a warp_used_hint disjoint from the earlier members'; got 0xc"),
])
def test_invalid_warp_hints(hints, rule):
    with pytest.raises(AMDArgumentError, match=rule):
        validate_warp_hints(hints)


def _tdm_kernel(body):
    module = codegen.new_module("t", "gfx1250")
    fn = ir.Function(module, ir.FunctionType(VOID, [ptr(GLOBAL), I32]), "k")
    fn.calling_convention = "amdgpu_kernel"
    lds_ty = ir.ArrayType(I32, 8192)
    lds = ir.GlobalVariable(module, lds_ty, "lds", addrspace=3)
    lds.linkage, lds.initializer, lds.align = "internal", ir.Constant(lds_ty, ir.Undefined), 16
    builder = ir.IRBuilder(fn.append_basic_block())
    body(builder, fn.args, lds)
    builder.ret_void()
    return codegen.compile_ir(module, "gfx1250", keep=("k",)).asm


@pytest.mark.parametrize("block,operands", [
    ((64,), r"s\[\d+:\d+\], s\[\d+:\d+\]$"),
    ((64, 64), r"s\[\d+:\d+\], s\[\d+:\d+\]$"),
    ((4, 16, 16), r"s\[\d+:\d+\], s\[\d+:\d+\], s\[\d+:\d+\], s\[\d+:\d+\]$"),
])
def test_tensor_load_store_and_wait(block, operands):
    def body(builder, args, lds):
        rank = len(block)
        desc = tdm.emit_make_tensor_descriptor(builder, "gfx1250", TileSpec(2, block), args[0],
                                               [args[1]] * rank, [256] * (rank - 1) + [1])
        # offsets of 1: with n, LLVM folds every clamped dim to 0 and drops groups 2-3
        tdm.emit_tensor_load(builder, "gfx1250", desc, lds, offsets=[1] * rank)
        tdm.emit_tensor_wait(builder, "gfx1250", 1)
        tdm.emit_tensor_store(builder, "gfx1250", desc, lds)
        tdm.emit_tensor_wait(builder, "gfx1250", 0)

    asm = _tdm_kernel(body)
    assert find(asm, r"^tensor_load_to_lds " + operands)
    assert find(asm, r"^tensor_store_from_lds " + operands)
    assert find(asm, r"^s_wait_tensorcnt 0x1$") and find(asm, r"^s_wait_tensorcnt 0x0$")


def test_fused_load_is_one_instruction_chosen_by_wave_id():
    def body(builder, args, lds):
        spec = TileSpec(2, (64, 64))
        a = tdm.emit_make_tensor_descriptor(builder, "gfx1250", spec, args[0], [512, 512],
                                            [512, 1])
        b = tdm.emit_update_tensor_descriptor(builder, "gfx1250", a,
                                              add_offsets=[args[1], i32(0)])
        second = builder.gep(lds, [i32(0), i32(4096)])
        tdm.emit_tensor_load_fused(builder, "gfx1250", [(a, lds, 0x0F), (b, second, 0xF0)])

    asm = _tdm_kernel(body)
    assert len(find(asm, r"^tensor_load_to_lds ")) == 1
    assert find(asm, r"^v_readfirstlane_b32 ")  # wave id made uniform
    assert find(asm, r"^s_cselect_b")  # per-wave member choice stays scalar


def test_fused_block_must_split_among_hint_waves():
    def body(builder, args, lds):
        spec = TileSpec(2, (6, 64))
        a = tdm.emit_make_tensor_descriptor(builder, "gfx1250", spec, args[0], [64, 64], [64, 1])
        tdm.emit_tensor_load_fused(builder, "gfx1250", [(a, lds, 0x0F), (a, lds, 0xF0)])

    with pytest.raises(AMDArgumentError, match=r"numba_tma: amd.async_amd_descriptor_load_fused: argument 'members' must each have a block_shape\[0\] divisible by the waves of their warp_used_hint \(4 in 0xf0\); got block_shape\[0\] = 6"):
        _tdm_kernel(body)


@pytest.mark.parametrize("kwargs,rule", [
    (dict(elem_bytes=3, block_shape=(8,)), "argument 'array' must have elements of 1, 2, 4 or 8 bytes; got 3 bytes"),
    (dict(elem_bytes=2, block_shape=()), r"argument 'block_shape' must be a tuple of 1 to 5 dims; got \(\)"),
    (dict(elem_bytes=2, block_shape=(70000,)), r"argument 'block_shape' must have dims that are ints in \[1, 65535\]; got \(70000,\)"),
    (dict(elem_bytes=2, block_shape=(8,), pad_interval=6, pad_amount=2),
     r"argument 'pad_interval' must be a power of two of 2..256 dwords \(2-byte elements\); got 6 elements"),
    (dict(elem_bytes=2, block_shape=(8,), pad_interval=64, pad_amount=1),
     "argument 'pad_interval' and pad_amount must be whole dwords; got 64 and 1 elements of 2 bytes"),
])
def test_tile_spec_rules(kwargs, rule):
    with pytest.raises(AMDArgumentError, match=rule):
        TileSpec(**kwargs)


@pytest.mark.parametrize("wid", range(8))
def test_fused_wave_outside_every_hint_loads_nothing(wid):
    """Review finding: a wave in no hint took the last member with part index >= the
    member's parts, loading past its LDS block.  Now its pred is 0."""
    hints = (0x3, 0xC)  # waves 0-3; waves 4-7 are in no hint

    def build(builder):
        spec = TileSpec(4, (32, 64))
        base = ir.Constant(ir.IntType(64), BASE).inttoptr(ptr(GLOBAL))
        a = tdm.emit_make_tensor_descriptor(builder, "gfx1250", spec, base, [512, 512], [512, 1])
        lds = ir.Constant(ir.IntType(32), 0x1000).inttoptr(ir.PointerType(addrspace=3))
        members = [(a, lds, hints[0]), (a, lds, hints[1])]
        groups, _ = tdm.fused_groups(builder, "gfx1250", members, i32(wid))
        return tdm.TDMDescriptor(spec, groups)

    f = unpack(_fold(build))
    assert f["pred"] == (1 if wid < 4 else 0)
    if wid < 4:  # two waves per member, 16 rows each
        assert f["tile_dim1"] == 16
        assert f["global_addr"] == BASE + (wid % 2) * 16 * 512 * 4


def test_fused_load_pred_tests_the_union_of_hints():
    def body(builder, args, lds):
        spec = TileSpec(2, (64, 64))
        a = tdm.emit_make_tensor_descriptor(builder, "gfx1250", spec, args[0], [512, 512],
                                            [512, 1])
        tdm.emit_tensor_load_fused(builder, "gfx1250", [(a, lds, 0x3), (a, lds, 0xC)])

    module_asm = _tdm_kernel(body)
    assert len(find(module_asm, r"^tensor_load_to_lds ")) == 1
    # pred = (wave id in 0x3 | 0xC), i.e. workitem id < 4 waves x 32 lanes
    assert find(module_asm, r"^s_cmp_lt_u32 s\d+, 0x80$")


def test_llvm22_inserts_no_tdm_drain_wait(kernel):
    """docs/amd.md "TDM loads in flight": LLVM 22 adds no s_wait_tensorcnt of its own
    before a TDM load (newer LLVM's needs-tdm-drain keeps at most 11 in flight), so the
    in-flight limit is the kernel's to keep.  If this fails, llvmlite's LLVM drains on
    its own: update the doc."""
    from test_amd_gating import _desc
    k = kernel("gfx1250")
    for i in range(12):
        tdm.emit_tensor_load(k.builder, "gfx1250", _desc(), k.lds_at(64 * i))
    asm = k.compile().asm
    assert len(find(asm, r"^tensor_load_to_lds ")) == 12
    assert not find(asm, r"^s_wait_tensorcnt")
