"""Hopper warpgroup MMA (``wgmma``, sm_90a): a warpgroup (4 consecutive warps, 128 threads)
multiplies a 64 x K tile of A by a K x N tile of B, both read from shared memory through matrix
descriptors, into a 64 x N accumulator held as a register fragment: ``N / 2`` float32 (or int32)
per thread, a tuple the ops take and return.

Example::

    acc = wgmma.zeros(64)                               # 64 x 128 float32 accumulator fragment
    acc = wgmma.fence(acc)
    for k in range(4):                                  # the 4 K-steps of a 64-wide bf16 tile
        a = wgmma.descriptor(at(tiles_a, s), desc_a, k, 64 * warpgroup)    # this warpgroup's 64 rows
        b = wgmma.descriptor(at(tiles_b, s), desc_b, k, 0)
        acc = wgmma.mma_async(acc, a, b, 1)             # scale_d 1: acc + A @ B (0: A @ B)
    wgmma.commit_group()
    acc = wgmma.wait_group(0, acc)
    wgmma.store(acc, out, row0 + 64 * warpgroup, col0)  # thread (row, col) map: see store

The descriptor comes from the TMA map that filled the tile (its swizzle and box: the layout the
tile is in), so the map, the tile and the MMA cannot disagree.  ``fence`` and ``wait_group`` take
and return the accumulator so that no arithmetic on it is scheduled before the wait (CUTLASS's
``warpgroup_fence_operand``; no instruction of its own).  Fragment index ``4j + h`` of a thread
``t`` of the warpgroup (warp ``w = t // 32``, lane ``l = t % 32``) is element
``(16 w + l // 4 + 8 (h // 2), 8 j + 2 (l % 4) + h % 2)`` of the 64 x N tile.
"""

import weakref

from llvmlite import ir
from numba.core import cgutils
from numba.cuda import types
from numba.cuda.extending import intrinsic

from ..declarations import literal, omitted, reject
from ..errors import (A_FRAGMENT_COLUMNS, A_FRAGMENT_DTYPE, A_FRAGMENT_KK, FRAGMENT_FLOAT_ONLY, MAP_ACC_FLOAT, MAP_FN,
                      MASK_ACC_FLOAT)
from ..descriptors import matrix
from ..numba_cuda.internals import _intrinsic
from . import debug, matrix_descriptor
from ._core import (I32, REQUIRED, Const, Fragment, Int, IntTuple, OpArgumentError, PtxOp, Qualifier, Refusal,
                    Requirement, Sample, SharedArray, exported, shared_address)
from .hosts.llvm_emitter import LlvmEmitter
from .hosts.llvm_host import helper_codegen
from .tensor_map_type import as_map

SM90A = Requirement((9, 0), (8, 0), arch_specific=True, max_cc=(10, 0))   # wgmma: Hopper only
_ISA = "9.7.15 Asynchronous Warpgroup Level Matrix Instructions (wgmma)"

# (A, B) element types -> (PTX types, K of one instruction, accumulator dtype)
DTYPES = {
    "f16": (".f16.f16", 16, "float32"), "bf16": (".bf16.bf16", 16, "float32"), "tf32": (".tf32.tf32", 8, "float32"),
    "e4m3": (".e4m3.e4m3", 32, "float32"), "e5m2": (".e5m2.e5m2", 32, "float32"),
    "e4m3.e5m2": (".e4m3.e5m2", 32, "float32"), "e5m2.e4m3": (".e5m2.e4m3", 32, "float32"),
    "s8": (".s8.s8", 32, "int32"), "u8": (".u8.u8", 32, "int32"), "s8.u8": (".s8.u8", 32, "int32"),
    "u8.s8": (".u8.s8", 32, "int32"),
}
#: the element type of the map whose tiles each A/B type reads (one byte types: uint8 / int8 bits)
MAP_DTYPES = {"f16": ("float16",), "bf16": ("bfloat16", "uint16"), "tf32": ("float32",),
              "e4m3": ("uint8", "int8"), "e5m2": ("uint8", "int8"), "s8": ("int8", "uint8"), "u8": ("uint8", "int8")}
_N_FLOAT = tuple(range(8, 257, 8))
_N_INT = (8, 16, 24, *range(32, 257, 16))


# -- matrix descriptors ----------------------------------------------------------------------------

descriptor = PtxOp(
    "wgmma.descriptor", matrix_descriptor.TEMPLATE, matrix_descriptor.operands(),
    need=SM90A, returns=types.uint64, memory=False, check=matrix_descriptor.check("wgmma.descriptor"),
    fields=matrix_descriptor.fields("wgmma.descriptor", matrix.high_word),
    debug=matrix_descriptor.debug_checks("wgmma.descriptor"),
    doc_fields={"row_bytes": "ROW_BYTES", "hi": "SBO>>4 | SWIZZLE<<30"},
    doc="""The 64-bit shared-memory matrix descriptor of a K-major wgmma operand: the tile ``tile``
    (``at(ring, s)``) filled by the map ``desc``, from its ``row``-th row (a multiple of 8), at K
    step ``k`` (32 bytes each: 16 bf16, 8 tf32 or 32 fp8 elements, inside the swizzle
    span).  Its fields come from the map: the swizzle, the stride of 8 rows (8 x the row bytes),
    the start address, in 32-bit arithmetic.  The map's box rows must be one swizzle span (bf16
    with ``"128B"``: box ``(rows, 64)``), and the tile aligned to its 8-row atom (1024 bytes for
    ``"128B"``: ``SharedMemoryPlan.array(..., swizzle="128B")``).  Debug mode traps a misaligned
    tile, a run-time ``k`` outside the span and a run-time ``row`` not a multiple of 8 or past the
    tile; ``numba_tma.viz.wgmma_reads`` lists what an MMA reads through the descriptor.

    Example::

        a = wgmma.descriptor(at(tiles_a, s), desc_a, 2, 64 * warpgroup)
    """,
    samples=(Sample("out[0] = wgmma.descriptor(smem, desc, 1, 64)", "MOV", desc=("uint16", (64, 64), "128B"),
                    # the asm block's own registers are a, lo, hi
                    ptx=("mad.lo.u32 a, %r, 128, %r;", "mad.lo.u32 a, %r, 32, a;", "shr.u32 a, a, 4;",
                         "and.b32 a, a, 0x3fff;", "or.b32 lo, a, 0x10000;", "mov.b32 hi, 0x40000040;",
                         "mov.b64 %rd, {lo, hi};"),
                    isa="9.7.15.5.1 Matrix Descriptor Format; 9.7.9.8 mov"),),
    refusals=(Refusal("out[0] = wgmma.descriptor(smem, desc, 0, 0)",
                      "wgmma.descriptor: argument 'desc' must be a tiled map with swizzle '32B', '64B' or '128B'",
                      desc=("float32", (8, 32), "none")),
              Refusal("out[0] = wgmma.descriptor(smem, desc, 2, 0)",
                      "wgmma.descriptor: argument 'k' must be in [0, 2): a K step of 32 bytes inside the 64-byte",
                      desc=("uint16", (64, 32), "64B")),
              Refusal("out[0] = wgmma.descriptor(smem, desc, 0, 4)",
                      "wgmma.descriptor: argument 'row' must be a multiple of 8", desc=("uint16", (64, 64), "128B"))),
).intrinsic()


# -- the MMA and its groups ------------------------------------------------------------------------

