"""``**``, ``pow`` and ``math.pow`` of floats in kernels of the ``amdgcn`` Numba target.

Numba lowers a float power through ``math.pow`` on a GPU target, and its CPU math
library lowers ``math.pow`` back through ``**``: without a libm the two recursed until
Python's RecursionError.  LLVM's AMDGPU back end has no ``pow`` of its own either (ROCm
supplies one in its device libraries): ``llvm.pow.f64`` aborts the process ("Cannot
select"), and ``llvm.pow.f32`` becomes ``exp2(y * log2(x))``, which is NaN for a negative
base.  The lowerings here replace Numba's for this target:

* a float or an integer to an integer power (``x ** n``, ``pow(x, n)``,
  ``math.pow(x, n)``, any integer type), or to a constant float with an integral value
  (``x ** 2.0``): repeated squaring, as Numba's own, but without its fallback to
  ``math.pow`` for exponents above 65536 (at most 64 squarings);
* a float to any other float power: an :class:`~numba_tma.errors.OpArgumentError` naming the exponent.

Example: ``y[i] = x[i] ** 3`` compiles to multiplications; ``x[i] ** 2.5`` is refused.
"""
import math
import operator

from numba import uint64
from numba.core import types
from numba.core.imputils import Registry, impl_ret_untracked

from .errors import reject

registry = Registry("numba_tma.amd.power")
lower = registry.lower


def float_power_function(result_type):
    """``power(base, exponent)`` for a float *result_type* and an integer exponent, as
    a Python function for Numba (the same function runs on the CPU in the tests)."""
    def power(base, exponent):
        result = result_type(1)
        factor = result_type(base)
        # |exponent| as uint64: -exponent wraps to itself for the most negative int64,
        # whose magnitude 2**63 uint64 holds
        left = uint64(exponent) if exponent >= 0 else uint64(-exponent)
        while left:
            if left & 1:
                result *= factor
            left >>= 1
            factor *= factor
        return result_type(1) / result if exponent < 0 else result
    return power


def integer_power_function(result_type):
    """``power(base, exponent)`` for integers, with Numba's results for a negative
    exponent: 1 and -1 keep their powers, 0 gives the most negative value (NumPy's
    error model; 0 when unsigned), any other base 0."""
    zero_divided = -1 << (result_type.bitwidth - 1) if result_type.signed else 0

    def power(base, exponent):
        if exponent < 0:
            if base == 1:
                return result_type(1)
            if base == 0:
                return result_type(zero_divided)
            if base == result_type(-1):
                return result_type(1) if exponent & 1 == 0 else result_type(-1)
            return result_type(0)
        result = result_type(1)
        factor = result_type(base)
        left = uint64(exponent)
        while left:
            if left & 1:
                result *= factor
            left >>= 1
            factor *= factor
        return result
    return power


def _lower_with(make_function):
    def lowering(context, builder, sig, args):
        value = context.compile_internal(builder, make_function(sig.return_type), sig, args)
        return impl_ret_untracked(context, builder, sig.return_type, value)
    return lowering


_repeated_squaring = _lower_with(float_power_function)
_integer_power = _lower_with(integer_power_function)


def _float_exponent(context, builder, sig, args):
    """A constant exponent with an integral value (``x ** 2.0``) is an integer power;
    any other float exponent is refused."""
    exponent = args[1]
    value = getattr(exponent, "constant", None)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        int_sig = sig.replace(args=(sig.args[0], types.int64))
        return _repeated_squaring(context, builder, int_sig,
                                  (args[0], context.get_constant(types.int64, int(value))))
    raise reject("pow", "exponent", "of x ** y, pow or math.pow must be an integer, or a constant with an "
                 "integral value, on the AMD target, which has no pow function (LLVM's AMDGPU back end takes "
                 "it from ROCm's device libraries; use e.g. x ** 2 or math.sqrt)",
                 f"{sig.args[0]} ** {sig.args[1]}")


for _op in (operator.pow, operator.ipow, pow):
    for _int in types.integer_domain:
        lower(_op, types.Float, _int)(_repeated_squaring)
        lower(_op, _int, _int)(_integer_power)
    for _float in types.real_domain:
        lower(_op, _float, _float)(_float_exponent)
lower(math.pow, types.Float, types.Integer)(_repeated_squaring)
lower(math.pow, types.Float, types.Float)(_float_exponent)
