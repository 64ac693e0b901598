"""The examples in numba_tma's docstrings run as doctests (``>>>`` lines only; ``Example::``
blocks that need a GPU are prose)."""

import doctest
import importlib
import pkgutil

import pytest

import numba_tma

MODULES = sorted(m.name for m in pkgutil.walk_packages(numba_tma.__path__, "numba_tma.")
                 if m.name != "numba_tma.pytest_plugin")
FINDER = doctest.DocTestFinder(exclude_empty=True)


def _tests(name):
    module = importlib.import_module(name)
    return [t for t in FINDER.find(module) if t.examples and t.name.startswith(name)]


WITH_EXAMPLES = [name for name in MODULES if _tests(name)]


def test_modules_with_examples_are_found():
    """The walk finds the modules whose docstrings carry examples (a broken walk would pass
    the test below vacuously)."""
    assert {"numba_tma.inspect", "numba_tma.catalog", "numba_tma.descriptors.layout"} <= set(WITH_EXAMPLES)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples_run(name):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    for test in _tests(name):
        result = runner.run(test, out=failures.append)
        assert result.attempted or all(ex.options.get(doctest.SKIP) for ex in test.examples), test.name
    assert not failures, "".join(failures)
