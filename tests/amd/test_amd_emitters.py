"""Each emitter, on each arch that has it, yields the expected instruction."""
import re

import pytest
from llvmlite import ir

from amd_asm import ARCHS, GFX9, find, instructions
from numba_tma.amd import AMDArgumentError, buffer, dma, global_load, sync
from numba_tma.amd.llvm_ir import I32, i32


def _rsrc(k):
    return buffer.emit_make_buffer_rsrc(k.builder, k.arch, k.src)


@pytest.mark.parametrize("arch", GFX9)
def test_buffer_load_to_local_dword(kernel, arch):
    k = kernel(arch)
    voffset = k.builder.mul(k.tid(), i32(4))
    buffer.emit_buffer_load_to_local(k.builder, arch, _rsrc(k), k.lds_at(0), voffset,
                                     dma.AsyncGroups())
    asm = k.compile().asm
    assert find(asm, r"^buffer_load_dword v\d+, s\[\d+:\d+\], 0 offen lds$")
    assert find(asm, r"^s_mov_b32 s\d+, 0x27000$")  # dword 3 of the V#


def test_buffer_load_to_local_dwordx4_gfx950(kernel):
    k = kernel("gfx950")
    voffset = k.builder.mul(k.tid(), i32(16))
    buffer.emit_buffer_load_to_local(k.builder, "gfx950", _rsrc(k), k.lds_at(0), voffset,
                                     dma.AsyncGroups(), width=16)
    assert find(k.compile().asm, r"^buffer_load_dwordx4 v\d+, s\[\d+:\d+\], 0 offen lds$")


@pytest.mark.parametrize("arch", GFX9)
def test_buffer_load_to_local_mask_uses_out_of_range_offset(kernel, arch):
    k = kernel(arch)
    tid = k.tid()
    mask = k.builder.icmp_unsigned("<", tid, k.n)
    groups = dma.AsyncGroups()
    buffer.emit_buffer_load_to_local(k.builder, arch, _rsrc(k), k.lds_at(0),
                                     k.builder.mul(tid, i32(4)), groups, mask=mask,
                                     other=ir.Constant(ir.FloatType(), 0.0))
    asm = k.compile().asm
    # masked lanes' voffset 0x80000000 (= bfrev 1), chosen per lane
    assert find(asm, r"^v_bfrev_b32_e32 v\d+, 1$") and find(asm, r"^v_cndmask_b32")
    assert not find(asm, r"s_cbranch_execz")  # zero fill needs no branch
    assert find(asm, r"offen lds$") and groups.open == 1
    dma.emit_async_load_commit_group(k.builder, arch, groups)
    assert groups.sizes() == [1]  # always issued: the group's size is static


@pytest.mark.parametrize("arch", GFX9)
def test_buffer_load_to_local_other_is_stored_by_masked_lanes(kernel, arch):
    k = kernel(arch)
    tid = k.tid()
    groups = dma.AsyncGroups()
    buffer.emit_buffer_load_to_local(k.builder, arch, _rsrc(k), k.lds_at(0),
                                     k.builder.mul(tid, i32(4)), groups,
                                     mask=k.builder.icmp_unsigned("<", tid, k.n),
                                     other=ir.Constant(ir.FloatType(), -1.0),
                                     cache_modifier=".cg")
    asm = k.compile().asm
    assert find(asm, r"^buffer_load_dword .* offen sc0 nt lds$")  # .cg -> sc0 nt
    assert find(asm, r"^ds_write_b32 ")  # other, by the masked lanes
    assert find(asm, r"^v_mov_b32_e32 v\d+, -1.0$")  # other = -1.0f
    # the other store is tagged like an LDS read: LLVM adds no vmcnt(0) before it
    assert not find(asm, r"^s_waitcnt vmcnt\(0\)")
    dma.emit_async_load_commit_group(k.builder, arch, groups)
    assert groups.sizes() == [0]  # behind a branch a whole wave may skip: uncertain


