"""Every Python block of README.md and docs/, and every docstring example of numba_tma, is checked
(tests/doc_blocks.py says how each kind is): a kernel body compiled for its op's architecture (NVIDIA
or AMD), a program run, a launch run under the CUDA simulator, a doctest run; a block that is a
fragment on purpose says so on its first line and is counted here, so that none is left out
unnoticed."""

import collections
import doctest
import importlib.util
import json
import math

import numba
import numpy as np
import pytest
from numba import cuda

import numba_tma
from doc_blocks import KINDS, ROOT, blocks, free_names, unmarked_code
from doc_stand_ins import AMD_FAMILY, AMD_LOCALS, AMD_PARAMS, FAMILY_LOCALS, LOCALS, OP_PARAMS, PARAMS
from numba_tma import amd, at, inspect
from numba_tma.intrinsics._core import OPS, parse_arch

BLOCKS = blocks()
OF_KIND = collections.defaultdict(list)
for _block in BLOCKS:
    OF_KIND[_block.kind].append(_block)

# the blocks of each kind today: a block changing kind (a fragment more, an example fewer) is
# a decision, made here
COUNTS = {"signature": 165, "fragment": 41, "doctest": 1, "kernel": 163, "program": 9, "simulator": 5, "mlir": 8}

KERNEL_GLOBALS = {"cuda": cuda, "numba": numba, "math": math, "np": np, "at": at,
                  **{f: getattr(numba_tma, f) for f in numba_tma.FAMILIES}}
FAMILY_ARCH = {"tcgen05": "sm_100a"}   # a block outside an op's section: its family's architecture


def _params(blocks_of):
    return [pytest.param(b, id=b.id) for b in blocks_of]


def test_every_block_has_a_kind_and_the_counts_are_as_recorded():
    assert {b.kind for b in BLOCKS} <= set(KINDS)
    assert {kind: len(OF_KIND[kind]) for kind in KINDS} == COUNTS


def test_no_docstring_holds_code_outside_a_block():
    """Indented code after a paragraph not ending in ``::`` would escape the blocks checked here."""
    found = {str(p.relative_to(ROOT)): unmarked_code(p) for p in sorted((ROOT / "numba_tma").rglob("*.py"))}
    assert {path: lines for path, lines in found.items() if lines} == {}


@pytest.mark.parametrize("block", _params(OF_KIND["fragment"]))
def test_a_fragment_says_why(block):
    assert len(block.text.splitlines()[0]) > len("# fragment: ") + 10, "say what it is a piece of"


# -- kernel bodies ---------------------------------------------------------------------------------

def _arch(block):
    if block.family.startswith("amd"):
        return OPS[block.op].need.archs[0] if block.op in OPS else "gfx942"
    if block.op in OPS:
        return next(a for a in ("sm_90a", "sm_100a", "sm_80") if OPS[block.op].need.supported_on(parse_arch(a)))
    return FAMILY_ARCH.get(block.family, "sm_90a")


def _tables(block):
    """(kernel globals, parameter types, local lines) of the block's vendor and family."""
    if block.family.startswith("amd"):
        params, lines = AMD_FAMILY.get(block.family, ({}, {}))
        return {"amd": amd, "numba": numba}, {**AMD_PARAMS, **params}, {**AMD_LOCALS, **lines}
    return KERNEL_GLOBALS, {**PARAMS, **OP_PARAMS.get(block.op, {})}, {**LOCALS, **FAMILY_LOCALS.get(block.family, {})}


def _stand_ins(block, names):
    """The parameters and local lines standing for ``names`` (and for the names those lines use)."""
    known, param_types, table = _tables(block)
    params, lines, todo = set(), set(), [n for n in names if n not in known]
    while todo:
        name = todo.pop()
        if name in table:
            if name not in lines:
                lines.add(name)
                todo += [n for n in free_names(table[name]) if n not in known]
        elif name in param_types:
            params.add(name)
        else:
            pytest.fail(f"{block.id}: the example uses {name!r}, which has no stand-in: add one to "
                        f"tests/doc_stand_ins.py, or mark the block '# fragment: <why>'")
    return [(n, param_types[n]) for n in param_types if n in params], [table[n] for n in table if n in lines]


