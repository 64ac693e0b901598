"""The register-fragment helpers of the wgmma and mma families for numba-cuda-mlir kernels (they are
not PTX declarations): ``wgmma.zeros`` and ``mma.zeros``, typed as under numba-cuda
(:func:`numba_tma.intrinsics.wgmma.zeros_type`), lowered to constants."""

from numba.cuda import types

from ..intrinsics import wgmma
from ..intrinsics.mlir_adapter import intrinsic, ir, lowering_utilities, mlir_types
from ..intrinsics.mlir_host import to_mlir, to_numba

__all__ = ["HELPERS"]


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


HELPERS = {"wgmma": {"zeros": intrinsic(_wgmma_zeros, "zeros")}, "mma": {"zeros": intrinsic(_mma_zeros, "zeros")}}
