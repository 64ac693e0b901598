"""wgmma's shared-memory matrix descriptors on the host, in pure Python: the 64 bits
``wgmma.descriptor`` builds for a K-major operand tile (and ``wgmma.descriptor_mn`` for an
MN-major one), their rules, and the bytes one ``wgmma.mma_async`` reads through them.  The simulator's twins build and read descriptors with
these functions, and ``numba_tma.viz.wgmma_reads`` draws what they read, so the two cannot differ.

>>> from numba_tma.descriptors import matrix
>>> bits = matrix.encode(0, 128, 128, row=0, k=1)      # 128B swizzle, rows of 128 bytes, K step 1
>>> matrix.decode(bits)
MatrixFields(start=32, stride=1024, span=128)
>>> matrix.read_offsets(bits, 0, rows=2, k_bytes=32)[:, ::16].tolist()   # chunk 2 of row 1 lies at 3
[[32, 48], [176, 160]]
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .enums import SWIZZLE_BYTES, swizzled_offsets

SWIZZLE_CODE = {128: 1, 64: 2, 32: 3}      # the descriptor's layout field (bits 62-63)
K_STEP_BYTES = 32                          # one ``k`` step: 16 bf16, 8 tf32 or 32 fp8 elements
ATOM_ROWS = 8                              # the swizzle atom: 8 rows of one span
ADDRESS_BITS = 18                          # the 14-bit start address field holds address bits 4-17

MatrixFields = namedtuple("MatrixFields", "start stride span")
MatrixFields.__doc__ = """A descriptor's fields: ``start`` the start address (bits 4-17, in bytes),
``stride`` the bytes between 8-row groups (the stride byte offset), ``span`` the swizzle span."""


def layout_rule(layout) -> str | None:
    """Why tiles of ``layout`` (a :class:`~numba_tma.descriptors.tile_layout.TileLayout`) cannot be a
    K-major wgmma operand, or ``None``: each row of the box must be one swizzle span."""
    span = SWIZZLE_BYTES.get(layout.swizzle)
    if layout.mode != "tiled" or not span:
        return ("must be a tiled map with swizzle '32B', '64B' or '128B' (the layouts a wgmma descriptor names); got "
                f"mode={layout.mode!r}, swizzle={layout.swizzle!r}")
    row_bytes = layout.box[-1] * layout.element_bits // 8
    if row_bytes != span:
        return (f"must have a box whose rows are one swizzle span: {layout.box[-1]} elements of {layout.element_bits} "
                f"bits are {row_bytes} bytes, the swizzle {span} (K-major operand: box (rows, "
                f"{span * 8 // layout.element_bits}))")
    return None


def operand_bytes(layout) -> tuple[int, int]:
    """``(swizzle span, row bytes)`` of a layout :func:`layout_rule` accepts (equal: one span a row)."""
    return SWIZZLE_BYTES[layout.swizzle], layout.box[-1] * layout.element_bits // 8


def alignment(span: int) -> int:
    """The alignment a tile needs: its 8-row swizzle atom (1024 bytes for 128B, 512 for 64B, 256 for 32B)."""
    return ATOM_ROWS * span


def k_rule(span: int) -> str:
    return (f"must be in [0, {span // K_STEP_BYTES}): a K step of {K_STEP_BYTES} bytes inside the {span}-byte swizzle "
            "span of the map (a wider K is the next tile)")


ROW_RULE = "must be a multiple of 8 (the 8-row swizzle atom)"


def alignment_why(swizzle: str) -> str:
    return f"the 8-row swizzle atom of a wgmma operand tile with swizzle {swizzle}"


STAGING_WHY = "the 8-row atom of the 128B-swizzled boxes it writes"      # wgmma.store_shared_bf16's tile


def rows_rule(rows: int | str, row_bytes: int) -> str:
    return f"must be below the tile's {rows} rows of {row_bytes} bytes (the descriptor would start past the tile)"


def high_word(span: int, row_bytes: int) -> int:
    """A descriptor's high 32 bits: the 8-row stride >> 4 (bits 32-45), the swizzle code (bits 62-63)."""
    return ((ATOM_ROWS * row_bytes) >> 4) | (SWIZZLE_CODE[span] << 30)


def encode(address: int, row_bytes: int, span: int, row: int, k: int) -> int:
    """The 64 bits of the descriptor of the tile at ``address`` from its ``row``-th row, K step
    ``k`` (what the compiled ``wgmma.descriptor`` computes)."""
    start = address + row * row_bytes + K_STEP_BYTES * k
    return ((start >> 4) & 0x3FFF) | (1 << 16) | (high_word(span, row_bytes) << 32)


def decode(bits: int) -> MatrixFields:
    """The fields of a descriptor's 64 bits (the swizzled K-major layouts)."""
    span = {code: span for span, code in SWIZZLE_CODE.items()}.get(bits >> 62)
    if span is None:
        raise ValueError(f"numba_tma: descriptor {bits:#018x}: its layout field {bits >> 62} is not a swizzle of "
                         "128B (1), 64B (2) or 32B (3)")
    return MatrixFields((bits & 0x3FFF) << 4, ((bits >> 32) & 0x3FFF) << 4, span)


