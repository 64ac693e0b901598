"""Issue 19.3: LLVM keeps an LDS read after the wait that completes its DMA, on every
arch, and LDS accesses on their side of a TDM op.

LLVM sees no DMA write its LDS array: ``tensor.load.to.lds`` takes no pointer, the
gfx1250 waits touch only inaccessible memory, and LDS loads carry ``!noalias`` against
the DMA calls.  Before the fix, on gfx1250, a single-buffer loop read its tile once,
above the loop (TDM and ``async_load``), two loads into one tile read back ``a + a``,
and a TDM store's first LDS write was deleted as dead.

The expected lines are written by hand from the assembly: the DMA instruction, the
wait for it and the LDS access, in that order, for each DMA.
"""
import re

import numba
import pytest

import numba_tma.amd as amd
from amd_asm import instructions
from numba_tma.amd.asm_loops import loops

_S1 = "void(float32[::1], float32[::1], int32)"
_S2 = "void(float32[:, ::1], float32[:, ::1], int32)"
# the lines the order is read from: DMA, the waits for DMA, LDS reads and writes
_KEPT = re.compile(r"^(tensor_(load_to_lds|store_from_lds)|buffer_load_dword .* lds$|"
                   r"global_load_lds_dword|global_load_async_to_lds_b32|"
                   r"s_waitcnt vmcnt|s_wait_(tensorcnt|asynccnt)|ds_(read|load|write|store)_b32)")


def _order(lines):
    """The kept lines: an instruction's mnemonic; a wait's line without lgkmcnt."""
    out = []
    for line in lines:
        if _KEPT.match(line):
            out.append(line.replace(" lgkmcnt(0)", "") if line.startswith("s_wait")
                       else line.split()[0])
    return out


def _tdm_loop(x, y, ntiles):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    desc = amd.make_tensor_descriptor(x, (4, 64))
    acc = numba.float32(0)
    for t in range(ntiles):
        amd.async_amd_descriptor_load(desc, tile, offsets=(t * 4, 0))
        amd.async_amd_descriptor_wait(0)
        acc += tile[lane]
    y[lane, 0] = acc


def _tdm_twice(x, y, n):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    desc = amd.make_tensor_descriptor(x, (4, 64))
    amd.async_amd_descriptor_load(desc, tile, offsets=(0, 0))
    amd.async_amd_descriptor_wait(0)
    a = tile[lane]
    amd.async_amd_descriptor_load(desc, tile, offsets=(4, 0))
    amd.async_amd_descriptor_wait(0)
    y[lane, 0] = a + tile[lane]


def _async_loop(x, y, ntiles):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    acc = numba.float32(0)
    for t in range(ntiles):
        amd.async_load(x, tile, offsets=t * 64 + lane)
        amd.async_load_commit_group()
        amd.async_load_wait_group(0)
        acc += tile[lane]
    y[lane] = acc


def _async_twice(x, y, n):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    amd.async_load(x, tile, offsets=lane)
    amd.async_load_commit_group()
    amd.async_load_wait_group(0)
    a = tile[lane]
    amd.async_load(x, tile, offsets=64 + lane)
    amd.async_load_commit_group()
    amd.async_load_wait_group(0)
    y[lane] = a + tile[lane]


def _buffer_loop(x, y, ntiles):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    acc = numba.float32(0)
    for t in range(ntiles):
        amd.buffer_load_to_local(tile, x, t * 64 + lane)
        amd.async_load_commit_group()
        amd.async_load_wait_group(0)
        acc += tile[lane]
    y[lane] = acc


def _buffer_twice(x, y, n):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    amd.buffer_load_to_local(tile, x, lane)
    amd.async_load_commit_group()
    amd.async_load_wait_group(0)
    a = tile[lane]
    amd.buffer_load_to_local(tile, x, 64 + lane)
    amd.async_load_commit_group()
    amd.async_load_wait_group(0)
    y[lane] = a + tile[lane]


# (op, loop kernel, two-load kernel, signature, arch) -> one DMA's lines: the DMA, its
# wait, the LDS read
_ONE_LOAD = {
    ("tdm", _tdm_loop, _tdm_twice, _S2, "gfx1250"):
        ["tensor_load_to_lds", "s_wait_tensorcnt 0x0", "ds_load_b32"],
    ("async_load", _async_loop, _async_twice, _S1, "gfx942"):
        ["global_load_lds_dword", "s_waitcnt vmcnt(0)", "ds_read_b32"],
    ("async_load", _async_loop, _async_twice, _S1, "gfx950"):
        ["global_load_lds_dword", "s_waitcnt vmcnt(0)", "ds_read_b32"],
    ("async_load", _async_loop, _async_twice, _S1, "gfx1250"):
        ["global_load_async_to_lds_b32", "s_wait_asynccnt 0x0", "ds_load_b32"],
    ("buffer_load_to_local", _buffer_loop, _buffer_twice, _S1, "gfx942"):
        ["buffer_load_dword", "s_waitcnt vmcnt(0)", "ds_read_b32"],
    ("buffer_load_to_local", _buffer_loop, _buffer_twice, _S1, "gfx950"):
        ["buffer_load_dword", "s_waitcnt vmcnt(0)", "ds_read_b32"],
}
_CASES = [pytest.param(*key[1:], expected, id=f"{key[0]}-{key[4]}")
          for key, expected in _ONE_LOAD.items()]


@pytest.mark.parametrize("loop,_twice,signature,arch,expected", _CASES)
def test_a_single_buffer_loop_reads_lds_after_each_wait(loop, _twice, signature, arch,
                                                        expected):
    """The read stays in the loop, after the wait (it was hoisted above the loop, before
    any load, on gfx1250)."""
    asm = amd.compile(loop, signature, arch).asm
    found = loops(asm)
    assert len(found) == 1
    assert _order(found[0].instructions) == expected


@pytest.mark.parametrize("_loop,twice,signature,arch,expected", _CASES)
def test_two_loads_into_one_tile_read_each_after_its_wait(_loop, twice, signature, arch,
                                                          expected):
    """``a + b``: two LDS reads, each after the wait of its own DMA (gfx1250 read ``a``
    once, before the second wait: ``a + a``).  The second DMA is issued after the first
    wait.  Whether the read of ``a`` comes before the second DMA is left to the
    program's ``s_barrier()`` (docs/amd.md, LDS ordering), except for TDM, whose ops
    are compiler barriers."""
    dma, wait, read = expected
    order = _order(instructions(amd.compile(twice, signature, arch).asm))
    assert [line for line in order if line != dma] == [wait, read, wait, read]
    dmas = [i for i, line in enumerate(order) if line == dma]
    assert len(dmas) == 2 and dmas[0] < order.index(wait) < dmas[1]
    if dma.startswith("tensor_"):
        assert order == expected * 2


def _tdm_store_twice(x, y, n):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(256, numba.float32)
    out = amd.make_tensor_descriptor(y, (4, 64))
    tile[lane] = x[lane, 0]
    amd.async_amd_descriptor_store(out, tile)
    amd.async_amd_descriptor_wait(0)
    tile[lane] = x[lane, 1]
    amd.async_amd_descriptor_store(out, tile, offsets=(4, 0))
    amd.async_amd_descriptor_wait(0)


def test_lds_writes_stay_before_the_tdm_store_that_reads_them():
    """The first write was deleted as dead: LLVM saw the second write overwrite it and
    no TDM store read it."""
    asm = amd.compile(_tdm_store_twice, _S2, "gfx1250").asm
    assert _order(instructions(asm)) == ["ds_store_b32", "tensor_store_from_lds",
                                         "s_wait_tensorcnt 0x0"] * 2