_ACC = Fragment("acc", tuple(n // 2 for n in _N_FLOAT))


def _mma_check(acc=None, a=None, b=None, scale_d=None, dtype=None, trans_a=False, trans_b=False, negate_a=False,
               negate_b=False, op="wgmma.mma_async"):
    ptx, k, acc_dtype = DTYPES[dtype]
    if str(acc.dtype) != acc_dtype:
        raise reject(op, "acc", f"must hold {acc_dtype} accumulators for dtype={dtype!r} "
                     f"(wgmma.zeros(n{', numba.int32' if acc_dtype == 'int32' else ''}))", acc)
    if acc_dtype == "int32" and 2 * acc.count not in _N_INT:
        raise reject(op, "acc", "must have N / 2 registers for an N of the integer shapes (8, 16, 24, "
                     "32, 48, ... 256 in steps of 16)", acc)
    if (trans_a or trans_b) and dtype not in ("f16", "bf16"):
        raise reject(op, "trans_a" if trans_a else "trans_b", "must be False unless dtype is 'f16' or "
                     "'bf16' (the PTX has imm-trans only for 16-bit types; other types read K-major tiles)", True)
    if (negate_a or negate_b) and acc_dtype == "int32":
        raise reject(op, "negate_a" if negate_a else "negate_b", "must be False for integer types (the "
                     "PTX has no imm-scale for them)", True)


def _mma_fields(cc=None, acc=None, dtype=None, **_):
    return {"n": 2 * acc.count, "k": DTYPES[dtype][1], "d": "s32" if str(acc.dtype) == "int32" else "f32"}


def _mma_spell(dtype, trans_a, trans_b, negate_a, negate_b):
    ptx, _, acc_dtype = DTYPES[dtype]
    scales = "" if acc_dtype == "int32" else f", {-1 if negate_a else 1}, {-1 if negate_b else 1}"
    trans = f", {int(trans_a)}, {int(trans_b)}" if dtype in ("f16", "bf16") else ""
    return {"types": ptx, "imm": scales + trans}


descriptor_mn = PtxOp(
    "wgmma.descriptor_mn", matrix_descriptor.MN_TEMPLATE, matrix_descriptor.mn_operands(),
    need=SM90A, returns=types.uint64, memory=False, check=matrix_descriptor.mn_check("wgmma.descriptor_mn"),
    fields=matrix_descriptor.mn_fields("wgmma.descriptor_mn", matrix.high_word),
    debug=matrix_descriptor.mn_debug_checks("wgmma.descriptor_mn"),
    tlx=("cute make_gmma_desc<Major::MN>", "cute.nvgpu.warpgroup (OperandMajorMode.MN)"),
    doc_fields={"col_bytes": "BOX_BYTES/W", "k_bytes": "16*SPAN", "leading": "LBO>>4<<16",
                "hi": "SBO>>4 | SWIZZLE<<30"},
    doc="""The 64-bit shared-memory matrix descriptor of an MN-major 16-bit wgmma operand (``B``
    given K x N row-major, or ``A`` given K x M: ``mma_async(..., trans_b=True)`` /
    ``trans_a=True``): the tile ``tile`` filled by the map ``desc`` with boxes of (K rows, W) — W
    elements of MN one swizzle span wide (64 bf16 for ``"128B"``), box after box along MN — from
    MN element ``col`` (a multiple of W), at K step ``k`` (16 rows of the box each).  Its fields
    come from the map: the leading byte offset (one box's bytes: from W elements of MN to the
    next), the stride byte offset (8 rows: 8 x the span), the swizzle, the start address, in 32-bit
    arithmetic.  The tile aligned to its 8-row atom (1024 bytes for ``"128B"``).  Debug mode traps a
    misaligned tile, a run-time ``k`` past the box's rows and a run-time ``col`` not a multiple
    of W.

    Example::

        b = wgmma.descriptor_mn(at(tiles_b, s), desc_b, kk, 0)      # B tile: (64 K rows, 256 N) in 4 boxes
        acc = wgmma.mma_async(acc, a, b, 1, trans_b=True)
    """,
    samples=(Sample("out[0] = wgmma.descriptor_mn(smem, desc, 1, 64)", "MOV", desc=("uint16", (64, 64), "128B"),
                    # box (64 K rows, 64 N): 8192 bytes a box, 128 a K row; the asm's own registers a, lo, hi
                    ptx=("mad.lo.u32 a, %r, 128, %r;", "mad.lo.u32 a, %r, 2048, a;", "shr.u32 a, a, 4;",
                         "and.b32 a, a, 0x3fff;", "or.b32 lo, a, 0x2000000;", "mov.b32 hi, 0x40000040;",
                         "mov.b64 %rd, {lo, hi};"),
                    isa="9.7.15.5.1 Matrix Descriptor Format (MN-major canonical layouts); 9.7.9.8 mov"),),
    refusals=(Refusal("out[0] = wgmma.descriptor_mn(smem, desc, 0, 0)",
                      "wgmma.descriptor_mn: argument 'desc' must have 16-bit elements for an MN-major operand",
                      desc=("uint8", (64, 128), "128B")),
              Refusal("out[0] = wgmma.descriptor_mn(smem, desc, 4, 0)",
                      "wgmma.descriptor_mn: argument 'k' must be in [0, 4): a K step of 16 rows inside the box's 64 "
                      "K rows", desc=("uint16", (64, 64), "128B")),
              Refusal("out[0] = wgmma.descriptor_mn(smem, desc, 0, 32)",
                      "wgmma.descriptor_mn: argument 'col' must be a multiple of 64 (the box width",
                      desc=("uint16", (64, 64), "128B"))),
).intrinsic()

mma_async = PtxOp(
    "wgmma.mma_async",
    """{{
    .reg .pred p;
    setp.ne.b32 p, {scale_d}, 0;
    wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d}{types} {{{acc}}}, {a}, {b}, p{imm};
    }}""",
    (_ACC, Int("a", bits=64), Int("b", bits=64), Int("scale_d", bits=32)),
    qualifiers=(Qualifier("dtype", {d: "" for d in DTYPES}, "bf16"), Qualifier("trans_a", {False: "", True: ""}, False),
                Qualifier("trans_b", {False: "", True: ""}, False), Qualifier("negate_a", {False: "", True: ""}, False),
                Qualifier("negate_b", {False: "", True: ""}, False)),
    need=SM90A, tied="acc", check=_mma_check, fields=_mma_fields, spell=_mma_spell,
    doc_fields={"n": "N", "k": "K", "d": "f32"},
    tlx=("tlx.async_dot", "gluon warpgroup_mma", "cute.nvgpu.warpgroup.MmaF16BF16Op", "SM90_64x128x16_F32BF16BF16_SS"),
    doc="""``acc + A @ B`` (``acc`` ignored where ``scale_d`` is 0) for one warpgroup, issued
    asynchronously: A is 64 x K, B is K x N, in shared memory, named by descriptors
    (:func:`descriptor` for K-major tiles, :func:`descriptor_mn` for MN-major ones); N is
    ``2 * len(acc)``: 8 to 256 in steps of 8, and for s8/u8 8, 16, 24, then 32 to 256 in steps of
    16; K 16 (f16, bf16), 8 (tf32) or 32 (e4m3/e5m2, s8/u8).  ``dtype``: the A.B element types;
    ``trans_a`` / ``trans_b``: the tile is MN-major, for the 16-bit types only (f16, bf16);
    ``negate_a`` / ``negate_b``: the immediate scale -1, for the float types only (not s8/u8).
    An integer accumulator (``wgmma.zeros(n, numba.int32)``) leaves through its registers: see
    :func:`store` (float32 only) for the layout.
    The result is valid after ``commit_group()`` and ``wait_group(n, acc)``.  All 128 threads of
    the warpgroup call it together; ``fence(acc)`` before the first MMA that reads registers
    written otherwise.

    Example::

        acc = wgmma.mma_async(acc, a, b, 1)             # bf16 x bf16 -> f32, N = 2 * len(acc)
    """,
    samples=(Sample("acc = wgmma.mma_async(wgmma.zeros(64), wgmma.descriptor(smem, desc, 0, 0), "
                    "wgmma.descriptor(smem, desc, 0, 0), 0)\nout[0] = numba.uint64(acc[0] + acc[63])",
                    "HGMMA.64x128x16.F32", desc=("uint16", (64, 64), "128B"),   # .BF16 (f16: no suffix)
                    fields={"n": 128, "k": 16, "d": "f32"},
                    only={"dtype": ("bf16", "f16"), "trans_a": False, "trans_b": False, "negate_a": False,
                          "negate_b": False},
                    ptx=("setp.ne.b32 p, %r, 0;",      # p: the asm block's own predicate
                         "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f, %f, %f, %f, %f, %f, %f, %f, "
                         "%f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, "
                         "%f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f, "
                         "%f, %f, %f, %f, %f, %f, %f, %f, %f, %f}, %rd, %rd, p, 1, 1, 0, 0;"),
                    isa=_ISA + "; 9.7.15.5.2 wgmma.mma_async"),
             Sample("acc = wgmma.mma_async(wgmma.zeros(128), wgmma.descriptor(smem, desc, 1, 0), "
                    "wgmma.descriptor(smem, desc, 1, 0), 1)\nout[0] = numba.uint64(acc[5])",
                    "QGMMA.64x256x32.F32.E4M3.E4M3", desc=("uint8", (64, 128), "128B"),
                    fields={"n": 256, "k": 32, "d": "f32"},
                    only={"dtype": "e4m3", "trans_a": False, "trans_b": False, "negate_a": False, "negate_b": False},
                    ptx=("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {" + ", ".join(["%f"] * 128)
                         + "}, %rd, %rd, p, 1, 1;",),
                    isa=_ISA + "; 9.7.15.5.2 wgmma.mma_async")),
    refusals=(Refusal("acc = wgmma.zeros(64)\nacc = wgmma.mma_async(acc, 0, 0, 1, dtype='tf32', trans_b=True)",
                      "wgmma.mma_async: argument 'trans_b' must be False unless dtype is 'f16' or 'bf16'"),
              Refusal("acc = wgmma.mma_async((numba.float32(0), numba.float32(1)), 0, 0, 1)",
                      "wgmma.mma_async: argument 'acc' must be an accumulator fragment (wgmma.zeros(n))"),
              Refusal("acc = wgmma.zeros(64)\nacc = wgmma.mma_async(acc, 0, 0, 1, dtype='s8')",
                      "wgmma.mma_async: argument 'acc' must hold int32 accumulators for dtype='s8'")),
).intrinsic()

def _rs_check(acc=None, a=None, b=None, scale_d=None, dtype=None, trans_b=False, negate_a=False, negate_b=False):
    _mma_check(acc, a, b, scale_d, dtype, False, trans_b, negate_a, negate_b, op="wgmma.mma_async_rs")


def _rs_spell(dtype, trans_b, negate_a, negate_b):
    ptx, _, acc_dtype = DTYPES[dtype]
    scales = "" if acc_dtype == "int32" else f", {-1 if negate_a else 1}, {-1 if negate_b else 1}"
    return {"types": ptx, "imm": scales + (f", {int(trans_b)}" if dtype in ("f16", "bf16") else "")}


mma_async_rs = PtxOp(
    "wgmma.mma_async_rs",
    """{{
    .reg .pred p;
    setp.ne.b32 p, {scale_d}, 0;
    wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d}{types} {{{acc}}}, {{{a}}}, {b}, p{imm};
    }}""",
    (_ACC, IntTuple("a", (4,), range=(0, (1 << 32) - 1)), Int("b", bits=64), Int("scale_d", bits=32)),
    qualifiers=(Qualifier("dtype", {d: "" for d in DTYPES}, "bf16"), Qualifier("trans_b", {False: "", True: ""}, False),
                Qualifier("negate_a", {False: "", True: ""}, False), Qualifier("negate_b", {False: "", True: ""}, False)),
    need=SM90A, tied="acc", check=_rs_check, fields=_mma_fields, spell=_rs_spell,
    doc_fields={"n": "N", "k": "K", "d": "f32"},
    tlx=("SM90_64x128x16_F32BF16BF16_RS", "cute.nvgpu.warpgroup OperandSource.RMEM",
         "gluon warpgroup_mma (register a)", "tlx.async_dot (register a)"),
    doc="""``acc + A @ B`` for one warpgroup with A from registers (the RS form): as
    :func:`mma_async`, but ``a`` is this thread's four 32-bit registers of the 64 x K A tile —
    :func:`a_fragment` makes them from an accumulator, so that a product (attention's P) feeds
    the next MMA without a trip through shared memory.  Warp ``w`` holds rows ``16 w`` to
    ``16 w + 15``; lane ``l`` register ``i`` holds row ``16 w + l // 4 + 8 (i % 2)``, K elements
    from ``(K / 8) (l % 4) + (K / 2) (i // 2)``, ``4 / size`` of them, the lowest K in the low
    bits (mma.sync's A layout).  ``b`` is a descriptor (:func:`descriptor`, or
    :func:`descriptor_mn` with ``trans_b``: 16-bit types only); ``dtype``, ``negate_a``,
    ``negate_b``, ``scale_d`` as for :func:`mma_async`.  ``fence(acc)`` orders the registers' writes
    before the MMA reads them; the result is valid after ``commit_group()`` and ``wait_group``.

    Example::

        p = wgmma.a_fragment(acc, 1)                    # columns 16-31 of a float32 fragment, as bf16
        acc = wgmma.mma_async_rs(acc, p, b, 1)          # acc + P @ B, P from registers
    """,
    samples=(Sample("acc = wgmma.mma_async_rs(wgmma.zeros(64), (out[0], out[1], out[2], out[3]), "
                    "wgmma.descriptor(smem, desc, 0, 0), 0)\nout[4] = numba.uint64(acc[0] + acc[63])",
                    "HGMMA.64x128x16.F32", desc=("uint16", (64, 64), "128B"),
                    fields={"n": 128, "k": 16, "d": "f32"},
                    only={"dtype": ("bf16", "f16"), "trans_b": False, "negate_a": False, "negate_b": False},
                    ptx=("setp.ne.b32 p, %r, 0;",      # p: the asm block's own predicate
                         "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" + ", ".join(["%f"] * 64)
                         + "}, {%r, %r, %r, %r}, %rd, p, 1, 1, 0;"),
                    isa=_ISA + "; 9.7.15.5.2 wgmma.mma_async (register A)"),
             Sample("acc = wgmma.mma_async_rs(wgmma.zeros(96), (out[0], out[1], out[2], out[3]), "
                    "wgmma.descriptor(smem, desc, 1, 0), 1)\nout[4] = numba.uint64(acc[5])",
                    "QGMMA.64x192x32.F32.E4M3.E4M3", desc=("uint8", (64, 128), "128B"),
                    fields={"n": 192, "k": 32, "d": "f32"},
                    only={"dtype": "e4m3", "trans_b": False, "negate_a": False, "negate_b": False},
                    ptx=("wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 {" + ", ".join(["%f"] * 96)
                         + "}, {%r, %r, %r, %r}, %rd, p, 1, 1;",),
                    isa=_ISA + "; 9.7.15.5.2 wgmma.mma_async (register A)")),
    refusals=(Refusal("acc = wgmma.zeros(64)\nacc = wgmma.mma_async_rs(acc, (out[0], out[1]), 0, 1)",
                      "wgmma.mma_async_rs: argument 'a' must have 4 entries"),
              Refusal("acc = wgmma.zeros(64)\nacc = wgmma.mma_async_rs(acc, (out[0], out[1], out[2], out[3]), 0, 1, "
                      "dtype='e4m3', trans_b=True)",
                      "wgmma.mma_async_rs: argument 'trans_b' must be False unless dtype is 'f16' or 'bf16'"),
              Refusal("acc = wgmma.zeros(64)\nacc = wgmma.mma_async_rs(acc, (out[0], out[1], out[2], out[3]), 0, 1, "
                      "dtype='s8')", "wgmma.mma_async_rs: argument 'acc' must hold int32 accumulators for dtype='s8'")),
).intrinsic()

fence = PtxOp(
    "wgmma.fence", "wgmma.fence.sync.aligned;", (_ACC,), need=SM90A, tied="acc",
    tlx=("cute.nvgpu.warpgroup.fence", "warpgroup_arrive", "cuda::ptx::wgmma_fence"),
    doc="""Order the warpgroup's register and shared-memory writes before the wgmma that read them
    (before the first ``mma_async`` of a tile, and after the accumulator was touched by other
    instructions).  Takes and returns the accumulator, so the compiler keeps it in place.

    Example::

        acc = wgmma.fence(acc)
    """,
    samples=(Sample("acc = wgmma.fence(wgmma.zeros(4))\nout[0] = numba.uint64(acc[0])", "WARPGROUP.ARRIVE",
                    ptx="wgmma.fence.sync.aligned;", isa=_ISA + "; 9.7.15.5.3 wgmma.fence"),),
    refusals=(Refusal("wgmma.fence(1)", "wgmma.fence: argument 'acc' must be an accumulator fragment"),),
).intrinsic()

commit_group = PtxOp(
    "wgmma.commit_group", "wgmma.commit_group.sync.aligned;", need=SM90A,
    tlx=("cute.nvgpu.warpgroup.commit_group", "warpgroup_commit_batch", "cuda::ptx::wgmma_commit_group"),
    doc="""Close the warpgroup's wgmma issued since the last commit into one group (waited for by
    ``wait_group``).

    Example::

        wgmma.commit_group()
    """,
    samples=(Sample("acc = wgmma.mma_async(wgmma.zeros(4), 0, 0, 0)\nwgmma.commit_group()\n"
                    "out[0] = numba.uint64(acc[0])", "HGMMA.64x8x16.F32.BF16",
                    ptx="wgmma.commit_group.sync.aligned;", isa=_ISA + "; 9.7.15.5.4 wgmma.commit_group"),),
    refusals=(Refusal("wgmma.commit_group(0)", "numba_tma: wgmma.commit_group takes (): too many positional"),),
).intrinsic()

wait_group = PtxOp(
    "wgmma.wait_group", "wgmma.wait_group.sync.aligned {n};",
    (Const("n", 0, 7, rule="must be in [0, 7]: the wgmma groups left pending"), _ACC), need=SM90A, tied="acc",
    tlx=("cute.nvgpu.warpgroup.wait_group", "warpgroup_wait", "cuda::ptx::wgmma_wait_group"),
    doc="""Wait until at most ``n`` of the warpgroup's committed wgmma groups are pending; returns
    the accumulator (its registers are only valid after the wait that covers the MMA writing them).

    Example::

        acc = wgmma.wait_group(0, acc)
    """,
    samples=(Sample("acc = wgmma.mma_async(wgmma.zeros(4), 0, 0, 0)\nwgmma.commit_group()\n"
                    "acc = wgmma.wait_group(0, acc)\nout[0] = numba.uint64(acc[0])", "WARPGROUP.DEPBAR.LE",
                    ptx="wgmma.wait_group.sync.aligned 0;", isa=_ISA + "; 9.7.15.5.5 wgmma.wait_group"),),
    refusals=(Refusal("acc = wgmma.wait_group(8, wgmma.zeros(4))",
                      "wgmma.wait_group: argument 'n' must be in [0, 7]: the wgmma groups left pending"),),
).intrinsic()


# -- register reallocation between warpgroups -----------------------------------------------------

_NREG_RULE = "must be a multiple of 8 in [24, 256]"


def _check_setmaxnreg(n=None, action=None):
    if literal(n) % 8:
        raise reject("wgmma.setmaxnreg", "n", _NREG_RULE, literal(n))


setmaxnreg = PtxOp(
    "wgmma.setmaxnreg", "setmaxnreg{action}.sync.aligned.u32 {n};",
    (Const("n", 24, 256, rule=_NREG_RULE),),
    qualifiers=(Qualifier("action", {"dec": ".dec", "inc": ".inc"}, REQUIRED),),
    need=SM90A, check=_check_setmaxnreg,
    tlx=("cute.arch.warpgroup_reg_alloc", "cute.arch.warpgroup_reg_dealloc", "cutlass::arch::warpgroup_reg_alloc",
         "cuda::ptx::setmaxnreg_inc", "cuda::ptx::setmaxnreg_dec"),
    doc="""Set the warpgroup's registers per thread to ``n`` (a constant multiple of 8 in [24, 256]):
    ``action="dec"`` gives registers back to the block's pool (a producer warpgroup that only
    issues TMA), ``"inc"`` waits until the pool has them and takes them (the MMA warpgroups; the
    new registers' contents are undefined).  All 128 threads of the warpgroup call it together,
    with the same ``n``, and meet before another ``setmaxnreg``.

    ptxas keeps it only in a kernel compiled whole-program with a known register count at entry:
    numba_tma links a kernel that calls it with numba-cuda's LTO (its own ``inspect`` too), and the
    kernel must declare ``launch_bounds=(threads, min_blocks)`` (or ``max_registers`` without launch
    bounds); otherwise linking it raises :class:`numba_tma.errors.RegisterCountError` naming the
    rule (never a kernel without it).  The block's registers bound the sum: with
    ``launch_bounds=(384, 1)`` (168 per thread) a producer at 40 leaves two consumers 232.

    Example::

        @cuda.jit(launch_bounds=(384, 1))
        def kernel(desc_a, desc_b, out):
            if cuda.threadIdx.x // 128 == 0:
                wgmma.setmaxnreg(40, "dec")      # the producer
            else:
                wgmma.setmaxnreg(232, "inc")     # the two consumers
    """,
    samples=(Sample("wgmma.setmaxnreg(40)", "USETMAXREG", options={"launch_bounds": (384, 1)},
                    ptx="setmaxnreg.dec.sync.aligned.u32 40;", isa="9.7.19.5 setmaxnreg"),),
    refusals=(Refusal("wgmma.setmaxnreg(100, 'inc')", "wgmma.setmaxnreg: argument 'n' " + _NREG_RULE),
              Refusal("wgmma.setmaxnreg(16, 'dec')", "wgmma.setmaxnreg: argument 'n' " + _NREG_RULE),
              Refusal("wgmma.setmaxnreg(264, 'inc')", "wgmma.setmaxnreg: argument 'n' " + _NREG_RULE)),
).intrinsic()


# -- fragments: unrolled inside (Numba does not unroll a loop over a tuple) ------------------------------

def _count(op, count):
    value = literal(count)
    if not isinstance(value, int) or isinstance(value, bool) or value not in _ACC.lengths:
        raise OpArgumentError(f"numba_tma: {op}: argument 'count' must be a constant N / 2 for an N of 8 to "
                              f"256 in steps of 8 (4, 8, ... 128 registers): a literal or a module-level integer "
                              f"(Numba folds no expression such as BN // 2: compute it at module level); got {count}")
    return value


def zeros_type(count, dtype):
    """The fragment type of ``zeros(count, dtype)`` (``dtype`` a Numba type class, or omitted:
    float32), its arguments checked: the typing of every host's ``zeros``."""
    element = types.int32 if isinstance(dtype, types.NumberClass) and dtype.instance_type == types.int32 else \
        types.float32
    return types.UniTuple(element, _count("wgmma.zeros", count))


@_intrinsic(target="cuda", prefer_literal=True)
def zeros(typingctx, count, dtype=types.float32):
    """A zero accumulator fragment of ``count`` registers (``N / 2`` for a 64 x N tile) of float32
    (or ``numba.int32``, for integer MMA): no instruction (ptxas folds zeros into the first MMA).
    ``count`` is the fragment's length, part of its type, so a compile-time constant: a literal or
    a module-level integer (``ACC = BN // 2`` outside the kernel); an expression Numba does not
    fold (``BN // 2`` inside it, anything from an argument) is refused.

    Example::

        acc = wgmma.zeros(128)          # 64 x 256 float32

    PTX::

        (none: ``count`` zero registers, which ptxas folds into the first mma_async's RZ input)

    Requires sm_90a, PTX ISA 8.0 (the wgmma it feeds).
    """
    tuple_type = zeros_type(count, dtype)

    def codegen(context, builder, sig, args):
        zero = context.get_constant(tuple_type.dtype, 0)
        return context.make_tuple(builder, tuple_type, [zero] * tuple_type.count)

    return tuple_type(count, dtype) if not isinstance(dtype, types.Omitted) else tuple_type(count), codegen


def _fragment_coords(builder, row0, col0):
    """This thread's (row, col) of fragment element 0, from ``%tid.x`` (1-D blocks)."""
    fnty = ir.FunctionType(I32, [])
    tid = builder.call(ir.InlineAsm(fnty, "mov.u32 $0, %tid.x;", "=r"), [])
    t = builder.and_(tid, ir.Constant(I32, 127))
    warp, lane = builder.lshr(t, ir.Constant(I32, 5)), builder.and_(t, ir.Constant(I32, 31))
    row = builder.add(row0, builder.add(builder.shl(warp, ir.Constant(I32, 4)), builder.lshr(lane, ir.Constant(I32, 2))))
    col = builder.add(col0, builder.shl(builder.and_(lane, ir.Constant(I32, 3)), ir.Constant(I32, 1)))
    return row, col


def _tile_access(context, builder, aryty, ary, place_types, place, element):
    """For the 2-D array ``ary`` with the fragment's element 0 at ``place`` (row, col): this
    thread's (row, col) of that element, the array's rows and columns, and ``address(r, c)``, a
    pointer to element (r, c) of ``element`` type (32-bit index arithmetic)."""
    array = context.make_array(aryty)(context, builder, ary)
    r0, c0 = (context.cast(builder, v, t, types.int32) for v, t in zip(place, place_types))
    row, col = _fragment_coords(builder, r0, c0)
    rows, cols = (builder.trunc(v, I32) for v in cgutils.unpack_tuple(builder, array.shape, 2))
    pitch, step = (builder.trunc(v, I32) for v in cgutils.unpack_tuple(builder, array.strides, 2))
    base = builder.ptrtoint(array.data, ir.IntType(64))

    def address(r, c):
        offset = builder.add(builder.mul(r, pitch), builder.mul(c, step))
        return builder.inttoptr(builder.add(base, builder.sext(offset, ir.IntType(64))), element.as_pointer())

    return row, col, rows, cols, address


#: the 16-bit formats of the converting stores: ``cvt.rn.<format>.f32`` (``kind``'s suffix -> format)
PAIR_FORMATS = {"bf16": "bf16x2", "f16": "f16x2"}


def pair_cvt(fmt):
    """The PTX converting two float32 ``$1``, ``$2`` into one register ``$0`` of two 16-bit floats
    of ``fmt`` (``"bf16x2"`` or ``"f16x2"``), ``$1`` in the low half (``cvt d, a, b`` puts ``a`` in
    the upper half)."""
    return f"cvt.rn.{fmt}.f32 $0, $2, $1;"


def _pack16x2(builder, pair, fmt="bf16x2"):
    """Two float32 as one register of two 16-bit floats of ``fmt``, the first in the low half."""
    cvt = ir.InlineAsm(ir.FunctionType(I32, [ir.FloatType()] * 2), pair_cvt(fmt), "=r,f,f")
    return builder.call(cvt, pair)


def _bf16x2(builder, pair):
    """Two float32 as one register of two bfloat16, the first in the low half."""
    return _pack16x2(builder, pair, "bf16x2")


def _place_check(op, row, col):
    for name, ty in (("row", row), ("col", col)):
        if not isinstance(ty, (types.Integer, types.IntegerLiteral)):
            raise OpArgumentError(f"numba_tma: {op}: argument {name!r} must be an integer; got {ty}")


#: what ``wgmma.<kind>(acc, out, row, col)`` stores into: (out's element types, their words)
_STORE_OUT = {"store": ((types.float32,), "float32 array"),
              "store_bf16": ((types.uint16, types.int16), "uint16 or int16 array (bfloat16 bits)"),
              "store_f16": ((types.float16, types.uint16, types.int16), "float16 array (or uint16 / int16: float16 "
                            "bits)")}


def store_check(kind, acc, out, row, col):
    """Check the arguments of ``wgmma.<kind>(acc, out, row, col)`` (``kind``: ``"store"``,
    ``"store_bf16"`` or ``"store_f16"``; Numba types): every host's typing."""
    _ACC.check(f"wgmma.{kind}", acc)
    if acc.dtype != types.float32:
        raise OpArgumentError(f"numba_tma: wgmma.{kind}: argument 'acc' {FRAGMENT_FLOAT_ONLY}; got {acc}")
    want, words = _STORE_OUT[kind]
    if not (isinstance(out, types.Array) and out.ndim == 2 and out.dtype in want):
        raise OpArgumentError(f"numba_tma: wgmma.{kind}: argument 'out' must be a 2-D {words}; got {out}")
    _place_check(f"wgmma.{kind}", row, col)


def _store_codegen(kind):
    def typer(typingctx, acc, out, row, col):
        store_check(kind, acc, out, row, col)

        def codegen(context, builder, sig, args):
            accty, outty = sig.args[:2]
            values = args[0]
            element = ir.FloatType() if kind == "store" else ir.IntType(16)
            row, col, rows, cols, address = _tile_access(context, builder, outty, args[1], sig.args[2:], args[2:],
                                                         element)
            fmt = PAIR_FORMATS.get(kind.rpartition("_")[2]) if kind != "store" else None   # a converting store
            packed_pairs = fmt is not None and outty.layout == "C"   # one 32-bit store per pair

            for j in range(accty.count // 4):
                for half in (0, 1):
                    r = builder.add(row, ir.Constant(I32, 8 * half))
                    c = builder.add(col, ir.Constant(I32, 8 * j))
                    c1 = builder.add(c, ir.Constant(I32, 1))
                    pair = [builder.extract_value(values, 4 * j + 2 * half + e) for e in (0, 1)]
                    if fmt is not None:
                        packed = _pack16x2(builder, pair, fmt)
                        pair = [builder.trunc(packed, element), builder.trunc(builder.lshr(packed, ir.Constant(I32, 16)),
                                                                              element)]
                    inside = builder.and_(builder.icmp_signed("<", r, rows), builder.icmp_signed("<", c, cols))
                    with builder.if_then(inside, likely=True):
                        both = builder.icmp_signed("<", c1, cols)
                        if packed_pairs:     # one 32-bit store where the pair's address allows it (an odd row pitch does not)
                            at = address(r, c)
                            word = builder.icmp_unsigned("==", builder.and_(builder.ptrtoint(at, ir.IntType(64)),
                                                                            ir.Constant(ir.IntType(64), 3)),
                                                         ir.Constant(ir.IntType(64), 0))
                            with builder.if_else(builder.and_(both, word), likely=True) as (two, one):
                                with two:
                                    builder.store(packed, builder.bitcast(at, I32.as_pointer()))
                                with one:
                                    builder.store(pair[0], at)
                                    with builder.if_then(both):
                                        builder.store(pair[1], address(r, c1))
                        else:
                            builder.store(pair[0], address(r, c))
                            with builder.if_then(both, likely=True):
                                builder.store(pair[1], address(r, c1))
            return context.get_dummy_value()

        return types.none(acc, out, row, col), codegen
    typer.__name__ = kind
    return typer


store = intrinsic(_store_codegen("store"))
store.__doc__ = """Store a 64 x N float32 accumulator fragment into ``out`` (a 2-D float32 array or view) at
(``row``, ``col``), unrolled (one store per element pair), skipping elements outside ``out``:
ragged edges are never written.  All 128 threads of the warpgroup call it (1-D blocks: the
thread's place comes from ``threadIdx.x % 128``).  Register ``4j + h`` of thread ``t`` (warp
``w = t // 32``, lane ``l = t % 32``) is element ``(16 w + l // 4 + 8 (h // 2), 8 j + 2 (l % 4)
+ h % 2)`` of the 64 x N tile.  An int32 fragment (s8/u8 MMAs) is refused: store it register by
register in that layout (the second example; ``len(acc)`` is a constant, the loops unroll).

Example::

    wgmma.store(acc, out, row0 + 64 * warpgroup, col0)

Example::

    t = cuda.threadIdx.x % 128                  # acc_i32 = wgmma.zeros(64, numba.int32), then s8 MMAs
    w, l = t // 32, t % 32
    for j in range(len(acc_i32) // 4):
        for h in range(4):
            out_i32[row0 + 16 * w + l // 4 + 8 * (h // 2), col0 + 8 * j + 2 * (l % 4) + h % 2] = acc_i32[4 * j + h]

PTX::

    mov.u32 t, %tid.x;
    @inside st.global.f32 [out + (row * pitch + col * 4)], d(4j+2h);      // per element, unrolled

Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
"""
store_bf16 = intrinsic(_store_codegen("store_bf16"))
store_bf16.__doc__ = """As :func:`store`, converting each pair to bfloat16 (``cvt.rn.bf16x2.f32``)
into ``out``, a 2-D uint16 (or int16: a torch bfloat16 tensor's ``view(torch.int16)``) array
holding bfloat16 bits.

Example::

    wgmma.store_bf16(acc, out_bf16, row0 + 64 * warpgroup, col0)     # out_bf16: a 2-D uint16 array

PTX::

    cvt.rn.bf16x2.f32 pair, d(4j+2h+1), d(4j+2h);
    @inside st.global.b32 [out + (row * pitch + col * 2)], pair;         // per pair, unrolled

Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
"""
store_f16 = intrinsic(_store_codegen("store_f16"))
store_f16.__doc__ = """As :func:`store`, converting each pair to float16 (``cvt.rn.f16x2.f32``, round to
nearest even; beyond the float16 range: infinity) into ``out``, a 2-D float16 array (or uint16 /
int16: a torch float16 tensor's ``view(torch.int16)``, float16 bits).

Example::

    wgmma.store_f16(acc, out_f16, row0 + 64 * warpgroup, col0)         # out_f16: a 2-D float16 array

PTX::

    cvt.rn.f16x2.f32 pair, d(4j+2h+1), d(4j+2h);
    @inside st.global.b32 [out + (row * pitch + col * 2)], pair;         // per pair, unrolled

Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
"""


# -- a device function over the fragment: a GEMM's fused epilogue (unrolled, inlined) ------------

_INLINED = weakref.WeakKeyDictionary()   # a device function -> its twin compiled with forceinline=True


def inlined(dispatcher):
    """``dispatcher`` (a ``cuda.jit(device=True)`` function) if compiled with ``forceinline=True``,
    else its twin so compiled (the same Python function and options, cached per function): an
    ``alwaysinline`` function that NVVM inlines, so that no ``CALL`` reaches SASS (a call in a
    kernel makes ptxas serialise every wgmma, C7509)."""
    if dispatcher.targetoptions.get("forceinline"):
        return dispatcher
    twin = _INLINED.get(dispatcher)
    if twin is None:
        twin = _INLINED[dispatcher] = type(dispatcher)(dispatcher.py_func,
                                                       targetoptions={**dispatcher.targetoptions, "forceinline": True})
    return twin


def map_check(acc, fn, row, col):
    """Check the arguments of ``wgmma.map(acc, fn, row, col, ...)`` but ``fn``'s typing (Numba
    types): every host's."""
    _ACC.check("wgmma.map", acc)
    if acc.dtype != types.float32:
        raise reject("wgmma.map", "acc", MAP_ACC_FLOAT, acc)
    dispatcher = getattr(fn, "dispatcher", None) if isinstance(fn, types.Dispatcher) else None
    if dispatcher is None or not getattr(dispatcher, "targetoptions", {}).get("device"):
        raise reject("wgmma.map", "fn", MAP_FN, fn)
    _place_check("wgmma.map", row, col)
    return dispatcher


def map_signature(typingctx, fnty, argtys):
    """The signature of ``fn(float32, int32, int32, *argtys)`` (``fnty``: its Numba type), or
    ``wgmma.map``'s refusal: it does not type, or returns no number."""
    try:
        sig = typingctx.resolve_function_type(fnty, (types.float32, types.int32, types.int32, *argtys), {})
    except Exception as exc:          # a typing error inside fn: its own message, after the rule
        raise OpArgumentError(f"numba_tma: wgmma.map: argument 'fn' must accept (float32, int32, int32"
                              f"{''.join(', ' + str(t) for t in argtys)}) and return a number; {fnty} does not "
                              f"type: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
                              ) from exc
    if sig is None or not isinstance(sig.return_type, (types.Float, types.Integer, types.Boolean)):
        raise OpArgumentError(f"numba_tma: wgmma.map: argument 'fn' must accept (float32, int32, int32"
                              f"{''.join(', ' + str(t) for t in argtys)}) and return a number; got {fnty} returning "
                              f"{None if sig is None else sig.return_type}")
    return sig


@intrinsic
def map(typingctx, acc, fn, row, col, *args):       # noqa: A001 - the fragment's map, as wgmma.map
    """``acc`` with every float32 register ``v`` replaced by ``fn(v, r, c, *args)`` (converted to
    float32), where (``r``, ``c``) is the element's place, ``(row, col)`` plus its place in the 64 x
    N tile: ``(row + 16 w + l // 4 + 8 (h // 2), col + 8 j + 2 (l % 4) + h % 2)`` for register
    ``4j + h`` of thread ``t = threadIdx.x % 128`` (``w = t // 32``, ``l = t % 32``), the element
    :func:`store` writes it to (``r``, ``c``: int32) — a GEMM's fused epilogue (bias, activation,
    residual, a mask) in registers, before a store.  ``fn`` is a ``numba.cuda.jit(device=True)``
    function (a Python function or a kernel is refused); ``args``: anything Numba passes (arrays,
    scalars, tuples), the same for every register.  Unrolled, one call per register, each inlined:
    ``fn`` is compiled with ``forceinline=True`` (a twin of it if it was not), so the kernel has no
    ``CALL`` (which would make ptxas serialise every wgmma of the kernel).  Like :func:`store`,
    it reads no memory of its own: indexing ``args`` with (``r``, ``c``) past their ends is
    ``fn``'s to guard.  numba-cuda only (numba-cuda-mlir refuses it).

    Example::

        @cuda.jit(device=True)                            # map inlines it (forceinline)
        def bias_relu(v, r, c, bias, scale):              # bias: a 1 x N row, scale: a float
            return max(v + bias[0, c], 0.0) * scale

        @cuda.jit
        def epilogue(out, bias):
            acc = wgmma.load(out, 0, 0, 64)               # (the MMAs' 64 x 128 accumulator)
            acc = wgmma.map(acc, bias_relu, 0, 0, bias, 2.0)
            wgmma.store(acc, out, 0, 0)

    PTX::

        mov.u32 t, %tid.x;                       // the thread's place, once
        (fn's body, inlined: per register, unrolled, with its r and c)

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """
    dispatcher = map_check(acc, fn, row, col)
    twin = inlined(dispatcher)
    fnty = fn if twin is dispatcher else typingctx.resolve_value_type(twin)
    fsig = map_signature(typingctx, fnty, args)

    def codegen(context, builder, sig, values):
        accty = sig.args[0]
        impl = context.get_function(fnty, fsig)
        r0, c0 = (context.cast(builder, v, t, types.int32) for v, t in zip(values[2:4], sig.args[2:4]))
        row0, col0 = _fragment_coords(builder, r0, c0)
        star = sig.args[4]                                # *args: one tuple (Numba folds a star argument)
        extra = [context.cast(builder, v, t, want) for v, t, want in
                 zip(cgutils.unpack_tuple(builder, values[4], len(star)), star, fsig.args[3:])]
        out = []
        for i in range(accty.count):
            j, h = divmod(i, 4)
            r = builder.add(row0, ir.Constant(I32, 8 * (h // 2)))
            c = builder.add(col0, ir.Constant(I32, 8 * j + h % 2))
            v = context.cast(builder, builder.extract_value(values[0], i), types.float32, fsig.args[0])
            result = impl(builder, [v, context.cast(builder, r, types.int32, fsig.args[1]),
                                    context.cast(builder, c, types.int32, fsig.args[2]), *extra])
            out.append(context.cast(builder, result, fsig.return_type, types.float32))
        return context.make_tuple(builder, accty, out)

    return acc(acc, fn, row, col, types.StarArgTuple.from_types(args)), codegen


def scale_check(acc, factor):
    """Check the arguments of ``wgmma.scale`` (Numba types): every host's typing."""
    _ACC.check("wgmma.scale", acc)
    if str(acc.dtype) != "float32" or not isinstance(factor, (types.Float, types.Integer, types.IntegerLiteral)):
        raise OpArgumentError(f"numba_tma: wgmma.scale: arguments 'acc' and 'factor' must be a float32 fragment and a "
                              f"number; got {acc} and {factor}")


@intrinsic
def scale(typingctx, acc, factor):
    """``acc`` with every register multiplied by ``factor`` (a float; an fp8 GEMM's per-tensor
    ``scale_a * scale_b``), unrolled.

    Example::

        acc = wgmma.scale(acc, scale_a * scale_b)

    PTX::

        mul.f32 d(i), d(i), factor;          // per register, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment it scales).
    """
    scale_check(acc, factor)
    return acc(acc, factor), helper_codegen(lower_scale)


def lower_scale(host, tys, values):
    """``wgmma.scale``'s body on every host (:class:`.host.Host`)."""
    acc, factor = tys
    f = host.convert(values[1], factor, types.float32)
    return host.pack(acc, [host.fmul(v, f) for v, _ in host.items(values[0], acc)])


def add_check(acc, other):
    """Check the arguments of ``wgmma.add`` (Numba types): every host's typing."""
    _ACC.check("wgmma.add", acc)
    _ACC.check("wgmma.add", other)
    if acc != other or str(acc.dtype) != "float32":
        raise OpArgumentError(f"numba_tma: wgmma.add: arguments 'acc' and 'other' must be float32 fragments of one "
                              f"length (one 64 x N tile); got {acc} and {other}")


@intrinsic
def add(typingctx, acc, other):
    """``acc + other``, register by register (``add.rn.f32``, unrolled): two fragments of one shape.
    An fp8 GEMM's promotion: Hopper adds fp8 products into its accumulator with about 14 mantissa
    bits, so a kernel accumulates a few K steps into a fresh fragment (``scale_d`` 0 on its first
    MMA), waits for them and adds that fragment into a float32 total it never hands to wgmma.

    Example::

        part = wgmma.wait_group(0, part)
        total = wgmma.add(total, part)

    PTX::

        add.rn.f32 d(i), a(i), b(i);          // per register, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragments it adds).
    """
    add_check(acc, other)
    return acc(acc, other), helper_codegen(lower_add)


def lower_add(host, tys, values):
    """``wgmma.add``'s body on every host (:class:`.host.Host`)."""
    acc, other = tys
    pairs = zip(host.items(values[0], acc), host.items(values[1], other))
    return host.pack(acc, [host.float_asm("add.rn.f32 $0, $1, $2;", a, b) for (a, _), (b, _) in pairs])


A_FRAGMENT = types.UniTuple(types.uint32, 4)   # what a_fragment returns: mma_async_rs's ``a``


def a_fragment_check(acc, kk, dtype):
    """``(kk, dtype)`` of ``wgmma.a_fragment(acc, kk, dtype)`` (Numba types), its arguments
    checked: every host's typing."""
    op = "wgmma.a_fragment"
    _ACC.check(op, acc)
    if str(acc.dtype) != "float32":
        raise OpArgumentError(f"numba_tma: {op}: argument 'acc' must be a float32 fragment; got {acc}")
    kind = "bf16" if dtype is None or omitted(dtype) else literal(dtype)
    if kind not in A_FRAGMENT_COLUMNS:
        raise OpArgumentError(f"numba_tma: {op}: argument 'dtype' {A_FRAGMENT_DTYPE}; got {dtype}")
    cols = A_FRAGMENT_COLUMNS[kind]
    steps = 2 * acc.count // cols                # K steps in the 64 x N tile (N = 2 count)
    step = literal(kk)
    if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step < steps:
        raise OpArgumentError(f"numba_tma: {op}: argument 'kk' "
                              f"{A_FRAGMENT_KK.format(steps=steps, cols=cols, n=2 * acc.count)}; got {kk}")
    return step, kind


@_intrinsic(target="cuda", prefer_literal=True)
def a_fragment(typingctx, acc, kk, dtype=None):
    """K step ``kk`` of a float32 accumulator (a 64 x N tile) as the A fragment of
    :func:`mma_async_rs`: four registers of this thread, rounded to nearest even.  ``dtype``
    ``"bf16"`` (the default) or ``"f16"``: columns ``16 kk`` to ``16 kk + 15``, two values a
    register, no data leaving the thread — the accumulator's layout, pairs of columns, is the
    register A layout of 16-bit types: register ``i`` is fragment elements ``8 kk + 2 i`` (low
    half) and ``8 kk + 2 i + 1``.  ``"e4m3"`` or ``"e5m2"`` (saturating to the largest finite
    value; NaN stays NaN): columns ``32 kk`` to ``32 kk + 31``, four values a register — lane ``l``
    register ``i`` holds row ``l // 4 + 8 (i % 2)`` of its warp's 16, columns ``32 kk + 4 (l % 4) +
    16 (i // 2)`` and the next three, lowest byte first, which the accumulator spreads over the
    lane's quad: each register is two 32-bit shuffles within the quad and a byte permute (eight
    ``shfl.sync.idx`` a K step; all 32 lanes of the warp must call it together).  ``kk`` is a
    constant.  Attention's P (``exp2_rows`` of S) feeds the P @ V MMA this way, K step by K step.
    Convert every K step before the ``fence`` of the MMAs that read them: registers written
    between the fence and an MMA make ptxas serialise every wgmma of the kernel.

    Example::

        p = wgmma.a_fragment(acc, 0)                    # columns 0-15 as bf16: the A of K step 0

    PTX::

        cvt.rn.bf16x2.f32 a(i), d(8 kk + 2 i + 1), d(8 kk + 2 i);   // i = 0..3
        // e4m3: the quad's pairs, packed two chunks a word, gathered and byte-permuted
        cvt.rn.satfinite.e4m3x2.f32 p, d(16 kk + 4 c + 2 h + 1), d(16 kk + 4 c + 2 h);
        shfl.sync.idx.b32 x0, w(i), s0, 0x1f, 0xffffffff;   // and x1 from s1
        prmt.b32 a(i), x0, x1, sel;

    Requires sm_90a, PTX ISA 8.0 (the wgmma it feeds).
    """
    step, kind = a_fragment_check(acc, kk, dtype)

    def codegen(context, builder, sig, args):
        from .hosts.llvm_host import LlvmHost
        return lower_a_fragment(LlvmHost(context, builder), (sig.args[0], step, kind), args)

    return A_FRAGMENT(acc, kk, types.none if dtype is None else dtype), codegen


def lower_a_fragment(host, facts, values):
    """``wgmma.a_fragment``'s body on every host: ``facts`` = (the accumulator's type, kk, dtype)."""
    acc, step, kind = facts
    if kind in PAIR_FORMATS:
        registers = [v for v, _ in host.items(values[0], acc)][8 * step:8 * step + 8]
        cvt = pair_cvt(PAIR_FORMATS[kind])
        return host.pack(A_FRAGMENT, [host.instruction(cvt, [(registers[2 * i], "f"), (registers[2 * i + 1], "f")],
                                                       "=r", False) for i in range(4)])
    registers = [v for v, _ in host.items(values[0], acc)][16 * step:16 * step + 16]
    words = host.instruction_registers(fp8_pack_ptx(kind), [(r, "f") for r in registers], ["=r"] * 7, False,
                                       _FP8_PACKED)
    *w, s0, s1, sel = (v for v, _ in host.items(words, _FP8_PACKED))
    # the shuffles through the host's (convergent) shuffle: an inline asm is not, and a copy of one
    # moved into a branch would shuffle with lanes that are not there
    return host.pack(A_FRAGMENT, [host.instruction("prmt.b32 $0, $1, $2, $3;", [(host.shuffle_idx(w[i], s0), "r"),
                                                                             (host.shuffle_idx(w[i], s1), "r"),
                                                                             (sel, "r")], "=r", False)
                                  for i in range(4)])


_FP8_PACKED = types.UniTuple(types.uint32, 7)    # an fp8 K step's four words, the two lanes it reads, the selector


def fp8_pack_ptx(kind):
    """The PTX of one fp8 K step of ``a_fragment`` before its shuffles (``$0``-``$3`` the words
    this lane offers, ``$4`` and ``$5`` the lanes it takes them from, ``$6`` the ``prmt`` selector;
    ``$7``-``$22`` the step's 16 accumulator registers).  The accumulator gives lane ``l`` (``t = l %
    4``) in each 8-column chunk ``c`` of the step columns ``8 c + 2 t`` and ``+ 1`` of rows ``h =
    0`` (``l // 4``) and ``h = 1`` (``+ 8``): registers ``4 c + 2 h`` and ``+ 1``, packed into
    16-bit ``p[2 c + h]``.  A register ``i = 2 j + h`` needs columns ``16 j + 4 t`` to ``+ 3`` of
    row ``h``: the pairs of chunk ``2 j + t // 2`` of lanes ``s0 = 2 (t % 2)`` and ``s0 + 1`` of the
    quad.  Each lane offers ``w[i]`` = its pairs of chunks ``2 j`` (low) and ``2 j + 1`` (high),
    takes ``w[i]`` of ``s0`` and of ``s0 + 1`` (``shfl.sync.idx``) and keeps the halves of its chunk
    (``prmt`` selector ``0x5410`` for ``t < 2``, ``0x7632`` else)."""
    lines = [".reg .b16 %fq<8>;", ".reg .b32 %fl, %ft;", ".reg .pred %fup;"]
    for c in range(4):
        for h in range(2):
            lo = 7 + 4 * c + 2 * h
            lines.append(f"cvt.rn.satfinite.{kind}x2.f32 %fq{2 * c + h}, ${lo + 1}, ${lo};")
    for j in range(2):
        for h in range(2):
            lines.append(f"mov.b32 ${2 * j + h}, {{%fq{4 * j + h}, %fq{4 * j + 2 + h}}};")
    lines += ["mov.u32 %fl, %laneid;", "and.b32 $4, %fl, 1;", "shl.b32 $4, $4, 1;", "and.b32 %ft, %fl, 0x1c;",
              "or.b32 $4, $4, %ft;", "or.b32 $5, $4, 1;", "and.b32 %ft, %fl, 2;", "setp.ne.u32 %fup, %ft, 0;",
              "selp.b32 $6, 0x7632, 0x5410, %fup;"]
    return "{\n" + "\n".join(lines) + "\n}"


C_TILE_ROW_BYTES = 128   # the one C tile store_shared_bf16 / store_shared_f16 write: 16-bit, box (64, 64), "128B"


def store_shared_bf16_boxes(acc, tile, desc, first, count, row_bytes=None, op="wgmma.store_shared_bf16"):
    """``(first box, boxes, columns a box, row bytes)`` of ``store_shared_bf16(acc, tile, desc,
    first, count)`` (Numba types; ``op``: ``"wgmma.store_shared_f16"`` for that one), its
    arguments checked: every host's typing.  ``row_bytes``: given where the host's ``desc`` type
    does not say its layout (then ``desc`` is not checked)."""
    _ACC.check(op, acc)
    _STAGING.check(op, tile)
    if row_bytes is None:
        span, row_bytes = matrix_descriptor.layout_facts(op, desc)
        if desc.element_bits != 16 or span != 128 or desc.box[0] != 64:
            raise OpArgumentError(f"numba_tma: {op}: argument 'desc' must be a 16-bit map with box "
                                  f"(64, 64) and swizzle '128B' (the C tile a warpgroup stores); got {desc}")
    box_cols = row_bytes // 2
    if (2 * acc.count) % box_cols:
        raise OpArgumentError(f"numba_tma: {op}: argument 'acc' must cover whole boxes of "
                              f"{box_cols} columns; got {2 * acc.count} columns")
    total = 2 * acc.count // box_cols
    first_box = literal(first) if not isinstance(first, types.Omitted) else first.value
    n_boxes = literal(count) if not isinstance(count, types.Omitted) else count.value
    n_boxes = total - (first_box or 0) if n_boxes is None else n_boxes
    if not (isinstance(first_box, int) and isinstance(n_boxes, int) and 0 <= first_box and 1 <= n_boxes
            and first_box + n_boxes <= total):
        raise OpArgumentError(f"numba_tma: {op}: arguments 'first' and 'count' must be constants "
                              f"naming boxes of the fragment's {total}; got {first} and {count}")
    return first_box, n_boxes, box_cols, row_bytes


_STAGING = SharedArray("tile", what="the shared staging tile", contiguous=True, align=matrix.alignment(128),
                       why=matrix.STAGING_WHY)


def store_shared_bf16_checks(d, tilety, tile, n_boxes, box_bytes, op="wgmma.store_shared_bf16"):
    """Debug mode of ``store_shared_bf16`` / ``store_shared_f16`` (``op``; every host; ``d``: its
    :class:`.debug.Emitter`), as a PtxOp's: the staging tile in shared memory, aligned, holding the
    ``n_boxes`` boxes written."""
    _STAGING.debug_check(d, op, tilety, tile)
    if isinstance(tilety, types.Array):
        debug.check_at_least(d, op, "tile", d.array_bytes(tile, tilety), n_boxes * box_bytes,
                             f"the {n_boxes} boxes of {box_bytes} bytes it writes")


def _store_shared(kind):
    """``wgmma.<kind>`` (``"store_shared_bf16"`` or ``"store_shared_f16"``): one codegen, the
    pair's conversion (``cvt.rn.bf16x2.f32`` / ``cvt.rn.f16x2.f32``) its only difference."""
    op, fmt = f"wgmma.{kind}", PAIR_FORMATS[kind.rpartition("_")[2]]

    def typer(typingctx, acc, tile, desc, first=types.Omitted(0), count=types.Omitted(None)):
        first_box, n_boxes, box_cols, row_bytes = store_shared_bf16_boxes(acc, tile, as_map(desc), first, count,
                                                                          op=op)
        box_bytes = 64 * row_bytes

        def codegen(context, builder, sig, args):
            accty, tilety = sig.args[:2]
            values = args[0]
            if debug.STATE.on:
                store_shared_bf16_checks(LlvmEmitter(context, builder), tilety, args[1], n_boxes, box_bytes, op)
            base = shared_address(context, builder, tilety, args[1]) if isinstance(tilety, types.Array) else args[1]
            row, col = _fragment_coords(builder, ir.Constant(I32, 0), ir.Constant(I32, 0))
            col_bytes = builder.shl(col, ir.Constant(I32, 1))                # 16-bit elements
            st = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [I32, I32]), "st.shared.b32 [$0], $1;", "r,r",
                              side_effect=True)
            for j in range(first_box * box_cols // 8, (first_box + n_boxes) * box_cols // 8):
                box, chunk_col = divmod(8 * j, box_cols)          # 8 columns per j: 16 bytes, one chunk
                box -= first_box
                for half in (0, 1):
                    r = builder.add(row, ir.Constant(I32, 8 * half))
                    offset = builder.add(builder.mul(r, ir.Constant(I32, row_bytes)),
                                         builder.add(ir.Constant(I32, 2 * chunk_col), col_bytes))
                    # the 128B swizzle: the 16-byte chunk index XOR the row's bits 7-9 of the offset
                    swizzled = builder.xor(offset, builder.shl(builder.and_(builder.lshr(offset, ir.Constant(I32, 7)),
                                                                            ir.Constant(I32, 7)), ir.Constant(I32, 4)))
                    address = builder.add(base, builder.add(ir.Constant(I32, box * box_bytes), swizzled))
                    pair = [builder.extract_value(values, 4 * j + 2 * half + e) for e in (0, 1)]
                    builder.call(st, [address, _pack16x2(builder, pair, fmt)])
            return context.get_dummy_value()

        return types.none(acc, tile, desc, first, count), codegen

    typer.__name__ = kind
    return typer


store_shared_bf16 = _intrinsic(target="cuda", prefer_literal=True)(_store_shared("store_shared_bf16"))
store_shared_bf16.__doc__ = """Store a 64 x N float32 fragment as bfloat16 into shared memory laid out as the TMA map
``desc`` stores it from: ``N / box_cols`` consecutive boxes of ``desc``'s box (64 rows of one
128-byte swizzle span: box ``(64, 64)`` bf16, ``swizzle="128B"``) from ``tile`` (``at(ring, i)``),
each box in the map's swizzled layout, so that ``tma.store(desc, at(ring, i + b), ...)`` writes
box ``b`` (columns ``64 b`` to ``64 b + 63``) — the epilogue of a GEMM: one ``st.shared.b32``
per element pair (swizzled: no bank conflicts), unrolled; then ``fence.proxy_async()`` and a
barrier of the warpgroup before the store.  ``first`` / ``count`` (constants): only the
fragment's boxes ``first`` to ``first + count - 1``, into ``count`` boxes from ``tile`` (an
epilogue in rounds, through less shared memory).  ``tile`` must be 1024-byte aligned and hold
the ``count`` boxes: debug mode traps otherwise (an ``at()`` address: its alignment only).

Example::

    wgmma.store_shared_bf16(acc, at(tiles_c, 4 * half), desc_c)
    wgmma.store_shared_bf16(acc, at(tiles_c, 2 * half), desc_c, 2, 2)     # columns 128-255

PTX::

    cvt.rn.bf16x2.f32 pair, d(4j+2h+1), d(4j+2h);
    st.shared.b32 [tile + box * BOX_BYTES + swizzle(row * 128 + col * 2)], pair;   // unrolled

Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
"""
store_shared_f16 = _intrinsic(target="cuda", prefer_literal=True)(_store_shared("store_shared_f16"))
store_shared_f16.__doc__ = """As :func:`store_shared_bf16`, converting each pair to float16 (``cvt.rn.f16x2.f32``)
for a float16 map ``desc`` (16-bit elements, box ``(64, 64)``, ``swizzle="128B"``): the epilogue
of a GEMM whose C is float16, stored by ``tma.store(desc, at(ring, i + b), ...)``.  The same
``first`` / ``count`` rounds, the same alignment and debug checks.

Example::

    wgmma.store_shared_f16(acc, at(tiles_c, 4 * half), desc_c16)     # desc_c16: a float16 map
    wgmma.store_shared_f16(acc, at(tiles_c, 2 * half), desc_c16, 2, 2)   # columns 128-255

PTX::

    cvt.rn.f16x2.f32 pair, d(4j+2h+1), d(4j+2h);
    st.shared.b32 [tile + box * BOX_BYTES + swizzle(row * 128 + col * 2)], pair;   // unrolled

Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
"""


# -- fragment rows: an attention kernel's online softmax (unrolled, as above) ---------------------

_F32 = ir.FloatType()


def load_type(array, row, col, count):
    """The fragment type of ``wgmma.load(array, row, col, count)`` (Numba types), its arguments
    checked: every host's typing."""
    n = _count("wgmma.load", count)
    if not (isinstance(array, types.Array) and array.ndim == 2 and array.dtype == types.float32):
        raise reject("wgmma.load", "array", "must be a 2-D float32 array", array)
    _place_check("wgmma.load", row, col)
    return types.UniTuple(types.float32, n)


@_intrinsic(target="cuda", prefer_literal=True)
def load(typingctx, array, row, col, count):
    """A float32 fragment of ``count`` registers (a 64 x ``2 count`` tile) read from ``array`` (a
    2-D float32 array or view) at (``row``, ``col``): the reverse of :func:`store`, in the same
    layout (register ``4j + 2h + e`` of a thread is element ``(16 w + l // 4 + 8 h, 8 j +
    2 (l % 4) + e)``), unrolled; elements outside ``array`` read as 0.  All 128 threads of the
    warpgroup call it (1-D blocks: the place comes from ``threadIdx.x % 128``).  A bias or a
    mask tile, or a known tile to test the fragment ops with.

    Example::

        acc = wgmma.load(bias, row0 + 64 * warpgroup, col0, 64)      # 64 x 128 float32

    PTX::

        mov.u32 t, %tid.x;
        @inside ld.f32 d(4j+2h+e), [array + (row * pitch + col * 4)];   // else 0; per element, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """
    tuple_type = load_type(array, row, col, count)
    n = tuple_type.count

    def codegen(context, builder, sig, args):
        row0, col0, rows, cols, address = _tile_access(context, builder, sig.args[0], args[0], sig.args[1:3],
                                                       args[1:3], _F32)
        zero, values = ir.Constant(_F32, 0.0), []
        for i in range(n):
            j, h, e = i // 4, (i // 2) % 2, i % 2
            r, c = builder.add(row0, ir.Constant(I32, 8 * h)), builder.add(col0, ir.Constant(I32, 8 * j + e))
            inside = builder.and_(builder.icmp_signed("<", r, rows), builder.icmp_signed("<", c, cols))
            before = builder.basic_block
            with builder.if_then(inside, likely=True):
                loaded, then = builder.load(address(r, c)), builder.basic_block
            value = builder.phi(_F32)
            value.add_incoming(loaded, then)
            value.add_incoming(zero, before)
            values.append(value)
        return context.make_tuple(builder, tuple_type, values)

    return tuple_type(array, row, col, count), codegen


def _row_registers(count, h):
    """The registers of row ``h`` of a thread's fragment of ``count`` (``h`` 0: row ``16 w + l // 4``,
    1: eight rows below): ``4 j + 2 h + e``, in order of ``j``, then ``e``."""
    return [4 * j + 2 * h + e for j in range(count // 4) for e in (0, 1)]


def _tree(values, combine):
    """``values`` combined pairwise, level by level, an odd one out carried to the next level (the
    order the simulator's twins reproduce: a sum is the same to the bit; ``log2`` levels of
    independent instructions)."""
    while len(values) > 1:
        values = [combine(values[k], values[k + 1]) for k in range(0, len(values) - 1, 2)] + \
            values[len(values) - len(values) % 2:]
    return values[0]


def rows_check(op, acc, **scalars):
    """Check the arguments of the row operation ``wgmma.<op>(acc, *scalars)`` (Numba types; the
    scalars by name): every host's typing."""
    _ACC.check(f"wgmma.{op}", acc)
    if str(acc.dtype) != "float32":
        raise reject(f"wgmma.{op}", "acc", "must be a float32 fragment (row operations are for float accumulators; "
                     "an s8 / u8 MMA's are int32)", acc)
    for name, ty in scalars.items():
        if not isinstance(ty, types.Float):
            raise reject(f"wgmma.{op}", name, "must be a float (float32; a float64 is converted to float32)", ty)


ROWS = types.UniTuple(types.float32, 2)   # what a row reduction returns: a value per row


def lower_row_reduction(template):
    """The body of a row reduction (``row_max``, ``row_sum``) on every host (:class:`.host.Host`):
    ``template`` combines two float32 (``$0`` the result)."""
    def lower(host, tys, values):
        acc, = tys
        registers = [v for v, _ in host.items(values[0], acc)]

        def combine(a, b):
            return host.float_asm(template, a, b)

        rows = [_tree([registers[i] for i in _row_registers(acc.count, h)], combine) for h in (0, 1)]
        for lane_mask in (1, 2):           # the row's 4 lanes: with lane l ^ 1, then with l ^ 2
            rows = [combine(v, host.shuffle_xor(v, lane_mask)) for v in rows]
        return host.pack(ROWS, rows)
    return lower


ROW_REDUCTIONS = {"row_max": "max.f32 $0, $1, $2;", "row_sum": "add.rn.f32 $0, $1, $2;"}


def _row_reduction(kind):
    def typer(typingctx, acc):
        rows_check(kind, acc)
        return ROWS(acc), helper_codegen(lower_row_reduction(ROW_REDUCTIONS[kind]))

    typer.__name__ = kind
    return typer


row_max = intrinsic(_row_reduction("row_max"))
row_max.__doc__ = """``(m0, m1)``: the float32 maxima of the two rows of the 64 x N fragment ``acc``
this thread holds (``m0`` of row ``16 w + l // 4``, ``m1`` of the row 8 below), over all N
columns: the maximum of the thread's own registers of each row (a tree, unrolled), then across
the 4 lanes sharing the row (``shfl.sync.bfly`` with lane masks 1 and 2), so all 4 lanes hold
the row's maximum — an online softmax's running maximum.  All 32 lanes of each warp call it (the
shuffles are ``.sync`` with the full mask).  A NaN register is skipped (``max.f32``: the other
operand; the simulator: ``np.fmax``).

Example::

    m0, m1 = wgmma.row_max(scores)     # scores: the 64 x N scores of a Q @ K^T tile

PTX::

    max.f32 m, d(4j), d(4j+1);                       // per register of the row, a tree, unrolled
    shfl.sync.bfly.b32 o, m, 1, 0x1f, 0xffffffff;   // then lane masks 1 and 2
    max.f32 m, m, o;

Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout; ``shfl.sync``: sm_30, PTX ISA 6.0).
"""
row_sum = intrinsic(_row_reduction("row_sum"))
row_sum.__doc__ = """``(s0, s1)``: the float32 sums of the two rows of the 64 x N fragment ``acc``
this thread holds, as :func:`row_max` (the thread's registers of each row summed pairwise in a
tree, then across the row's 4 lanes with ``shfl.sync.bfly`` 1 and 2: all 4 lanes hold the same
bits) — an online softmax's running denominator.  ``add.rn`` is never fused with a multiply, so
the simulator's sums, in the same order, are the same to the bit.  All 32 lanes of each warp
call it.

Example::

    s0, s1 = wgmma.row_sum(p)          # p = wgmma.exp2_rows(scores, scale, m0, m1)

PTX::

    add.rn.f32 s, d(4j), d(4j+1);                    // per register of the row, a tree, unrolled
    shfl.sync.bfly.b32 o, s, 1, 0x1f, 0xffffffff;   // then lane masks 1 and 2
    add.rn.f32 s, s, o;

Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout; ``shfl.sync``: sm_30, PTX ISA 6.0).
"""


_EXP2 = "{\n.reg .f32 t;\nfma.rn.f32 t, $1, $2, $3;\nex2.approx.ftz.f32 $0, t;\n}"   # x * scale - m, then 2^t


@intrinsic
def exp2_rows(typingctx, acc, scale, m0, m1):
    """The fragment ``acc`` with every register ``x`` of row ``h`` (``m0``: the thread's row ``16 w
    + l // 4``, ``m1``: the row 8 below) replaced by ``exp2(x * scale - m_h)``: an ``fma.rn.f32``
    then ``ex2.approx.ftz.f32`` per register, unrolled — the online softmax's probabilities, with
    ``scale`` the softmax scale times ``log2(e)`` and ``m_h`` the row maximum times the same (from
    :func:`row_max`).  ``ex2.approx`` is within 2 ulp of the exact ``2^t`` (PTX ISA), and flushes
    subnormal results to 0 (``.ftz``).  The simulator computes ``x * scale - m_h`` in float64
    (where the product is exact) rounded to float32, as the fma rounds it, then ``np.exp2`` in
    float32 and the same flush: the GPU's results differ from it by up to 2 ulp, so compare
    them with a tolerance (``rtol=2**-21``).

    Example::

        p = wgmma.exp2_rows(scores, scale_log2e, m0 * scale_log2e, m1 * scale_log2e)

    PTX::

        neg.f32 n, m_h;                                   // per row
        fma.rn.f32 t, d(i), scale, n;                     // per register, unrolled
        ex2.approx.ftz.f32 d(i), t;

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """
    rows_check("exp2_rows", acc, scale=scale, m0=m0, m1=m1)
    return acc(acc, scale, m0, m1), helper_codegen(lower_exp2_rows)


def lower_exp2_rows(host, tys, values):
    """``wgmma.exp2_rows``'s body on every host (:class:`.host.Host`)."""
    acc = tys[0]
    registers = [v for v, _ in host.items(values[0], acc)]
    s, *ms = (host.convert(v, t, types.float32) for v, t in zip(values[1:], tys[1:]))
    for h, m in enumerate(ms):
        minus = host.float_asm("neg.f32 $0, $1;", m)
        for i in _row_registers(acc.count, h):
            registers[i] = host.float_asm(_EXP2, registers[i], s, minus)
    return host.pack(acc, registers)


@intrinsic
def scale_rows(typingctx, acc, f0, f1):
    """The fragment ``acc`` with the registers of row ``h`` multiplied by ``f_h`` (``f0``: the
    thread's row ``16 w + l // 4``, ``f1``: the row 8 below), unrolled: the online softmax's
    rescale of the output accumulator by ``exp2(m_old - m_new)`` of each row.  ``mul.rn`` is
    never fused into an ``fma``: the simulator's products are the same to the bit.

    Example::

        o = wgmma.scale_rows(o, alpha0, alpha1)

    PTX::

        mul.rn.f32 d(i), d(i), f_h;          // per register, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment it scales).
    """
    rows_check("scale_rows", acc, f0=f0, f1=f1)
    return acc(acc, f0, f1), helper_codegen(lower_scale_rows)


def lower_scale_rows(host, tys, values):
    """``wgmma.scale_rows``'s body on every host (:class:`.host.Host`)."""
    acc = tys[0]
    registers = [v for v, _ in host.items(values[0], acc)]
    for h, (f, t) in enumerate(zip(values[1:], tys[1:])):
        f = host.convert(f, t, types.float32)
        for i in _row_registers(acc.count, h):
            registers[i] = host.float_asm("mul.rn.f32 $0, $1, $2;", registers[i], f)
    return host.pack(acc, registers)


def mask_check(acc, row, col, cols, diagonal, value):
    """Check the arguments of ``wgmma.mask`` (Numba types): every host's typing."""
    _ACC.check("wgmma.mask", acc)
    if str(acc.dtype) != "float32":
        raise reject("wgmma.mask", "acc", MASK_ACC_FLOAT, acc)
    for name, ty in (("row", row), ("col", col), ("cols", cols), ("diagonal", diagonal)):
        if not isinstance(ty, (types.Integer, types.IntegerLiteral)):
            raise reject("wgmma.mask", name, "must be an integer (a row or column of the whole matrix)", ty)
    if not isinstance(value, (types.Float, types.Integer, types.IntegerLiteral)):
        raise reject("wgmma.mask", "value", "must be a number (what a masked element becomes: -inf for scores)", value)


#: this thread's first column of the fragment, c0 = col + 2 (l % 4); then c0 minus its first row,
#: row + 16 w + l // 4 (reading c0: the two in this order on every host)
_MASK_COL = "{ .reg .u32 t; mov.u32 t, %tid.x; and.b32 t, t, 3; shl.b32 t, t, 1; add.s32 $0, $1, t; }"
_MASK_DIFF = ("{ .reg .u32 t, w; mov.u32 t, %tid.x; and.b32 t, t, 127; shr.u32 w, t, 5; shl.b32 w, w, 4; "
              "and.b32 t, t, 31; shr.u32 t, t, 2; add.s32 t, t, w; add.s32 t, t, $2; sub.s32 $0, $1, t; }")
#: one element: its column ($2 + DC) at or past ``cols`` ($3), or past the diagonal (column minus
#: row, $4 + DC - DR, greater than ``diagonal``, $5), takes ``value`` ($6)
_MASK_ELEMENT = ("{{ .reg .pred p; .reg .s32 t; add.s32 t, $2, {dc}; setp.ge.s32 p, t, $3; add.s32 t, $4, {diff}; "
                 "setp.gt.or.s32 p, t, $5, p; selp.f32 $0, $6, $1, p; }}")


@intrinsic
def mask(typingctx, acc, row, col, cols, diagonal, value):
    """The fragment ``acc`` of the 64 x N tile whose element (0, 0) is (``row``, ``col``) of a
    whole matrix, with every element (R, C) where ``C >= cols`` or ``C - R > diagonal`` replaced
    by ``value``: attention's masks on the scores before the softmax — the keys past the sequence's
    end (``cols``: its length) and, causal, the keys after the query (``diagonal`` 0; ``seqlen_k -
    seqlen_q`` for the bottom-right alignment of unequal lengths; ``cols`` or more: no causal mask).
    Branch-free, unrolled: two integer adds, two compares and a select an element.

    Example::

        scores = wgmma.mask(scores, 16, 0, 100, 0, -math.inf)     # causal, keys 100 and on masked

    PTX::

        add.s32 t, c0, DC(i);  setp.ge.s32 p, t, cols;          // per register, unrolled
        add.s32 t, c0 - r0, DC(i) - DR(i);  setp.gt.or.s32 p, t, diagonal, p;
        selp.f32 d(i), value, d(i), p;

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """
    mask_check(acc, row, col, cols, diagonal, value)
    return acc(acc, row, col, cols, diagonal, value), helper_codegen(lower_mask)


def lower_mask(host, tys, values):
    """``wgmma.mask``'s body on every host (:class:`.host.Host`)."""
    acc = tys[0]
    row, col, cols, diagonal = (host.convert(v, t, types.int32) for v, t in zip(values[1:5], tys[1:5]))
    fill = host.convert(values[5], tys[5], types.float32)
    c0 = host.instruction(_MASK_COL, [(col, "r")], "=r", False)
    diff = host.instruction(_MASK_DIFF, [(c0, "r"), (row, "r")], "=r", False)
    registers = []
    for i, (v, _) in enumerate(host.items(values[0], acc)):
        dr, dc = 8 * ((i // 2) % 2), 8 * (i // 4) + i % 2
        text = _MASK_ELEMENT.format(dc=dc, diff=dc - dr)
        registers.append(host.instruction(text, [(v, "f"), (c0, "r"), (cols, "r"), (diff, "r"), (diagonal, "r"),
                                                 (fill, "f")], "=f", False))
    return host.pack(acc, registers)


HELPERS = ("zeros", "scale", "add", "map", "store", "store_bf16", "store_f16", "store_shared_bf16", "store_shared_f16",
           "load", "row_max", "row_sum", "exp2_rows", "scale_rows", "a_fragment", "mask")   # public, not PTX declarations
#: What the instructions and the anchors call the fragment helpers (``numba_tma.catalog.find`` reads
#: it): ``{our name: (instructions and the anchors' names, what it is)}``.
ANCHOR_NAMES = {
    "wgmma.zeros": (("cute partition_fragment_C", "tl.zeros"), "a zeroed accumulator fragment"),
    "wgmma.scale": (("mul.f32",), "the fragment times a number"),
    "wgmma.add": (("add.rn.f32",), "two fragments added (an fp8 GEMM's promotion)"),
    "wgmma.map": (("CUTLASS epilogue visitor tree", "cute.nvgpu epilogue", "gluon elementwise"),
                  "a device function applied to every element with its (row, col): a fused epilogue"),
    "wgmma.store": (("st.global.f32", "cute copy (partition_C)"), "the fragment into a float32 array"),
    "wgmma.store_bf16": (("cvt.rn.bf16x2.f32", "st.global.b32"), "the fragment into an array as bfloat16"),
    "wgmma.store_f16": (("cvt.rn.f16x2.f32", "st.global.b32"), "the fragment into an array as float16"),
    "wgmma.store_shared_bf16": (("cvt.rn.bf16x2.f32", "st.shared.b32", "tma store epilogue"),
                                "the fragment as bfloat16 into a TMA map's swizzled shared boxes"),
    "wgmma.store_shared_f16": (("cvt.rn.f16x2.f32", "st.shared.b32", "tma store epilogue"),
                               "the fragment as float16 into a TMA map's swizzled shared boxes"),
    "wgmma.load": (("ld.global.f32",), "a fragment read from a float32 array"),
    "wgmma.row_max": (("max.f32", "shfl.sync.bfly", "tl.max"), "each row's maximum (an online softmax)"),
    "wgmma.row_sum": (("add.rn.f32", "shfl.sync.bfly", "tl.sum"), "each row's sum (an online softmax)"),
    "wgmma.exp2_rows": (("ex2.approx.f32", "tl.exp2"), "2 ** (scale v - row max) per element (an online softmax)"),
    "wgmma.scale_rows": (("mul.rn.f32",), "each row times its own number (an online softmax's rescale)"),
    "wgmma.a_fragment": (("cvt.rn.bf16x2.f32", "cvt.rn.satfinite.e4m3x2.f32", "shfl.sync.idx", "prmt.b32",
                          "cute make_fragment_A (RS)", "FA3 P in registers", "FA3 permute_Aregs_fp8"),
                         "K step kk of an accumulator as the register A of mma_async_rs"),
    "wgmma.mask": (("selp.f32", "FA3 Mask (causal, seqlen_k)", "tl.where (causal mask)"),
                   "scores past the keys' end or the causal diagonal set to a value (-inf)"),
}
__all__ = exported("wgmma") + list(HELPERS)