def read_offsets(bits: int, base: int, rows: int, k_bytes: int) -> np.ndarray:
    """Byte offsets from ``base`` (the address of a tile aligned to its 8-row atom) of the ``rows``
    x ``k_bytes`` bytes a wgmma reads through the descriptor ``bits``: byte ``b`` of row ``r`` at
    ``start + (r // 8) * stride + (r % 8) * span + b``, swizzled (the 16-byte chunk index XOR
    the address's bits 7-9, masked to the span)."""
    fields = decode(bits)
    start = (fields.start - base) % (1 << ADDRESS_BITS)
    r, b = np.arange(rows)[:, None], np.arange(k_bytes)[None, :]
    return swizzled_offsets(start + (r // ATOM_ROWS) * fields.stride + (r % ATOM_ROWS) * fields.span + b, fields.span)


# -- MN-major operands (a 16-bit B given K x N, or A given K x M: ``trans_b`` / ``trans_a``) ---------
#
# The tile is what a map with box (K rows, W) wrote, W elements of one swizzle span per row (64 bf16
# for 128B): box after box along MN.  The descriptor (CUTLASS's canonical MN-major layout
# ((T, span/16, m), (8, k)) : ((1, T, LBO), (span/2, SBO)) in 16-bit elements): the leading byte
# offset (bits 16-29) steps from one box (W elements of MN) to the next, the stride byte offset
# (bits 32-45) from one 8-row group of K to the next.

MN_K_ROWS = 16                              # one ``k`` step of an MN-major operand: the 16 K of a 16-bit wgmma


def mn_layout_rule(layout) -> str | None:
    """Why tiles of ``layout`` cannot be an MN-major wgmma operand, or ``None``: 16-bit elements
    (wgmma transposes only those), rows of one swizzle span, a multiple of 16 rows (K steps)."""
    rule = layout_rule(layout)
    if rule:
        return rule.replace("K-major operand: box (rows, ", "MN-major operand: box (K rows, ")
    if layout.element_bits != 16:
        return (f"must have 16-bit elements for an MN-major operand (wgmma transposes only f16 / bf16 tiles); got "
                f"{layout.element_bits}-bit")
    if layout.box[0] % MN_K_ROWS:
        return f"must have a box of a multiple of {MN_K_ROWS} K rows (one K step each); got {layout.box[0]}"
    return None


def mn_operand(layout) -> tuple[int, int, int]:
    """``(swizzle span, box width in elements, box bytes)`` of a layout :func:`mn_layout_rule` accepts."""
    span = SWIZZLE_BYTES[layout.swizzle]
    return span, layout.box[-1], layout.box[0] * span


def mn_k_rule(k_rows: int) -> str:
    return (f"must be in [0, {k_rows // MN_K_ROWS}): a K step of {MN_K_ROWS} rows inside the box's {k_rows} K rows "
            "(a wider K is the next tile)")


def mn_col_rule(width: int) -> str:
    return f"must be a multiple of {width} (the box width: one swizzle span of MN elements)"


def encode_mn(address: int, span: int, width: int, box_bytes: int, col: int, k: int) -> int:
    """The 64 bits of the MN-major descriptor of the tile at ``address`` from MN element ``col``
    (a multiple of ``width``), K step ``k`` (what the compiled ``wgmma.descriptor_mn`` computes)."""
    start = address + (col // width) * box_bytes + k * MN_K_ROWS * span
    return ((start >> 4) & 0x3FFF) | ((box_bytes >> 4) << 16) | (high_word(span, span) << 32)


def read_offsets_mn(bits: int, base: int, mn: int, k_rows: int, element_bytes: int) -> np.ndarray:
    """Byte offsets from ``base`` of the ``mn`` x ``k_rows`` elements (``element_bytes`` each, as
    ``mn`` x ``k_rows * element_bytes`` bytes) a wgmma reads through the MN-major descriptor
    ``bits``: element ``(n, k)`` at ``start + (n // W) * leading + (k // 8) * stride + (k % 8) *
    span + (n % W) * element_bytes``, swizzled as the K-major layouts."""
    fields = decode(bits)
    leading = ((bits >> 16) & 0x3FFF) << 4
    width = fields.span // element_bytes
    start = (fields.start - base) % (1 << ADDRESS_BITS)
    n = np.arange(mn)[:, None, None]
    k = np.arange(k_rows)[None, :, None]
    b = np.arange(element_bytes)[None, None, :]
    offsets = (start + (n // width) * leading + (k // ATOM_ROWS) * fields.stride + (k % ATOM_ROWS) * fields.span
               + (n % width) * element_bytes + b)
    return swizzled_offsets(offsets, fields.span).reshape(mn, k_rows * element_bytes)
