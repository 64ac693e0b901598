"""One backend switch (numba_tma.ops), read once: the user-level modules call the chosen backend
(:mod:`numba_tma.backend`) and none branches on the simulator flag; no module patches a class of
numba_tma's at import."""

import ast
import importlib
import inspect
import pathlib

import numba_tma
from numba_tma import ops
from numba_tma.backend import Backend
from numba_tma.descriptors import device_layer

ROOT = pathlib.Path(numba_tma.__file__).parent
_FLAG_NAMES = {"SIMULATOR", "SIMULATED", "ENABLE_CUDASIM"}


def _reads_the_flag(tree) -> bool:
    """Whether a module's code (not its docstrings) reads the simulator flag: numba-cuda's
    ``ENABLE_CUDASIM``, the environment variable, or numba_tma's ``SIMULATOR`` / ``SIMULATED``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in _FLAG_NAMES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in _FLAG_NAMES:
            return True
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("get", "getenv") and node.args and \
                isinstance(node.args[0], ast.Constant) and node.args[0].value == "NUMBA_ENABLE_CUDASIM":
            return True
    return False


def test_the_flag_scan_sees_each_way_of_reading_it():
    reads = ["if SIMULATOR:\n    pass", "x = config.ENABLE_CUDASIM", "os.environ.get('NUMBA_ENABLE_CUDASIM')",
             "y = ops.SIMULATOR"]
    assert all(_reads_the_flag(ast.parse(source)) for source in reads)
    assert not _reads_the_flag(ast.parse('"""NUMBA_ENABLE_CUDASIM=1 in a docstring"""\nenv = {"NUMBA_ENABLE_CUDASIM": "1"}'))


def test_the_simulator_flag_is_read_in_one_module():
    readers = sorted(path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.py")
                     if _reads_the_flag(ast.parse(path.read_text())))
    assert readers == ["ops.py"]


def _patched_classes(tree) -> list:
    """``Name.attribute = ...`` at a module's top level (through ``if`` / ``try``), ``Name`` imported
    from numba_tma: a class (or module) of numba_tma patched at import."""
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.level or (node.module or "").startswith("numba_tma")) for alias in node.names}
    found, statements = [], list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, (ast.If, ast.Try)):
            statements += node.body + node.orelse + getattr(node, "finalbody", []) + \
                [s for h in getattr(node, "handlers", []) for s in h.body]
        elif isinstance(node, ast.Assign):
            found += [ast.unparse(t) for t in node.targets for t in ast.walk(t)
                      if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in imported]
    return found


def test_the_patch_scan_sees_a_patch():
    assert _patched_classes(ast.parse("from .config import TmaPipeline\nif True:\n    TmaPipeline.create = f\n")) == \
        ["TmaPipeline.create"]


def test_no_class_of_numba_tma_is_patched_at_import():
    """(A module's own variable set by another, as ``scheduler.EXIT_HOOK``, is no class.)"""
    patched = []
    for path in sorted(ROOT.rglob("*.py")):
        found = _patched_classes(ast.parse(path.read_text()))
        if found:
            parts = path.relative_to(ROOT.parent).with_suffix("").parts
            module = importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
            patched += [f"{module.__name__}: {target}" for target in found
                        if inspect.isclass(vars(module).get(target.split(".")[0]))]
    assert patched == []


def test_the_backend_chosen_is_installed():
    """ops chose one backend, a :class:`Backend` (every method of it provided), and installed it:
    the descriptors read arrays through its readers."""
    assert isinstance(ops.BACKEND, Backend) and ops.BACKEND.name == ("simulator" if ops.SIMULATOR else "gpu")
    assert device_layer.READERS.host_array is not device_layer._none
    assert (ops.BACKEND.no_gpu is None) is (ops.BACKEND.compiler_missing is None) is (ops.BACKEND.name == "gpu")
