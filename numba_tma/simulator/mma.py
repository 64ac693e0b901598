"""``numba_tma.mma`` under the simulator: the warp-collective ops exchange their lanes' registers
(each lane's operands reach every lane, as the hardware's do) and compute in the fragment layouts
of :mod:`numba_tma.intrinsics.mma`."""

from __future__ import annotations

import numpy as np

from . import memory
from .gates import warp_exchange
from .state import RUNNING, SimulatorError
from .wgmma import DECODE, Fragment, _register_a


def _matrices(values, dtype):
    """A (16 x K) and B (K x 8) of the warp from its lanes' ``(a, b)`` registers; K is what 32
    bytes of the type hold (16 bf16/f16, 8 tf32, 32 fp8/int8) in every mma.sync shape here."""
    size, decode = DECODE[dtype]
    k, per = 32 // size, 4 // size              # K; elements per register
    words = {1: np.uint8, 2: np.uint16, 4: np.uint32}[size]
    b = np.zeros((k, 8))
    for lane, (_, rb) in values.items():
        g, t = lane // 4, lane % 4
        eb = [decode(np.asarray([r], np.uint32).view(words)) for r in rb]
        for i, row in enumerate([per * t, per * t + k // 2]):
            b[row:row + per, g] = eb[i]
    return _register_a({lane: ra for lane, (ra, _) in values.items()}, dtype), b


def sync(acc, a, b, dtype):
    lane, values = warp_exchange("mma exchange", (a, b))
    if len(values) != 32:
        raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: {len(values)} lanes of the warp took part; "
                             "mma.sync needs all 32 (it is .aligned)")
    ma, mb = _matrices(values, dtype)
    d = ma @ mb
    g, t = lane // 4, lane % 4
    mine = [d[g, 2 * t], d[g, 2 * t + 1], d[g + 8, 2 * t], d[g + 8, 2 * t + 1]]
    if acc.dtype == "int32":
        return Fragment([int(np.int32(x + int(y))) for x, y in zip(acc, mine)], "int32")
    return Fragment([float(np.float32(x + y)) for x, y in zip(acc, mine)], "float32")


def _rows(values, count):
    """The 16-bit rows (8 elements each) the lanes' addresses name: matrix i's row r."""
    return {(lane // 8, lane % 8): memory.host(tile).reshape(-1).view(np.uint8)[:16].view(np.uint16)
            for lane, tile in values.items() if lane < 8 * count}


def ldmatrix(tile, count, trans):
    lane, values = warp_exchange("mma exchange", tile)
    rows = _rows(values, count)
    g, t = lane // 4, lane % 4
    regs = []
    for i in range(count):
        if trans:
            pair = [rows[i, 2 * t][g], rows[i, 2 * t + 1][g]]
        else:
            pair = list(rows[i, g][2 * t:2 * t + 2])
        regs.append(int(pair[0]) | int(pair[1]) << 16)
    return tuple(regs)


def stmatrix(tile, regs, trans):
    lane, values = warp_exchange("mma exchange", (tile, regs))
    count = len(regs)
    if lane < 8 * count:     # this lane's row address: row lane % 8 of matrix lane // 8
        i, row = lane // 8, lane % 8
        out = memory.byte_view(memory.host(tile))[:16].view(np.uint16)
        for col in range(8):
            if trans:      # element (row, col) of the transposed matrix came from lane (row // 2 + 4 col)
                src, e = 4 * col + row // 2, row % 2
            else:
                src, e = 4 * row + col // 2, col % 2
            out[col] = (values[src][1][i] >> (16 * e)) & 0xFFFF


def zeros():
    return Fragment([0.0] * 4, "float32")
