"""The examples in numba_tma's docstrings run as doctests (``>>>`` lines only; the ``Example::``
blocks are compiled by tests/test_doc_examples.py).  A module that needs an extra which is not
installed (``numba_tma.mlir``: the ``mlir`` extra) skips, saying so."""

import doctest
import importlib
import pkgutil

import pytest

import numba_tma

MODULES = sorted(m.name for m in pkgutil.walk_packages(numba_tma.__path__, "numba_tma.")
                 if m.name != "numba_tma.pytest_plugin")
FINDER = doctest.DocTestFinder(exclude_empty=True)
EXTRAS = {"numba_cuda_mlir": "mlir", "triton": "amd-reference", "matplotlib": "viz"}   # package: its extra


def _import(name):
    """The module, or the reason it cannot be imported here (an extra not installed)."""
    try:
        return importlib.import_module(name), None
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRAS:
            raise
        return None, f"{name} needs {top} (the {EXTRAS[top]} extra), which is not installed"


def _tests(module):
    return [t for t in FINDER.find(module) if t.examples and t.name.startswith(module.__name__)]


IMPORTED = {name: _import(name) for name in MODULES}
WITH_EXAMPLES = [name for name, (module, why) in IMPORTED.items() if why or _tests(module)]


def test_modules_with_examples_are_found():
    """The walk finds the modules whose docstrings carry examples (a broken walk would pass
    the test below vacuously)."""
    assert {"numba_tma.inspect", "numba_tma.catalog", "numba_tma.descriptors.layout"} <= set(WITH_EXAMPLES)


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.skip(reason=IMPORTED[name][1]))
                                  if IMPORTED[name][1] else name for name in WITH_EXAMPLES])
def test_docstring_examples_run(name):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    for test in _tests(IMPORTED[name][0]):
        result = runner.run(test, out=failures.append)
        assert result.attempted or all(ex.options.get(doctest.SKIP) for ex in test.examples), test.name
    assert not failures, "".join(failures)
