"""Every public NVIDIA op documents the PTX it emits, its minimum architecture and an example."""

import pytest

from numba_tma import fence, mbarrier, tma

OPS = [(m.__name__.rsplit(".", 1)[-1], name, getattr(m, name)) for m in (mbarrier, fence, tma) for name in m.__all__]


@pytest.mark.parametrize("module,name,op", OPS, ids=[f"{m}.{n}" for m, n, _ in OPS])
def test_op_docstring(module, name, op):
    doc = op.__doc__ or ""
    assert "PTX" in doc and "sm_" in doc and "PTX ISA" in doc, f"{module}.{name}: PTX / arch missing"
    assert "Example" in doc, f"{module}.{name}: no example"
    assert op.__module__.endswith(module)
