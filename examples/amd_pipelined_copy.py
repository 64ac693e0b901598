"""A 3-stage pipelined copy kernel for gfx942, gfx950 and gfx1250, compiled on the CPU.

    python examples/amd_pipelined_copy.py

Prints the key instructions of each kernel's assembly.  Nothing runs on a GPU: the
AMD path is verified at the ISA level only.

Each workgroup is one wave.  Tiles of TILE floats stream through a ring of STAGES
LDS slots: the load of tile t+2 is in flight while tile t is copied out.
gfx942/gfx950 use ``buffer_load_to_local`` with commit/wait groups (``s_waitcnt
vmcnt(2)``); gfx1250 uses TDM tensor loads (``s_wait_tensorcnt 0x2``).
"""
import re

import numba

import numba_tma.amd as amd

STAGES, TILE = 3, 256  # floats per tile
AHEAD, RING = STAGES - 1, STAGES * TILE  # compile-time constants for the ops
WIDTH = {"gfx942": 4, "gfx950": 16}  # bytes per lane and DMA instruction
KEY = re.compile(r"^\s*(buffer_load_dword\S* .*lds|global_load\S*lds\S* .*|tensor_\w+ .*|"
                 r"s_waitcnt vmcnt\(\d+\)|s_wait_tensorcnt \S+|s_barrier\S*.*)$", re.MULTILINE)


def _buffer_pipeline(width):
    per_lane = width // 4  # floats each lane moves per DMA instruction

    def pipelined_copy(x, y, ntiles):
        lane = amd.workitem_id_x()
        ring = amd.lds_array(RING, numba.float32)
        for t in range(AHEAD):  # prologue: unrolled by LLVM, one group per tile
            amd.buffer_load_to_local(ring[t * TILE:], x, t * TILE + lane * per_lane,
                                     mask=t < ntiles, width=width)
            amd.async_load_commit_group()
        for t in range(ntiles):
            ahead = t + AHEAD
            amd.buffer_load_to_local(ring[(ahead % STAGES) * TILE:], x,
                                     ahead * TILE + lane * per_lane,
                                     mask=ahead < ntiles, width=width)
            amd.async_load_commit_group()
            amd.async_load_wait_group(AHEAD)  # tile t has landed
            amd.s_barrier()
            slot = (t % STAGES) * TILE
            for v in range(per_lane):
                y[t * TILE + lane * per_lane + v] = ring[slot + lane * per_lane + v]
            amd.s_barrier()  # slot t % STAGES may be refilled

    return pipelined_copy


def tdm_pipelined_copy(x, y, ntiles):
    """gfx1250: x and y are (rows, 64) float32; a tile is 4 rows."""
    lane = amd.workitem_id_x()
    ring = amd.lds_array(RING, numba.float32)
    desc = amd.make_tensor_descriptor(x, (4, 64))
    for t in range(AHEAD):
        amd.async_amd_descriptor_load(desc, ring[t * TILE:], offsets=(t * 4, 0))
    for t in range(ntiles):
        ahead = t + AHEAD
        amd.async_amd_descriptor_load(desc, ring[(ahead % STAGES) * TILE:],
                                      offsets=(ahead * 4, 0))
        amd.async_amd_descriptor_wait(AHEAD)  # tile t has landed
        amd.s_barrier()
        slot = (t % STAGES) * TILE
        for v in range(TILE // 32):  # 32 lanes per wave on gfx1250
            y[t * 4 + (lane * 8 + v) // 64, (lane * 8 + v) % 64] = ring[slot + lane * 8 + v]
        amd.s_barrier()


def build(arch):
    """Compile the pipelined copy for *arch*; returns a CompiledKernel."""
    if arch == "gfx1250":
        return amd.compile(tdm_pipelined_copy,
                           "void(float32[:, ::1], float32[:, ::1], int32)", arch,
                           name="pipelined_copy")
    return amd.compile(_buffer_pipeline(WIDTH[arch]),
                       "void(float32[::1], float32[::1], int32)", arch)


def key_instructions(asm):
    return [m.strip() for m in KEY.findall(asm)]


def main():
    for arch in ("gfx942", "gfx950", "gfx1250"):
        kernel = build(arch)
        print(f"== {arch}: {len(kernel.asm.splitlines())} lines of assembly, "
              f"{len(kernel.object)}-byte object")
        for line in dict.fromkeys(key_instructions(kernel.asm)):
            print("   ", line)


if __name__ == "__main__":
    main()
