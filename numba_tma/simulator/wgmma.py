"""``numba_tma.wgmma`` under the simulator: each thread's share of a warpgroup's 64 x N
accumulator, computed from the shared tiles its descriptors name, read through the swizzle the
map wrote them with (so a descriptor of the wrong tile, row or K step gives the wrong answer here
as on the GPU), in the hardware's fragment layout.  The MMA computes at once; the tiles it read
stay the thread's pending reads (``state.async_reads``) until a ``wait_group`` covers its group,
so a pipeline stage released before that is reported.  ``setmaxnreg`` moves no registers: it
checks that the whole warpgroup runs it together.
"""

from __future__ import annotations

import numpy as np

from ..descriptors import matrix
from ..descriptors.enums import swizzled_offsets
from ..errors import (A_FRAGMENT_COLUMNS, A_FRAGMENT_DTYPE, A_FRAGMENT_KK, FRAGMENT_FLOAT_ONLY, MAP_ACC_FLOAT, MAP_FN,
                      MASK_ACC_FLOAT, OpArgumentError)
from . import memory, scheduler
from .device_functions import is_device_function
from .gates import arrive, warp_exchange
from .state import RUNNING, SimulatorError, async_reads, enter

#: (A, B) element types -> (K of one instruction, the byte decoders of A and B)
_E4M3 = np.array([((-1.0) ** (b >> 7)) * (2.0 ** ((b >> 3 & 15) - 7) * (1 + (b & 7) / 8) if b >> 3 & 15 else
                  2.0 ** -6 * ((b & 7) / 8)) for b in range(256)])
_E4M3[[0x7F, 0xFF]] = np.nan
_E5M2 = np.array([((-1.0) ** (b >> 7)) * (2.0 ** ((b >> 2 & 31) - 15) * (1 + (b & 3) / 4) if b >> 2 & 31 else
                  2.0 ** -14 * ((b & 3) / 4)) for b in range(256)])
_E5M2[[b for b in range(256) if b >> 2 & 31 == 31]] = np.nan
_E5M2[[0x7C, 0xFC]] = [np.inf, -np.inf]


def _bf16(raw):
    return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


DECODE = {"bf16": (2, _bf16), "f16": (2, lambda raw: raw.view(np.float16).astype(np.float64)),
           "tf32": (4, lambda raw: (raw.view(np.uint32) & 0xFFFFE000).view(np.float32).astype(np.float64)),
           "e4m3": (1, lambda raw: _E4M3[raw]), "e5m2": (1, lambda raw: _E5M2[raw]),
           "s8": (1, lambda raw: raw.view(np.int8).astype(np.float64)), "u8": (1, lambda raw: raw.astype(np.float64))}


class Fragment(tuple):
    """An accumulator fragment: a thread's registers, as a tuple of ``dtype`` ("float32" / "int32")."""

    dtype = "float32"

    def __new__(cls, values, dtype="float32"):
        fragment = super().__new__(cls, values)
        fragment.dtype = dtype
        return fragment


