"""The register-fragment helpers of the wgmma and mma families for numba-cuda-mlir kernels (they are
not PTX declarations): ``wgmma.zeros`` and ``mma.zeros`` (constants), and the arithmetic on a wgmma
fragment, ``scale``, ``add``, ``row_max``, ``row_sum``, ``exp2_rows``, ``scale_rows``, unrolled as
under numba-cuda (the same inline PTX, the same shuffles).  Each is typed by the same function as
under numba-cuda (:func:`numba_tma.intrinsics.wgmma.zeros_type`, ``scale_check``, ``add_check``,
``rows_check``), so a bad argument gets the same message.  The helpers that read or write memory
are in :mod:`.tiles`."""

from numba.cuda import types

from ..intrinsics import wgmma
from ..intrinsics.mlir_adapter import arith, intrinsic, ir, lowering_utilities, mlir_types, nvvm
from ..intrinsics.mlir_host import emit_asm, to_mlir, to_numba
from ..intrinsics.wgmma import _EXP2, _row_registers, _tree

__all__ = ["HELPERS", "f32_asm", "plain"]


def plain(ty):
    """The Numba type of a numba-cuda-mlir argument type as a helper written with numba-cuda's plain
    ``@intrinsic`` sees it (no literal), so that its checks say the same."""
    return types.unliteral(to_numba(ty))


def float32(value):
    """``value`` (a number) as a float32."""
    return lowering_utilities.convert(value, ir.F32Type.get())


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


def f32_asm(template, *values):
    """One float32 result of pure inline PTX on float32 inputs (``$0`` the result)."""
    return emit_asm(template, [(v, "f") for v in values], ["=f"], memory=False)


def _scalar(value, ty):
    """A number argument as float32 (an integer by its sign)."""
    return lowering_utilities.convert(value, ir.F32Type.get(), signed=bool(getattr(ty, "signed", False)))


def _scale(typingctx, acc, factor):
    """``acc`` with every register multiplied by ``factor``: as ``numba_tma.wgmma.scale``."""
    factor_type = plain(factor)
    wgmma.scale_check(plain(acc), factor_type)

    def codegen(builder, target, args, kwargs):
        values, f = builder.load_var(args[0]), _scalar(builder.load_var(args[1]), factor_type)
        builder.store_var(target, tuple(arith.mulf(v, f) for v in values))

    return acc(acc, factor), codegen


def _add(typingctx, acc, other):
    """``acc + other``, register by register (``add.rn.f32``): as ``numba_tma.wgmma.add``."""
    wgmma.add_check(plain(acc), plain(other))

    def codegen(builder, target, args, kwargs):
        a, b = (builder.load_var(v) for v in args)
        builder.store_var(target, tuple(f32_asm("add.rn.f32 $0, $1, $2;", x, y) for x, y in zip(a, b)))

    return acc(acc, other), codegen


def _shfl_bfly(value, lane_mask):
    """``value`` of lane ``l ^ lane_mask`` (``nvvm.shfl.sync`` bfly, all 32 lanes, as numba-cuda's)."""
    i32 = ir.IntegerType.get_signless(32)
    mask, offset, clamp = (lowering_utilities.constant(c, i32) for c in (-1, lane_mask, 0x1F))
    return nvvm.shfl_sync(mask, value, offset, clamp, nvvm.ShflKind.bfly)


def _row_reduction(kind, template):
    def typer(typingctx, acc):
        wgmma.rows_check(kind, plain(acc))
        count = acc.count

        def codegen(builder, target, args, kwargs):
            values = builder.load_var(args[0])

            def combine(a, b):
                return f32_asm(template, a, b)

            rows = [_tree([values[i] for i in _row_registers(count, h)], combine) for h in (0, 1)]
            for lane_mask in (1, 2):           # the row's 4 lanes: with lane l ^ 1, then with l ^ 2
                rows = [combine(v, _shfl_bfly(v, lane_mask)) for v in rows]
            builder.store_var(target, tuple(rows))

        return mlir_types.UniTuple(mlir_types.float32, 2)(acc), codegen

    typer.__doc__ = f"As ``numba_tma.wgmma.{kind}``: the two rows' {kind[4:]} of a thread's fragment, across its 4 lanes."
    return intrinsic(typer, kind)


def _exp2_rows(typingctx, acc, scale, m0, m1):
    """``exp2(x * scale - m_h)`` of each register ``x`` of row ``h``: as ``numba_tma.wgmma.exp2_rows``."""
    wgmma.rows_check("exp2_rows", plain(acc), scale=plain(scale), m0=plain(m0), m1=plain(m1))
    count = acc.count

    def codegen(builder, target, args, kwargs):
        values = list(builder.load_var(args[0]))
        s, *ms = (float32(builder.load_var(v)) for v in args[1:])
        for h, m in enumerate(ms):
            minus = f32_asm("neg.f32 $0, $1;", m)
            for i in _row_registers(count, h):
                values[i] = f32_asm(_EXP2, values[i], s, minus)
        builder.store_var(target, tuple(values))

    return acc(acc, scale, m0, m1), codegen


def _scale_rows(typingctx, acc, f0, f1):
    """The registers of row ``h`` times ``f_h`` (``mul.rn.f32``): as ``numba_tma.wgmma.scale_rows``."""
    wgmma.rows_check("scale_rows", plain(acc), f0=plain(f0), f1=plain(f1))
    count = acc.count

    def codegen(builder, target, args, kwargs):
        values = list(builder.load_var(args[0]))
        for h, v in enumerate(args[1:]):
            f = float32(builder.load_var(v))
            for i in _row_registers(count, h):
                values[i] = f32_asm("mul.rn.f32 $0, $1, $2;", values[i], f)
        builder.store_var(target, tuple(values))

    return acc(acc, f0, f1), codegen


HELPERS = {
    "wgmma": {"zeros": intrinsic(_wgmma_zeros, "zeros"), "scale": intrinsic(_scale, "scale"),
              "add": intrinsic(_add, "add"), "row_max": _row_reduction("row_max", "max.f32 $0, $1, $2;"),
              "row_sum": _row_reduction("row_sum", "add.rn.f32 $0, $1, $2;"),
              "exp2_rows": intrinsic(_exp2_rows, "exp2_rows"), "scale_rows": intrinsic(_scale_rows, "scale_rows")},
    "mma": {"zeros": intrinsic(_mma_zeros, "zeros")},
}
