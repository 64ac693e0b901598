"""Issue 11.4: vmcnt of async_load_wait_group counted in the assembly (numba_tma.amd.vmcnt)."""
import numba
import pytest

import numba_tma.amd as amd
from amd_asm import find
from numba_tma.amd import vmcnt
from numba_tma.amd.asm_loops import steady_state

C, W = vmcnt.COMMIT_MARK, vmcnt.WAIT_MARK


def _asm(body):
    """A function ``k`` whose body is *body* (instruction lines), as LLVM prints it."""
    return "k:\n" + "\n".join("\t" + line if not line.startswith(".LBB") else line
                             for line in body) + "\n.Lfunc_end0:\n"


LOOP = _asm([
    "buffer_load_dword v1, s[0:3], 0 offen lds", C,   # prologue: groups 0 and 1
    "buffer_load_dword v1, s[0:3], 0 offen lds", C,
    ".LBB0_1:",
    "buffer_load_dword v1, s[0:3], 0 offen lds", C,   # group t+2
    W + "0",
    "s_waitcnt vmcnt(2)",
    "ds_read_b32 v2, v3",
    "global_store_dword v[4:5], v2, off",            # copy-out: younger than later groups
    "s_cbranch_scc1 .LBB0_1",
    "s_endpgm",
])


def test_a_loop_wait_takes_the_smallest_count_of_its_paths():
    # from the prologue: 2 younger DMA; around the back edge: 2 DMA + 2 stores
    assert vmcnt.wait_counts(LOOP, "k", [2]) == [2]


def test_unrolled_copies_get_counts_of_their_own():
    body = ["buffer_load_dword v1, s[0:3], 0 offen lds", C] * 2 + [".LBB0_1:"]
    for copy in range(2):
        body += ["buffer_load_dword v1, s[0:3], 0 offen lds", C, W + str(copy),
                 "s_waitcnt vmcnt(2)", "global_store_dword v[4:5], v2, off"]
    body += ["s_cbranch_scc1 .LBB0_1", "s_endpgm"]
    # copy 0 is entered from the prologue (2); copy 1 always follows copy 0 (3)
    assert vmcnt.wait_counts(_asm(body), "k", [2, 2]) == [2, 3]


def test_a_skipped_branch_counts_its_short_path():
    asm = _asm([
        "buffer_load_dword v1, s[0:3], 0 offen lds", C,
        "s_cbranch_execz .LBB0_2",
        "global_load_lds_dword v0, s[0:1]",              # a DMA the wave may skip
        ".LBB0_2:", C,
        W + "0", "s_waitcnt vmcnt(0)", "s_endpgm"])
    assert vmcnt.wait_counts(asm, "k", [1]) == [0]


def test_fewer_groups_than_pendings_waits_for_nothing():
    asm = _asm(["buffer_load_dword v1, s[0:3], 0 offen lds", C, W + "0",
                "s_waitcnt vmcnt(0)", "s_endpgm"])
    assert vmcnt.wait_counts(asm, "k", [1]) == [vmcnt.MAX_VMCNT]


def test_an_instance_outside_the_function_has_no_count():
    assert vmcnt.wait_counts(LOOP, "k", [2, 1]) == [2, None]


def test_calls_and_missing_functions_are_not_counted():
    calls = _asm(["s_swappc_b64 s[30:31], s[16:17]", C, W + "0", "s_endpgm"])
    assert vmcnt.wait_counts(calls, "k", [0]) is None
    assert vmcnt.wait_counts(LOOP, "other", [2]) is None


def test_memory_order_ignores_alu_and_wait_counts():
    moved_alu = LOOP.replace("ds_read_b32 v2, v3", "v_mov_b32 v9, 0\n\tds_read_b32 v2, v3")
    assert vmcnt.same_memory_order(LOOP, moved_alu.replace("vmcnt(2)", "vmcnt(4)"), "k")
    moved_store = _asm([
        "buffer_load_dword v1, s[0:3], 0 offen lds", C,
        "buffer_load_dword v1, s[0:3], 0 offen lds", C, ".LBB0_1:",
        "global_store_dword v[4:5], v2, off",             # store before the DMA now
        "buffer_load_dword v1, s[0:3], 0 offen lds", C, W + "0", "s_waitcnt vmcnt(2)",
        "ds_read_b32 v2, v3", "s_cbranch_scc1 .LBB0_1", "s_endpgm"])
    assert not vmcnt.same_memory_order(LOOP, moved_store, "k")