class MatrixDescriptor(int):
    """A descriptor's 64 bits, with the tile they name (the simulator reads its bytes through
    the bits: :func:`numba_tma.descriptors.matrix.read_offsets`); a K-major one also its first row
    and the rows of its map's box."""

    def __new__(cls, bits, tile, major="K", row=0, box_rows=None):
        descriptor = super().__new__(cls, bits)
        descriptor.tile, descriptor.major = tile, major        # major: "K" or "MN" (descriptor_mn)
        descriptor.row, descriptor.box_rows = row, box_rows
        return descriptor

    def check_loaded(self, name, rows, k_bytes, n):
        """Operand ``name`` of an MMA of width ``n`` reads ``rows`` rows from the descriptor's row: in a
        tile that copies filled, every byte it reads must be one a copy delivered (rows past the boxes
        loaded hold stale bytes on the GPU)."""
        if self.box_rows is None:
            return
        thread, state = enter()
        start = memory.address(self.tile)
        read = start + matrix.read_offsets(self, start, rows, k_bytes)          # (rows, k_bytes) addresses
        filled = np.zeros(read.shape, bool)
        for b in state.barriers.values():
            for lo, hi in b.fills.items():
                filled |= (read >= lo) & (read < hi)
        if filled.all() or not filled.any():
            return                        # all delivered, or a tile written otherwise (stores, cp.async)
        bad = np.flatnonzero(~filled.all(axis=1))
        first, last = self.row + int(bad[0]), self.row + int(bad[-1])
        raise SimulatorError(
            f"numba_tma simulator: {scheduler.where(thread)}: {RUNNING.op}: operand {name!r} reads {rows} rows "
            f"(operand A: 64, operand B: N = {n}) of {memory.name(self.tile)} from row {self.row} (wgmma.descriptor"
            f"(tile, desc, k, row={self.row})), but rows {first}-{last} hold no bytes a copy delivered: the map's box "
            f"has {self.box_rows} rows, and the loads into the tile did not cover the rows the MMA reads. Missing "
            f"step: load every row the MMA reads (a map whose box has {rows} rows, or one tma.load per box into "
            "consecutive boxes of the tile, their bytes announced), or read fewer rows (row, N)")

    def read(self, rows, k_bytes, element_bytes, decode):
        """``rows`` x (``k_bytes`` / ``element_bytes``) elements from the descriptor's row and K step,
        and the shared byte range they lie in: ``(values, (first, end))``."""
        raw = memory.byte_view(memory.host(self.tile))
        start = memory.address(self.tile)
        if self.major == "MN":
            offsets = matrix.read_offsets_mn(self, start, rows, k_bytes // element_bytes, element_bytes)
        else:
            offsets = matrix.read_offsets(self, start, rows, k_bytes)
        if offsets.max() >= raw.size:
            raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: the descriptor reads {offsets.max() + 1} bytes of "
                                 f"a tile of {raw.size}")
        values = np.ascontiguousarray(raw[offsets])          # (rows, k_bytes) bytes
        values = decode(values.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[element_bytes]))
        return values, (start + int(offsets.min()), start + int(offsets.max()) + 1)


def _aligned(op, tile, span, why):
    """A tile aligned to its 8-row swizzle atom (what the GPU's debug mode checks too)."""
    need, addr = matrix.alignment(span), memory.address(tile)
    if addr % need:
        raise SimulatorError(f"numba_tma simulator: {op}: argument 'tile' {memory.name(tile)} is only "
                             f"{addr & -addr}-byte aligned, not {need} ({why}): cuda.shared.array(..., "
                             f"alignment={need})")


def descriptor(tile, desc, k, row):
    span, row_bytes = matrix.operand_bytes(desc.layout)
    _aligned(RUNNING.op, tile, span, matrix.alignment_why(desc.layout.swizzle))
    rows = memory.host(tile).nbytes // row_bytes        # (an at() tile: the rest of its array)
    if not 0 <= row < rows:
        raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: row = {row}: {matrix.rows_rule(rows, row_bytes)}")
    box_rows = int(np.prod(desc.layout.box[:-1]))
    return MatrixDescriptor(matrix.encode(memory.address(tile), row_bytes, span, row, k), tile, "K", row, box_rows)


def descriptor_mn(tile, desc, k, col):
    span, width, box_bytes = matrix.mn_operand(desc.layout)
    _aligned(RUNNING.op, tile, span, matrix.alignment_why(desc.layout.swizzle))
    return MatrixDescriptor(matrix.encode_mn(memory.address(tile), span, width, box_bytes, col, k), tile, "MN")


def _operand(name, value):
    if not isinstance(value, MatrixDescriptor):
        raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: argument {name!r} must be a descriptor made by "
                             "wgmma.descriptor (the simulator reads the tile through it)")
    return value


