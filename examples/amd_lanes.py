"""Two kernels that need cross-lane ops, for gfx942 and gfx950, compiled on the CPU.

    python examples/amd_lanes.py

* **Row sums** (``row_sum``): x is (nrows, 16) float32, y[r] = sum of row r.  One wave
  per workgroup streams tiles through a 4-slot LDS ring (three tile loads in flight,
  masked past the last row); a tile is what one DMA instruction of the wave moves:
  4 rows on gfx942 (4 bytes a lane, 16 lanes a row), 16 rows on gfx950 (16 bytes a
  lane, 4 lanes a row).  ``reduction="row_reduce"`` sums each row across its lanes with
  :func:`numba_tma.amd.row_reduce` (DPP); ``reduction="lds"`` is the kernel as it had to
  be written before the cross-lane ops: one lane per row adds the row up from LDS.
* **Transpose** (``transpose``): x is (16 * ntiles, 64) float32, y its transpose.  Four
  waves per workgroup; wave w transposes tiles w, w + 4, ... of 16 x 64 through its own
  double buffer in LDS (16 DMA instructions a tile, one per row).  ``wave_index="wave_id"``
  takes the wave's index from :func:`numba_tma.amd.wave_id` (wave-uniform, with its
  range), ``"tid"`` from ``workitem_id_x() // 64``, which LLVM sees as lane-varying.

Each kernel's steady-state loop is read with :func:`numba_tma.amd.asm_loops.steady_state`
and its instructions per tile are printed; ``tests/amd/test_amd_lanes_reference.py``
compares them with the same kernels compiled by Triton's AMD back end
(``tests/amd/gluon_lanes.py``).  Nothing runs on a GPU.
"""
import numba
from numba import uint32

import numba_tma.amd as amd
from numba_tma.amd.asm_loops import steady_state

WAVE = 64  # lanes per wave on gfx942/gfx950
ARCHS = ("gfx942", "gfx950")

# -- row sums ----------------------------------------------------------------------------

STAGES, AHEAD = 4, 3
COLS = 16  # floats per row
WIDTH = {"gfx942": 4, "gfx950": 16}  # bytes per lane and DMA instruction


def row_shape(arch):
    """(lanes per row, rows per tile) of the row-sum kernel on *arch*."""
    per_lane = WIDTH[arch] // 4
    lanes = COLS // per_lane
    return lanes, WAVE // lanes


