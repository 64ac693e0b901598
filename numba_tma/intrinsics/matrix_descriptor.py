"""The 64-bit shared-memory matrix descriptor of a K-major MMA operand, as Hopper's wgmma (sm_90a)
and Blackwell's tcgen05 (sm_100a) read it, built from the TMA map that filled the tile.

The tile is what a tiled map with a 32B, 64B or 128B swizzle and box rows of exactly one swizzle
span wrote: the map's type gives every field but the address.  Both architectures lay out the
low 32 bits alike (start address >> 4 in bits 0-13; the leading byte offset, unused for a swizzled
K-major operand, 1 in bits 16-29); the high 32 bits (the 8-row stride >> 4 in bits 32-45, then
architecture-specific fields) come from the family's ``hi(swizzle, row_bytes)``.  The descriptor is
built in 32-bit pieces (``mad`` / ``shr`` / ``and`` / ``or``, one ``mov.b64``): the address of row
``row`` at K step ``k`` (32 bytes each) inside the swizzle span.
"""

from numba.cuda import types

from ..declarations import literal, reject
from ..descriptors import matrix
from . import debug
from ._core import Int, Operand, SharedArray
from .tensor_map_type import TensorMapType

TEMPLATE = """{{
    .reg .b32 a, lo, hi;
    mad.lo.u32 a, {row}, {row_bytes}, {tile};
    mad.lo.u32 a, {k}, 32, a;
    shr.u32 a, a, 4;
    and.b32 a, a, 0x3fff;
    or.b32 lo, a, 0x10000;
    mov.b32 hi, {hi};
    mov.b64 {out}, {{lo, hi}};
    }}"""


def _map_facts(op_name, desc, rule_of, facts_of):
    """``facts_of(desc)`` for a by-value TensorMap whose layout ``rule_of`` accepts, else refused."""
    if not isinstance(desc, TensorMapType):
        raise reject(op_name, "desc", "must be the by-value numba_tma.TensorMap that fills the tile", desc)
    rule = rule_of(desc)
    if rule:
        raise reject(op_name, "desc", rule, desc)
    return facts_of(desc)


def layout_facts(op_name, desc):
    """``(swizzle bytes, row bytes)`` of the tiles ``desc`` (a by-value TensorMap) fills, for a
    K-major operand: each row of the tile is one swizzle span (:mod:`numba_tma.descriptors.matrix`)."""
    return _map_facts(op_name, desc, matrix.layout_rule, matrix.operand_bytes)


class TileMap(Operand):
    """The by-value TensorMap that filled an MMA operand's tile: its type says the tile's layout
    (the descriptor's fields); it emits nothing."""

    annotation = "TensorMap"

    def check(self, op_name, ty):
        layout_facts(op_name, ty)

    def lower(self, host, ty, val):
        return []

    def keys(self, slot, ty):
        return {}


def operands():
    """``(tile, desc, k, row)``: the tile, the map that filled it, the K step and the first row."""
    return (SharedArray("tile", what="the shared tile the map filled", contiguous=True), TileMap("desc"),
            Int("k", bits=32, lo=0, hi=3, rule="must be in [0, 3]: a K step of 32 bytes inside a swizzle span of at "
                "most 128 bytes"),
            Int("row", bits=32))


def check(op_name):
    """The typing rules of ``op_name``'s ``(tile, desc, k, row)``: a constant K step inside the
    map's swizzle span, a constant row a multiple of the 8-row swizzle atom."""
    def check_tile(tile=None, desc=None, k=None, row=None, **_):
        swizzle, _ = layout_facts(op_name, desc)
        step = literal(k)
        if isinstance(step, int) and not 0 <= step * matrix.K_STEP_BYTES < swizzle:
            raise reject(op_name, "k", matrix.k_rule(swizzle), step)
        rows = literal(row)
        if isinstance(rows, int) and rows % matrix.ATOM_ROWS:
            raise reject(op_name, "row", matrix.ROW_RULE, rows)
    return check_tile


def fields(op_name, hi):
    """The template keys of ``op_name``'s descriptor: the row bytes and the high 32 bits,
    ``hi(swizzle bytes, row bytes)``."""
    def descriptor_fields(cc=None, desc=None, **_):
        swizzle, row_bytes = layout_facts(op_name, desc)
        return {"row_bytes": row_bytes, "hi": f"{hi(swizzle, row_bytes):#x}"}
    return descriptor_fields


