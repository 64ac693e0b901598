"""The register-fragment helpers of the wgmma and mma families for numba-cuda-mlir kernels (they are
not PTX declarations): ``wgmma.zeros`` and ``mma.zeros`` (constants), and the arithmetic on a wgmma
fragment, ``scale``, ``add``, ``row_max``, ``row_sum``, ``exp2_rows``, ``scale_rows``, ``a_fragment``, ``mask``, whose bodies
are written once in :mod:`numba_tma.intrinsics.wgmma` against :class:`~numba_tma.intrinsics.hosts.host.Host`
(``lower_scale``...: the same inline PTX, the same shuffles on both hosts).  Each is typed by the same function as
under numba-cuda (:func:`numba_tma.intrinsics.wgmma.zeros_type`, ``scale_check``, ``add_check``,
``rows_check``), so a bad argument gets the same message.  The helpers that read or write memory
are in :mod:`.tiles`."""

from numba.cuda import types

from ..intrinsics import wgmma
from ..intrinsics.hosts.mlir_adapter import intrinsic, ir, lowering_utilities, mlir_types
from ..intrinsics.hosts.mlir_host import helper_codegen, to_mlir, to_numba

__all__ = ["HELPERS", "plain"]


def plain(ty):
    """The Numba type of a numba-cuda-mlir argument type as a helper written with numba-cuda's plain
    ``@intrinsic`` sees it (no literal), so that its checks say the same."""
    return types.unliteral(to_numba(ty))


def _zero_tuple(builder, target, tuple_type):
    element = ir.F32Type.get() if tuple_type.dtype == types.float32 else ir.IntegerType.get_signless(32)
    builder.store_var(target, (lowering_utilities.constant(0, element),) * tuple_type.count)


def _wgmma_zeros(typingctx, count, dtype=mlir_types.float32):
    """A zero accumulator fragment of ``count`` registers (``N / 2`` for a 64 x N tile) of float32
    (or ``types.int32``): as ``numba_tma.wgmma.zeros``."""
    omitted = isinstance(dtype, mlir_types.Omitted)
    tuple_type = wgmma.zeros_type(to_numba(count), types.Omitted(None) if omitted else to_numba(dtype))

    def codegen(builder, target, args, kwargs):
        _zero_tuple(builder, target, tuple_type)

    result = to_mlir(tuple_type)
    return (result(count) if omitted else result(count, dtype)), codegen


def _mma_zeros(typingctx):
    """A zero 16 x 8 float32 accumulator of mma.sync: four registers, as ``numba_tma.mma.zeros``."""
    tuple_type = types.UniTuple(types.float32, 4)

    def codegen(builder, target, args, kwargs):
        _zero_tuple(builder, target, tuple_type)

    return to_mlir(tuple_type)(), codegen


def _scale(typingctx, acc, factor):
    """As ``numba_tma.wgmma.scale`` (its body: ``wgmma.lower_scale``)."""
    tys = plain(acc), plain(factor)
    wgmma.scale_check(*tys)
    return acc(acc, factor), helper_codegen(wgmma.lower_scale, tys)


def _add(typingctx, acc, other):
    """As ``numba_tma.wgmma.add`` (its body: ``wgmma.lower_add``)."""
    tys = plain(acc), plain(other)
    wgmma.add_check(*tys)
    return acc(acc, other), helper_codegen(wgmma.lower_add, tys)


def _row_reduction(kind):
    def typer(typingctx, acc):
        wgmma.rows_check(kind, plain(acc))
        return to_mlir(wgmma.ROWS)(acc), helper_codegen(wgmma.lower_row_reduction(wgmma.ROW_REDUCTIONS[kind]),
                                                         (plain(acc),))

    typer.__doc__ = f"As ``numba_tma.wgmma.{kind}`` (its body: ``wgmma.lower_row_reduction``)."
    return intrinsic(typer, kind)


def _exp2_rows(typingctx, acc, scale, m0, m1):
    """As ``numba_tma.wgmma.exp2_rows`` (its body: ``wgmma.lower_exp2_rows``)."""
    tys = tuple(plain(t) for t in (acc, scale, m0, m1))
    wgmma.rows_check("exp2_rows", tys[0], scale=tys[1], m0=tys[2], m1=tys[3])
    return acc(acc, scale, m0, m1), helper_codegen(wgmma.lower_exp2_rows, tys)


def _scale_rows(typingctx, acc, f0, f1):
    """As ``numba_tma.wgmma.scale_rows`` (its body: ``wgmma.lower_scale_rows``)."""
    tys = tuple(plain(t) for t in (acc, f0, f1))
    wgmma.rows_check("scale_rows", tys[0], f0=tys[1], f1=tys[2])
    return acc(acc, f0, f1), helper_codegen(wgmma.lower_scale_rows, tys)


def _a_fragment(typingctx, acc, kk, dtype=None):
    """As ``numba_tma.wgmma.a_fragment`` (its body: ``wgmma.lower_a_fragment``)."""
    left_out = dtype is None or isinstance(dtype, mlir_types.Omitted)
    step, kind = wgmma.a_fragment_check(plain(acc), to_numba(kk), None if left_out else to_numba(dtype))
    result = to_mlir(wgmma.A_FRAGMENT)
    return (result(acc, kk) if left_out else result(acc, kk, dtype)), \
        helper_codegen(wgmma.lower_a_fragment, (plain(acc), step, kind))


def _mask(typingctx, acc, row, col, cols, diagonal, value):
    """As ``numba_tma.wgmma.mask`` (its body: ``wgmma.lower_mask``)."""
    tys = tuple(plain(t) for t in (acc, row, col, cols, diagonal, value))
    wgmma.mask_check(*tys)
    return acc(acc, row, col, cols, diagonal, value), helper_codegen(wgmma.lower_mask, tys)


HELPERS = {
    "wgmma": {"zeros": intrinsic(_wgmma_zeros, "zeros"), "scale": intrinsic(_scale, "scale"),
              "add": intrinsic(_add, "add"), "row_max": _row_reduction("row_max"), "row_sum": _row_reduction("row_sum"),
              "exp2_rows": intrinsic(_exp2_rows, "exp2_rows"), "scale_rows": intrinsic(_scale_rows, "scale_rows"),
              "a_fragment": intrinsic(_a_fragment, "a_fragment"), "mask": intrinsic(_mask, "mask")},
    "mma": {"zeros": intrinsic(_mma_zeros, "zeros")},
}
