"""Kernels written in Python through the ``amdgcn`` Numba target, checked in assembly."""
import importlib.util
import pathlib
import re

import numba
import pytest

import numba_tma.amd as amd
from amd_asm import find, instructions

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "amd_pipelined_copy.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("amd_pipelined_copy", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pipelined(example):
    return {arch: example.build(arch) for arch in ("gfx942", "gfx950", "gfx1250")}


@pytest.mark.parametrize("arch,dma", [("gfx942", r"buffer_load_dword v\d+"),
                                      ("gfx950", r"buffer_load_dwordx4 v\d+")])
def test_pipelined_copy_gfx9(pipelined, arch, dma):
    lines = instructions(pipelined[arch].asm)
    loads = [i for i, line in enumerate(lines) if re.match(dma + r", s\[\d+:\d+\], 0 offen lds$", line)]
    assert len(loads) >= 2  # prologue and steady state
    steady = loads[-1]
    wait = next(i for i in range(steady, len(lines)) if lines[i].startswith("s_waitcnt vmcnt"))
    assert lines[wait] == "s_waitcnt vmcnt(2)"  # 3 stages: two younger tiles stay in flight
    assert lines[wait + 1] == "s_barrier"
    assert find(pipelined[arch].asm, r"^ds_read")  # the copy-out reads LDS after the wait


def test_pipelined_copy_gfx1250(pipelined):
    asm = pipelined["gfx1250"].asm
    assert find(asm, r"^tensor_load_to_lds s\[\d+:\d+\], s\[\d+:\d+\]$")
    assert find(asm, r"^s_wait_tensorcnt 0x2$")
    assert find(asm, r"^s_barrier_signal -1$") and find(asm, r"^s_barrier_wait -1$")


def test_example_prints_key_instructions(example, capsys):
    example.main()
    out = capsys.readouterr().out
    for text in ("== gfx942", "offen lds", "s_waitcnt vmcnt(2)", "buffer_load_dwordx4",
                 "tensor_load_to_lds", "s_wait_tensorcnt 0x2"):
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
    amd.async_load(x, lane, tile, mask=lane < n, other=-2.0)
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

    with pytest.raises(numba.core.errors.TypingError, match="pendings must be a compile-time"):
        amd.compile(bad, "void(float32[::1], int32)", "gfx942")


PUBLIC_OPS = ["buffer_load_to_local", "async_load", "async_load_commit_group",
              "async_load_wait_group", "update_tensor_descriptor", "async_amd_descriptor_load",
              "async_amd_descriptor_load_fused", "async_amd_descriptor_store",
              "async_amd_descriptor_wait", "amd_sched_barrier", "sched_group_barrier",
              "s_barrier", "barrier_arrive", "make_tensor_descriptor", "lds_array"]


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
