"""The Python blocks of README.md and docs/ (the op pages are generated from the docstrings, so their
blocks are the docstrings' examples) and the ``::`` blocks of every other docstring of numba_tma
(read from the source, so a module needing an extra is read too), each with how
tests/test_doc_examples.py checks it.

A block's kind:

* ``signature``: the one-line ``family.op(...)`` heading an op's section of a generated page (its
  parameters are checked against the declaration by tests/test_docs.py; not an example);
* ``fragment``: its first line is ``# fragment: <why>`` — a piece of code on purpose (an excerpt of
  an example checked elsewhere, a reproducer needing more than the page shows), counted, not run;
* ``doctest``: ``>>>`` lines, run as a doctest;
* ``kernel``: the body of a kernel (every block of an op page, of a docstring of
  ``numba_tma/intrinsics/``; on another page, marked ``<!-- example: kernel FAMILY -->`` on the
  line before the fence), compiled for the op's
  architecture with a stand-in for each name it uses but does not define (``doc_stand_ins``); a
  block defining a ``@cuda.jit`` kernel has the kernel compiled, its parameters typed by name;
* ``program``: the other blocks of a page (or of a docstring), run in order in one namespace per
  page, in this process (they compile, inspect and encode; nothing launches);
* ``simulator`` (marked ``<!-- example: simulator -->``): run under the CUDA simulator after the
  page's ``program`` and ``simulator`` blocks before it, launches and all;
* ``mlir`` (marked ``<!-- example: mlir -->``; every docstring block of ``numba_tma/mlir/``): a
  ``program`` block of the numba-cuda-mlir host, run when the ``mlir`` extra is installed.
"""

import ast
import builtins
import dataclasses
import pathlib
import re

ROOT = pathlib.Path(__file__).parents[1]
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))]
KINDS = ("signature", "fragment", "doctest", "kernel", "program", "simulator", "mlir")
_FENCE = re.compile(r"^```python\n(.*?)^```\n", re.S | re.M)
_MARK = re.compile(r"<!-- example: (\w+)(?: (\w+))? -->\n$")
_SECTION = re.compile(r"^## `(\w+)\.(\w+)`$", re.M)


@dataclasses.dataclass(frozen=True)
class Block:
    page: str
    line: int
    text: str
    kind: str
    family: str = ""     # a kernel block: the op family whose stand-ins and architecture it takes
    op: str = ""         # a block of an op's section: "family.op"

    @property
    def id(self):
        return f"{self.page}:{self.line}"


def _generated(page):
    return page.startswith("docs/ops/") or page == "docs/ops.md"


def _kind(page, text, before, section):
    first = text.splitlines()[0]
    if first.startswith("# fragment: "):
        return "fragment", ""
    if first.startswith(">>> "):
        return "doctest", ""
    if _generated(page):
        name = ".".join(section) if section else ""
        if text.count("\n") == 1 and text.startswith(f"{name}(") and before.rstrip().endswith(f"## `{name}`"):
            return "signature", ""
        return "kernel", pathlib.Path(page).stem if page.count("/") == 2 else f"amd.{pathlib.Path(page).stem}"
    mark = _MARK.search(before)
    if mark is None:
        return "program", ""
    if mark.group(1) not in KINDS:
        raise ValueError(f"{page}: unknown example mark {mark.group(0)!r}; kinds: {KINDS}")
    return mark.group(1), mark.group(2) or ""


def _docstring_blocks(pages):
    """The ``::`` blocks of numba_tma's docstrings (module, class, function) not on a page."""
    from numba_tma.docgen import markdown_of

    on_pages = {b.text for b in pages}
    out = []
    for path in sorted((ROOT / "numba_tma").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text())
        for node in [tree, *ast.walk(tree)]:
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) or not ast.get_docstring(node):
                continue
            line = node.body[0].lineno
            for text in re.findall(r"```python\n(.*?)```", markdown_of(ast.get_docstring(node)), re.S):
                first = text.splitlines()[0]
                if text in on_pages or first.startswith(">>> "):   # a docstring's doctests: tests/test_doctests.py
                    continue
                kind = "fragment" if first.startswith("# fragment: ") \
                    else "kernel" if where.startswith("numba_tma/intrinsics/") else \
                    "mlir" if where.startswith("numba_tma/mlir/") else "program"
                out.append(Block(where, line, text, kind))
    return list({b.id + b.text: b for b in out}.values())


def blocks():
    """Every block of the pages, then of the docstrings not on a page."""
    pages = _page_blocks()
    return pages + _docstring_blocks(pages)


def _page_blocks():
    out = []
    for page in PAGES:
        text = (ROOT / page).read_text()
        for m in _FENCE.finditer(text):
            before = text[:m.start()]
            sections = list(_SECTION.finditer(before))
            section = sections[-1].groups() if sections else None
            kind, family = _kind(page, m.group(1), before, section)
            out.append(Block(page, before.count("\n") + 1, m.group(1), kind, family,
                             ".".join(section) if section and _generated(page) else ""))
    return out


class _Names(ast.NodeVisitor):
    """The names a block reads before it binds them, in order of first use (a value before the
    name it is assigned to, a loop's iterable before its target)."""

    def __init__(self):
        self.bound, self.free = set(dir(builtins)), []

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self.bound.add(node.id)
        elif node.id not in self.bound and node.id not in self.free:
            self.free.append(node.id)

    def visit_Assign(self, node):
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AugAssign(self, node):
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.visit_Name(ast.Name(node.target.id, ast.Load()))
        self.visit(node.target)

    def visit_For(self, node):
        self.visit(node.iter)
        self.visit(node.target)
        for statement in node.body + node.orelse:
            self.visit(statement)

    def visit_FunctionDef(self, node):
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.bound.add(node.name)

    def visit_Import(self, node):
        self.bound.update((a.asname or a.name).split(".")[0] for a in node.names)

    visit_ImportFrom = visit_Import


def free_names(text):
    """The names ``text`` uses without defining them."""
    finder = _Names()
    finder.visit(ast.parse(text))
    return finder.free


def unmarked_code(path):
    """The first lines of indented code in ``path``'s docstrings that follow a paragraph not ending
    in ``::`` (so that no ``::`` block, and no check, holds them); ``>>>`` lines are doctests."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node):
            lines = ast.get_docstring(node).splitlines()
            for i, line in enumerate(lines[1:], 1):
                before = [b for b in lines[:i] if b.strip()]
                if line.startswith("    ") and not lines[i - 1].strip() and before and \
                        not before[-1].startswith((" ", "*", "-")) and not before[-1].rstrip().endswith("::") \
                        and not line.lstrip().startswith(">>>"):
                    found.append(line.strip())
    return found
