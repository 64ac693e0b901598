"""numba_tma.attention: a fused attention forward on the caller's own arrays (PyTorch tensors,
CuPy arrays, numba device arrays), on Hopper tensor cores, FlashAttention's structure; docs/attention.md.

Example::

    # fragment: torch tensors on a GPU, (batch, seq, heads, d) bf16
    from numba_tma import attention
    o = attention.forward(q, k, v, causal=True)
    o, lse = attention.forward(q, k, v, return_lse=True)

:func:`forward` (:mod:`.call`) checks the arguments and launches the kernel (:mod:`.kernels`);
:func:`explain` says what a call runs and why (:func:`plan`: a call checked and decided, not launched).
With PyTorch installed it is also ``torch.ops.numba_tma.attention_forward`` (:mod:`.torch_ops`).
"""

import importlib.util

from .call import Plan, explain, forward, plan

__all__ = ["Plan", "explain", "forward", "plan"]

if importlib.util.find_spec("torch") is not None:
    from .torch_ops import register as _register_torch_ops
    try:
        _register_torch_ops()
    except ImportError:          # a torch that cannot import here (no CUDA libraries): no ops
        pass
