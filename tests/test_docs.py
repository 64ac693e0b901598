"""Every public NVIDIA op documents the PTX it emits, its minimum architecture and an example, and
the catalogue (docs/ops.md) is what the declarations generate."""

import pathlib
import re
import sys

import pytest

import numba_tma
from numba_tma import catalog

OPS = [(family, name, getattr(getattr(numba_tma, family), name))
       for family in numba_tma.FAMILIES for name in getattr(numba_tma, family).__all__]


@pytest.mark.parametrize("module,name,op", OPS, ids=[f"{m}.{n}" for m, n, _ in OPS])
def test_op_docstring(module, name, op):
    doc = op.__doc__ or ""
    assert "PTX::" in doc and "sm_" in doc and "PTX ISA" in doc, f"{module}.{name}: PTX / arch missing"
    assert "Example" in doc, f"{module}.{name}: no example"
    family = getattr(numba_tma, module)
    assert op.__module__ == f"numba_tma.{module}" or name in getattr(family, "ALIASES", ()) + getattr(family, "HELPERS", ())


def test_docs_ops_md_is_generated_from_the_declarations():
    path = pathlib.Path(__file__).parents[1] / "docs" / "ops.md"
    assert path.read_text() == catalog.markdown(), "regenerate: python -m numba_tma.catalog > docs/ops.md"


@pytest.mark.parametrize("text,expected", [
    ("cp.async.bulk.tensor", {"tma.load", "tma.load_im2col", "tma.store",
                              "tma.gather4", "tma.scatter4"}),       # PTX mnemonic
    ("tlx.barrier_wait", {"mbarrier.wait", "ring.wait"}),              # TLX name (the op; the pipeline step)
    ("cuda::ptx::mbarrier_init", {"mbarrier.init"}),                   # cuda::ptx name
    ("UTMASTG", {"tma.store", "tma.scatter4"}),                        # SASS opcode
    ("tlx.async_descriptor_store", {"tma.store", "tma.reduce", "bulk.wait_group",         # ..._store_wait
                                    "pipeline.TmaStorePipeline"}),
    ("PipelineTmaAsync", {"pipeline.TmaPipeline", "ring = pipeline.create(bars)"}),      # CuTe DSL objects
    ("consumer_release", {"ring.release"}),
    ("fence.proxy.async", {"fence.proxy_async"}),
])
def test_an_op_is_found_by_any_of_its_names(text, expected):
    assert {op.name for op in catalog.find(text)} == expected


# -- generated pages, stubs and signatures ------------------------------------------------------------

import ast  # noqa: E402
import inspect  # noqa: E402
import pydoc  # noqa: E402

from numba_tma import docgen  # noqa: E402
from numba_tma.intrinsics._core import OPS, Operand  # noqa: E402

ROOT = pathlib.Path(__file__).parents[1]


def test_generated_pages_and_stubs_are_current():
    assert docgen.stale(ROOT) == [], "regenerate: python -m numba_tma.docgen"


def test_every_family_has_a_page_and_a_stub():
    for family in docgen.FAMILIES:   # the NVIDIA families and amd
        assert (ROOT / "docs" / "ops" / f"{family}.md").is_file() and (ROOT / docgen._stub_path(family)).is_file()
    for part in ("workgroup", "async_loads", "scheduling", "tensor_descriptors", "lanes"):   # amd's families
        page = (ROOT / "docs" / "ops" / "amd" / f"{part}.md").read_text()
        assert page.startswith(f"# `numba_tma.amd`: {part}\n") and f"(amd/{part}.md#amd" in \
            (ROOT / "docs" / "ops" / "amd.md").read_text()


@pytest.mark.parametrize("text,expected", [
    ("amd.dpp", {"amd.dpp", "amd.dpp8"}),                                           # Python name
    ("v_readfirstlane_b32", {"amd.readfirstlane", "amd.wave_id"}),                 # ISA mnemonic
    ("llvm.amdgcn.raw.ptr.buffer.load.lds", {"amd.buffer_load_to_local"}),        # LLVM intrinsic
    ("tlx.async_amd_descriptor_load", {"amd.async_amd_descriptor_load", "amd.async_amd_descriptor_load_fused"}),
])
def test_an_amd_op_is_found_by_any_of_its_names(text, expected):
    assert {op.name for op in catalog.find(text)} == expected


def test_every_op_of_both_vendors_is_in_the_catalogue_and_the_pages():
    text = catalog.markdown()
    assert {op.vendor for op in OPS.values()} == {"nvidia", "amd"}
    assert [n for n in OPS if f"`{n}`" not in text] == []


DECLARED = sorted(OPS.items())


@pytest.mark.parametrize("name,op", DECLARED, ids=[n for n, _ in DECLARED])
def test_help_shows_the_signature_from_the_declaration(name, op):
    public = getattr(getattr(numba_tma, op.family), op.short_name)
    params = list(inspect.signature(public).parameters)
    assert sorted(params) == sorted([o.name for o in op.operands] + [q.name for q in op.qualifiers])
    assert f"{op.short_name}{inspect.signature(public)}" in pydoc.render_doc(public, renderer=pydoc.plaintext)


