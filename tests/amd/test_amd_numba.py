"""Kernels written in Python through the ``amdgcn`` Numba target, checked in assembly."""
import re

import numba
import pytest

import numba_tma.amd as amd
from amd_asm import find, instructions, load_example
from numba_tma.amd.asm_loops import steady_state


@pytest.fixture(scope="module")
def example():
    return load_example()


@pytest.fixture(scope="module")
def pipelined(example):
    return {arch: example.build(arch) for arch in ("gfx942", "gfx950", "gfx1250")}


_BYTES = {"dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16}


@pytest.mark.parametrize("arch,dma", [("gfx942", r"buffer_load_dword v\d+"),
                                      ("gfx950", r"buffer_load_dwordx4 v\d+")])
def test_pipelined_copy_gfx9(pipelined, arch, dma):
    """One wave per workgroup: no s_barrier; LLVM unrolls the loop 4 times and the
    copies' waits, counted in the assembly with the copy-out's stores, leave two tile
    loads in flight (the Triton comparison is test_amd_triton_reference.py)."""
    loop = steady_state(pipelined[arch].asm)
    loads = [line for line in loop.instructions
             if re.match(dma + r", s\[\d+:\d+\], 0 offen lds$", line)]
    assert len(loads) == loop.tiles == 4
    assert [w for w in loop.waits if "vmcnt" in w] == [
        f"s_waitcnt vmcnt({k}) lgkmcnt(0)" for k in (2, 3, 4, 4)]  # + s_barrier's LDS wait
    assert not find(pipelined[arch].asm, r"^s_barrier")
    assert [line for line in loop.instructions if line.startswith("ds_read")]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_one_wave_workgroups_let_llvm_unroll_the_pipeline(example, pipelined, arch):
    """With max_workgroup_size above the wave size s_barrier keeps its (convergent)
    barrier and the loop keeps one tile per iteration."""
    wave = amd.ARCHS[arch].wave_size
    four_waves = amd.compile(example._buffer_pipeline(example.WIDTH[arch]),
                             "void(float32[::1], float32[::1], int32)", arch,
                             max_workgroup_size=4 * wave).asm
    assert steady_state(four_waves).tiles == 1 and find(four_waves, r"^s_barrier$")
    assert steady_state(pipelined[arch].asm).tiles == 4


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_pipelined_copy_moves_whole_tiles(example, pipelined, arch):
    """Review finding: gfx942 moved 64 of 256 floats per tile.  Per tile the wave's
    DMA bytes and global-store bytes must both equal one tile."""
    loop = steady_state(pipelined[arch].asm)
    tile_bytes = example.tile_floats(arch) * 4
    dma_bytes = sum(_BYTES[m[1]] for line in loop.instructions
                    if (m := re.match(r"^buffer_load_(dword\w*) .* lds$", line)))
    store_bytes = sum(_BYTES[m[1]] for line in loop.instructions
                      if (m := re.match(r"^global_store_(dword\w*) ", line)))
    assert 64 * dma_bytes == 64 * store_bytes == loop.tiles * tile_bytes


def test_pipelined_copy_tdm_tile_is_copied_out(example):
    assert example.TILE == example.tile_floats("gfx1250") == 32 * (example.TILE // 32)


def test_pipelined_copy_gfx1250(pipelined):
    """One wave: the barriers reduce to their LDS waits; no v_readfirstlane (the
    descriptor's bound clamp runs on the scalar unit)."""
    asm = pipelined["gfx1250"].asm
    loop = steady_state(asm)
    assert [line for line in loop.instructions
            if re.match(r"^tensor_load_to_lds s\[\d+:\d+\], s\[\d+:\d+\]$", line)]
    assert "s_wait_tensorcnt 0x2" in loop.waits
    assert not find(asm, r"^s_barrier") and not find(asm, r"^v_readfirstlane")


def test_example_prints_key_instructions(example, capsys):
    example.main()
    out = capsys.readouterr().out
    for text in ("== gfx942", "offen lds", "s_waitcnt vmcnt(4)", "buffer_load_dwordx4",
                 "tensor_load_to_lds", "s_wait_tensorcnt 0x2", "instructions per tile"):
        assert text in out


def test_kernel_params_follow_numba_cuda_array_layout(pipelined):
    # each 1-D array: meminfo, parent, nitems, itemsize, data, shape, stride; then the int
    assert len(pipelined["gfx942"].params) == 2 * 7 + 1


def _tdm_ops(x, y):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(4096, numba.float32)
    a = amd.make_tensor_descriptor(x, (32, 64))
    b = amd.update_tensor_descriptor(a, add_offsets=(32, 0), pred=lane < 1000)
    amd.async_amd_descriptor_load_fused(((a, tile, 0x3), (b, tile[2048:], 0xC)))
    amd.async_amd_descriptor_wait(0)
    out = amd.make_tensor_descriptor(y, (32, 64))
    amd.async_amd_descriptor_store(out, tile, offsets=(0, 0))
    amd.async_amd_descriptor_wait(0)
    bar = amd.lds_array(1, numba.int64)
    amd.barrier_arrive(bar)
    amd.amd_sched_barrier(0)
    amd.sched_group_barrier(0x8, 1, 0)


def test_tdm_ops_from_python():
    k = amd.compile(_tdm_ops, "void(float32[:, ::1], float32[:, ::1])", "gfx1250")
    asm = k.asm
    assert len(find(asm, r"^tensor_load_to_lds ")) == 1  # fused: one instruction
    assert find(asm, r"^tensor_store_from_lds ")
    assert find(asm, r"^s_wait_tensorcnt 0x0$")
    assert find(asm, r"^ds_atomic_barrier_arrive_rtn_b64 ")
    assert "; sched_barrier mask(0x00000000)" in asm
    assert "; sched_group_barrier mask(0x00000008) size(1) SyncID(0)" in asm


def _async_ops(x, y, n):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(1024, numba.float32)
    amd.async_load(x, tile, offsets=lane, mask=lane < n, other=-2.0)
    amd.async_load_commit_group()
    amd.async_load_wait_group(0)
    amd.s_barrier()
    y[lane] = tile[lane]


@pytest.mark.parametrize("arch,mnemonic,wait", [
    ("gfx942", "global_load_lds_dword", "s_waitcnt vmcnt(0)"),
    ("gfx950", "global_load_lds_dword", "s_waitcnt vmcnt(0)"),
    ("gfx1250", "global_load_async_to_lds_b32", "s_wait_asynccnt 0x0"),
])
def test_async_load_from_python(arch, mnemonic, wait):
    asm = amd.compile(_async_ops, "void(float32[::1], float32[::1], int32)", arch).asm
    assert find(asm, rf"^{mnemonic} ")
    assert find(asm, rf"^{re.escape(wait)}")
    assert find(asm, r"^ds_(write|store)_b32 ")  # other, by masked lanes


@pytest.mark.parametrize("kernel,arch", [(_tdm_ops, "gfx942"), (_tdm_ops, "gfx950")])
def test_gating_through_numba(kernel, arch):
    with pytest.raises(amd.UnsupportedArchError, match=f"gfx1250 only; requested arch is {arch}"):
        amd.compile(kernel, "void(float32[:, ::1], float32[:, ::1])", arch)


def test_constant_arguments_must_be_constants():
    def bad(x, n):
        amd.async_load_wait_group(n)

    with pytest.raises(amd.AMDArgumentError, match="numba_tma: amd.async_load_wait_group: argument 'pendings' must be a compile-time constant; got int"):
        amd.compile(bad, "void(float32[::1], int32)", "gfx942")


def _prioritized(x, y):
    amd.s_setprio(3)
    y[amd.workitem_id_x()] = x[amd.workitem_id_x()] * 2.0
    amd.s_setprio(0)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_s_setprio_from_python(arch):
    asm = amd.compile(_prioritized, "void(float32[::1], float32[::1])", arch).asm
    assert find(asm, r"^s_setprio 3$") and find(asm, r"^s_setprio 0$")


@pytest.mark.parametrize("priority", [4, -1])
def test_s_setprio_out_of_range_from_python(priority):
    def kern(x, y):
        amd.s_setprio(priority)

    with pytest.raises(amd.AMDArgumentError, match=r"amd.s_setprio: argument 'priority' must be an int in \[0, 3\]"):
        amd.compile(kern, "void(float32[::1], float32[::1])", "gfx942")


def _exchange(x, y):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(64, numba.float32)
    tile[lane] = x[lane]
    amd.s_barrier()
    y[lane] = tile[31 - lane]


_BARRIER_LINES = r"^(s_barrier|s_barrier_signal -1|s_barrier_wait -1)$"


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_max_workgroup_size_of_one_wave_drops_barriers(arch):
    """One wave per workgroup needs no workgroup barrier: LLVM drops it when the kernel
    carries "amdgpu-flat-work-group-size"="1,<wave size>"."""
    wave = amd.ARCHS[arch].wave_size
    assert wave == (32 if arch == "gfx1250" else 64)
    sig = "void(float32[::1], float32[::1])"
    default = amd.compile(_exchange, sig, arch)
    assert find(default.asm, _BARRIER_LINES)
    assert "amdgpu-flat-work-group-size" not in default.llvm_ir
    one_wave = amd.compile(_exchange, sig, arch, max_workgroup_size=wave)
    assert f'"amdgpu-flat-work-group-size"="1,{wave}"' in one_wave.llvm_ir
    assert not find(one_wave.asm, _BARRIER_LINES)
    assert find(one_wave.asm, r"^ds_(read|load)")  # the kernel is still there
    two_waves = amd.compile(_exchange, sig, arch, max_workgroup_size=2 * wave)
    assert f'"amdgpu-flat-work-group-size"="1,{2 * wave}"' in two_waves.llvm_ir
    assert find(two_waves.asm, _BARRIER_LINES)


PUBLIC_OPS = ["buffer_load_to_local", "async_load", "async_load_commit_group",
              "async_load_wait_group", "update_tensor_descriptor", "async_amd_descriptor_load",
              "async_amd_descriptor_load_fused", "async_amd_descriptor_store",
              "async_amd_descriptor_wait", "amd_sched_barrier", "sched_group_barrier",
              "s_barrier", "s_setprio", "barrier_arrive", "make_tensor_descriptor",
              "lds_array"]


@pytest.mark.parametrize("name", PUBLIC_OPS)
def test_public_ops_document_intrinsic_archs_and_example(name):
    doc = getattr(amd, name).__doc__
    assert doc and "Example" in doc
    if name != "lds_array":
        assert re.search(r"gfx942|gfx950|gfx1250|All archs", doc)


@pytest.mark.skipif(amd.find_ld_lld() is None,
                    reason="ld.lld not installed (Debian: apt-get install lld-22)")
@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_hsaco_links_with_kernel_metadata(pipelined, arch):
    hsaco = pipelined[arch].hsaco()
    assert hsaco[:4] == b"\x7fELF" and hsaco[16] == 3  # ET_DYN: a loadable code object
    assert b"amdhsa.kernels" in hsaco and f"amdgcn-amd-amdhsa--{arch}".encode() in hsaco
    assert b"pipelined_copy.kd" in hsaco  # the kernel descriptor symbol


def _zero_other(x, y, n):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    amd.buffer_load_to_local(tile, x, lane, mask=lane < n, other=0.0)
    amd.async_load_commit_group()
    amd.buffer_load_to_local(tile[64:], x, lane, mask=lane < n, other=0)
    amd.async_load_commit_group()
    amd.async_load_wait_group(1)
    amd.s_barrier()
    y[lane] = tile[lane]


def test_literal_zero_other_keeps_the_zero_fill(capsys):
    """Review finding: other=0.0 from Python took the branch + store path."""
    asm = amd.compile(_zero_other, "void(float32[::1], float32[::1], int32)", "gfx942").asm
    assert not find(asm, r"s_cbranch_execz") and not find(asm, r"^ds_write")
    assert find(asm, r"^s_waitcnt vmcnt") == ["s_waitcnt vmcnt(1) lgkmcnt(0)"]


def _underwait(x, y, ntiles):
    lane = amd.workitem_id_x()
    ring = amd.lds_array(192, numba.float32)
    for t in range(2):  # prologue, unmasked
        amd.async_load(x, ring[t * 64:], offsets=t * 64 + lane)
        amd.async_load_commit_group()
    for t in range(ntiles):
        amd.async_load_wait_group(1)
        amd.s_barrier()
        y[t * 64 + lane] = ring[(t % 3) * 64 + lane]
        amd.s_barrier()
        ahead = t + 2
        amd.async_load(x, ring[(ahead % 3) * 64:], offsets=ahead * 64 + lane, mask=ahead < ntiles)
        amd.async_load_commit_group()


def _underwait_buffer(x, y, ntiles):
    lane = amd.workitem_id_x()
    ring = amd.lds_array(192, numba.float32)
    for t in range(2):
        amd.buffer_load_to_local(ring[t * 64:], x, t * 64 + lane)
        amd.async_load_commit_group()
    for t in range(ntiles):
        amd.async_load_wait_group(1)
        amd.s_barrier()
        y[t * 64 + lane] = ring[(t % 3) * 64 + lane]
        amd.s_barrier()
        ahead = t + 2
        amd.buffer_load_to_local(ring[(ahead % 3) * 64:], x, ahead * 64 + lane,
                                 mask=ahead < ntiles)
        amd.async_load_commit_group()


@pytest.mark.parametrize("kernel,arch,wait", [
    # gfx1250: masked lanes get an out-of-range LDS address, the DMA always issues
    (_underwait, "gfx1250", "s_wait_asynccnt 0x1"),
    # gfx942: the masked load sits behind a branch.  Counted in the assembly (issue 11.4),
    # the path that skips it has one younger instruction, the copy-out's store
    (_underwait, "gfx942", "s_waitcnt vmcnt(1) lgkmcnt(0)"),  # + s_barrier's LDS wait
    (_underwait_buffer, "gfx942", "s_waitcnt vmcnt(1) lgkmcnt(0)"),  # zero-fill: always issued
])
def test_wait_before_a_masked_load_in_a_loop(kernel, arch, wait):
    """Review repro: wait_group(1), consume, then the masked next load.  The last
    iterations' masked loads may not issue, so only a branch-free mask keeps vmcnt(1)
    (issue 11.5: gfx1250's masked async_load is branch-free)."""
    asm = amd.compile(kernel, "void(float32[::1], float32[::1], int32)", arch).asm
    assert find(asm, r"^s_wait(cnt vmcnt|_asynccnt)") == [wait]


def _lds_exchange(x, y, n):
    """Write LDS, s_barrier, read a slot another wave wrote."""
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    tile[lane] = x[lane] + n  # n: the argument loads are waited for before the write
    amd.s_barrier()
    y[lane] = tile[255 - lane]


def _refill_after_read(x, y, n):
    """Read an LDS slot, s_barrier, async DMA refills that slot; the next tile's DMA is
    in flight across the barrier."""
    lane = amd.workitem_id_x()
    ring = amd.lds_array(128, numba.float32)
    amd.async_load(x, ring, offsets=lane)  # tile 0 -> slot 0
    amd.async_load_commit_group()
    amd.async_load(x, ring[64:], offsets=64 + lane)  # tile 1 -> slot 1
    amd.async_load_commit_group()
    amd.async_load_wait_group(1)  # tile 0 has landed
    amd.s_barrier()
    value = ring[lane]  # read slot 0 ...
    amd.s_barrier()  # ... in every wave before
    amd.async_load(x, ring, offsets=128 + lane)  # tile 2 refills slot 0
    amd.async_load_commit_group()
    y[lane] = value + n


_DMA = {"gfx942": "global_load_lds_dword ", "gfx950": "global_load_lds_dword ",
        "gfx1250": "global_load_async_to_lds_b32 "}
_LDS_WAIT = {"gfx942": "s_waitcnt lgkmcnt(0)", "gfx950": "s_waitcnt lgkmcnt(0)",
             "gfx1250": "s_wait_dscnt 0x0"}
_BARRIER = {"gfx942": "s_barrier", "gfx950": "s_barrier", "gfx1250": "s_barrier_signal -1"}
# wait_group(1) merged with the first s_barrier's LDS wait (nothing in LDS is pending on
# gfx1250, so LLVM leaves that one out)
_KEEP_TILE_1 = {"gfx942": "s_waitcnt vmcnt(1) lgkmcnt(0)",
                "gfx950": "s_waitcnt vmcnt(1) lgkmcnt(0)", "gfx1250": "s_wait_asynccnt 0x1"}


def _waits(lines, start, end):
    return [line for line in lines[start + 1:end] if line.startswith("s_wait")]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_s_barrier_orders_an_lds_write_before_other_waves_read(arch):
    """Review finding: ``ds_write; s_barrier; ds_read`` had no LDS wait, so another
    wave could read the slot before the write landed."""
    lines = instructions(amd.compile(_lds_exchange, "void(float32[::1], float32[::1], float32)",
                                     arch).asm)
    write = next(i for i, line in enumerate(lines) if re.match(r"ds_(write|store)_b32 ", line))
    barrier = lines.index(_BARRIER[arch])
    read = next(i for i, line in enumerate(lines) if re.match(r"ds_(read|load)_b32 ", line))
    assert write < barrier < read
    assert _waits(lines, write, barrier) == [_LDS_WAIT[arch]]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_s_barrier_orders_an_lds_read_before_the_dma_refill(arch):
    """Review finding: ``ds_read slot; s_barrier; DMA into slot`` had no LDS wait, so
    the DMA could overwrite the slot before a slower wave had read it.  The wait is for
    LDS only: tile 1's DMA stays in flight (no vmcnt / asynccnt wait at the barrier)."""
    lines = instructions(amd.compile(_refill_after_read,
                                     "void(float32[::1], float32[::1], float32)", arch).asm)
    read = next(i for i, line in enumerate(lines) if re.match(r"ds_(read|load)_b32 ", line))
    barrier = next(i for i in range(read, len(lines)) if lines[i] == _BARRIER[arch])
    dmas = [i for i, line in enumerate(lines) if line.startswith(_DMA[arch])]
    assert len(dmas) == 3 and dmas[1] < read < barrier < dmas[2]
    assert _waits(lines, read, barrier) == [_LDS_WAIT[arch]]
    # wait_group(1) keeps tile 1 in flight through both barriers
    assert _waits(lines, dmas[1], dmas[2]) == [_KEEP_TILE_1[arch], _LDS_WAIT[arch]]


def _big_lds(x, y):
    t = amd.lds_array(40000, numba.float32)
    t[amd.workitem_id_x()] = 1.0
    y[0] = t[3]


@pytest.mark.parametrize("arch,fits", [("gfx942", False), ("gfx950", True), ("gfx1250", True)])
def test_lds_over_the_arch_limit_raises(arch, fits):
    """Review finding: LLVM reports 'local memory exceeds limit' and ends the process."""
    if fits:
        amd.compile(_big_lds, "void(float32[::1], float32[::1])", arch)
        return
    with pytest.raises(amd.AMDArgumentError,
                       match=r"numba_tma: amd.compile_ir: argument 'module' must use at most gfx942's 65536 "
                             r"bytes of LDS per workgroup; got 160000 bytes \(@\S+ 160000\)"):
        amd.compile(_big_lds, "void(float32[::1], float32[::1])", arch)


def test_barrier_must_be_int64():
    def bad(x, y):
        amd.barrier_arrive(y)

    with pytest.raises(amd.AMDArgumentError, match=r"numba_tma: amd.barrier_arrive: argument 'bar' must be an int64 LDS array; got array\(float32"):
        amd.compile(bad, "void(float32[::1], float32[::1])", "gfx1250")


def test_constant_buffer_offset_must_fit_voffset():
    def bad(x, y):
        tile = amd.lds_array(64, numba.float32)
        amd.buffer_load_to_local(tile, x, 2**30)

    with pytest.raises(amd.AMDArgumentError, match=r"numba_tma: amd.buffer_load_to_local: argument 'offsets' must be an int in \[0, 536870911\] when a constant \(a 32-bit byte offset\); got 1073741824"):
        amd.compile(bad, "void(float32[::1], float32[::1])", "gfx942")


# -- ordinary Python in kernels (issue #11 point 2) -------------------------------------
# Each raised a raw KeyError from Numba before: @overload implementations (min, abs of a
# float, range with a step, ...) need a jit decorator for the amdgcn target.

def _branch(x, y, n):
    lane = amd.workitem_id_x()
    if lane < n:
        y[lane] = x[lane]
    else:
        y[lane] = 0.0


def _while(x, y, n):
    lane = amd.workitem_id_x()
    acc, i = 0.0, 0
    while i < n:
        acc += x[i]
        i += 1
    y[lane] = acc


def _min_max_abs(x, y, n):
    lane = amd.workitem_id_x()
    y[lane] = min(abs(x[lane]), 1.0) + max(x[lane], 0.0) + min(lane, n) + abs(lane - n)


def _int_float_math(x, y, n):
    lane = amd.workitem_id_x()
    q, r = divmod(lane, 3)
    y[lane] = x[lane] * 2.5 - x[lane] / 3.0 + (lane // 4) + (lane % 5) + q * r + (n << 1)


def _tuples(x, y, n):
    lane = amd.workitem_id_x()
    pair = (lane, x[lane])
    a, b = pair
    y[lane] = b + a + len(pair)


def _range_steps(x, y, n):
    lane = amd.workitem_id_x()
    acc = 0.0
    for i in range(lane, n, 64):
        acc += x[i]
    for j in range(n - 1, -1, -2):
        acc -= x[j]
    y[lane] = acc


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
@pytest.mark.parametrize("kern", [_branch, _while, _min_max_abs, _int_float_math, _tuples,
                                  _range_steps], ids=lambda f: f.__name__.strip("_"))
def test_ordinary_python_compiles(kern, arch):
    k = amd.compile(kern, "void(float32[::1], float32[::1], int32)", arch)
    assert find(k.asm, r"^global_store_(dword|b32)")
    assert k.object[:4] == b"\x7fELF"
