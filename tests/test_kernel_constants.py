"""The sizes a kernel gives its arrays and fragments are constants numba-cuda can read: a literal,
a module or closure name, or arithmetic of literals only (which Python folds).  An expression of a
name (``cuda.shared.array(N * 64, ...)``, ``wgmma.zeros(N // 2)``) is typed as a plain integer,
which numba-cuda refuses as a shape and wgmma as a count — under the simulator it runs, so such a
kernel in a GPU-only test or an example breaks unseen until a GPU run (it did, twice).  Every
module of the package, the tests, the examples and the benchmarks is read."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: (the call's last two names) -> the position of its size argument
SIZED = {("shared", "array"): 0, ("local", "array"): 0, ("wgmma", "zeros"): 0, ("wgmma", "load"): 3}


def _names(node):
    """``cuda.shared.array`` -> ("cuda", "shared", "array")."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return tuple(reversed(names))


def _literal_arithmetic(node):
    if isinstance(node, ast.BinOp):
        return _literal_arithmetic(node.left) and _literal_arithmetic(node.right)
    if isinstance(node, ast.UnaryOp):
        return _literal_arithmetic(node.operand)
    return isinstance(node, ast.Constant)


def constant_for_numba(node) -> bool:
    """Whether a size argument is one numba-cuda reads as a constant."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.Tuple):
        return all(constant_for_numba(e) for e in node.elts)
    return _literal_arithmetic(node)


def offenders(source: str):
    """``(line, call)`` of each sized call in ``source`` whose size is an expression of names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            position = SIZED.get(_names(node.func)[-2:])
            if position is not None and len(node.args) > position and not constant_for_numba(node.args[position]):
                found.append((node.lineno, ast.unparse(node)))
    return found


@pytest.mark.parametrize("source, bad", [
    ("t = cuda.shared.array(N * 64, numba.uint16)", True),
    ("o = wgmma.zeros(N // 2)", True),
    ("s = wgmma.load(a, 0, 0, 2 * COUNT)", True),
    ("t = cuda.shared.array(64 * 64, numba.uint16)\no = wgmma.zeros(HALF_N)\ns = wgmma.load(a, 0, 0, 32)", False),
    ("t = cuda.shared.array((ROWS, 64), numba.float32)\nx = cuda.local.array(-(-8), numba.int32)", False),
])
def test_the_rule_tells_a_folded_size_from_an_expression(source, bad):
    assert bool(offenders(source)) == bad


def test_every_kernel_size_is_a_constant_for_numba():
    paths = sorted(p for folder in ("numba_tma", "tests", "examples", "benchmarks") for p in (ROOT / folder).rglob("*.py"))
    assert len(paths) > 300
    found = [f"{p.relative_to(ROOT)}:{line}: {call}" for p in paths for line, call in offenders(p.read_text())]
    assert not found, "sizes numba-cuda cannot read as constants (compute them at module level):\n" + "\n".join(found)