def _stub_functions(family):
    tree = ast.parse((ROOT / docgen._stub_path(family)).read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


@pytest.mark.parametrize("name,op", DECLARED, ids=[n for n, _ in DECLARED])
def test_the_stub_has_each_op_with_its_parameters_and_docstring(name, op):
    stub = _stub_functions(op.family)[op.short_name]
    public = getattr(getattr(numba_tma, op.family), op.short_name)
    assert [a.arg for a in stub.args.args] == list(inspect.signature(public).parameters)
    assert all(a.annotation is not None for a in stub.args.args)
    assert ast.get_docstring(stub) == inspect.cleandoc(op.docstring())
    for q in op.qualifiers:   # each qualifier's values are spelled out for the IDE
        arg = next(a for a in stub.args.args if a.arg == q.name)
        assert ast.unparse(arg.annotation) == f"Literal[{', '.join(repr(v) for v in q.choices)}]"


def test_the_package_stub_names_every_public_name():
    tree = ast.parse((ROOT / "numba_tma" / "__init__.pyi").read_text())
    imported = {a.asname for node in tree.body if isinstance(node, ast.ImportFrom) for a in node.names}
    assert set(numba_tma.__all__) <= imported


def test_the_stubs_ship_with_the_package():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'numba_tma = ["py.typed", "*.pyi"]' in text and (ROOT / "numba_tma" / "py.typed").is_file()


def test_an_operand_kind_without_an_annotation_is_refused():
    class Novel(Operand):
        pass

    with pytest.raises(TypeError, match="no stub annotation for operand kind Novel"):
        docgen._annotation(Novel("x"))


def test_restructured_text_becomes_markdown():
    doc = inspect.cleandoc("""Do a thing with :func:`numba_tma.tma.load` and ``x``.

    Example::

        tma.load(desc, tile, (0, 0), bars)

    PTX::

        cp.async.bulk.tensor.2d [dst];

    Requires sm_90 or newer, PTX ISA 8.0.
    With ``cta_group=2``: sm_100a or newer, PTX ISA 8.6.
    """)
    assert docgen.markdown_of(doc) == (
        "Do a thing with `numba_tma.tma.load` and `x`.\n\nExample:\n\n```python\ntma.load(desc, tile, (0, 0), bars)\n"
        "```\n\nPTX:\n\n```ptx\ncp.async.bulk.tensor.2d [dst];\n```\n\nRequires sm_90 or newer, PTX ISA 8.0.\n\n"
        "- With `cta_group=2`: sm_100a or newer, PTX ISA 8.6.\n")


def test_a_type_checker_sees_the_device_api_through_the_stubs(tmp_path, monkeypatch):
    """What an IDE sees: mypy resolves ``numba_tma.tma`` (and the ``import numba_tma.mbarrier`` form)
    to the stubs, with each op's parameters, result and allowed qualifier values."""
    api = pytest.importorskip("mypy.api", reason="mypy (in the test extra) is not installed")
    monkeypatch.setenv("MYPYPATH", str(ROOT))   # this checkout's numba_tma, wherever pytest runs from
    source = tmp_path / "kernel.py"
    source.write_text("import numba_tma.mbarrier\nfrom numba_tma import tma\n"
                      "reveal_type(numba_tma.mbarrier.try_wait)\n"
                      "tma.load(desc, tile, (0, 0), bars, dst_space='global')\n"
                      "desc = tile = bars = None\n")
    out, _, status = api.run([str(source), "--follow-imports=silent", "--ignore-missing-imports",
                              "--cache-dir", str(tmp_path / "cache"), "--python-executable", sys.executable])
    assert status == 1, out
    assert "def (bar: Any, phase: int, suspend_ns: int | None =" in out and ") -> bool" in out
    assert "Argument \"dst_space\" to \"load\" has incompatible type \"Literal['global']\"" in out


def test_the_first_kernel_of_getting_started_is_short():
    """Its blocks run (tests/test_doc_examples.py); its first kernel stays under 15 lines."""
    block = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "getting-started.md").read_text(), re.S)[0]
    kernel = block.split("@cuda.jit", 1)[1]
    assert len(kernel.strip().splitlines()) + 1 <= 15, "the first kernel must stay under 15 lines"


def test_every_wgmma_fragment_helper_is_in_the_catalogue():
    """The fragment helpers (public, not PTX declarations) are found by name and instruction too:
    ``wgmma.ANCHOR_NAMES`` names every one of ``wgmma.HELPERS``."""
    from numba_tma import catalog
    from numba_tma.intrinsics import wgmma as declared

    assert sorted(name.removeprefix("wgmma.") for name in declared.ANCHOR_NAMES) == sorted(declared.HELPERS)
    assert [entry.name for entry in catalog.find("cvt.rn.f16x2")] == ["wgmma.store_f16", "wgmma.store_shared_f16"]
    assert [entry.name for entry in catalog.find("wgmma.map")] == ["wgmma.map"]
