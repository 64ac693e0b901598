"""numba_tma.attention.torch_ops registered against the stand-in ``torch`` (tests/stand_in_torch.py):
the op's name, schema and mutations, idempotence, its fake's shape and dtype, and that its
implementation calls numba_tma.attention.forward with every argument."""

import pytest

import stand_in_torch
from numba_tma.attention import torch_ops


@pytest.fixture
def torch(monkeypatch):
    monkeypatch.setattr(torch_ops, "OPS", {})
    return stand_in_torch.install(monkeypatch)


def test_the_op_is_registered_once_with_its_schema(torch):
    ops = torch_ops.register()
    op = torch.registered["numba_tma::attention_forward"]
    assert ops == {"attention_forward": op} and op.mutates_args == ()
    assert op.schema == ('(Tensor q, Tensor k, Tensor v, bool causal=False, float? softmax_scale=None, '
                         'str layout="bshd", Tensor? cu_seqlens_q=None, Tensor? cu_seqlens_k=None) -> Tensor')
    fake = op.fake(stand_in_torch.Tensor((2, 300, 8, 128), "bf16"), None, None)
    assert (fake.shape, fake.dtype) == ((2, 300, 8, 128), "bf16")
    torch.registered.clear()
    assert torch_ops.register() is ops and torch.registered == {}          # idempotent


def test_the_implementation_calls_forward(torch, monkeypatch):
    from numba_tma.attention import call

    calls = []
    monkeypatch.setattr(call, "forward", lambda *args, **kw: calls.append((args, kw)) or "O")
    assert torch_ops.register()["attention_forward"].impl("Q", "K", "V", True, 0.5, "bshd", "CQ", "CK") == "O"
    assert calls == [(("Q", "K", "V"), {"causal": True, "softmax_scale": 0.5, "layout": "bshd",
                                        "cu_seqlens_q": "CQ", "cu_seqlens_k": "CK"})]
