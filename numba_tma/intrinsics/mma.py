"""Warp-level MMA (``mma.sync``, sm_80+) and the shared-memory matrix moves that feed and drain
it (``ldmatrix``, sm_75+; ``stmatrix``, sm_90): a warp multiplies a 16 x K tile of A by a K x 8
tile of B into a 16 x 8 accumulator, four float32 (or int32) registers per lane.

Example::

    a = mma.ldmatrix(at(tile_a, row), 4)          # 16 x 16 bf16: four 8 x 8 matrices, 4 registers
    b = mma.ldmatrix(at(tile_b, row), 2)          # 16 x 8 (B stored N x K, K-major)
    acc = mma.sync(acc, a, b)                     # m16n8k16 bf16 x bf16 -> f32

Fragment layouts (lane ``l``: group ``g = l // 4``, ``t = l % 4``; a 32-bit register holds 2
16-bit or 4 8-bit elements, the lowest first).  m16n8k16: A registers ``a0..a3`` hold A[g][2t:2t+2],
A[g+8][2t:2t+2], A[g][2t+8:2t+10], A[g+8][2t+8:2t+10]; B registers ``b0, b1`` hold B[2t:2t+2][g],
B[2t+8:2t+10][g]; the accumulator D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1].  m16n8k8 (tf32,
one element per register): A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]; B[t][g], B[t+4][g].
m16n8k32 (8-bit): A[g][4t:4t+4], A[g+8][4t:4t+4], A[g][4t+16:4t+20], A[g+8][4t+16:4t+20];
B[4t:4t+4][g], B[4t+16:4t+20][g].  ``ldmatrix(tile, n)``: lane ``l`` gives the address of row
``l % 8`` of matrix ``l // 8``; register ``i`` of lane ``l`` holds row ``l // 4``, elements
``2 (l % 4)`` and ``2 (l % 4) + 1`` of matrix ``i`` (``trans``: column ``l // 4``, rows
``2 (l % 4)`` and ``+ 1``).  ``stmatrix`` writes the same layout back.
"""

import numba

from ._core import (Choice, Fragment, IntTuple, PtxOp, Qualifier, Refusal, Requirement, Sample, SharedArray,
                    exported)

SM80 = Requirement((8, 0), (7, 0))
SM89_FP8 = Requirement((8, 9), (8, 4))
_ISA = "9.7.14 Warp Level Matrix Multiply-Accumulate Instructions"

# dtype -> (K, PTX A.B types, accumulator dtype, need beyond sm_80)
DTYPES = {"bf16": (16, ".bf16.bf16", "float32", None), "f16": (16, ".f16.f16", "float32", None),
          "tf32": (8, ".tf32.tf32", "float32", None), "e4m3": (32, ".e4m3.e4m3", "float32", SM89_FP8),
          "e5m2": (32, ".e5m2.e5m2", "float32", SM89_FP8), "s8": (32, ".s8.s8", "int32", None),
          "u8": (32, ".u8.u8", "int32", None)}


def _sync_check(acc=None, a=None, b=None, dtype=None):
    want = DTYPES[dtype][2]
    if str(acc.dtype) != want:
        from ..declarations import reject

        raise reject("mma.sync", "acc", f"must hold {want} accumulators for dtype={dtype!r}", acc)


def _sync_spell(dtype):
    k, ptx, acc_dtype, _ = DTYPES[dtype]
    d = "s32" if acc_dtype == "int32" else "f32"
    return {"k": k, "types": f".{d}{ptx}.{d}"}


sync = PtxOp(
    "mma.sync", "mma.sync.aligned.m16n8k{k}.row.col{types} {{{acc}}}, {{{a}}}, {{{b}}}, {{{acc}}};",
    (Fragment("acc", (4,), what="a 16 x 8 accumulator: four registers per lane (mma.zeros())"),
     IntTuple("a", (4,), range=(0, (1 << 32) - 1)), IntTuple("b", (2,), range=(0, (1 << 32) - 1))),
    qualifiers=(Qualifier("dtype", {d: Choice("", need) for d, (_, _, _, need) in DTYPES.items()}, "bf16"),),
    need=SM80, tied="acc", check=_sync_check, spell=_sync_spell,
    tlx=("cute.nvgpu.warp.MmaF16BF16Op", "SM80_16x8x16_F32BF16BF16F32_TN", "tl.dot (mma.sync path)"),
    doc="""``acc + A @ B`` for one warp: A 16 x K (row-major fragments), B K x 8 (column-major
    fragments), K 16 (bf16, f16), 8 (tf32) or 32 (e4m3/e5m2 from sm_89, s8/u8); ``a`` four and
    ``b`` two 32-bit registers per lane (``ldmatrix`` loads them), ``acc`` four float32 (int32 for
    s8/u8), returned updated.  All 32 lanes call it together.

    Example::

        acc = mma.sync(acc, a, b)                 # m16n8k16 bf16 x bf16 -> f32
    """,
    samples=(Sample("acc = mma.sync(mma.zeros(), (out[0], out[1], out[2], out[3]), (out[4], out[5]))\n"
                    "out[6] = numba.uint64(acc[0] + acc[3])", "HMMA.16816.F32",
                    only={"dtype": ("bf16", "f16")},
                    ptx="mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f, %f, %f, %f}, {%r, %r, %r, %r}, "
                        "{%r, %r}, {%f, %f, %f, %f};",
                    isa=_ISA + "; 9.7.14.5.14 mma (m16n8k16)"),),
    refusals=(Refusal("acc = mma.sync(mma.zeros(), (out[0], out[1]), (out[4], out[5]))",
                      "mma.sync: argument 'a' must have 4 entries"),
              Refusal("acc = mma.sync(mma.zeros(), (out[0], out[1], out[2], out[3]), (out[4], out[5]), dtype='s8')",
                      "mma.sync: argument 'acc' must hold int32 accumulators for dtype='s8'")),
).intrinsic()


