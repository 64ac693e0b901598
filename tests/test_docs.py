"""Every public NVIDIA op documents the PTX it emits, its minimum architecture and an example, and
the catalogue (docs/ops.md) is what the declarations generate."""

import pathlib

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
    ("tlx.barrier_wait", {"mbarrier.wait"}),                           # TLX name
    ("cuda::ptx::mbarrier_init", {"mbarrier.init"}),                   # cuda::ptx name
    ("UTMASTG", {"tma.store", "tma.scatter4"}),                        # SASS opcode
    ("tlx.async_descriptor_store", {"tma.store", "tma.reduce", "bulk.wait_group"}),  # ..._store_wait
    ("fence.proxy.async", {"fence.proxy_async"}),
])
def test_an_op_is_found_by_any_of_its_names(text, expected):
    assert {op.name for op in catalog.find(text)} == expected
