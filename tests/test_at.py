"""``at(array, i)`` names element i of a shared array for every op, for at most two PTX
instructions per naming (a run-time slice ``bars[s:]`` costs 9)."""

import re

import numba
import pytest
from numba import cuda

from numba_tma import OpArgumentError, TensorMap, at, inspect, mbarrier, tma

STAGES = 4
SIG = (numba.uint64[::1], numba.int32)


def _instructions(ptx):
    """PTX instructions of the kernel body (inline-asm bodies counted as one line each)."""
    body = ptx[ptx.index("{", ptx.index(".entry")):]
    lines = [line.strip() for line in body.splitlines()]
    return [line for line in lines if line and not line.startswith(("//", "{", "}", ".reg", "$", "ret"))
            and not line.endswith(":")]


def _waits(n, name):
    """A kernel waiting on ``n`` barriers named by a run-time index (``at`` or a slice)."""
    calls = "\n    ".join(
        f"mbarrier.wait({'at(bars, s + %d)' % i if name == 'at' else 'bars[s + %d:]' % i}, 0)" for i in range(n))
    namespace = {"cuda": cuda, "numba": numba, "mbarrier": mbarrier, "at": at}
    exec(f"def k(out, s):\n    bars = cuda.shared.array({STAGES + n}, numba.uint64)\n    {calls}\n", namespace)
    return namespace["k"]


@pytest.mark.parametrize("n", [1, 3])
def test_naming_a_barrier_costs_at_most_two_instructions(n):
    one = len(_instructions(inspect.ptx(_waits(1, "at"), SIG)))
    many = len(_instructions(inspect.ptx(_waits(1 + n, "at"), SIG)))
    wait_lines = 2     # each wait's own asm: try_wait + branch (its label is not counted)
    assert (many - one) / n - wait_lines <= 2, (one, many)
    sliced = len(_instructions(inspect.ptx(_waits(1 + n, "slice"), SIG)))
    assert many < sliced, "at() must be cheaper than a run-time slice"


def test_at_names_the_element_address():
    def k(out, s):
        bars = cuda.shared.array(STAGES, numba.uint64)
        mbarrier.init(at(bars, s), 1)

    ptx = inspect.ptx(k, SIG)
    assert re.search(r"(mad\.lo\.s32|shl\.b32|mul\.wide|add\.s32)", ptx)
    assert "mbarrier.init.shared::cta.b64" in ptx


def test_at_names_a_ring_slot_for_tma():
    def k(desc, out, s):
        bars = cuda.shared.array(STAGES, numba.uint64)
        ring = cuda.shared.array((STAGES, 32, 64), numba.float32, alignment=128)
        tma.load(desc, at(ring, s), (0, 0), at(bars, s))

    sig = (TensorMap.numba_type("float32", (32, 64)), numba.uint64[::1], numba.int32)
    out = inspect.compile(k, sig, "sm_90a")
    assert "UTMALDG.2D" in out.opcodes()
    assert "cvt.u32.u64" not in out.ptx.split("cp.async.bulk.tensor")[1]


def test_at_keeps_the_element_type_rules():
    def k(out, s):
        words = cuda.shared.array(STAGES, numba.int32)
        mbarrier.wait(at(words, s), 0)

    with pytest.raises(OpArgumentError, match=r"'bar' must be a uint64 shared array \(the mbarrier\) of uint64"):
        inspect.ptx(k, SIG)


def test_at_of_a_strided_view_is_refused_where_density_is_needed():
    def k(desc, out, s):
        bars = cuda.shared.array(1, numba.uint64)
        ring = cuda.shared.array((STAGES, 32, 64), numba.float32, alignment=128)
        tma.load(desc, at(ring[:, :, ::2], s), (0, 0), bars)

    sig = (TensorMap.numba_type("float32", (32, 64)), numba.uint64[::1], numba.int32)
    with pytest.raises(OpArgumentError, match=r"'dst' must be a C-contiguous view"):
        inspect.ptx(k, sig)
