"""``torch.ops.numba_tma.attention_forward``: :func:`numba_tma.attention.forward` as a PyTorch custom
op (``torch.library.custom_op``, PyTorch 2.4 or newer), with a fake implementation giving the
output's shape and dtype (q's), so ``torch.compile`` traces a call without running it.

:func:`register` registers it, once; the package calls it where PyTorch is importable.
"""

from __future__ import annotations

__all__ = ["SCHEMA", "OPS", "register"]

SCHEMA = ("(Tensor q, Tensor k, Tensor v, bool causal=False, float? softmax_scale=None, str layout=\"bshd\", "
          "Tensor? cu_seqlens_q=None, Tensor? cu_seqlens_k=None) -> Tensor")
"""``numba_tma::attention_forward``'s schema."""

OPS: dict = {}
"""The registered op (``torch.library.custom_op``'s object) by name, once :func:`register` ran."""


def register() -> dict:
    """Register ``numba_tma::attention_forward`` with PyTorch (once: later calls return the same
    op); :data:`OPS`."""
    if OPS:
        return OPS
    import torch

    def attention_forward(q, k, v, causal=False, softmax_scale=None, layout="bshd", cu_seqlens_q=None,
                          cu_seqlens_k=None):
        from .call import forward

        return forward(q, k, v, causal=causal, softmax_scale=softmax_scale, layout=layout,
                       cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k)

    def attention_forward_fake(q, k, v, causal=False, softmax_scale=None, layout="bshd", cu_seqlens_q=None,
                               cu_seqlens_k=None):
        return q.new_empty(q.shape, dtype=q.dtype)

    op = torch.library.custom_op("numba_tma::attention_forward", attention_forward, mutates_args=(), schema=SCHEMA)
    op.register_fake(attention_forward_fake)
    OPS["attention_forward"] = op
    return OPS
