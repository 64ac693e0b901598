"""The wgmma fragment helpers that read or write memory, for numba-cuda-mlir kernels: ``store``,
``store_bf16``, ``load`` (a 2-D array in global memory, ragged edges skipped: ``scf.if`` per
element) and ``store_shared_bf16`` (the GEMM epilogue's swizzled staging tile), unrolled in the
fragment layout of ``numba_tma.wgmma``, with the same inline PTX as under numba-cuda.  Each is
typed by the same function as under numba-cuda (``store_check``, ``load_type``,
``store_shared_bf16_boxes``).

``store_shared_bf16``'s ``desc`` is on sm_90 the map in global memory (by-value maps do not reach
sm_90 kernels under numba-cuda-mlir 0.6, docs/second_host.md): ``numba_tma.mlir.map_in_global``'s,
whose type says its layout, is checked as under numba-cuda; a plain ``uint8`` array says none: it
must be the one map this helper writes for, bfloat16 with box (64, 64) and swizzle ``"128B"``, and
is not checked.  A by-value map (sm_100 and newer) is checked."""

from numba.cuda import types

from ..errors import OpArgumentError
from ..intrinsics import wgmma
from ..intrinsics._core import parse_arch
from ..intrinsics.hosts.mlir_adapter import (arith, intrinsic, ir, llvm, lowering_utilities, memref, mlir_types, scf,
                                       target_chip)
from ..debugging import STATE as DEBUG
from ..intrinsics.hosts.mlir_emitter import MlirEmitter
from ..intrinsics.hosts.mlir_host import SharedRef, check_by_value_maps, emit_asm, integer, shared_address, to_numba
from ..intrinsics.tensor_map_type import TensorMapType
from .fragments import plain

__all__ = ["HELPERS"]

_I32 = ir.IntegerType.get_signless


def _i32(value):
    return lowering_utilities.constant(value, _I32(32))


def _fragment_coords(row0, col0):
    """This thread's (row, col) of fragment element 0, from ``%tid.x`` (1-D blocks), as numba-cuda's."""
    t = arith.andi(emit_asm("mov.u32 $0, %tid.x;", [], ["=r"], memory=False), _i32(127))
    warp, lane = arith.shrui(t, _i32(5)), arith.andi(t, _i32(31))
    row = arith.addi(row0, arith.addi(arith.shli(warp, _i32(4)), arith.shrui(lane, _i32(2))))
    col = arith.addi(col0, arith.shli(arith.andi(lane, _i32(3)), _i32(1)))
    return row, col


class _Tile:
    """A 2-D memref with the fragment's element 0 at (row, col): this thread's place, the bounds, and
    ``address(r, c)``, an LLVM pointer to element (r, c)."""

    def __init__(self, array, row, col, row_type, col_type):
        self.array = array
        self.row, self.col = _fragment_coords(integer(row, row_type, 32), integer(col, col_type, 32))
        self.rows, self.cols = (arith.index_cast(_I32(32), memref.dim(array, lowering_utilities.index_of(d)))
                                for d in (0, 1))
        metadata = memref.extract_strided_metadata(array)
        self.strides = [arith.index_cast(_I32(64), s) for s in metadata[4:6]]
        self.element_bytes = lowering_utilities.get_type_size_bytes(ir.MemRefType(array.type).element_type)
        self.base = lowering_utilities.memref_data_pointer(array)

    def inside(self, r, c):
        return arith.andi(arith.cmpi(arith.CmpIPredicate.slt, r, self.rows),
                          arith.cmpi(arith.CmpIPredicate.slt, c, self.cols))

    def address(self, r, c):
        r, c = (lowering_utilities.convert(v, _I32(64), signed=True) for v in (r, c))
        elements = arith.addi(arith.muli(r, self.strides[0]), arith.muli(c, self.strides[1]))
        offset = arith.muli(elements, lowering_utilities.constant(self.element_bytes, _I32(64)))
        return lowering_utilities.llvm_ptr_add_bytes(self.base, offset)


class _If:
    """``with _If(cond):`` the body in an ``scf.if`` with no results."""

    def __init__(self, cond):
        self.op = scf.IfOp(cond)

    def __enter__(self):
        self.point = ir.InsertionPoint(self.op.then_block)
        self.point.__enter__()

    def __exit__(self, *exc):
        if exc[0] is None:
            scf.YieldOp([])
        self.point.__exit__(*exc)


