"""What the simulator reports of warp-level code the GPU leaves undefined (or hangs on), each
naming the op, the block, the warp and the lane: a calling lane outside its own mask, a lane of
the mask waiting in cuda.syncthreads(), lanes meeting at different collectives, a shuffle reading
a lane outside the mask, exited or missing from a partial warp, a lane that never comes (the
deadlock report), and arguments of types the compiled functions refuse (a numpy integer where an
op needs a constant, as compiled).  The results themselves are checked both ways in
tests/test_gpu_warp.py (exited lanes included: the collectives leave them out, as on the GPU)."""

import json
import re

import pytest

from test_simulator import simulate

CASES = {
    "not_in_own_mask": """
        v = cuda.shfl_sync(0xFFFFFFFE, t, 1)
    """,
    "exited": """
        if t == 5:
            return
        v = cuda.shfl_xor_sync(0xFFFFFFFF, t, 1)          # lane 4 reads lane 5
    """,
    "missing_lane": """
        v = cuda.shfl_sync(0xFFFFFFFF, t, 20)             # launched with 16 threads
    """,
    "in_syncthreads": """
        if t == 3:
            cuda.syncthreads()
        else:
            v = cuda.any_sync(0xFFFFFFFF, t > 3)
    """,
    "other_collective": """
        if t < 16:
            v = cuda.shfl_xor_sync(0xFFFFFFFF, t, 1)
        else:
            v = cuda.ballot_sync(0xFFFFFFFF, True)
    """,
    "source_outside_mask": """
        if t < 16:
            v = cuda.shfl_down_sync(0xFFFF, numba.int32(t), 8)
    """,
    "never_comes": """
        bar = cuda.shared.array(1, numba.uint64)
        if t == 0:
            mbarrier.init(bar, 2)                          # one arrival short: never completes
            fence.mbarrier_init()
        cuda.syncwarp()
        if t == 31:
            mbarrier.arrive(bar)
            mbarrier.wait(bar, 0)
        v = cuda.shfl_sync(0xFFFFFFFF, t, 0)
    """,
    "uint32_value": """
        v = cuda.shfl_sync(0xFFFFFFFF, numba.uint32(t), 0)
    """,
    "bool_value": """
        v = cuda.shfl_xor_sync(0xFFFFFFFF, t > 2, 1)
    """,
    "float_predicate": """
        v = cuda.all_sync(0xFFFFFFFF, 0.5)
    """,
    "float_mask": """
        cuda.syncwarp(1.0)
    """,
    "numpy_constant": """
        cp_async.wait_group(np.int32(0))                  # an int32, as compiled: not a constant
    """,
}

SCRIPT = """
import json, textwrap
from numba_tma import cp_async
from numba_tma.simulator import SimulatorError
from numba_tma.errors import OpArgumentError
cases = json.loads({cases!r})
found = {{}}
for name, body in cases.items():
    source = "@cuda.jit\\ndef k(out):\\n    t = cuda.threadIdx.x\\n" + textwrap.indent(textwrap.dedent(body), "    ")
    scope = dict(globals())
    exec(compile(source, name, "exec"), scope)
    try:
        scope["k"][1, 16 if name == "missing_lane" else 32](np.zeros(1))
        found[name] = "no error"
    except (SimulatorError, OpArgumentError) as exc:
        found[name] = type(exc).__name__ + ": " + str(exc)
print("FOUND" + json.dumps(found))
"""


@pytest.fixture(scope="module")
def reports():
    out = simulate(setup=SCRIPT.format(cases=json.dumps(CASES)), body="")
    return json.loads(out.split("FOUND", 1)[1])


@pytest.mark.parametrize("case, words", [
    ("not_in_own_mask", ["SimulatorError", "cuda.shfl_sync(mask=0xfffffffe): lane 0 of warp 0",
                         "calls it but is not in the mask"]),
    ("exited", ["cuda.shfl_xor_sync(mask=0xffffffff): lane 4 of warp 0 of block (0, 0, 0) reads lane 5, which has "
                "exited: its value is undefined on the GPU"]),
    ("missing_lane", ["cuda.shfl_sync(mask=0xffffffff): lane ", " of warp 0 of block (0, 0, 0) reads lane 20, which "
                      "the block does not have (16 threads)"]),
    ("in_syncthreads", ["cuda.any_sync(mask=0xffffffff): lane 3 of warp 0 of block (0, 0, 0) (thread (3, 0, 0)) "
                        "waits in cuda.syncthreads(), where it can never come"]),
    ("other_collective", ["waits at cuda.", "a warp's lanes must meet at the same op with the same mask"]),
    ("source_outside_mask", [r"cuda\.shfl_down_sync\(mask=0x0000ffff\): lane (8|9|1[0-5]) of warp 0 of block "
                             r"\(0, 0, 0\) reads lane (1[6-9]|2[0-3]), which the mask leaves out: its value is "
                             r"undefined on the GPU"]),
    ("never_comes", ["deadlock in block (0, 0, 0)", "cuda.shfl_sync(mask=0xffffffff) in warp 0: lanes 0-30 arrived, "
                     "lanes 31 have not", "thread (31, 0, 0): mbarrier.wait(parity 0)"]),
    ("uint32_value", ["cuda.shfl_sync: argument 'value' must be an int32, int64, float32 or float64", "(uint32)"]),
    ("bool_value", ["cuda.shfl_xor_sync: argument 'value' must be an int32, int64, float32 or float64", "(bool)"]),
    ("float_predicate", ["cuda.all_sync: argument 'predicate' must be an integer or a bool; got 0.5"]),
    ("float_mask", ["cuda.syncwarp: argument 'mask' must be an integer"]),
    ("numpy_constant", ["OpArgumentError", "cp_async.wait_group: argument 'n' must be a compile-time integer "
                        "constant (the PTX takes an immediate); got int32"]),
])
def test_warp_level_misuse_is_reported(reports, case, words):
    """(A word is a regular expression where the lane reported depends on the run's thread order.)"""
    for word in words:
        assert word in reports[case] or (case == "source_outside_mask" and re.search(word, reports[case])), \
            reports[case]


def test_lanes_of_the_other_collective_are_named(reports):
    """Lanes 0-15 wait at the shuffle, 16-31 at the ballot: whichever side reports names the other."""
    text = reports["other_collective"]
    shuffle_side = r"cuda\.shfl_xor_sync\(mask=0xffffffff\): lane (1[6-9]|2\d|3[01]) .* waits at cuda\.ballot_sync" \
        r"\(mask=0xffffffff\), which waits for lane ([0-9]|1[0-5]), waiting here"
    ballot_side = r"cuda\.ballot_sync\(mask=0xffffffff\): lane ([0-9]|1[0-5]) .* waits at cuda\.shfl_xor_sync" \
        r"\(mask=0xffffffff\), which waits for lane (1[6-9]|2\d|3[01]), waiting here"
    assert re.search(shuffle_side, text) or re.search(ballot_side, text), text
