"""numba_tma.attention: a fused attention forward on the caller's own arrays (PyTorch tensors,
CuPy arrays, numba device arrays), on Hopper tensor cores, FlashAttention's structure; docs/attention.md.

Example::

    # fragment: torch tensors on a GPU, (batch, seq, heads, d) bf16
    from numba_tma import attention
    o = attention.forward(q, k, v, causal=True)
    o, lse = attention.forward(q, k, v, return_lse=True)

:func:`forward` (:mod:`.forward`) checks the arguments and launches the kernel (:mod:`.kernels`).
"""

from .forward import forward

__all__ = ["forward"]