@pytest.mark.parametrize("arch,width,mnemonic", [
    ("gfx942", 4, "global_load_lds_dword"),
    ("gfx950", 4, "global_load_lds_dword"),
    ("gfx950", 16, "global_load_lds_dwordx4"),
    ("gfx1250", 1, "global_load_async_to_lds_b8"),
    ("gfx1250", 4, "global_load_async_to_lds_b32"),
    ("gfx1250", 8, "global_load_async_to_lds_b64"),
    ("gfx1250", 16, "global_load_async_to_lds_b128"),
])
def test_async_load(kernel, arch, width, mnemonic):
    k = kernel(arch)
    src = k.builder.gep(k.src, [k.builder.mul(k.tid(), i32(width))], source_etype=ir.IntType(8))
    global_load.emit_async_load(k.builder, arch, src, k.lds_at(0), dma.AsyncGroups(),
                                width=width)
    assert find(k.compile().asm, rf"^{mnemonic} ")


def _three_stage(k, pendings):
    """Three single-instruction groups, then wait_group(pendings); returns K."""
    groups = dma.AsyncGroups()
    tid = k.tid()
    for stage in range(3):
        if k.arch in GFX9:
            buffer.emit_buffer_load_to_local(k.builder, k.arch, _rsrc(k), k.lds_at(stage * 256),
                                             k.builder.mul(tid, i32(4)), groups)
        else:
            src = k.builder.gep(k.src, [tid], source_etype=I32)
            global_load.emit_async_load(k.builder, k.arch, src, k.lds_at(stage * 256), groups)
        dma.emit_async_load_commit_group(k.builder, k.arch, groups)
    count = dma.emit_async_load_wait_group(k.builder, k.arch, groups, pendings).count
    sync.emit_s_barrier(k.builder, k.arch)
    value = k.builder.load(k.builder.gep(k.lds, [i32(0), tid]))
    dma.mark_local_read(value)
    k.builder.store(value, k.builder.gep(k.dst, [tid], source_etype=I32))
    return count


@pytest.mark.parametrize("arch", GFX9)
@pytest.mark.parametrize("pendings", [0, 1, 2])
def test_wait_group_is_vmcnt_of_younger_groups(kernel, arch, pendings):
    k = kernel(arch)
    assert _three_stage(k, pendings) == pendings
    lines = instructions(k.compile().asm)
    waits = [i for i, line in enumerate(lines) if line.startswith("s_waitcnt vmcnt")]
    # exactly our wait (merged with s_barrier's lgkmcnt(0)): alias scopes keep LLVM
    # from adding vmcnt(0) before ds_read
    assert [lines[i] for i in waits] == [f"s_waitcnt vmcnt({pendings}) lgkmcnt(0)"]
    read = next(i for i, line in enumerate(lines) if line.startswith("ds_read_b32"))
    assert waits[0] < read


def test_wait_group_gfx1250_is_asynccnt(kernel):
    k = kernel("gfx1250")
    _three_stage(k, 2)
    assert find(k.compile().asm, r"^s_wait_asynccnt 0x2$")


def test_without_alias_scopes_llvm_adds_vmcnt0(kernel):
    """The reason for the metadata: an unannotated LDS read gets a vmcnt(0)."""
    k = kernel("gfx942")
    groups = dma.AsyncGroups()
    tid = k.tid()
    for stage in range(2):
        buffer.emit_buffer_load_to_local(k.builder, "gfx942", _rsrc(k), k.lds_at(stage * 256),
                                         k.builder.mul(tid, i32(4)), groups)
        dma.emit_async_load_commit_group(k.builder, "gfx942", groups)
    dma.emit_async_load_wait_group(k.builder, "gfx942", groups, 1)
    sync.emit_s_barrier(k.builder, "gfx942")
    value = k.builder.load(k.builder.gep(k.lds, [i32(0), tid]))
    k.builder.store(value, k.builder.gep(k.dst, [tid], source_etype=I32))
    assert find(k.compile().asm, r"^s_waitcnt vmcnt\(0\)")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("mask", [0x0, 0x10, 0x406])
def test_sched_barrier_mask_in_verbose_asm(kernel, arch, mask):
    k = kernel(arch)
    sync.emit_sched_barrier(k.builder, arch, mask)
    assert f"; sched_barrier mask(0x{mask:08x})" in k.compile().asm


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("priority", [0, 1, 3])
def test_s_setprio(kernel, arch, priority):
    k = kernel(arch)
    sync.emit_s_setprio(k.builder, arch, priority)
    assert find(k.compile().asm, rf"^s_setprio {priority}$")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("priority", [-1, 4, 1 << 16, True, 1.0, None])