def mma_async(acc, a, b, scale_d, dtype, trans_a, trans_b, negate_a, negate_b):
    op = RUNNING.op
    thread, _ = enter()
    a, b = _operand("a", a), _operand("b", b)
    for name, trans, d in (("a", trans_a, a), ("b", trans_b, b)):
        if trans != (d.major == "MN"):
            raise SimulatorError(f"numba_tma simulator: {op}: argument {name!r} is a descriptor of a {d.major}-major "
                                 f"tile but trans_{name}={trans}: an MN-major tile (wgmma.descriptor_mn) is read with "
                                 f"trans_{name}=True, a K-major one (wgmma.descriptor) with trans_{name}=False")
    types = dtype.split(".") if "." in dtype else [dtype, dtype]
    (ea, da), (eb, db) = DECODE[types[0]], DECODE[types[1]]
    n = 2 * len(acc)
    a.check_loaded("a", 64, 32, n)
    b.check_loaded("b", n, 32, n)
    (rows_a, read_a), (rows_b, read_b) = a.read(64, 32, ea, da), b.read(n, 32, eb, db)   # 64 x K, N x K (K-major)
    async_reads(thread).open.extend((read_a, read_b))
    t = thread.index[0] % 128
    w, lane = t // 32, t % 32
    r = 16 * w + lane // 4
    return _accumulate(acc, rows_a[[r, r + 8]], rows_b, lane, scale_d, negate_a != negate_b)


