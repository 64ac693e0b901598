"""A pipelined copy kernel with a 3-slot LDS ring for gfx942, gfx950 and gfx1250,
compiled on the CPU.

    python examples/amd_pipelined_copy.py

Prints the key instructions of each kernel's assembly and the instructions per tile of
its steady-state loop.  Nothing runs on a GPU: the AMD path is verified at the ISA
level only.

Each workgroup is one wave (``max_workgroup_size`` = the wave size, as Triton's
``num_warps=1``) and copies ``ntiles`` tiles through a ring of STAGES LDS slots: the
load of tile t+2 is issued before tile t is copied out.  A tile is what one DMA
instruction of the wave moves, so each commit group holds one instruction: 64 floats
on gfx942 (``buffer_load_dword``, 4 bytes a lane), 256 on gfx950
(``buffer_load_dwordx4``, 16 bytes a lane).  gfx1250 uses TDM tensor loads of 4 x 64
floats (``s_wait_tensorcnt 0x2``).

On gfx942/gfx950 ``wait_group(2)`` is counted in the assembly (vmcnt also counts the
copy-out's global stores): LLVM unrolls the loop 4 times, and the copies wait with
``vmcnt(2)``, ``vmcnt(3)``, ``vmcnt(4)``, ``vmcnt(4)``, so two tile loads stay in flight,
as in Triton.  The ring indices are converted to ``numba.uint32``: Numba computes
integers in 64 bits, and a value known to fit in 32 unsigned bits lets LLVM do the
slot arithmetic and the mask compare in 32 bits on the scalar unit.
"""
import re

import numba
from numba import uint32

import numba_tma.amd as amd
from numba_tma.amd.asm_loops import steady_state

STAGES = 3
AHEAD = STAGES - 1  # compile-time constant for the ops
WAVE = 64  # lanes per wave on gfx942/gfx950
WIDTH = {"gfx942": 4, "gfx950": 16}  # bytes per lane and DMA instruction
TDM_TILE = (4, 64)  # gfx1250 tile, rows x floats
KEY = re.compile(r"^\s*(buffer_load_dword\S* .*lds|global_load\S*lds\S* .*|tensor_\w+ .*|"
                 r"s_waitcnt vmcnt\(\d+\)(?: lgkmcnt\(0\))?|s_wait_tensorcnt \S+|"
                 r"s_barrier\S*.*)$", re.MULTILINE)


def tile_floats(arch):
    """Floats per tile: what one DMA instruction of a wave moves on gfx942/gfx950."""
    if arch == "gfx1250":
        return TDM_TILE[0] * TDM_TILE[1]
    return WAVE * WIDTH[arch] // 4


def _buffer_pipeline(width):
    per_lane = width // 4  # floats each lane moves
    tile = WAVE * per_lane  # floats one DMA instruction moves: the whole tile
    ring_floats = STAGES * tile

    def pipelined_copy(x, y, ntiles):
        lane = amd.workitem_id_x()
        ring = amd.lds_array(ring_floats, numba.float32)
        for t in range(AHEAD):  # prologue: unrolled by LLVM, one group per tile
            amd.buffer_load_to_local(ring[t * tile:], x, t * tile + lane * per_lane,
                                     mask=t < ntiles, width=width)
            amd.async_load_commit_group()
        for t in range(ntiles):
            ahead = uint32(t + AHEAD)
            amd.buffer_load_to_local(ring[(ahead % STAGES) * tile:], x,
                                     ahead * tile + lane * per_lane,
                                     mask=ahead < ntiles, width=width)
            amd.async_load_commit_group()
            amd.async_load_wait_group(AHEAD)  # tile t has landed
            amd.s_barrier()
            slot = (uint32(t) % STAGES) * tile
            for v in range(per_lane):
                y[t * tile + lane * per_lane + v] = ring[slot + lane * per_lane + v]
            amd.s_barrier()  # slot t % STAGES may be refilled

    return pipelined_copy


TILE, RING = TDM_TILE[0] * TDM_TILE[1], STAGES * TDM_TILE[0] * TDM_TILE[1]


def tdm_pipelined_copy(x, y, ntiles):
    """gfx1250: x and y are (rows, 64) float32; a tile is 4 rows."""
    lane = amd.workitem_id_x()
    ring = amd.lds_array(RING, numba.float32)
    desc = amd.make_tensor_descriptor(x, (4, 64))
    for t in range(AHEAD):
        amd.async_amd_descriptor_load(desc, ring[t * TILE:], offsets=(t * 4, 0))
    for t in range(ntiles):
        ahead = uint32(t + AHEAD)
        amd.async_amd_descriptor_load(desc, ring[(ahead % STAGES) * TILE:],
                                      offsets=(ahead * 4, 0))
        amd.async_amd_descriptor_wait(AHEAD)  # tile t has landed
        amd.s_barrier()
        slot = (uint32(t) % STAGES) * TILE
        for v in range(TILE // 32):  # 32 lanes per wave on gfx1250
            y[t * 4 + (lane * 8 + v) // 64, (lane * 8 + v) % 64] = ring[slot + lane * 8 + v]
        amd.s_barrier()


def build(arch):
    """Compile the pipelined copy for *arch* (one wave per workgroup); returns a
    CompiledKernel."""
    one_wave = amd.ARCHS[arch].wave_size
    if arch == "gfx1250":
        return amd.compile(tdm_pipelined_copy,
                           "void(float32[:, ::1], float32[:, ::1], int32)", arch,
                           name="pipelined_copy", max_workgroup_size=one_wave)
    return amd.compile(_buffer_pipeline(WIDTH[arch]),
                       "void(float32[::1], float32[::1], int32)", arch,
                       max_workgroup_size=one_wave)


def key_instructions(asm):
    return [m.strip() for m in KEY.findall(asm)]


def main():
    for arch in ("gfx942", "gfx950", "gfx1250"):
        kernel = build(arch)
        print(f"== {arch}: {len(kernel.asm.splitlines())} lines of assembly, "
              f"{len(kernel.object)}-byte object")
        for line in dict.fromkeys(key_instructions(kernel.asm)):
            print("   ", line)
        loop = steady_state(kernel.asm)
        print(f"    steady-state loop: {loop.tiles} tile(s) per iteration, "
              f"{loop.per_tile:.2f} instructions per tile")


if __name__ == "__main__":
    main()
