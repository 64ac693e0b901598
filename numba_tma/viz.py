"""Pictures for Jupyter: where a swizzled TMA box lands in shared memory, and PTX / SASS with the
TMA, bulk-copy, mbarrier and fence lines highlighted.

Example::

    from numba_tma import descriptors, viz
    desc = descriptors.encode_tiled("float16", 0, [4096, 4096], [8192], [64, 64], swizzle="128B")
    viz.swizzle(desc)                     # or a TensorMap; needs matplotlib (the ``viz`` extra)

``inspect.compile(...)`` results show their PTX and SASS highlighted in a notebook through
:func:`code_html`.  The swizzle placement is ``descriptors.enums.swizzled_offsets``, the one
formula the simulator's twins and ``tma.swizzled_index``'s row mask come from, not a copy of it.

:func:`wgmma_reads` shows, as text, which elements of a tile one ``wgmma.mma_async`` reads through a
``wgmma.descriptor`` and where they lie in shared memory: the descriptor is built and decoded by
``descriptors.matrix``, as the simulator reads tiles through it.
"""

from __future__ import annotations

import html
import math
import re
from collections import namedtuple

import numpy as np

from .descriptors import decode, matrix
from .descriptors.enums import SWIZZLE_BYTES, TYPE_INFO, Mode, smem_row_bytes, swizzled_offsets
from .descriptors.tensor_map import TensorMap
from .descriptors.tile_layout import TileLayout

BANKS, BANK_BYTES, CHUNK_BYTES, LINE_BYTES = 32, 4, 16, 128

Layout = namedtuple("Layout", "offset bank chunk element_bytes swizzle_bytes title")
Layout.__doc__ = """Where each element ``[r, c]`` of a box (outer dimensions flattened into ``r``) lands in
shared memory: ``offset`` its byte offset from the tile's start, ``bank`` its 4-byte bank (0-31),
``chunk`` its 16-byte chunk within a 128-byte line (0-7)."""



def _descriptor_bytes(desc) -> bytes:
    if isinstance(desc, TensorMap):
        return desc.bytes
    if isinstance(desc, (bytes, bytearray)) and len(desc) == 128:
        return bytes(desc)
    raise TypeError("numba_tma.viz: argument 'desc' must be a numba_tma.TensorMap or the 128 bytes of a "
                    f"CUtensorMap (numba_tma.descriptors.encode_tiled(...)); got {type(desc).__name__}")


