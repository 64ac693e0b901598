"""Every declared refusal (``PtxOp.refusals``) is refused the same way by the compiled op and by its
simulator twin: an ``OpArgumentError`` with the declared message, which was written by hand.

The compiled side types each call in the assembly test's kernel (``tests/test_assembles.py``);
the simulated side runs all of them in one simulator process, each in a one-thread kernel over real
arguments.  A rule about a value being a compile-time constant (``Refusal.constant_only``) is
broken there too: the call passes an array's element, a numpy integer, which the simulator types as
compiled code does (not a constant).
"""

import json
import pathlib

import pytest
from test_assembles import SIG, _kernel
from test_simulator import simulate

from numba_tma import OpArgumentError, TensorMap, inspect
from numba_tma.intrinsics._core import OPS, parse_arch

REFUSALS = [pytest.param(op, r, id=f"{name}-{i}") for name, op in sorted(OPS.items()) if op.twin
            for i, r in enumerate(op.refusals)]   # the AMD ops (no twin): tests/amd/test_amd_declarations.py


def _arch(op):
    """The first architecture the op exists on (so the refusal is the argument's, not the arch's)."""
    return next(a for a in ("sm_90a", "sm_100a") if op.need.supported_on(parse_arch(a)))


def _signature(refusal):
    if not refusal.desc:
        return SIG
    dtype, box, swizzle = refusal.desc
    return (TensorMap.numba_type(dtype, box, swizzle=swizzle), SIG[1])


def test_every_op_declares_a_refusal():
    """An op with parameters refuses a bad value of one; an op without refuses an argument."""
    assert [name for name, op in sorted(OPS.items()) if not op.refusals] == []


@pytest.mark.parametrize("op, refusal", REFUSALS)
def test_the_compiled_op_refuses(op, refusal):
    with pytest.raises(OpArgumentError) as info:
        inspect.ptx(_kernel(refusal.call), _signature(refusal), _arch(op))
    assert refusal.message in str(info.value)


_SIMULATED = """
import json
import sys

sys.path.insert(0, {tests!r})

import numba
from numba.cuda import types
from test_assembles import _kernel

from numba_tma import TensorMap

CASES = json.loads({cases!r})
results = {{}}
for case in CASES:
    if case["desc"]:
        dtype, box, swizzle = case["desc"]
        shape = [2 * b for b in box]
        desc = TensorMap.tiled(cuda.to_device(np.zeros(shape, dtype)), box, swizzle=swizzle)
    else:
        desc = cuda.to_device(np.zeros(4096, np.uint8))
    kernel = cuda.jit(_kernel(case["call"]))
    try:
        kernel[1, 1](desc, np.zeros(8, np.uint64))
        results[case["id"]] = None
    except Exception as exc:
        results[case["id"]] = type(exc).__name__ + ": " + str(exc)
print("RESULTS", json.dumps(results))
"""


@pytest.fixture(scope="module")
def simulated():
    cases = [dict(id=p.id, call=p.values[1].call, desc=list(p.values[1].desc)) for p in REFUSALS]
    out = simulate(_SIMULATED.format(cases=json.dumps(cases), tests=str(pathlib.Path(__file__).parent)))
    return json.loads(out.split("RESULTS ", 1)[1])


@pytest.mark.parametrize("op, refusal", REFUSALS)
def test_the_twin_refuses_alike(request, simulated, op, refusal):
    got = simulated[request.node.callspec.id]
    assert got is not None and got.startswith("OpArgumentError: ") and refusal.message in got, got
