"""Every declared refusal (``PtxOp.refusals``), and the checks only lowering can make, refused by
both host compilers with the same error, word for word: the op owns its checks
(:meth:`numba_tma.intrinsics._core.PtxOp.emit`), a host only lowers.

Each call is compiled in the assembly test's kernel by numba-cuda and by numba-cuda-mlir, for the
first architecture the op exists on; a call through a by-value map (``Refusal.desc``) gets, on
numba-cuda-mlir below sm_100, the map in global memory whose type says the same layout
(``numba_tma.mlir.map_in_global``: numba-cuda-mlir 0.6 passes a by-value map from sm_100 only,
docs/numba_cuda_mlir_defects.md, item 3)."""

import pytest

pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed (the mlir extra)")

import numba_tma.mlir  # noqa: E402
from numba_tma import ArchError, OpArgumentError, TensorMap, inspect  # noqa: E402
from numba_tma.intrinsics._core import OPS, Refusal, parse_arch  # noqa: E402
from test_assembles import SIG, _kernel  # noqa: E402
from test_mlir_host import MLIR_SIG, _mlir_kernel  # noqa: E402

# checks that only lowering can make, written here with the message each must give (by hand): a
# float constant (Numba types it without a literal), the target's architecture
LOWERING = [
    (Refusal("out[0] = cache.policy('evict_first', fraction=1.5)",
             "numba_tma: cache.policy: argument 'fraction' must be in (0.0, 1.0]; got 1.5"), OpArgumentError),
    (Refusal("x = 0.0\nout[0] = cache.policy('evict_last', x)",
             "numba_tma: cache.policy: argument 'fraction' must be in (0.0, 1.0]; got 0.0"), OpArgumentError),
    (Refusal("tcgen05.fence_before_thread_sync()",
             "numba_tma: tcgen05.fence_before_thread_sync needs sm_100a up to (excluding) sm_120, PTX ISA 8.6, "
             "but the kernel is being compiled for sm_90a"), ArchError),
]

DECLARED = [pytest.param(op, r, id=f"{name}-{i}") for name, op in sorted(OPS.items()) if op.vendor == "nvidia"
            for i, r in enumerate(op.refusals)]


def _arch(op):
    """The first architecture the op exists on."""
    return next(a for a in ("sm_90a", "sm_100a") if op.need.supported_on(parse_arch(a)))


def _signatures(refusal, arch):
    """The kernel's argument types under numba-cuda and under numba-cuda-mlir."""
    if not refusal.desc:
        return SIG, MLIR_SIG
    dtype, box, swizzle = refusal.desc
    mlir_map = numba_tma.mlir.map_type if arch == "sm_100a" else numba_tma.mlir.map_in_global_type
    return ((TensorMap.numba_type(dtype, box, swizzle=swizzle), SIG[1]),
            (mlir_map(dtype, box, swizzle=swizzle), MLIR_SIG[1]))


def _refusals(refusal, arch, error=OpArgumentError):
    """The error each host raises compiling ``refusal.call`` for ``arch``: ``(numba-cuda's,
    numba-cuda-mlir's)``."""
    numba_sig, mlir_sig = _signatures(refusal, arch)
    with pytest.raises(error) as numba_cuda:
        inspect.compile(_kernel(refusal.call), numba_sig, arch)
    with pytest.raises(error) as mlir:
        inspect.compile(_mlir_kernel(refusal.call), mlir_sig, arch, host="mlir")
    return str(numba_cuda.value), str(mlir.value)


@pytest.mark.parametrize("op, refusal", DECLARED)
def test_both_hosts_refuse_a_declared_refusal_word_for_word(op, refusal):
    numba_cuda, mlir = _refusals(refusal, _arch(op))
    assert refusal.message in numba_cuda
    assert mlir == numba_cuda


@pytest.mark.parametrize("refusal, error", LOWERING, ids=[r.call.split("(")[0] for r, _ in LOWERING])
def test_both_hosts_make_the_lowering_time_checks_word_for_word(refusal, error):
    numba_cuda, mlir = _refusals(refusal, "sm_90a", error)
    assert numba_cuda == refusal.message
    assert mlir == numba_cuda