def _pack16x2(a, b, fmt="bf16x2"):
    """Two float32 as one register of two 16-bit floats of ``fmt`` (``"bf16x2"`` or ``"f16x2"``), the
    first in the low half: numba-cuda's PTX (``wgmma.pair_cvt``)."""
    return emit_asm(wgmma.pair_cvt(fmt), [(a, "f"), (b, "f")], ["=r"], memory=False)


def _store(kind):
    def typer(typingctx, acc, out, row, col):
        accty, outty, row_type, col_type = (plain(t) for t in (acc, out, row, col))   # a plain @intrinsic there
        wgmma.store_check(kind, accty, outty, row_type, col_type)
        fmt = wgmma.PAIR_FORMATS.get(kind.rpartition("_")[2]) if kind != "store" else None   # a converting store
        packed_pairs = fmt is not None and outty.layout == "C"   # one 32-bit store per pair

        def codegen(builder, target, args, kwargs):
            values, array, row0, col0 = (builder.load_var(v) for v in args)
            tile = _Tile(array, row0, col0, row_type, col_type)
            for j in range(accty.count // 4):
                for half in (0, 1):
                    r, c = arith.addi(tile.row, _i32(8 * half)), arith.addi(tile.col, _i32(8 * j))
                    c1 = arith.addi(c, _i32(1))
                    pair = [values[4 * j + 2 * half + e] for e in (0, 1)]
                    if fmt is not None:
                        packed = _pack16x2(*pair, fmt)
                        pair = [arith.trunci(_I32(16), packed), arith.trunci(_I32(16), arith.shrui(packed, _i32(16)))]
                    with _If(tile.inside(r, c)):
                        both = arith.cmpi(arith.CmpIPredicate.slt, c1, tile.cols)
                        if packed_pairs:     # one 32-bit store where the address allows it (an odd row pitch does not)
                            at = tile.address(r, c)
                            i64 = _I32(64)
                            word = arith.cmpi(arith.CmpIPredicate.eq,
                                              arith.andi(llvm.ptrtoint(i64, at), lowering_utilities.constant(3, i64)),
                                              lowering_utilities.constant(0, i64))
                            op = scf.IfOp(arith.andi(both, word), [], has_else=True)
                            with ir.InsertionPoint(op.then_block):
                                llvm.store(packed, at)
                                scf.YieldOp([])
                            with ir.InsertionPoint(op.else_block):
                                llvm.store(pair[0], at)
                                with _If(both):
                                    llvm.store(pair[1], tile.address(r, c1))
                                scf.YieldOp([])
                        else:
                            llvm.store(pair[0], tile.address(r, c))
                            with _If(both):
                                llvm.store(pair[1], tile.address(r, c1))

        return mlir_types.void(acc, out, row, col), codegen

    typer.__doc__ = f"As ``numba_tma.wgmma.{kind}``: the fragment into a 2-D array at (row, col), edges skipped."
    return intrinsic(typer, kind)


def _load(typingctx, array, row, col, count):
    """A float32 fragment read from a 2-D float32 array at (row, col), 0 outside: as ``numba_tma.wgmma.load``."""
    row_type, col_type = to_numba(row), to_numba(col)
    tuple_type = wgmma.load_type(to_numba(array), row_type, col_type, to_numba(count))

    def codegen(builder, target, args, kwargs):
        tile = _Tile(*(builder.load_var(v) for v in args[:3]), row_type, col_type)
        f32, values = ir.F32Type.get(), []
        for i in range(tuple_type.count):
            j, h, e = i // 4, (i // 2) % 2, i % 2
            r, c = arith.addi(tile.row, _i32(8 * h)), arith.addi(tile.col, _i32(8 * j + e))
            op = scf.IfOp(tile.inside(r, c), [f32], has_else=True)
            with ir.InsertionPoint(op.then_block):
                scf.YieldOp([llvm.load(f32, tile.address(r, c))])
            with ir.InsertionPoint(op.else_block):
                scf.YieldOp([lowering_utilities.constant(0.0, f32)])
            values.append(op.result)
        builder.store_var(target, tuple(values))

    return mlir_types.UniTuple(mlir_types.float32, tuple_type.count)(array, row, col, count), codegen


def _c_tile_row_bytes(desc, op="wgmma.store_shared_bf16"):
    """The row bytes of ``desc``'s boxes where its type does not say them: the C tile's, unchecked,
    for a plain ``uint8`` array; ``None`` (checked as under numba-cuda) for a map whose type says its
    layout (by value, or ``map_in_global``'s)."""
    if isinstance(desc, TensorMapType):
        return None
    if not (isinstance(desc, types.Array) and desc.dtype == types.uint8 and desc.ndim == 1):
        raise OpArgumentError(f"numba_tma: {op}: argument 'desc' must be the map in global memory "
                              f"(numba_tma.mlir.map_in_global) or a by-value map (sm_100 and newer) on the "
                              f"numba-cuda-mlir host; got {desc}")
    return wgmma.C_TILE_ROW_BYTES


def _store_shared(kind):
    op, fmt = f"wgmma.{kind}", wgmma.PAIR_FORMATS[kind.rpartition("_")[2]]

    def typer(typingctx, acc, tile, desc, first=mlir_types.Omitted(0), count=mlir_types.Omitted(None)):
        accty, tilety, descty = to_numba(acc), to_numba(tile), to_numba(desc)
        first_box, n_boxes, box_cols, row_bytes = wgmma.store_shared_bf16_boxes(
            accty, tilety, descty, to_numba(first), to_numba(count), row_bytes=_c_tile_row_bytes(descty, op), op=op)

        def codegen(builder, target, args, kwargs):
            check_by_value_maps(op, [descty], parse_arch(target_chip(builder)))
            values, tile_value = builder.load_var(args[0]), builder.load_var(args[1])
            if DEBUG.on:
                wgmma.store_shared_bf16_checks(MlirEmitter(), tilety, tile_value, n_boxes, 64 * row_bytes, op)
            base = tile_value if isinstance(tile, SharedRef) else shared_address(tile_value)
            row, col = _fragment_coords(_i32(0), _i32(0))
            col_bytes = arith.shli(col, _i32(1))                    # 16-bit elements
            for j in range(first_box * box_cols // 8, (first_box + n_boxes) * box_cols // 8):
                box, chunk_col = divmod(8 * j, box_cols)          # 8 columns per j: 16 bytes, one chunk
                for half in (0, 1):
                    r = arith.addi(row, _i32(8 * half))
                    offset = arith.addi(arith.muli(r, _i32(row_bytes)), arith.addi(_i32(2 * chunk_col), col_bytes))
                    # the 128B swizzle: the 16-byte chunk index XOR the row's bits 7-9 of the offset
                    swizzled = arith.xori(offset, arith.shli(arith.andi(arith.shrui(offset, _i32(7)), _i32(7)),
                                                             _i32(4)))
                    address = arith.addi(base, arith.addi(_i32((box - first_box) * 64 * row_bytes), swizzled))
                    pair = _pack16x2(values[4 * j + 2 * half], values[4 * j + 2 * half + 1], fmt)
                    llvm.inline_asm(None, [address, pair], "st.shared.b32 [$0], $1;", "r,r", has_side_effects=True)

        return mlir_types.void(acc, tile, desc, first, count), codegen

    typer.__doc__ = (f"The fragment as {'bfloat16' if fmt == 'bf16x2' else 'float16'} into the swizzled boxes of the "
                     f"C tile's map from ``tile``: as ``numba_tma.wgmma.{kind}`` (``desc``: a plain ``uint8`` array "
                     "is not checked).")
    return intrinsic(typer, kind)


def _map(typingctx, acc, fn, row, col, *args):
    """``numba_tma.wgmma.map`` is numba-cuda only: refused here, naming why."""
    raise OpArgumentError("numba_tma: wgmma.map: numba-cuda only: numba-cuda-mlir kernels cannot call a device "
                          "function from a numba_tma helper (map the registers in the kernel, in the layout of "
                          "wgmma.store, or compile the kernel with numba-cuda)")


HELPERS = {"store": _store("store"), "store_bf16": _store("store_bf16"), "store_f16": _store("store_f16"),
           "load": intrinsic(_load, "load"), "store_shared_bf16": _store_shared("store_shared_bf16"),
           "store_shared_f16": _store_shared("store_shared_f16"), "map": intrinsic(_map, "map")}
