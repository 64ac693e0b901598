"""``**``, ``pow`` and ``math.pow`` in kernels of the amdgcn target (numba_tma.amd.power).

They used to recurse (RecursionError) between Numba's ``**`` and ``math.pow``
lowerings; LLVM's AMDGPU back end has no pow (``llvm.pow.f64`` aborts the process)."""
import math

import numba
import pytest

import numba_tma.amd as amd
from amd_asm import ARCHS, find
from numba_tma.amd import AMDArgumentError, power

SIG = "void(float32[::1], float64[::1], int32)"


def _float_powers(x, y, n):
    i = amd.workitem_id_x()
    x[i] = x[i] ** n + x[i] ** 3 + math.pow(x[i], n)
    y[i] = y[i] ** 2.0 + y[i] ** -2.0 + y[i] ** n + pow(y[i], 4)
    x[i + 1] = n ** 3 + n ** n


@pytest.mark.parametrize("arch", ARCHS)
def test_float_to_integer_powers_compile_to_multiplications(arch):
    asm = amd.compile(_float_powers, SIG, arch).asm
    assert find(asm, r"^v_mul_f32") and find(asm, r"^v_mul_f64")
    assert not find(asm, r"^s_(swappc|setpc|call)")  # no pow function is called


def _float_exponent(x, y, n):
    i = amd.workitem_id_x()
    y[i] = y[i] ** 2.5


def _math_pow(x, y, n):
    i = amd.workitem_id_x()
    y[i] = math.pow(y[i], y[0])


@pytest.mark.parametrize("kernel", [_float_exponent, _math_pow])
def test_a_float_exponent_is_refused_with_the_rule(kernel):
    with pytest.raises(AMDArgumentError, match=r"numba_tma: amd.pow: argument 'exponent' of x \*\* y, pow or math.pow must be an integer, or a constant with an integral value.*; got float\d+ \*\* float\d+"):
        amd.compile(kernel, SIG, "gfx942")


@pytest.mark.parametrize("base,exponent", [
    (2.0, 10), (2.0, -3), (-1.5, 3), (-1.5, -2), (0.5, 0), (1.0, -(2**63)),
    (1.00001, 70000),  # above Numba's 65536 cutoff to math.pow
])
def test_float_power_matches_python(base, exponent):
    fn = numba.njit(power.float_power_function(numba.float64))  # the CPU runs the same code
    # one rounding per multiplication: at most 2 * 64 of them
    assert fn(base, exponent) == pytest.approx(math.pow(base, exponent), rel=1e-12 * 128)


@pytest.mark.parametrize("base,exponent,expected", [
    (3, 4, 81), (-2, 3, -8), (7, 0, 1), (2, 62, 2**62),
    (1, -5, 1), (-1, -3, -1), (-1, -4, 1), (5, -1, 0), (0, -1, -(2**63)),
])
def test_integer_power_follows_numba(base, exponent, expected):
    fn = numba.njit(power.integer_power_function(numba.int64))
    assert fn(base, exponent) == expected
