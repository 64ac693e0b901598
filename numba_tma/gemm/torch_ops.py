"""``torch.ops.numba_tma.matmul`` and ``torch.ops.numba_tma.grouped_matmul``: :func:`numba_tma.gemm.matmul`
and :func:`numba_tma.gemm.grouped_matmul` as PyTorch custom ops (``torch.library.custom_op``,
PyTorch 2.4 or newer), each with a fake implementation giving the output's shape and dtype, so
``torch.compile`` traces a call (``fullgraph=True`` included) without running it.

:func:`register` registers both, once; the package calls it where PyTorch is importable.  The
output is ``(M, N)`` for ``a`` ``(M, K)`` and ``b`` ``(K, N)`` (``(rows, N)`` for a grouped call,
``b`` ``(groups, K, N)``), of ``out_dtype``, else bf16 for fp8 inputs, else ``a``'s dtype.
"""

from __future__ import annotations

__all__ = ["MATMUL_SCHEMA", "GROUPED_MATMUL_SCHEMA", "OPS", "register"]

MATMUL_SCHEMA = ("(Tensor a, Tensor b, Tensor? bias=None, str? activation=None, float alpha=1.0, float beta=0.0, "
                 "Tensor? c=None, Tensor? residual=None, ScalarType? out_dtype=None, Tensor? a_scale=None, "
                 "Tensor? b_scale=None) -> Tensor")
"""``numba_tma::matmul``'s schema."""
GROUPED_MATMUL_SCHEMA = ("(Tensor a, Tensor b, Tensor offsets, Tensor? bias=None, str? activation=None, "
                         "ScalarType? out_dtype=None) -> Tensor")
"""``numba_tma::grouped_matmul``'s schema."""

OPS: dict = {}
"""The registered ops (``torch.library.custom_op``'s objects) by name, once :func:`register` ran."""


def _out_dtype(torch, a, out_dtype):
    """``out_dtype``, else bf16 for fp8 ``a``, else ``a``'s dtype."""
    if out_dtype is not None:
        return out_dtype
    return torch.bfloat16 if a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2) else a.dtype


def register() -> dict:
    """Register ``numba_tma::matmul`` and ``numba_tma::grouped_matmul`` with PyTorch (once: later
    calls return the same ops); :data:`OPS`."""
    if OPS:
        return OPS
    import torch

    def matmul(a, b, bias=None, activation=None, alpha=1.0, beta=0.0, c=None, residual=None, out_dtype=None,
               a_scale=None, b_scale=None):
        from .plans import matmul as gemm

        return gemm(a, b, bias=bias, activation=activation, alpha=alpha, beta=beta, c=c, residual=residual,
                    out_dtype=out_dtype, a_scale=a_scale, b_scale=b_scale)

    def matmul_fake(a, b, bias=None, activation=None, alpha=1.0, beta=0.0, c=None, residual=None, out_dtype=None,
                    a_scale=None, b_scale=None):
        return a.new_empty((a.shape[0], b.shape[-1]), dtype=_out_dtype(torch, a, out_dtype))

    def grouped_matmul(a, b, offsets, bias=None, activation=None, out_dtype=None):
        from .grouped import grouped_matmul as gemm

        return gemm(a, b, offsets, bias=bias, activation=activation, out_dtype=out_dtype)

    def grouped_matmul_fake(a, b, offsets, bias=None, activation=None, out_dtype=None):
        return a.new_empty((a.shape[0], b.shape[-1]), dtype=_out_dtype(torch, a, out_dtype))

    ops = {}
    for name, impl, fake, schema in (("matmul", matmul, matmul_fake, MATMUL_SCHEMA),
                                     ("grouped_matmul", grouped_matmul, grouped_matmul_fake, GROUPED_MATMUL_SCHEMA)):
        op = torch.library.custom_op(f"numba_tma::{name}", impl, mutates_args=(), schema=schema)
        op.register_fake(fake)
        ops[name] = op
    OPS.update(ops)
    return OPS