def test_s_setprio_priority_range(kernel, arch, priority):
    with pytest.raises(AMDArgumentError, match=r"amd.s_setprio: argument 'priority' must be an int in \[0, 3\]"):
        sync.emit_s_setprio(kernel(arch).builder, arch, priority)


@pytest.mark.parametrize("arch", ARCHS)
def test_sched_group_barrier(kernel, arch):
    k = kernel(arch)
    sync.emit_sched_group_barrier(k.builder, arch, 0x8, 2, 0)
    assert re.search(r"; sched_group_barrier mask\(0x00000008\) size\(2\) SyncID\(0\)",
                     k.compile().asm)


@pytest.mark.parametrize("arch,expected", [
    ("gfx942", ["s_barrier"]), ("gfx950", ["s_barrier"]),
    ("gfx1250", ["s_barrier_signal -1", "s_barrier_wait -1"]),
])
def test_s_barrier(kernel, arch, expected):
    k = kernel(arch)
    sync.emit_s_barrier(k.builder, arch)
    lines = instructions(k.compile().asm)
    assert [line for line in lines if line.startswith("s_barrier")] == expected


#: per arch: the LDS wait s_barrier puts first, and the barrier instruction
LDS_WAIT = {"gfx942": "s_waitcnt lgkmcnt(0)", "gfx950": "s_waitcnt lgkmcnt(0)",
            "gfx1250": "s_wait_dscnt 0x0"}
BARRIER = {"gfx942": "s_barrier", "gfx950": "s_barrier", "gfx1250": "s_barrier_signal -1"}
#: waits on global memory or DMA, which s_barrier must not add
NON_LDS_WAIT = r"vmcnt|loadcnt|storecnt|asynccnt|tensorcnt"


@pytest.mark.parametrize("arch", ARCHS)
def test_s_barrier_waits_for_lds_before_the_barrier(kernel, arch):
    """Review finding: write LDS, s_barrier, read another lane's slot raced (no LDS wait).
    The LDS wait now sits between the write and the barrier; a global load in flight
    across the barrier is not waited for."""
    k = kernel(arch)
    b, tid = k.builder, k.tid()
    in_flight = b.load(b.gep(k.src, [tid], source_etype=I32), typ=I32)
    # storing a kernel argument puts the wait for the scalar argument loads (which
    # share lgkmcnt on gfx9) before the write
    b.store(b.add(tid, k.n), b.gep(k.lds, [i32(0), tid]))
    sync.emit_s_barrier(b, arch)
    other = b.load(b.gep(k.lds, [i32(0), b.xor(tid, i32(1))]), typ=I32)
    b.store(b.add(other, in_flight), b.gep(k.dst, [tid], source_etype=I32))
    lines = instructions(k.compile().asm)
    write = next(i for i, line in enumerate(lines) if re.match(r"ds_(write|store)_b32 ", line))
    barrier = lines.index(BARRIER[arch])
    read = next(i for i, line in enumerate(lines) if re.match(r"ds_(read|load)_b32 ", line))
    load = next(i for i, line in enumerate(lines) if re.match(r"global_load_(dword|b32) ", line))
    waits = [line for line in lines[write + 1:barrier] if line.startswith("s_wait")]
    assert write < barrier < read and load < barrier
    assert waits[-1] == LDS_WAIT[arch]
    assert not [w for w in waits if re.search(NON_LDS_WAIT, w)]


@pytest.mark.parametrize("arch", ARCHS)
def test_one_wave_s_barrier_is_its_lds_wait(kernel, arch):
    """Issue 11.4: in a one-wave workgroup (compile's max_workgroup_size <= wave size)
    s_barrier emits no llvm.amdgcn.s.barrier, which is convergent and keeps LLVM from
    unrolling the loop around it; the LDS wait between write and read stays."""
    k = kernel(arch)
    b, tid = k.builder, k.tid()
    b.store(b.add(tid, k.n), b.gep(k.lds, [i32(0), tid]))
    sync.emit_s_barrier(b, arch, one_wave=True)
    other = b.load(b.gep(k.lds, [i32(0), b.xor(tid, i32(1))]), typ=I32)
    b.store(other, b.gep(k.dst, [tid], source_etype=I32))
    assert "llvm.amdgcn.s.barrier" not in str(k.module)
    fences = re.findall(r'fence syncscope\("workgroup"\) (\w+)', str(k.module))
    assert fences == ([] if arch in GFX9 else ["release", "acquire"])
    lines = instructions(k.compile().asm)
    write = next(i for i, line in enumerate(lines) if re.match(r"ds_(write|store)_b32 ", line))
    read = next(i for i, line in enumerate(lines) if re.match(r"ds_(read|load)_b32 ", line))
    assert LDS_WAIT[arch] in lines[write + 1:read]
    assert not [line for line in lines if line.startswith("s_barrier")]