def layout(desc) -> Layout:
    """Where each element of one box of the tiled map ``desc`` lands in shared memory (no drawing,
    no matplotlib)."""
    raw = _descriptor_bytes(desc)
    fields = decode(raw)
    bits = TYPE_INFO[fields.data_type].bits
    if fields.mode != Mode.TILED or bits < 8 or fields.swizzle.name not in SWIZZLE_BYTES \
            or any(e != 1 for e in fields.element_strides):
        raise ValueError("numba_tma.viz: argument 'desc' must be a tiled map of 8-bit or wider elements, unit "
                         f"element strides and swizzle none, 32B, 64B or 128B; got a {fields.mode.name.lower()} map "
                         f"of {fields.data_type.name}, swizzle {fields.swizzle.name}, element strides "
                         f"{list(fields.element_strides)}")
    cols, rows = fields.box_dim[0], math.prod(fields.box_dim[1:])
    r, c = np.indices((rows, cols))
    size = bits // 8
    span = SWIZZLE_BYTES[fields.swizzle.name]
    offset = swizzled_offsets(r * smem_row_bytes(cols * size, span) + c * size, span)
    box = "x".join(str(b) for b in reversed(fields.box_dim))
    title = f"{fields.data_type.name} box {box}, {fields.swizzle.name}"
    return Layout(offset, (offset // BANK_BYTES) % BANKS, (offset // CHUNK_BYTES) % (LINE_BYTES // CHUNK_BYTES), size,
                  SWIZZLE_BYTES[fields.swizzle.name], title)


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("numba_tma.viz.swizzle draws with matplotlib, which is not installed: "
                          "pip install 'numba-tma[viz]'") from None
    return plt


def swizzle(desc, rows: int | None = None, ax=None):
    """Draw one box of ``desc`` (a tiled :class:`~numba_tma.TensorMap` or its 128 bytes) as TMA
    lays it out in shared memory: one cell per element in the box's own (row, column) order,
    coloured by the bank it lands in, each 16-byte run of a row labelled with the chunk (0-7) of the
    128-byte line it lands in.  ``rows``: draw only the first rows (the pattern repeats every 8
    lines of 128 bytes).  Returns the matplotlib figure."""
    plt = _pyplot()
    lay = layout(desc)
    total = lay.offset.shape[0]
    if rows is not None and not (isinstance(rows, int) and 1 <= rows <= total):
        raise ValueError(f"numba_tma.viz.swizzle: argument 'rows' must be an int in [1, {total}] (the box's rows); "
                         f"got {rows!r}")
    shown = total if rows is None else rows
    bank, chunk = lay.bank[:shown], lay.chunk[:shown]
    cols = bank.shape[1]
    if ax is None:
        _, ax = plt.subplots(figsize=(min(16, 2 + cols * 0.25), min(12, 1.5 + shown * 0.3)))
    ax.imshow(bank, cmap=plt.get_cmap("hsv", BANKS), vmin=-0.5, vmax=BANKS - 0.5, aspect="auto",
              interpolation="nearest")
    run = max(1, CHUNK_BYTES // lay.element_bytes)             # elements per 16-byte run
    for x in range(run, cols, run):
        ax.axvline(x - 0.5, color="black", linewidth=0.6)
    for r in range(shown):
        for c0 in range(0, cols, run):
            ax.text(c0 + (min(run, cols - c0) - 1) / 2, r, str(chunk[r, c0]), ha="center", va="center", fontsize=7)
    ax.set_xlabel("column (innermost index c)")
    ax.set_ylabel("row r (outer indices flattened)")
    ax.set_title(f"{lay.title}: colour = bank (0-31), number = 16-byte chunk of its 128-byte line")
    return ax.figure


# -- what one wgmma reads ----------------------------------------------------------------------------

_MMA_SHAPE = re.compile(r"m64n(\d+)k(\d+)$")
_MMA_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}   # K of one instruction


def _ranges(values) -> str:
    """Sorted ints as ``a-b`` runs: ``0-63`` or ``0-7, 16-23``."""
    values, runs = sorted(set(int(v) for v in values)), []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


class WgmmaReads:
    """What one ``wgmma.mma_async`` reads of one operand's tile (:func:`wgmma_reads`).

    ``rows``, ``cols``: the tile element (logical row, column, as the map's box has them) behind
    each element read, shape (rows read, K): the operand's row ``i`` (of M = 64 for A, N for B),
    K element ``j``; ``offset``: its byte offset from the tile's start in shared memory (after the
    swizzle); ``chunk``: its 16-byte chunk of the 128-byte line (0-7); ``mask``: the tile's shape,
    True where an element is read.  ``str()`` (and the notebook) show it as a table."""

    def __init__(self, rows, cols, offset, mask, element_bytes, row_bytes, title):
        self.rows, self.cols, self.offset, self.mask = rows, cols, offset, mask
        self.chunk = (offset // CHUNK_BYTES) % (LINE_BYTES // CHUNK_BYTES)
        self.element_bytes, self.row_bytes, self.title = element_bytes, row_bytes, title

    def text(self, rows: int | None = 8) -> str:
        """The table, one line per operand row (the first ``rows``; ``None``: all; the rest are
        summed up when each 8 rows repeat the 8 above, ``8 x row bytes`` on)."""
        run = max(1, CHUNK_BYTES // self.element_bytes)          # elements per 16-byte chunk
        total = self.offset.shape[0]
        repeats = total > 8 and (self.offset[8:] == self.offset[:-8] + 8 * self.row_bytes).all() and \
            (self.cols[8:] == self.cols[:-8]).all() and (self.rows[8:] == self.rows[:-8] + 8).all()
        shown = total if rows is None or (not repeats and rows < total) else min(rows, total)
        uniform = (self.cols == self.cols[0]).all()
        groups = range(0, self.offset.shape[1], run)
        read_rows, read_cols = np.nonzero(self.mask)
        lines = [self.title,
                 f"reads tile rows {_ranges(read_rows)}, columns {_ranges(read_cols)} ({self.offset.shape[0]} x "
                 f"{self.offset.shape[1]} elements)",
                 "each cell: the byte offset in the tile (after the swizzle), c = its 16-byte chunk of the 128-byte "
                 "line"]
        head = "tile row" + "".join(f"  cols {self.cols[0, g]}-{self.cols[0, g + run - 1]}".ljust(16) for g in groups)
        lines.append(head.rstrip() if uniform else "tile row  (cols) offset c")
        for i in range(shown):
            cells = []
            for g in groups:
                where = "" if uniform else f"({self.cols[i, g]}-{self.cols[i, g + run - 1]}) "
                cells.append(f"  {where}{self.offset[i, g]:>7} c{self.chunk[i, g]}".ljust(16))
            lines.append(f"{self.rows[i, 0]:>8}" + "".join(cells).rstrip())
        if shown < total:
            lines.append(f"... tile rows {self.rows[shown, 0]}-{self.rows[-1, 0]}: " +
                         (f"each 8 rows as the 8 above, {8 * self.row_bytes} bytes on" if repeats else
                          "text(rows=None) shows them"))
        return "\n".join(lines)

    def __str__(self):
        return self.text()

    __repr__ = __str__          # what a notebook cell and the REPL show


def _tile_layout(desc) -> TileLayout:
    if isinstance(desc, TileLayout):
        return desc
    layout = getattr(desc, "layout", None)          # a TensorMap, or its Numba type (TensorMapType)
    if isinstance(layout, TileLayout):
        return layout
    raise TypeError("numba_tma.viz.wgmma_reads: argument 'desc' must be a numba_tma.TensorMap, its Numba type "
                    "(TensorMap.numba_type(...)) or its TileLayout (TileLayout.describe(...)); got "
                    f"{type(desc).__name__}")


def wgmma_reads(desc, tile_shape=None, k: int = 0, row: int = 0, shape: str = "m64n128k16", dtype: str = "bf16",
                operand: str = "A") -> WgmmaReads:
    """Which elements of a tile one ``wgmma.mma_async`` (``shape`` ``"m64nNkK"``, ``dtype``) reads
    for ``operand`` (``"A"``: 64 rows, ``"B"``: N rows) through ``wgmma.descriptor(tile, desc, k,
    row)``, and where they lie in shared memory.  ``desc``: the map that filled the tile (a
    :class:`~numba_tma.TensorMap`, its Numba type or its layout); ``tile_shape``: the tile's
    (rows, columns) in elements (default: one box; rows of several boxes for a taller tile).

    The descriptor is encoded and decoded by :mod:`numba_tma.descriptors.matrix` (the simulator
    reads tiles through the same functions); each byte it names is mapped back to the tile element
    TMA wrote there (the swizzle of :func:`layout`).  Refuses what ``wgmma.descriptor`` and
    ``mma_async`` refuse, naming the argument and the rule.  Text: ``print(viz.wgmma_reads(...))``,
    or the cell's value in a notebook."""
    name = "numba_tma.viz.wgmma_reads"
    layout = _tile_layout(desc)
    rule = matrix.layout_rule(layout)
    if rule:
        raise ValueError(f"{name}: argument 'desc' {rule}")
    span, row_bytes = matrix.operand_bytes(layout)
    element_bytes, box_cols = layout.element_bits // 8, layout.box[-1]
    tile_shape = (math.prod(layout.box[:-1]), box_cols) if tile_shape is None else tuple(tile_shape)
    if len(tile_shape) != 2 or tile_shape[1] != box_cols or not (isinstance(tile_shape[0], int) and tile_shape[0] > 0):
        raise ValueError(f"{name}: argument 'tile_shape' must be (rows, {box_cols}): the tile's rows of the map's box "
                         f"width; got {tile_shape!r}")
    if dtype not in _MMA_K:
        raise ValueError(f"{name}: argument 'dtype' must be one of {', '.join(map(repr, _MMA_K))} (the A/B element "
                         f"type of mma_async); got {dtype!r}")
    match = _MMA_SHAPE.match(shape) if isinstance(shape, str) else None
    n = int(match.group(1)) if match else 0
    if not match or int(match.group(2)) != _MMA_K[dtype] or not (8 <= n <= 256 and n % 8 == 0):
        raise ValueError(f"{name}: argument 'shape' must be 'm64nNk{_MMA_K[dtype]}' for dtype={dtype!r}, N 8 to 256 "
                         f"in steps of 8; got {shape!r}")
    if _MMA_K[dtype] * layout.element_bits != 8 * matrix.K_STEP_BYTES:
        raise ValueError(f"{name}: argument 'desc' must hold {8 * matrix.K_STEP_BYTES // _MMA_K[dtype]}-bit elements "
                         f"for dtype={dtype!r}; got {layout.element_bits}-bit {layout.dtype}")
    if operand not in ("A", "B"):
        raise ValueError(f"{name}: argument 'operand' must be 'A' (64 rows) or 'B' (N rows); got {operand!r}")
    if not (isinstance(k, int) and 0 <= k * matrix.K_STEP_BYTES < span):
        raise ValueError(f"{name}: argument 'k' {matrix.k_rule(span)}; got {k!r}")
    tile_rows = tile_shape[0]
    if not isinstance(row, int) or row % matrix.ATOM_ROWS:
        raise ValueError(f"{name}: argument 'row' {matrix.ROW_RULE}; got {row!r}")
    if not 0 <= row < tile_rows:
        raise ValueError(f"{name}: argument 'row' {matrix.rows_rule(tile_rows, row_bytes)}; got {row}")
    reads = 64 if operand == "A" else n
    if row + reads > tile_rows:
        raise ValueError(f"{name}: argument 'row' = {row}: operand {operand} of {shape} reads {reads} rows from it, "
                         f"past the tile's {tile_rows} rows")
    bits = matrix.encode(0, row_bytes, span, row, k)
    offset = matrix.read_offsets(bits, 0, reads, matrix.K_STEP_BYTES)[:, ::element_bytes]    # (rows, K) elements
    r, c = np.indices(tile_shape)                                        # where TMA put each tile element
    placed = swizzled_offsets(r * row_bytes + c * element_bytes, span)
    element = np.empty(placed.size, np.int64)
    element[placed.ravel() // element_bytes] = np.arange(placed.size)
    rows, cols = np.divmod(element[offset // element_bytes], box_cols)
    mask = np.zeros(tile_shape, bool)
    mask[rows, cols] = True
    title = (f"wgmma.mma_async {shape} {dtype}, operand {operand} = wgmma.descriptor(tile, desc, k={k}, row={row}): "
             f"tile {tile_rows} x {box_cols} {layout.dtype}, {layout.swizzle} (rows of {row_bytes} bytes)")
    return WgmmaReads(rows, cols, offset, mask, element_bytes, row_bytes, title)


# -- PTX / SASS in HTML ------------------------------------------------------------------------------

# (what, colour, PTX pattern, SASS pattern): the first that matches a line colours it
HIGHLIGHTS = (
    ("TMA", "#ffd8a8", r"\bcp(\.reduce)?\.async\.bulk(\.prefetch)?\.tensor", r"\bUTMA\w*"),
    ("bulk copy", "#ffec99", r"\bcp(\.reduce)?\.async\.bulk\b", r"\bUBLK\w*"),
    ("mbarrier", "#b2f2bb", r"\bmbarrier\.", r"\bSYNCS\."),
    ("fence", "#a5d8ff", r"\bfence\.", r"\bFENCE\."),
)


def _kind(line: str, column: int) -> tuple | None:
    return next((h for h in HIGHLIGHTS if re.search(h[column], line)), None)


def code_html(text: str, language: str) -> str:
    """``text`` (``language`` ``"ptx"`` or ``"sass"``) as an HTML ``<pre>`` block with the TMA,
    bulk-copy, mbarrier and fence lines highlighted, and a legend counting them."""
    if language not in ("ptx", "sass"):
        raise ValueError(f"numba_tma.viz.code_html: argument 'language' must be 'ptx' or 'sass'; got {language!r}")
    column = 2 if language == "ptx" else 3
    counts, lines = {}, []
    for line in text.splitlines():
        kind = _kind(line, column)
        escaped = html.escape(line)
        if kind is None:
            lines.append(escaped)
        else:
            counts[kind[0]] = counts.get(kind[0], 0) + 1
            lines.append(f'<span style="background:{kind[1]}" title="{kind[0]}">{escaped}</span>')
    legend = " ".join(f'<span style="background:{colour}">{what}: {counts.get(what, 0)}</span>'
                      for what, colour, *_ in HIGHLIGHTS)
    return f"<div>{legend}</div><pre style=\"font-size:11px;line-height:1.25\">{chr(10).join(lines)}</pre>"
