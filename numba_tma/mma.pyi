"""Warp-level MMA (``mma.sync``, sm_80+) and the shared-memory matrix moves that feed and drain
it (``ldmatrix``, sm_75+; ``stmatrix``, sm_90): a warp multiplies a 16 x K tile of A by a K x 8
tile of B into a 16 x 8 accumulator, four float32 (or int32) registers per lane.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used

def ldmatrix(tile: SharedArray, count: Literal[1, 2, 4] = 4, trans: Literal[False, True] = False) -> tuple:
    """Load ``count`` (1, 2 or 4) 8 x 8 matrices of 16-bit elements from shared memory into
    ``count`` registers per lane, in the mma.sync fragment layout (``trans``: transposed).  Lane
    ``l`` passes the address of row ``l % 8`` of matrix ``l // 8`` (``at(tile, row)``); all 32
    lanes call it together.  Returns a tuple of ``count`` uint32.

    Example::

        a = mma.ldmatrix(at(tile_a, lane % 16), 4)

    PTX::

        ldmatrix.sync.aligned.m8n8.x4.shared.b16 {out}, [tile];

    Requires sm_75 or newer, PTX ISA 6.5.

    Also known as: ``cute.nvgpu.warp.LdMatrix8x8x16bOp``, ``SM75_U32x4_LDSM_N``, ``cuda::ptx::ldmatrix``.
    """


def stmatrix(tile: SharedArray, regs: tuple[int, ...], trans: Literal[False, True] = False) -> None:
    """Store ``len(regs)`` (1, 2 or 4) 8 x 8 matrices of 16-bit elements from registers in the
    mma.sync fragment layout into shared memory (``trans``: transposed); lane ``l`` passes the
    address of row ``l % 8`` of matrix ``l // 8``.  All 32 lanes call it together.

    Example::

        mma.stmatrix(at(tile_c, lane % 16), (c01, c23, c45, c67))

    PTX::

        stmatrix.sync.aligned.m8n8.xN.shared.b16 [tile], {r0, r1};

    Requires sm_90 or newer, PTX ISA 7.8.

    Also known as: ``cute.nvgpu.warp.StMatrix8x8x16bOp``, ``SM90_U32x4_STSM_N``, ``cuda::ptx::stmatrix``.
    """


def sync(acc: tuple, a: tuple[int, ...], b: tuple[int, ...], dtype: Literal['bf16', 'f16', 'tf32', 'e4m3', 'e5m2', 's8', 'u8'] = 'bf16') -> tuple:
    """``acc + A @ B`` for one warp: A 16 x K (row-major fragments), B K x 8 (column-major
    fragments), K 16 (bf16, f16), 8 (tf32) or 32 (e4m3/e5m2 from sm_89, s8/u8); ``a`` four and
    ``b`` two 32-bit registers per lane (``ldmatrix`` loads them), ``acc`` four float32 (int32 for
    s8/u8), returned updated.  All 32 lanes call it together.

    Example::

        acc = mma.sync(acc, a, b)                 # m16n8k16 bf16 x bf16 -> f32

    PTX::

        mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d0, d1, ...}, {a0, a1}, {b0, b1}, {d0, d1, ...};

    Requires sm_80 or newer, PTX ISA 7.0.
    With ``dtype='e4m3'``: sm_89 or newer, PTX ISA 8.4.
    With ``dtype='e5m2'``: sm_89 or newer, PTX ISA 8.4.

    Also known as: ``cute.nvgpu.warp.MmaF16BF16Op``, ``SM80_16x8x16_F32BF16BF16F32_TN``, ``tl.dot (mma.sync path)``.
    """


def zeros():
    """A zero 16 x 8 float32 accumulator: four registers (no instruction).

    Example::

        acc = mma.zeros()

    PTX::

        (none: four zero registers)

    Requires sm_80 or newer, PTX ISA 7.0 (the mma.sync it feeds).
    """