def _row_sum(arch, reduction):
    width = WIDTH[arch]
    per_lane = width // 4  # floats each lane moves and adds up first
    lanes, rows = row_shape(arch)
    tile = rows * COLS
    ring_floats = STAGES * tile
    by_lanes = reduction == "row_reduce"

    def row_sum(x, y, nrows, ntiles):
        lane = uint32(amd.workitem_id_x())
        n = uint32(nrows)
        my_row = uint32(lane // lanes)
        ring = amd.lds_array(ring_floats, numba.float32)
        for t in range(AHEAD):  # prologue: one group per tile
            amd.buffer_load_to_local(ring[t * tile:], x, t * tile + lane * per_lane,
                                     mask=uint32(t * rows + my_row) < n, width=width)
            amd.async_load_commit_group()
        for t in range(ntiles):
            ahead = uint32(t + AHEAD)
            amd.buffer_load_to_local(ring[(ahead % STAGES) * tile:], x,
                                     ahead * tile + lane * per_lane,
                                     mask=uint32(ahead * rows + my_row) < n, width=width)
            amd.async_load_commit_group()
            amd.async_load_wait_group(AHEAD)  # tile t has landed
            amd.s_barrier()
            slot = (uint32(t) % STAGES) * tile
            if by_lanes:
                acc = ring[slot + lane * per_lane]
                for v in range(1, per_lane):
                    acc += ring[slot + lane * per_lane + v]
                total = amd.row_reduce(acc, "sum", lanes)  # every lane of the row has it
                row = uint32(uint32(t) * rows + my_row)
                if lane % lanes == 0 and row < n:
                    y[row] = total
            elif lane < rows:  # one lane per row adds the row up from LDS
                acc = ring[slot + lane * COLS]
                for c in range(1, COLS):
                    acc += ring[slot + lane * COLS + c]
                row = uint32(uint32(t) * rows + lane)
                if row < n:
                    y[row] = acc
            amd.s_barrier()  # slot t % STAGES may be refilled

    return row_sum


def build_row_sum(arch, reduction="row_reduce"):
    """The row-sum kernel for *arch* (one wave per workgroup); *reduction* is
    ``"row_reduce"`` or ``"lds"``."""
    if reduction not in ("row_reduce", "lds"):
        raise ValueError(f"reduction must be 'row_reduce' or 'lds', got {reduction!r}")
    return amd.compile(_row_sum(arch, reduction),
                       "void(float32[::1], float32[::1], int32, int32)", arch,
                       name="row_sum", max_workgroup_size=WAVE)


def row_sum_reference(x):
    """What ``row_sum`` computes, in numpy: the float32 sum of each row of x."""
    return x.reshape(-1, COLS).sum(axis=1, dtype=x.dtype)


# -- transpose ---------------------------------------------------------------------------

ROWS, WAVES = 16, 4  # rows per tile; waves per workgroup
TILE = ROWS * WAVE  # floats per tile: a row is one DMA instruction of 64 lanes
RING = WAVES * 2 * TILE  # each wave's double buffer


def _transpose(wave_index):
    uniform = wave_index == "wave_id"

    def transpose(x, y, ntiles):
        tid = uint32(amd.workitem_id_x())
        if uniform:
            w = uint32(amd.wave_id())
            lane = uint32(amd.lane_id())
        else:
            w = uint32(tid // WAVE)
            lane = tid % WAVE
        nrows = uint32(ntiles * ROWS)
        nt = uint32(ntiles)
        mine = w * (2 * TILE)  # this wave's double buffer
        ring = amd.lds_array(RING, numba.float32)
        for r in range(ROWS):
            amd.buffer_load_to_local(ring[mine + r * WAVE:], x, (w * ROWS + r) * WAVE + lane)
        amd.async_load_commit_group()
        for t in range(w, ntiles, WAVES):
            nxt = uint32(t + WAVES)
            i = uint32((t - w) // WAVES)  # this wave's tile count
            ahead = mine + ((i + 1) % 2) * TILE
            for r in range(ROWS):
                amd.buffer_load_to_local(ring[ahead + r * WAVE:], x,
                                         (nxt * ROWS + r) * WAVE + lane, mask=nxt < nt)
            amd.async_load_commit_group()
            amd.async_load_wait_group(1)  # tile t has landed
            amd.s_barrier()
            slot = mine + (i % 2) * TILE
            for r in range(ROWS):  # lane c writes 16 floats of row c of y
                y[lane * nrows + uint32(t) * ROWS + r] = ring[slot + r * WAVE + lane]
            amd.s_barrier()

    return transpose


def build_transpose(arch, wave_index="wave_id"):
    """The transpose kernel for *arch* (four waves per workgroup); *wave_index* is
    ``"wave_id"`` or ``"tid"``."""
    if wave_index not in ("wave_id", "tid"):
        raise ValueError(f"wave_index must be 'wave_id' or 'tid', got {wave_index!r}")
    return amd.compile(_transpose(wave_index), "void(float32[::1], float32[::1], int32)",
                       arch, name="transpose", max_workgroup_size=WAVES * WAVE)


def per_tile(kernel, dma_per_tile=1):
    """Instructions per tile of *kernel*'s steady-state loop."""
    loop = steady_state(kernel.asm)
    return len(loop.instructions) * dma_per_tile / loop.tiles


def main():
    for arch in ARCHS:
        print(f"== {arch}")
        for reduction in ("row_reduce", "lds"):
            print(f"    row_sum, {reduction:10s}: {per_tile(build_row_sum(arch, reduction)):6.1f} "
                  f"instructions per tile")
        for wave_index in ("wave_id", "tid"):
            kernel = build_transpose(arch, wave_index)
            loop = steady_state(kernel.asm)
            readfirstlanes = sum(line.startswith("v_readfirstlane") for line in loop.instructions)
            print(f"    transpose, {wave_index:7s}: {per_tile(kernel, ROWS):6.1f} instructions per "
                  f"tile, {readfirstlanes} v_readfirstlane")


if __name__ == "__main__":
    main()