def debug_checks(op_name):
    """Debug mode (:mod:`.debug`) of ``op_name``: the tile aligned to its 8-row swizzle atom, a
    run-time ``k`` inside the span, a run-time ``row`` a multiple of 8 and inside the tile (an
    ``at()`` tile has no extent: only its alignment is checked).  Constants were checked at
    compile time."""
    def checks(d, tys, args):
        desc_ty, tile_ty, tile = tys["desc"], tys["tile"], args["tile"]
        span, row_bytes = layout_facts(op_name, desc_ty)
        debug.check_aligned(d, op_name, "tile", d.shared_address(tile, tile_ty), matrix.alignment(span),
                            matrix.alignment_why(desc_ty.swizzle))
        if not isinstance(literal(tys["k"]), int):
            k = d.int64(args["k"], tys["k"])
            debug.fail_if(d, d.icmp_unsigned(">=", k, span // matrix.K_STEP_BYTES), op_name,
                          f"k = %lld: {matrix.k_rule(span)}", [k])
        if not isinstance(literal(tys["row"]), int):
            row = d.int64(args["row"], tys["row"])
            debug.fail_if(d, d.icmp_unsigned("!=", d.and_(row, matrix.ATOM_ROWS - 1), 0), op_name,
                          f"row = %lld: {matrix.ROW_RULE}", [row])
        else:
            row = d.const(literal(tys["row"]), 64)
        if isinstance(tile_ty, types.Array):
            rows = d.udiv(d.array_bytes(tile, tile_ty), row_bytes)
            debug.fail_if(d, d.icmp_unsigned(">=", row, rows), op_name,
                          f"row = %lld: {matrix.rows_rule('%lld', row_bytes)}", [row, rows])
    return checks


# -- MN-major (a 16-bit operand given K x N / K x M: wgmma's trans_b / trans_a) ----------------------

MN_TEMPLATE = """{{
    .reg .b32 a, lo, hi;
    mad.lo.u32 a, {col}, {col_bytes}, {tile};
    mad.lo.u32 a, {k}, {k_bytes}, a;
    shr.u32 a, a, 4;
    and.b32 a, a, 0x3fff;
    or.b32 lo, a, {leading};
    mov.b32 hi, {hi};
    mov.b64 {out}, {{lo, hi}};
    }}"""


def mn_layout_facts(op_name, desc):
    """``(swizzle bytes, box width, box bytes)`` of the tiles ``desc`` fills as an MN-major
    operand (:func:`numba_tma.descriptors.matrix.mn_layout_rule`)."""
    return _map_facts(op_name, desc, matrix.mn_layout_rule, matrix.mn_operand)


class MnTileMap(TileMap):
    """The map that filled an MN-major operand's tile (its layout: the descriptor's fields)."""

    def check(self, op_name, ty):
        mn_layout_facts(op_name, ty)


def mn_operands():
    """``(tile, desc, k, col)``: the tile, the map that filled it, the K step and the first MN element."""
    return (SharedArray("tile", what="the shared tile the map filled", contiguous=True), MnTileMap("desc"),
            Int("k", bits=32), Int("col", bits=32))


def mn_check(op_name):
    """Constant ``k`` inside the box's K rows, constant ``col`` a multiple of the box width."""
    def check_tile(tile=None, desc=None, k=None, col=None, **_):
        _, width, _ = mn_layout_facts(op_name, desc)
        step = literal(k)
        if isinstance(step, int) and not 0 <= step * matrix.MN_K_ROWS < desc.box[0]:
            raise reject(op_name, "k", matrix.mn_k_rule(desc.box[0]), step)
        first = literal(col)
        if isinstance(first, int) and (first < 0 or first % width):
            raise reject(op_name, "col", matrix.mn_col_rule(width), first)
    return check_tile


def mn_fields(op_name, hi):
    """The template keys of ``op_name``'s MN-major descriptor (``hi(swizzle bytes, row bytes)``:
    the high 32 bits, the row bytes one swizzle span)."""
    def descriptor_fields(cc=None, desc=None, **_):
        span, width, box_bytes = mn_layout_facts(op_name, desc)
        return {"col_bytes": box_bytes // width, "k_bytes": matrix.MN_K_ROWS * span,
                "leading": f"{(box_bytes >> 4) << 16:#x}", "hi": f"{hi(span, span):#x}"}
    return descriptor_fields


def mn_debug_checks(op_name):
    """Debug mode: the tile aligned to its 8-row atom, a run-time ``k`` inside the box's K rows, a
    run-time ``col`` a multiple of the box width."""
    def checks(d, tys, args):
        desc_ty, tile_ty, tile = tys["desc"], tys["tile"], args["tile"]
        span, width, _ = mn_layout_facts(op_name, desc_ty)
        debug.check_aligned(d, op_name, "tile", d.shared_address(tile, tile_ty), matrix.alignment(span),
                            matrix.alignment_why(desc_ty.swizzle))
        if not isinstance(literal(tys["k"]), int):
            k = d.int64(args["k"], tys["k"])
            debug.fail_if(d, d.icmp_unsigned(">=", k, desc_ty.box[0] // matrix.MN_K_ROWS), op_name,
                          f"k = %lld: {matrix.mn_k_rule(desc_ty.box[0])}", [k])
        if not isinstance(literal(tys["col"]), int):
            col = d.int64(args["col"], tys["col"])
            debug.fail_if(d, d.icmp_unsigned("!=", d.urem(col, width), 0), op_name,
                          f"col = %lld: {matrix.mn_col_rule(width)}", [col])
    return checks