def _compile_kernel_body(block):
    params, lines = _stand_ins(block, free_names(block.text))
    body = "\n".join(lines + [block.text]).replace("\n", "\n    ")
    namespace = dict(_tables(block)[0])
    exec(compile(f"def example({', '.join(n for n, _ in params)}):\n    {body}\n", block.id, "exec"), namespace)
    signature = tuple(t for _, t in params)
    if block.family.startswith("amd"):
        return amd.compile(namespace["example"], signature, _arch(block)).asm
    return inspect.ptx(namespace["example"], signature, _arch(block))


def _compile_kernels_defined(block):
    """A block defining ``@cuda.jit`` kernels: each compiled, its parameters typed by name."""
    namespace = dict(KERNEL_GLOBALS)
    exec(compile(block.text, block.id, "exec"), namespace)
    kernels = [v for v in namespace.values() if hasattr(v, "py_func") and not v.targetoptions.get("device")]
    assert kernels, f"{block.id}: defines no kernel"
    param_types = _tables(block)[1]
    for kernel in kernels:
        params = kernel.py_func.__code__.co_varnames[:kernel.py_func.__code__.co_argcount]
        inspect.ptx(kernel.py_func, tuple(param_types[p] for p in params), _arch(block))


@pytest.mark.parametrize("block", _params(OF_KIND["kernel"]))
def test_a_kernel_example_compiles_for_its_architecture(block):
    if "@cuda.jit" in block.text:
        _compile_kernels_defined(block)
    else:
        assert _compile_kernel_body(block)


# -- programs --------------------------------------------------------------------------------------

_RAN = {}   # page -> (its namespace, the blocks run)


def _run_page_up_to(block, kinds):
    namespace, ran = _RAN.setdefault(block.page, ({}, set()))
    for earlier in BLOCKS:
        if earlier.page == block.page and earlier.line <= block.line and earlier.kind in kinds \
                and earlier.id not in ran:
            ran.add(earlier.id)
            exec(compile(earlier.text, earlier.id, "exec"), namespace)
    return namespace


@pytest.mark.parametrize("block", _params(OF_KIND["program"]))
def test_a_program_runs(block):
    _run_page_up_to(block, ("program",))


@pytest.mark.parametrize("block", _params(OF_KIND["mlir"]))
def test_an_mlir_program_runs(block):
    if importlib.util.find_spec("numba_cuda_mlir") is None:
        pytest.skip("numba-cuda-mlir is not installed (the mlir extra)")
    _run_page_up_to(block, ("program", "mlir"))


@pytest.mark.parametrize("block", _params(OF_KIND["doctest"]))
def test_a_doctest_block_runs(block):
    test = doctest.DocTestParser().get_doctest(block.text, {}, block.id, block.page, block.line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    assert runner.run(test, out=failures.append).attempted and not failures, "".join(failures)


# -- under the simulator ---------------------------------------------------------------------------

_SIMULATED = """
import json, traceback

results = {{}}
for case in json.loads({cases!r}):
    namespace = {{}}
    try:
        for part, source in case["sources"]:
            exec(compile(source, part, "exec"), namespace)
        results[case["id"]] = None
    except BaseException:
        results[case["id"]] = traceback.format_exc()
print("RESULTS", json.dumps(results))
"""


@pytest.fixture(scope="module")
def simulated():
    from test_simulator import simulate

    cases = [{"id": b.id, "sources": [(e.id, e.text) for e in BLOCKS if e.page == b.page and e.line <= b.line
                                      and e.kind in ("program", "simulator")]} for b in OF_KIND["simulator"]]
    out = simulate(_SIMULATED.format(cases=json.dumps(cases)))
    return json.loads(out.split("RESULTS ", 1)[1])


@pytest.mark.parametrize("block", _params(OF_KIND["simulator"]))
def test_a_launch_runs_under_the_simulator(simulated, block):
    assert simulated[block.id] is None, simulated[block.id]