_COUNTS = {1: ".x1", 2: ".x2", 4: ".x4"}
_TRANS = {False: "", True: ".trans"}

ldmatrix = PtxOp(
    "mma.ldmatrix", "ldmatrix.sync.aligned.m8n8{count}{trans}.shared.b16 {{{out}}}, [{tile}];",
    (SharedArray("tile", what="this lane's row of an 8 x 8 matrix of 16-bit elements in shared memory"),),
    qualifiers=(Qualifier("count", _COUNTS, 4), Qualifier("trans", _TRANS, False)),
    need=Requirement((7, 5), (6, 5)), returns_regs=lambda count, trans: count,
    tlx=("cute.nvgpu.warp.LdMatrix8x8x16bOp", "SM75_U32x4_LDSM_N", "cuda::ptx::ldmatrix"),
    doc="""Load ``count`` (1, 2 or 4) 8 x 8 matrices of 16-bit elements from shared memory into
    ``count`` registers per lane, in the mma.sync fragment layout (``trans``: transposed).  Lane
    ``l`` passes the address of row ``l % 8`` of matrix ``l // 8`` (``at(tile, row)``); all 32
    lanes call it together.  Returns a tuple of ``count`` uint32.

    Example::

        a = mma.ldmatrix(at(tile_a, lane % 16), 4)
    """,
    samples=(Sample("r = mma.ldmatrix(smem[cuda.threadIdx.x * 8:])\nout[0] = r[0] + r[3]", "LDSM.16.M88.4",
                    only={"count": 4, "trans": False},
                    ptx="ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r, %r, %r, %r}, [%r];",
                    isa=_ISA + "; 9.7.14.5.15 ldmatrix"),),
    refusals=(Refusal("r = mma.ldmatrix(smem, 3)", "mma.ldmatrix: argument 'count' must be a constant, one of 1, 2, 4"),),
).intrinsic()

stmatrix = PtxOp(
    "mma.stmatrix", "stmatrix.sync.aligned.m8n8{count}{trans}.shared.b16 [{tile}], {{{regs}}};",
    (SharedArray("tile", what="this lane's row of an 8 x 8 matrix of 16-bit elements in shared memory"),
     IntTuple("regs", (1, 2, 4), range=(0, (1 << 32) - 1))),
    qualifiers=(Qualifier("trans", _TRANS, False),),
    need=Requirement((9, 0), (7, 8)),
    fields=lambda cc=None, regs=None, **_: {"count": _COUNTS[len(regs)]},
    doc_fields={"count": ".xN"},
    tlx=("cute.nvgpu.warp.StMatrix8x8x16bOp", "SM90_U32x4_STSM_N", "cuda::ptx::stmatrix"),
    doc="""Store ``len(regs)`` (1, 2 or 4) 8 x 8 matrices of 16-bit elements from registers in the
    mma.sync fragment layout into shared memory (``trans``: transposed); lane ``l`` passes the
    address of row ``l % 8`` of matrix ``l // 8``.  All 32 lanes call it together.

    Example::

        mma.stmatrix(at(tile_c, lane % 16), (c01, c23, c45, c67))
    """,
    samples=(Sample("mma.stmatrix(smem[cuda.threadIdx.x * 8:], (out[0], out[1], out[2], out[3]))", "STSM.16",
                    # STSM.16.M88.4; trans=True: STSM.16.MT88.4
                    fields={"count": ".x4"},
                    ptx="stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r], {%r, %r, %r, %r};",
                    isa=_ISA + "; 9.7.14.5.16 stmatrix"),),
    refusals=(Refusal("mma.stmatrix(smem, (out[0], out[1], out[2]))",
                      "mma.stmatrix: argument 'regs' must have 1 to 4 entries"),),
).intrinsic()


def zeros():
    """A zero 16 x 8 float32 accumulator: four registers (no instruction).

    Example::

        acc = mma.zeros()

    PTX::

        (none: four zero registers)

    Requires sm_80 or newer, PTX ISA 7.0 (the mma.sync it feeds).
    """
    raise RuntimeError("numba_tma.mma.zeros runs inside @cuda.jit kernels")


def _zeros_overload():
    from numba.cuda.extending import overload

    @overload(zeros, target="cuda")
    def _zeros():
        return lambda: (numba.float32(0), numba.float32(0), numba.float32(0), numba.float32(0))


_zeros_overload()

HELPERS = ("zeros",)   # public, not PTX declarations
__all__ = exported("mma") + list(HELPERS)
