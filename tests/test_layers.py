"""The package's layers import only downward, with no circle (README, "Layers").

Every import statement of every module counts, those inside functions too, and every
``importlib.import_module("numba_tma...")`` (a module named by a string, or an f-string's leading
text).  A new module must be given a layer here."""

import ast
import pathlib

import numba_tma

ROOT = pathlib.Path(numba_tma.__file__).parent

# lowest first; a module is in the layer of its longest matching prefix
LAYERS = [
    ("base", ["numba_tma.errors", "numba_tma.debugging", "numba_tma.reductions", "numba_tma.cluster_masks",
              "numba_tma.numba_cuda", "numba_tma.launch_limits", "numba_tma.backend"]),
    ("host descriptors", ["numba_tma.descriptors"]),
    ("declaration core", ["numba_tma.declarations"]),
    # the bindings of the declarations, one per vendor, with what they emit through: NVIDIA's inline
    # asm; AMD's emitters (LLVM intrinsics, the vmcnt back end) and its amdgcn Numba target
    ("bindings", ["numba_tma.intrinsics._core", "numba_tma.intrinsics.debug", "numba_tma.intrinsics.tensor_map_type",
                  "numba_tma.intrinsics.hosts.llvm_emitter", "numba_tma.intrinsics.hosts.mlir_emitter",
                  "numba_tma.intrinsics.hosts.host", "numba_tma.intrinsics.hosts.llvm_host",
                  "numba_tma.intrinsics.hosts.mlir_adapter", "numba_tma.intrinsics.hosts.mlir_host",
                  *(f"numba_tma.amd.{m}" for m in ("_core", "errors", "targets", "llvm_ir", "vmcnt", "codegen",
                                                   "numba_target", "power", "lds", "dma", "buffer", "global_load",
                                                   "sync", "tdm", "tdm_layout", "lanes"))]),
    ("op families and their twins", ["numba_tma.intrinsics", "numba_tma.simulator", "numba_tma.amd"]),
    ("the GPU backend", ["numba_tma.gpu"]),
    ("the backend and the families this process runs", ["numba_tma.ops"]),
    ("user-level modules", ["numba_tma.arrays", "numba_tma.mlir", "numba_tma.launch", "numba_tma.graphs",
                            "numba_tma.shared_memory",
                            "numba_tma.pipeline", "numba_tma.tlx",
                            "numba_tma.inspect",
                            "numba_tma.catalog", "numba_tma.testing", "numba_tma.viz", "numba_tma.pytest_plugin"]),
    ("the package", ["numba_tma"]),
    ("tools", ["numba_tma.docgen"]),
]


def _name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_exists(name):
    path = ROOT.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _imported_by_name(node):
    """The ``numba_tma`` module an ``importlib.import_module(...)`` call names (a string, or the
    leading text of an f-string), or None."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "import_module" or
            isinstance(func, ast.Name) and func.id == "import_module") or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.JoinedStr):
        first = first.values[0] if first.values else None
        text = first.value.rsplit(".", 1)[0] if isinstance(first, ast.Constant) and "." in first.value else None
    else:
        text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    return text if text is not None and (text == "numba_tma" or text.startswith("numba_tma.")) else None


def _imports(path, name):
    return _imports_of(path.read_text(), name, path.name == "__init__.py")


def _imports_of(source, name, is_package):
    package = name if is_package else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            named = _imported_by_name(node)
            if named is not None:
                found.add(named)
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "numba_tma" or target.startswith("numba_tma."):
                for alias in node.names:   # `from . import x`: x is a module, or a name of the package
                    full = f"{target}.{alias.name}"
                    found.add(full if _module_exists(full) else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name == "numba_tma" or a.name.startswith("numba_tma."))
    return found - {name}


GRAPH = {_name(p): _imports(p, _name(p)) for p in sorted(ROOT.rglob("*.py"))}


def layer(name):
    best = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    return None if best is None else best[0]


def test_the_walk_sees_the_imports():
    """A sanity check of the walk itself (it would otherwise pass vacuously)."""
    assert "numba_tma.intrinsics._core" in GRAPH["numba_tma.intrinsics.tma"]
    assert "numba_tma.descriptors.tile_layout" in GRAPH["numba_tma.intrinsics.tensor_map_type"]
    assert "numba_tma.ops" in GRAPH["numba_tma"] and len(GRAPH) > 60


def test_the_walk_reads_modules_named_by_strings():
    """``importlib.import_module`` with a module's name counts as an import of it (the walk would
    otherwise miss an arrow up or a circle made that way)."""
    source = ("import importlib\n"
              "def f(family):\n"
              "    importlib.import_module('numba_tma.intrinsics')\n"
              "    importlib.import_module(f'numba_tma.simulator.{family}')\n"
              "    importlib.import_module(f'{__name__}.{family}')\n"
              "    importlib.import_module('json')\n")
    assert _imports_of(source, "numba_tma.base_module", False) == {"numba_tma.intrinsics", "numba_tma.simulator"}


def test_every_module_has_a_layer():
    assert [m for m in GRAPH if layer(m) is None] == []


def test_no_module_imports_a_higher_layer():
    upward = [f"{m} ({LAYERS[layer(m)][0]}) imports {d} ({LAYERS[layer(d)][0]})"
              for m, deps in GRAPH.items() for d in sorted(deps) if layer(d) is not None and layer(d) > layer(m)]
    assert upward == []


def _circles(graph=None):
    """Each import circle of ``graph`` (the package's) once, as the list of its modules."""
    graph = GRAPH if graph is None else graph
    circles, state = [], {}

    def visit(m, stack):
        state[m] = "open"
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == "open":
                circles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d, stack)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    return circles


def test_the_circle_search_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_import_circle():
    assert [" -> ".join(c) for c in _circles()] == []
