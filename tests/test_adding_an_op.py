"""README's 'Adding an op', done as a newcomer would: a toy family of one op declared in a module of
its own (written to a temporary folder, imported by path), and its simulator twin in another; from
that one declaration the op is compiled by both hosts (hand-written PTX), run as its twin with the
declaration's rules, found in the catalogue and written by the docs generator."""

import importlib.util
import re

import numpy as np
import pytest
from numba.cuda import types

import numba_tma
from numba_tma import catalog, docgen, inspect
from numba_tma.declarations import OPS
from numba_tma.errors import OpArgumentError
from numba_tma.simulator import simulated_family

DECLARATION = '''
"""numba_tma.toy: one op, ``add_one``."""
from numba.cuda import types

from numba_tma.intrinsics._core import Int, PtxOp, Refusal, Requirement, Sample, exported

add_one = PtxOp(
    "toy.add_one", "add.u32 {out}, {x}, 1;", (Int("x", bits=32, lo=0, hi=1000, rule="must be from 0 to 1000"),),
    need=Requirement((7, 0), (6, 0)), returns=types.uint32, memory=False, tlx=("toy_increment",),
    samples=(Sample("out[0] = toy.add_one(out[1])", "IADD3", ptx="add.u32 %r, %r, 1;", isa="9.7.1.1 add"),),
    refusals=(Refusal("out[0] = toy.add_one(1001)", "toy.add_one: argument 'x' must be from 0 to 1000"),),
    doc="""``x + 1`` as a 32-bit unsigned integer.

    Example::

        out[0] = toy.add_one(out[1])
    """,
).intrinsic()

__all__ = exported("toy")
'''

TWINS = '''
"""numba_tma.toy under the simulator: the semantics only."""


def add_one(x):
    return (int(x) + 1) & 0xFFFFFFFF
'''


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy family, declared; taken out of the registry after the test."""
    (tmp_path / "toy.py").write_text(DECLARATION)
    (tmp_path / "toy_twins.py").write_text(TWINS)
    try:
        public = _module(tmp_path / "toy.py", "numba_tma.toy")
        monkeypatch.setattr(numba_tma, "toy", public, raising=False)   # where docgen finds a family
        yield public, _module(tmp_path / "toy_twins.py", "numba_tma.simulator.toy")
    finally:
        OPS.pop("toy.add_one", None)


def _kernel(public):
    def kernel(out):
        out[0] = public.add_one(out[1])
    return kernel


def test_a_declared_op_is_compiled_by_both_hosts(toy):
    public, _ = toy
    assert public.__all__ == ["add_one"] and OPS["toy.add_one"].family == "toy"
    sig = (types.uint32[::1],)
    for host in ("numba-cuda", "mlir"):
        if host == "mlir":
            pytest.importorskip("numba_cuda_mlir", reason="the mlir extra (numba-cuda-mlir) is not installed")
            from numba_tma.intrinsics.hosts.mlir_adapter import refresh, register_twin
            from numba_tma.intrinsics.hosts.mlir_host import build_mlir_intrinsic

            from numba_cuda_mlir import types as mlir_types

            register_twin(public.add_one, build_mlir_intrinsic(OPS["toy.add_one"]))   # as numba_tma.mlir does
            refresh()
            sig = (mlir_types.uint32[::1],)
        ptx = inspect.compile(_kernel(public), sig, "sm_90a", host=host).ptx
        assert re.search(r"add\.u32 \t?%r\d+, %r\d+, 1;", ptx), (host, ptx)   # PTX ISA 9.7.1.1
    with pytest.raises(OpArgumentError, match=r"toy.add_one: argument 'x' must be from 0 to 1000; got 1001"):
        inspect.compile(lambda out: public.add_one(1001), (types.uint32[::1],), "sm_90a")


def test_a_declared_op_runs_as_its_twin_with_the_declarations_rules(toy):
    public, twins = toy
    simulated = simulated_family("toy", public, twins)
    assert simulated.add_one(np.uint32(41)) == 42 and simulated.add_one(x=0) == 1
    with pytest.raises(OpArgumentError, match=r"toy.add_one: argument 'x' must be from 0 to 1000; got 1001"):
        simulated.add_one(1001)
    with pytest.raises(LookupError, match=r"declared without a twin: toy.add_one"):
        simulated_family("toy", public, type(twins)("numba_tma.simulator.toy"))


def test_a_declared_op_is_in_the_catalogue_and_the_docs(toy):
    op = OPS["toy.add_one"]
    for name in ("toy.add_one", "toy_increment", "add.u32"):
        assert op in catalog.find(name), name
    page = docgen.family_page("toy")
    assert "add_one" in page and "add.u32" in page and "toy_increment" in page and "out[0] = toy.add_one(out[1])" in page