@pytest.mark.parametrize("arch", ARCHS)
def test_s_barrier_llvm_ir(kernel, arch):
    """gfx9: an lgkmcnt-only ``s.waitcnt`` and no fence (a fence would also wait for
    LDS DMA); gfx1250: workgroup fences narrowed to LDS around the barrier."""
    k = kernel(arch)
    sync.emit_s_barrier(k.builder, arch)
    ir_text = k.compile().llvm_ir
    fences = re.findall(r'fence syncscope\("workgroup"\) (\w+), !mmra (!\d+)', ir_text)
    if arch != "gfx1250":  # gfx9: an explicit lgkmcnt wait, no fence (see emit_s_barrier)
        assert not fences and "llvm.amdgcn.s.waitcnt(i32 -7937)" in ir_text
        return
    assert [order for order, _ in fences] == ["release", "acquire"]
    tag = fences[0][1]
    assert f'{tag} = !{{!"amdgpu-synchronize-as", !"local"}}' in ir_text


def test_barrier_arrive_gfx1250(kernel):
    k = kernel("gfx1250")
    sync.emit_barrier_arrive(k.builder, "gfx1250", k.lds_at(8))
    asm = k.compile().asm
    assert find(asm, r"^ds_atomic_barrier_arrive_rtn_b64 v\[\d+:\d+\], v\d+, v\[\d+:\d+\]")
    # lane 0 of each wave only: exec narrowed to lane id (mbcnt) == 0
    assert find(asm, r"^v_mbcnt_lo_u32_b32 v\d+, -1, 0$") and find(asm, r"^v_cmpx_eq_u32")


@pytest.mark.parametrize("arch,flags", [("gfx942", "0x27000"), ("gfx950", "0x27000")])
def test_make_buffer_rsrc_flags(kernel, arch, flags):
    k = kernel(arch)
    rsrc = buffer.emit_make_buffer_rsrc(k.builder, arch, k.src)
    buffer.emit_buffer_load_to_local(k.builder, arch, rsrc, k.lds_at(0), i32(0),
                                     dma.AsyncGroups())
    asm = k.compile().asm
    assert find(asm, rf"^s_mov_b32 s\d+, {flags}$")
    assert find(asm, r"^s_mov_b32 s\d+, 0x7ffffffe$")  # num_records


