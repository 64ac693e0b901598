"""Pictures for Jupyter: where a swizzled TMA box lands in shared memory, and PTX / SASS with the
TMA, bulk-copy, mbarrier and fence lines highlighted.

    from numba_tma import descriptors, viz
    desc = descriptors.encode_tiled("float16", 0, [4096, 4096], [8192], [64, 64], swizzle="128B")
    viz.swizzle(desc)                     # or a TensorMap; needs matplotlib (the ``viz`` extra)

``inspect.compile(...)`` results show their PTX and SASS highlighted in a notebook through
:func:`code_html`.  The swizzle placement is ``descriptors.enums.swizzled_offsets``, the one
formula the simulator's twins and ``tma.swizzled_index``'s row mask come from, not a copy of it.
"""

from __future__ import annotations

import html
import math
import re
from collections import namedtuple

import numpy as np

from .descriptors import decode
from .descriptors.enums import SWIZZLE_BYTES, TYPE_INFO, Mode, smem_row_bytes, swizzled_offsets
from .descriptors.tensor_map import TensorMap

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