def test_vmcnt_immediate_encoding():
    # vmcnt[3:0] in bits 3:0, vmcnt[5:4] in bits 15:14; expcnt 7, lgkmcnt 15
    assert vmcnt.vmcnt_immediate(1) == 0xFFFF3FF1 - (1 << 32)
    assert vmcnt.vmcnt_immediate(63) == -1  # every counter at "no wait"


def _copy(x, y, ntiles):
    lane = amd.workitem_id_x()
    ring = amd.lds_array(192, numba.float32)
    for t in range(2):
        amd.buffer_load_to_local(ring[t * 64:], x, t * 64 + lane)
        amd.async_load_commit_group()
    for t in range(ntiles):
        ahead = numba.uint32(t + 2)
        amd.buffer_load_to_local(ring[(ahead % 3) * 64:], x, ahead * 64 + lane,
                                 mask=ahead < ntiles)
        amd.async_load_commit_group()
        amd.async_load_wait_group(2)
        y[t * 64 + lane] = ring[(numba.uint32(t) % 3) * 64 + lane]


def test_compile_falls_back_to_the_ir_count_when_the_memory_order_differs(monkeypatch):
    def vmcnts(asm):
        return sorted({line for line in steady_state(asm).waits if "vmcnt" in line})

    sig = "void(float32[::1], float32[::1], int32)"
    counted = amd.compile(_copy, sig, "gfx942", max_workgroup_size=64).asm
    assert vmcnts(counted) == ["s_waitcnt vmcnt(2)", "s_waitcnt vmcnt(3)", "s_waitcnt vmcnt(4)"]
    monkeypatch.setattr(vmcnt, "same_memory_order", lambda *args: False)
    fallback = amd.compile(_copy, sig, "gfx942", max_workgroup_size=64).asm
    assert vmcnts(fallback) == ["s_waitcnt vmcnt(2)"]  # 2 one-DMA groups, stores not counted
    assert not find(fallback, vmcnt.COMMIT_MARK) and not find(counted, vmcnt.COMMIT_MARK)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_no_placeholder_or_marker_reaches_the_object(arch):
    k = amd.compile(_copy, "void(float32[::1], float32[::1], int32)", arch)
    assert vmcnt.COMMIT_PLACEHOLDER not in k.llvm_ir and vmcnt.WAIT_PLACEHOLDER not in k.llvm_ir
    assert "numba_tma" not in k.asm and k.object[:4] == b"\x7fELF"


def test_memory_order_ignores_registers_and_offsets():
    """Issue 19.3: the two code generations allocate registers (and fold offsets)
    differently; a vector-memory instruction counts once whatever its operands."""
    renamed = (LOOP.replace("buffer_load_dword v1, s[0:3], 0 offen lds",
                            "buffer_load_dword v40, s[12:15], 0 offen lds")
               .replace("global_store_dword v[4:5], v2, off",
                        "global_store_dword v[6:7], v8, off offset:-1792"))
    assert renamed != LOOP and vmcnt.same_memory_order(LOOP, renamed, "k")
    load_for_store = LOOP.replace("global_store_dword", "global_load_dword")
    assert not vmcnt.same_memory_order(LOOP, load_for_store, "k")


_PLACEHOLDERS = """define void @k() {
  tail call void @numba_tma.commit()
  call void @numba_tma.wait(i32 0, i32 1)
  ret void
}
declare void @numba_tma.commit()
declare void @numba_tma.wait(i32, i32)
"""