def _accumulate(acc, rows, rows_b, lane, scale_d, negate):
    """``acc`` (``scale_d`` 0: ignored) plus this thread's share of the product: ``rows`` its two
    rows of A (``16 w + l // 4`` and 8 below) against B held N x K, in the fragment's order; minus
    it where ``negate``."""
    n = 2 * len(acc)
    cols = np.arange(n // 8)[:, None] * 8 + 2 * (lane % 4) + np.arange(2)[None, :]          # (N/8, 2)
    product = np.stack([rows @ rows_b[cols[:, e]].T for e in range(2)], axis=-1)             # (2, N/8, 2)
    if negate:
        product = -product
    flat = product.transpose(1, 0, 2).reshape(-1)              # index 4j + 2h + e
    old = np.asarray(acc, np.float64) if scale_d else 0.0
    if acc.dtype == "int32":
        return Fragment((np.int64(old) + flat.astype(np.int64)).astype(np.int32).tolist(), "int32")
    return Fragment((old + flat).astype(np.float32).tolist(), "float32")


def _register_a(lanes, dtype):
    """The 16 x K A matrix of one warp from its lanes' four A registers (``{lane: (r0, r1, r2,
    r3)}``), mma.sync's layout (which wgmma's register A repeats warp by warp): lane ``l``
    register ``i`` holds row ``l // 4 + 8 (i % 2)``, ``4 / size`` elements of K from ``(K / 8) (l %
    4) + (K / 2) (i // 2)``, the lowest K in the low bits; K is what 32 bytes of the type hold."""
    size, decode = DECODE[dtype]
    k, per = 32 // size, 4 // size
    registers = np.zeros((32, 4), np.uint32)
    for lane, values in lanes.items():
        registers[lane] = values
    elements = decode(registers.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[size])).reshape(32, 4, per)
    lane, i, e = np.ix_(np.arange(32), np.arange(4), np.arange(per))
    a = np.zeros((16, k))
    a[lane // 4 + 8 * (i % 2), per * (lane % 4) + (k // 2) * (i // 2) + e] = elements
    return a


def mma_async_rs(acc, a, b, scale_d, dtype, trans_b, negate_a, negate_b):
    op = RUNNING.op
    thread, _ = enter()
    b = _operand("b", b)
    if trans_b != (b.major == "MN"):
        raise SimulatorError(f"numba_tma simulator: {op}: argument 'b' is a descriptor of a {b.major}-major tile but "
                             f"trans_b={trans_b}: an MN-major tile (wgmma.descriptor_mn) is read with trans_b=True, a "
                             "K-major one (wgmma.descriptor) with trans_b=False")
    types = dtype.split(".") if "." in dtype else [dtype, dtype]
    eb, db = DECODE[types[1]]
    lane, lanes = warp_exchange("wgmma register a", tuple(int(r) & 0xFFFFFFFF for r in a))
    if len(lanes) != 32:
        raise SimulatorError(f"numba_tma simulator: {op}: {len(lanes)} lanes of the warp took part; the warpgroup's "
                             "128 threads issue it together (it is .aligned)")
    rows_a = _register_a(lanes, types[0])                        # this warp's 16 rows x K
    n = 2 * len(acc)
    b.check_loaded("b", n, 32, n)
    rows_b, read_b = b.read(n, 32, eb, db)                      # N x K
    async_reads(thread).open.append(read_b)
    return _accumulate(acc, rows_a[[lane // 4, lane // 4 + 8]], rows_b, lane, scale_d, negate_a != negate_b)


def a_fragment(acc, kk, dtype="bf16"):
    op = "wgmma.a_fragment"
    if getattr(acc, "dtype", "float32") != "float32":
        raise OpArgumentError(f"numba_tma: {op}: argument 'acc' must be a float32 fragment; got {acc.dtype}")
    dtype = dtype or "bf16"
    if dtype not in A_FRAGMENT_COLUMNS:
        raise OpArgumentError(f"numba_tma: {op}: argument 'dtype' {A_FRAGMENT_DTYPE}; got {dtype}")
    cols = A_FRAGMENT_COLUMNS[dtype]
    steps = 2 * len(acc) // cols
    if not isinstance(kk, (int, np.integer)) or not 0 <= kk < steps:
        raise OpArgumentError(f"numba_tma: {op}: argument 'kk' "
                              f"{A_FRAGMENT_KK.format(steps=steps, cols=cols, n=2 * len(acc))}; got {kk}")
    if cols == 32:
        return _fp8_a_fragment(acc, kk, dtype)
    codes = (_bf16_codes if dtype == "bf16" else _f16_codes)(np.asarray(acc[8 * kk:8 * kk + 8], np.float32))
    # registers as the compiled helper gives them: uint32 variables (not constants), low half first
    return tuple(codes[0::2].astype(np.uint32) | codes[1::2].astype(np.uint32) << np.uint32(16))


def _fp8_a_fragment(acc, kk, dtype):
    """The fp8 register A of K step ``kk`` (32 columns), from the ISA's layouts: lane ``l``
    register ``i`` holds columns ``4 (l % 4) + 16 (i // 2) + b`` (byte ``b``) of row ``l // 4 +
    8 (i % 2)``, which the accumulator gives lane ``4 (l // 4) + (col % 8) // 2`` as its step
    register ``4 (col // 8) + 2 (i % 2) + col % 2``.  The quad's lanes exchange them (the compiled
    helper's shuffles: every lane of the warp takes part)."""
    lane, lanes = warp_exchange("wgmma.a_fragment fp8", _fp8_codes(np.asarray(acc[16 * kk:16 * kk + 16],
                                                                               np.float32), dtype))
    if len(lanes) != 32:
        raise SimulatorError(f"numba_tma simulator: wgmma.a_fragment: {len(lanes)} lanes of the warp took part; "
                             "its fp8 form shuffles within each quad, so all 32 lanes call it together")
    t = lane % 4
    registers = []
    for i in range(4):
        word = 0
        for b in range(4):
            col = 4 * t + 16 * (i // 2) + b
            owner = lanes[4 * (lane // 4) + (col % 8) // 2]
            word |= int(owner[4 * (col // 8) + 2 * (i % 2) + col % 2]) << (8 * b)
        registers.append(np.uint32(word))
    return tuple(registers)


_FP8_FINITE = {"e4m3": _E4M3[:0x7F], "e5m2": _E5M2[:0x7C]}   # the non-negative finite values, by code


def _fp8_codes(values, dtype):
    """float32 values as fp8 codes, rounded to nearest even, saturating to the largest finite
    value (``cvt.rn.satfinite.e4m3x2.f32`` / ``e5m2x2``); NaN as the code ``0x7F``."""
    table = _FP8_FINITE[dtype]
    magnitude = np.minimum(np.abs(values.astype(np.float64)), table[-1])
    upper = np.clip(np.searchsorted(table, magnitude), 1, len(table) - 1)
    below, above = table[upper - 1], table[upper]
    take_upper = (above - magnitude < magnitude - below) | ((above - magnitude == magnitude - below) & (upper % 2 == 0))
    codes = np.where(take_upper, upper, upper - 1).astype(np.uint8) | np.where(np.signbit(values), 0x80, 0).astype(np.uint8)
    return np.where(np.isnan(values), np.uint8(0x7F), codes)


def mask(acc, row, col, cols, diagonal, value):
    thread, _ = enter()
    if getattr(acc, "dtype", "float32") != "float32":
        raise OpArgumentError(f"numba_tma: wgmma.mask: argument 'acc' {MASK_ACC_FLOAT}; got an {acc.dtype} fragment")
    out = list(acc)
    for i, r, c in _elements(thread, len(acc)):
        if col + c >= cols or (col + c) - (row + r) > diagonal:
            out[i] = float(np.float32(value))
    return Fragment(out, "float32")


def fence(acc):
    return acc


def commit_group():
    thread, _ = enter()
    reads = async_reads(thread)
    reads.groups.append(reads.open)
    reads.open = []


def wait_group(n, acc):
    thread, _ = enter()
    reads = async_reads(thread)
    del reads.groups[:max(0, len(reads.groups) - n)]
    return acc


def setmaxnreg(n, action):
    """Every thread of the warpgroup meets here with the same ``n`` and ``action`` (the
    instruction is ``.sync.aligned``); a missing one is reported as a deadlock naming the count."""
    thread, state = enter()
    op, group = RUNNING.op, thread.thread_id // 128
    threads = len(thread.block.threads) - 128 * group
    if threads < 128:
        raise SimulatorError(f"numba_tma simulator: {op}: warpgroup {group} of this block has {threads} threads; "
                             "setmaxnreg needs all 128 of a warpgroup (blocks of a multiple of 128 threads)")
    gate, generation = arrive(state, thread, ("setmaxnreg", group, action, n), 128, op)
    scheduler.wait(thread, lambda: gate.generation != generation,
                   lambda: f"{op}({n}, {action!r}): {len(gate.arrived)} of the 128 threads of warpgroup {group} arrived")
    scheduler.acquire(thread, gate.released)
    # the block's registers: what it holds at launch (at most 65536 / its threads, a multiple of 8,
    # at most 255, as launch_bounds (threads, 1) lets ptxas give), moved between its warpgroups; an
    # inc waits until the others' registers and its own new count fit, as the hardware's does
    size = len(thread.block.threads)
    launch = min(255, 65536 // size // 8 * 8)
    held = memory.per_block(("setmaxnreg registers",), dict)     # warpgroup -> its registers a thread

    def others():
        return sum(held.get(g, launch) for g in range(size // 128) if g != group)

    def taken():        # (the first of the warpgroup's threads to find room takes the registers for all)
        if held.get(group) != n and 128 * (others() + n) <= size * launch:
            held[group] = n
        return held.get(group) == n

    if action == "inc":
        scheduler.wait(thread, taken,
                       lambda: f"{op}({n}, 'inc'): warpgroup {group} waits for registers: the other warpgroups hold "
                               f"{others()} a thread, and {others()} + {n} is more than the {launch} a thread each "
                               f"of the block's {size // 128} warpgroups holds at launch ({size} threads)")
    else:
        held[group] = n
    state.changed()

def zeros(count, dtype=None):
    integer = dtype is not None and np.dtype(str(dtype)) == np.int32
    return Fragment([0] * count if integer else [0.0] * count, "int32" if integer else "float32")


def scale(acc, factor):
    return Fragment((np.asarray(acc, np.float32) * np.float32(factor)).tolist(), acc.dtype)


def add(acc, other):
    if len(acc) != len(other) or acc.dtype != "float32" or other.dtype != "float32":
        raise SimulatorError(f"numba_tma simulator: wgmma.add: arguments 'acc' and 'other' must be float32 fragments "
                             f"of one length; got {len(acc)} {acc.dtype} and {len(other)} {other.dtype} registers")
    return Fragment((np.asarray(acc, np.float32) + np.asarray(other, np.float32)).tolist(), "float32")


def _positions(thread, count):
    """``(registers, rows, cols)``: arrays of each of a thread's ``count`` fragment registers and
    its row and column in the 64 x N tile (the thread's place: ``threadIdx.x % 128``, as the
    compiled helpers take it): register ``i = 4 j + 2 h + e`` at row ``16 w + l // 4 + 8 h``,
    column ``8 j + 2 (l % 4) + e``."""
    t = thread.index[0] % 128
    w, lane = t // 32, t % 32
    i = np.arange(count)
    return i, 16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2


def _elements(thread, count):
    """``(register, row, col)`` of each of a thread's ``count`` fragment registers, one by one
    (:func:`_positions`)."""
    return zip(*(x.tolist() for x in _positions(thread, count)))


def _store(kind, acc, out, row, col, convert):
    thread, _ = enter()
    if getattr(acc, "dtype", "float32") != "float32":
        raise OpArgumentError(f"numba_tma: wgmma.{kind}: argument 'acc' {FRAGMENT_FLOAT_ONLY}; got an {acc.dtype} "
                              "fragment")
    target = memory.host(out)
    rows, cols = target.shape
    i, r, c = _positions(thread, len(acc))
    inside = (row + r < rows) & (col + c < cols)
    values = convert(np.asarray(acc, np.float32))[i[inside]]
    if target.dtype == np.int16:                # 16-bit float bits in an int16 array (a torch view): wrapped
        values = values.view(np.int16)
    target[row + r[inside], col + c[inside]] = values


def store(acc, out, row, col):
    _store("store", acc, out, row, col, lambda values: values)


def store_bf16(acc, out, row, col):
    _store("store_bf16", acc, out, row, col, _bf16_codes)


def store_f16(acc, out, row, col):
    target = memory.host(out)
    _store("store_f16", acc, out, row, col,
           (lambda values: values.astype(np.float16)) if target.dtype == np.float16 else _f16_codes)


def map(acc, fn, row, col, *args):        # noqa: A001 - wgmma.map
    """Each register ``v`` replaced by ``float32(fn(v, r, c, *args))`` at its (r, c) (int32), ``fn`` the
    simulator's device function (``cuda.jit(device=True)``), called per element as the GPU's inlined copy."""
    thread, _ = enter()
    if getattr(acc, "dtype", "float32") != "float32":
        raise OpArgumentError(f"numba_tma: wgmma.map: argument 'acc' {MAP_ACC_FLOAT}; got an {acc.dtype} fragment")
    if not is_device_function(fn):
        raise OpArgumentError(f"numba_tma: wgmma.map: argument 'fn' {MAP_FN}; got {fn!r}")
    values = list(acc)
    op = RUNNING.op
    for i, r, c in _elements(thread, len(acc)):
        values[i] = float(np.float32(fn(np.float32(acc[i]), np.int32(row + r), np.int32(col + c), *args)))
        RUNNING.op = op                   # (fn may run ops of its own)
    return Fragment(values, "float32")


def _store_shared(acc, tile, desc, first, count, convert):
    thread, _ = enter()
    row_bytes = desc.layout.box[-1] * desc.layout.element_bits // 8
    box_cols, box_bytes = row_bytes // 2, 64 * row_bytes
    raw = memory.byte_view(memory.host(tile))
    total = 2 * len(acc) // box_cols
    count = total - first if count is None else count
    _aligned(RUNNING.op, tile, 128, matrix.STAGING_WHY)
    if raw.size < count * box_bytes:
        raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: argument 'tile' {memory.name(tile)} holds "
                             f"{raw.size} bytes, fewer than {count * box_bytes} (the {count} boxes of {box_bytes} "
                             "bytes it writes)")
    words = raw[:count * box_bytes].view(np.uint16)
    i, r, c = _positions(thread, len(acc))
    box, col = np.divmod(c, box_cols)
    mine = (first <= box) & (box < first + count)
    offsets = (box - first) * box_bytes + swizzled_offsets(r * row_bytes + 2 * col, 128)
    words[offsets[mine] // 2] = convert(np.asarray(acc, np.float32))[i[mine]]


def _bf16_codes(values):
    """float32 values as bfloat16 bits, rounded to nearest even (``cvt.rn.bf16x2.f32``)."""
    bits = values.view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 & 0xFFFF).astype(np.uint16)


def _f16_codes(values):
    """float32 values as float16 bits, rounded to nearest even (``cvt.rn.f16x2.f32``: beyond the
    range, infinity)."""
    with np.errstate(over="ignore"):
        return values.astype(np.float16).view(np.uint16)


def store_shared_bf16(acc, tile, desc, first=0, count=None):
    _store_shared(acc, tile, desc, first, count, _bf16_codes)


def store_shared_f16(acc, tile, desc, first=0, count=None):
    _store_shared(acc, tile, desc, first, count, _f16_codes)


def load(array, row, col, count):
    thread, _ = enter()
    source = memory.host(array)
    rows, cols = source.shape
    values = [0.0] * count
    for i, r, c in _elements(thread, count):
        if row + r < rows and col + c < cols:
            values[i] = float(np.float32(source[row + r, col + c]))
    return Fragment(values, "float32")


# -- fragment rows: the same arithmetic in float32, in the compiled helpers' order -----------------

def _row_registers(count, h):
    """Row ``h``'s registers of a fragment of ``count`` (``4 j + 2 h + e``), in the compiled order."""
    return [4 * j + 2 * h + e for j in range(count // 4) for e in (0, 1)]


def _tree(values, combine):
    """Pairwise, level by level, an odd one out carried up: the compiled helpers' order."""
    while len(values) > 1:
        values = [combine(values[k], values[k + 1]) for k in range(0, len(values) - 1, 2)] + \
            values[len(values) - len(values) % 2:]
    return values[0]


def _exchange(value):
    """Every lane's ``value`` of this warp, by lane, once all 32 lanes brought theirs (a ``.sync``
    shuffle with the full mask): ``(lane, {lane: value})``."""
    lane, values = warp_exchange("wgmma rows", value)
    if len(values) != 32:
        raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: {len(values)} lanes of warp "
                             f"{scheduler.current().thread_id // 32} took part; its shfl.sync.bfly with the full mask "
                             "needs all 32")
    return lane, values


def _row_reduction(acc, combine):
    if acc.dtype != "float32":
        raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: argument 'acc' must be a float32 fragment; got an "
                             f"{acc.dtype} one")
    mine = [_tree([np.float32(acc[i]) for i in _row_registers(len(acc), h)], combine) for h in (0, 1)]
    lane, lanes = _exchange(mine)
    # the butterfly: with lane l ^ 1, then with l ^ 2 (whose value is already its pair's)
    pair = [combine(lanes[lane][h], lanes[lane ^ 1][h]) for h in (0, 1)]
    other = [combine(lanes[lane ^ 2][h], lanes[lane ^ 3][h]) for h in (0, 1)]
    return tuple(np.float32(combine(pair[h], other[h])) for h in (0, 1))


def row_max(acc):
    return _row_reduction(acc, lambda a, b: np.fmax(np.float32(a), np.float32(b)))


def row_sum(acc):
    return _row_reduction(acc, lambda a, b: np.float32(a) + np.float32(b))


_FTZ = np.float32(2.0 ** -126)      # the smallest normal float32: ex2.approx.ftz flushes below it


def exp2_rows(acc, scale, m0, m1):
    x = np.asarray(acc, np.float32).astype(np.float64)
    out = np.empty(len(acc), np.float32)
    for h, m in enumerate((m0, m1)):
        i = _row_registers(len(acc), h)
        # fma.rn.f32: the product of two float32 is exact in float64, one rounding after the subtraction
        t = (x[i] * np.float64(np.float32(scale)) - np.float64(np.float32(m))).astype(np.float32)
        with np.errstate(over="ignore", under="ignore"):
            p = np.exp2(t)
        out[i] = np.where(np.abs(p) < _FTZ, np.float32(0), p)
    return Fragment(out.tolist(), "float32")


def scale_rows(acc, f0, f1):
    x = np.asarray(acc, np.float32)
    out = np.empty(len(acc), np.float32)
    for h, f in enumerate((f0, f1)):
        i = _row_registers(len(acc), h)
        out[i] = x[i] * np.float32(f)
    return Fragment(out.tolist(), "float32")
