"""numba_tma.gemm.torch_ops registered against a stand-in ``torch`` module that records
``torch.library.custom_op`` (PyTorch itself is not needed): the ops' names, schemas and
mutations, idempotence, and the shapes and dtypes their fake implementations give."""

import pytest

import stand_in_torch
from numba_tma.gemm import torch_ops


@pytest.fixture
def torch(monkeypatch):
    """The stand-in torch (tests/stand_in_torch.py), the ops not yet registered."""
    monkeypatch.setattr(torch_ops, "OPS", {})
    return stand_in_torch.install(monkeypatch)


def test_both_ops_are_registered_once_with_their_schemas(torch):
    ops = torch_ops.register()
    assert sorted(torch.registered) == ["numba_tma::grouped_matmul", "numba_tma::matmul"]
    assert ops == {"matmul": torch.registered["numba_tma::matmul"],
                   "grouped_matmul": torch.registered["numba_tma::grouped_matmul"]}
    assert torch.registered["numba_tma::matmul"].schema == (
        "(Tensor a, Tensor b, Tensor? bias=None, str? activation=None, float alpha=1.0, float beta=0.0, "
        "Tensor? c=None, Tensor? residual=None, ScalarType? out_dtype=None, Tensor? a_scale=None, "
        "Tensor? b_scale=None) -> Tensor")
    assert torch.registered["numba_tma::grouped_matmul"].schema == (
        "(Tensor a, Tensor b, Tensor offsets, Tensor? bias=None, str? activation=None, "
        "ScalarType? out_dtype=None) -> Tensor")
    assert all(op.mutates_args == () and op.fake is not None for op in ops.values())
    torch.registered.clear()
    assert torch_ops.register() is ops and torch.registered == {}          # idempotent


@pytest.mark.parametrize("a_dtype, out_dtype, want", [("bf16", None, "bf16"), ("e4m3", None, "bf16"),
                                                      ("e5m2", None, "bf16"), ("e4m3", "f32", "f32"),
                                                      ("f16", "f32", "f32")])
def test_the_fakes_give_the_output_shape_and_dtype(torch, a_dtype, out_dtype, want):
    ops = torch_ops.register()
    out = ops["matmul"].fake(stand_in_torch.Tensor((96, 64), a_dtype), stand_in_torch.Tensor((64, 40), a_dtype), out_dtype=out_dtype)
    assert (out.shape, out.dtype) == ((96, 40), want)
    grouped = ops["grouped_matmul"].fake(stand_in_torch.Tensor((300, 64), a_dtype), stand_in_torch.Tensor((4, 64, 24), a_dtype),
                                         stand_in_torch.Tensor((4,), "i32"), None, None, out_dtype)
    assert (grouped.shape, grouped.dtype) == ((300, 24), want)


def test_the_implementations_call_the_packages_functions(torch, monkeypatch):
    from numba_tma.gemm import grouped, plans

    calls = []
    monkeypatch.setattr(plans, "matmul", lambda *args, **kw: calls.append(("matmul", args, kw)) or "C")
    monkeypatch.setattr(grouped, "grouped_matmul", lambda *args, **kw: calls.append(("grouped", args, kw)) or "G")
    ops = torch_ops.register()
    assert ops["matmul"].impl("A", "B", None, "relu", 2.0, 0.5, "C0", None, "f32", "SA", "SB") == "C"
    assert ops["grouped_matmul"].impl("A", "B", "O", "bias", None, None) == "G"
    assert calls == [("matmul", ("A", "B"), {"bias": None, "activation": "relu", "alpha": 2.0, "beta": 0.5, "c": "C0",
                                             "residual": None, "out_dtype": "f32", "a_scale": "SA", "b_scale": "SB"}),
                     ("grouped", ("A", "B", "O"), {"bias": "bias", "activation": None, "out_dtype": None})]
