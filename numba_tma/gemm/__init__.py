"""numba_tma.gemm: a GEMM on the caller's own arrays (PyTorch tensors, CuPy arrays, numba device
arrays), on Hopper tensor cores, with fused epilogues; docs/gemm.md.

Example::

    # fragment: torch tensors on a GPU
    from numba_tma import gemm
    y = gemm.matmul(x, w.T, bias=b, activation="gelu_tanh")      # gelu(x @ w.T + b)
    print(gemm.explain(x, w.T, bias=b, activation="gelu_tanh"))  # which kernel, and why
    out = gemm.grouped_matmul(tokens, experts, offsets)          # a mixture of experts' groups

:func:`matmul` (:mod:`.plans`) checks the arguments, chooses a configuration (:mod:`.config`; a
:class:`Config` overrides it, ``config="autotune"`` times the candidates once per shape class,
:func:`autotune`, :mod:`.tuning`), stages what TMA cannot read (:mod:`.staging`), composes the epilogue
(:mod:`.epilogues`) and launches the kernel (:mod:`.kernels`).  With PyTorch installed the calls are
also ``torch.ops.numba_tma.matmul`` / ``grouped_matmul`` (:mod:`.torch_ops`).
"""

import importlib.util

from .config import Config
from .grouped import grouped_matmul, grouped_plan
from .plans import Plan, autotune, explain, matmul, plan

__all__ = ["Config", "Plan", "autotune", "explain", "grouped_matmul", "grouped_plan", "matmul", "plan"]

if importlib.util.find_spec("torch") is not None:
    from .torch_ops import register as _register_torch_ops
    try:
        _register_torch_ops()
    except ImportError:          # a torch that cannot import here (no CUDA libraries): no ops
        pass