def test_a_commit_is_a_compiler_barrier_in_both_code_generations():
    """Issue 19.3: the memory orders are compared by mnemonic, so no DMA may cross a
    commit in the final code either (an inline-asm marker in the counting code)."""
    final = vmcnt.with_markers(_PLACEHOLDERS, [3], markers=False).splitlines()
    assert final[1:3] == ['  fence syncscope("singlethread") seq_cst',
                          "  call void @llvm.amdgcn.s.waitcnt(i32 -49165)"]  # vmcnt(3)
    counting = vmcnt.with_markers(_PLACEHOLDERS, [3]).splitlines()
    assert counting[1] == '  call void asm sideeffect ";numba_tma.commit", ""()'


def _rows_in_an_inner_loop(x, y, ntiles, ld):
    lane = amd.workitem_id_x()
    ring = amd.lds_array(3 * 512, numba.float32)
    for t in range(2):
        for r in range(8):
            amd.buffer_load_to_local(ring[t * 512 + r * 64:], x, (t * 8 + r) * ld + lane)
        amd.async_load_commit_group()
    for t in range(ntiles):
        ahead = t + 2
        for r in range(8):  # a loop of its own: the IR-level group size is 0
            amd.buffer_load_to_local(ring[(ahead % 3) * 512 + r * 64:], x,
                                     (ahead * 8 + r) * ld + lane)
        amd.async_load_commit_group()
        amd.async_load_wait_group(2)
        amd.s_barrier()
        for r in range(8):
            y[(t * 8 + r) * ld + lane] = ring[(t % 3) * 512 + r * 64 + lane]
        amd.s_barrier()


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_dma_in_an_inner_loop_keeps_the_counted_wait(arch):
    """Issue 19.3: the two code generations gave the DMA other registers, the memory
    order compared unequal, and the wait fell back to the IR-level count: vmcnt(0).

    By hand: LLVM unrolls the inner loops (8 ``buffer_load_dword ... lds`` per group);
    the main loop is not unrolled (s_barrier is convergent), so its one wait takes the
    smaller count of its two paths.  Entered from the prologue, the DMA issued after
    the 3rd youngest commit (group 0) are groups 1 and 2: 16.  Around the back edge
    they are group t+2, the previous iteration's 8 stores and group t+1: 24."""
    asm = amd.compile(_rows_in_an_inner_loop, "void(float32[::1], float32[::1], int32, int32)",
                      arch).asm
    assert find(asm, r"^s_waitcnt vmcnt") == ["s_waitcnt vmcnt(16) lgkmcnt(0)"]
    loop = steady_state(asm)
    assert loop.tiles == 8 and "s_waitcnt vmcnt(16) lgkmcnt(0)" in loop.waits


def _async_rows_in_an_inner_loop(x, y, ntiles, ld):
    lane = amd.workitem_id_x()
    ring = amd.lds_array(3 * 512, numba.float32)
    for t in range(2):
        for r in range(8):
            amd.async_load(x, (t * 8 + r) * ld + lane, ring[t * 512 + r * 64:])
        amd.async_load_commit_group()
    for t in range(ntiles):
        ahead = t + 2
        for r in range(8):  # a loop of its own: the IR-level group size is 0
            amd.async_load(x, (ahead * 8 + r) * ld + lane, ring[(ahead % 3) * 512 + r * 64:])
        amd.async_load_commit_group()
        amd.async_load_wait_group(2)
        amd.s_barrier()
        for r in range(8):
            y[(t * 8 + r) * ld + lane] = ring[(t % 3) * 512 + r * 64 + lane]
        amd.s_barrier()


def test_gfx1250_async_loads_in_an_inner_loop_keep_the_counted_wait():
    """The same ring with ``async_load`` on gfx1250, whose ``s_wait_asynccnt`` counts only the
    async copies into LDS (not the 8 stores of each tile): it fell back to the IR-level count,
    ``s_wait_asynccnt 0``.  By hand: entered from the prologue, the copies issued after the 3rd
    youngest commit are groups 1 and 2 (16); around the back edge groups t+1 and t+2 (16)."""
    asm = amd.compile(_async_rows_in_an_inner_loop, "void(float32[::1], float32[::1], int32, int32)",
                      "gfx1250").asm
    assert find(asm, r"^s_wait_asynccnt") == ["s_wait_asynccnt 0x10"]
    assert len(find(asm, r"^global_load_async_to_lds_b32")) >= 16     # the loops are unrolled
