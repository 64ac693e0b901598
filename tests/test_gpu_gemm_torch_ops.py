"""``torch.ops.numba_tma.matmul`` on a GPU: bf16 tensors against PyTorch's float64 matmul, called
directly and from a ``torch.compile``'d function (``fullgraph=True``: the fake implementation
traces it).  Skipped without PyTorch or a Hopper-class GPU."""

import pytest

torch = pytest.importorskip("torch")

from numba_tma.gemm import torch_ops  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def ops():
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    torch_ops.register()
    return torch.ops.numba_tma


def _inputs(m, n, k):
    gen = torch.Generator(device="cuda").manual_seed(m)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda", generator=gen).to(torch.bfloat16)
    return a, b, a.double() @ b.double()


def _close(got, want):
    assert got.dtype == torch.bfloat16 and got.shape == want.shape
    assert (got.double() - want).abs().max().item() <= 2 ** -7 * want.abs().max().item()


@pytest.mark.parametrize("m, n, k", [(128, 256, 64), (300, 520, 200)])
def test_matmul_matches_float64(ops, m, n, k):
    a, b, want = _inputs(m, n, k)
    _close(ops.matmul(a, b), want)


def test_matmul_in_a_compiled_function(ops):
    a, b, want = _inputs(256, 128, 128)

    @torch.compile(fullgraph=True)
    def f(a, b):
        return ops.matmul(a, b) * 2

    _close(f(a, b), 2 * want)