def _loop_kernel(k, masked, prologue_dmas=1):
    """Prologue: two groups of *prologue_dmas* unmasked loads; then a loop whose body is
    wait_group(1), an LDS read, one load (masked by i < n if *masked*) and a commit."""
    b, groups, tid = k.builder, dma.AsyncGroups(), k.tid()

    def load(mask=None):
        if k.arch in GFX9:
            buffer.emit_buffer_load_to_local(b, k.arch, _rsrc(k), k.lds_at(0),
                                             b.mul(tid, i32(4)), groups, mask=mask)
        else:
            src = b.gep(k.src, [tid], source_etype=I32)
            global_load.emit_async_load(b, k.arch, src, k.lds_at(0), groups, mask=mask)

    for _ in range(2):
        for _ in range(prologue_dmas):
            load()
        dma.emit_async_load_commit_group(b, k.arch, groups)
    entry = b.block
    loop, done = k.fn.append_basic_block("loop"), k.fn.append_basic_block("done")
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I32)
    i.add_incoming(i32(0), entry)
    wait = dma.emit_async_load_wait_group(b, k.arch, groups, 1)
    value = b.load(b.gep(k.lds, [i32(0), tid]))
    dma.mark_local_read(value)
    b.store(value, b.gep(k.dst, [i], source_etype=I32))
    load(b.icmp_unsigned("<", i, k.n) if masked else None)
    dma.emit_async_load_commit_group(b, k.arch, groups)
    nxt = b.add(i, i32(1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_unsigned("<", nxt, k.n), loop, done)
    b.position_at_end(done)
    return wait


def test_wait_in_loop_sees_a_later_masked_group(kernel):
    """Review finding: the masked load after the wait may be skipped by a whole wave, so
    on the last iteration no younger group exists; waiting for 1 instruction is short.
    gfx942's async_load (global_load_lds, LDS base in M0) masks with a branch."""
    k = kernel("gfx942")
    groups, tid = dma.AsyncGroups(), k.tid()
    for _ in range(2):
        global_load.emit_async_load(k.builder, "gfx942", k.src, k.lds_at(0), groups)
        dma.emit_async_load_commit_group(k.builder, "gfx942", groups)
    wait = dma.emit_async_load_wait_group(k.builder, "gfx942", groups, 1)
    assert wait.count == 1  # so far
    global_load.emit_async_load(k.builder, "gfx942", k.src, k.lds_at(0), groups,
                                mask=k.builder.icmp_unsigned("<", tid, k.n))
    dma.emit_async_load_commit_group(k.builder, "gfx942", groups)
    assert wait.count == 0
    assert find(k.compile().asm, r"^s_waitcnt vmcnt") == ["s_waitcnt vmcnt(0)"]


def test_gfx1250_masked_async_load_keeps_the_loop_wait(kernel):
    """Issue 11.5: on gfx1250 a masked lane's LDS address is pointed out of range
    (0x7fffffff, as in Triton), so the DMA issues unconditionally, the loop's group
    keeps one instruction and wait_group(1) stays s_wait_asynccnt 1."""
    k = kernel("gfx1250")
    assert _loop_kernel(k, masked=True).count == 1
    asm = k.compile().asm
    assert find(asm, r"^s_wait_asynccnt") == ["s_wait_asynccnt 0x1"]
    assert find(asm, r"^v_cndmask_b32\S* v\d+, 0x7fffffff, ")
    assert not find(asm, r"s_cbranch_execz")


@pytest.mark.parametrize("arch", GFX9)
def test_zero_filled_mask_keeps_the_loop_wait(kernel, arch):
    """buffer_load_to_local's mask is branch-free (out-of-range voffset), so the loop's
    group always holds one instruction and wait_group(1) stays vmcnt(1)."""
    k = kernel(arch)
    assert _loop_kernel(k, masked=True).count == 1
    asm = k.compile().asm
    assert find(asm, r"^s_waitcnt vmcnt") == ["s_waitcnt vmcnt(1)"]
    assert not find(asm, r"s_cbranch_execz")


def test_wait_in_loop_counts_smaller_later_groups(kernel):
    """Two-instruction prologue groups, one-instruction loop groups: in the loop the
    youngest group has one instruction, so wait_group(1) must be vmcnt(1), not 2."""
    k = kernel("gfx942")
    wait = _loop_kernel(k, masked=False, prologue_dmas=2)
    assert wait.count == 1
    assert find(k.compile().asm, r"^s_waitcnt vmcnt") == ["s_waitcnt vmcnt(1)"]


def test_dma_in_a_branch_of_its_own_makes_the_group_uncertain(kernel):
    k = kernel("gfx1250")
    b, groups = k.builder, dma.AsyncGroups()
    for _ in range(2):
        global_load.emit_async_load(b, "gfx1250", k.src, k.lds_at(0), groups)
        dma.emit_async_load_commit_group(b, "gfx1250", groups)
    with b.if_then(b.icmp_unsigned("<", k.tid(), k.n)):  # a DMA a wave may skip
        global_load.emit_async_load(b, "gfx1250", k.src, k.lds_at(0), groups)
    dma.emit_async_load_commit_group(b, "gfx1250", groups)
    wait = dma.emit_async_load_wait_group(b, "gfx1250", groups, 2)
    assert groups.sizes() == [1, 1, 0] and wait.count == 0
    assert find(k.compile().asm, r"^s_wait_asynccnt") == ["s_wait_asynccnt 0x0"]
