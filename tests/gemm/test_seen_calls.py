"""A gemm.matmul call seen before (numba_tma.gemm.calls): launched again through the launch prepared
at its first run, on other arrays, without planning — TMA stores, stores from registers, split-K's
workspace and counters; and planned again where its key differs (another bias, a misaligned
address).  Both ways, each result against numpy in float64 (as tests/gemm/test_matmul.py)."""

import numpy as np
import pytest
from numba import cuda

from gemm_models import relative_error
from numba_tma import gemm
from numba_tma.gemm import split_k
from test_matmul import BF16_TOL, bf16, host, shape


@pytest.mark.both_ways
def test_a_call_seen_before_runs_again_on_other_arrays_without_planning(monkeypatch):
    """The second call of a shape (another ``a``, the same weights and bias: a layer called again)
    re-points the first call's maps and launches its kernel (calls.Again): no planning, the right
    answer, a new output or the given one; another bias is planned anew."""
    from numba_tma.gemm import calls, plans

    m, n, k = shape((72, 136, 72), (1000, 1000, 1000))
    rng = np.random.default_rng(11)
    (b, bv), (bias, biasv) = bf16(rng, (k, n)), bf16(rng, (n,))
    b_d, bias_d = cuda.to_device(b), cuda.to_device(bias)
    inputs = [bf16(rng, (m, k)) for _ in range(3)]
    monkeypatch.setattr(calls, "SEEN", type(calls.SEEN)())
    first = gemm.matmul(cuda.to_device(inputs[0][0]), b_d, bias=bias_d, dtype="bf16")
    assert len(calls.SEEN) == 1
    planning = plans.plan
    planned = []
    monkeypatch.setattr(plans, "plan", lambda *args, **kw: planned.append(args) or planning(*args, **kw))
    second = gemm.matmul(cuda.to_device(inputs[1][0]), b_d, bias=bias_d, dtype="bf16")
    assert planned == [] and second is not first
    given = cuda.to_device(np.zeros((m, n), np.uint16))
    gemm.matmul(cuda.to_device(inputs[2][0]), b_d, bias=bias_d, out=given, dtype="bf16")   # out given: its own key
    third = gemm.matmul(cuda.to_device(inputs[2][0]), b_d, bias=bias_d, out=given, dtype="bf16")
    assert third is given and len(planned) == 1
    keywords = dict(bias=bias_d, activation=None, epilogue=None, epilogue_args=(), alpha=1.0, beta=0.0, c=None,
                    residual=None, out_dtype=None, a_scale=None, b_scale=None, config=None, dtype="bf16")
    a_d = cuda.to_device(inputs[2][0])
    same, other = (calls.call_key(a_d, b_d, None, keywords | {"bias": x}) for x in (bias_d, cuda.to_device(bias)))
    assert same[3] in calls.SEEN and other[3] != same[3]              # another bias: another call, planned anew
    for got, (_, av) in zip((first, second, third), inputs):
        assert relative_error(host(got, "bf16"), av @ bv + biasv) <= BF16_TOL


@pytest.mark.both_ways
@pytest.mark.parametrize("cluster, m_k", [(1, (40, 256)), (2, (200, 128))], ids=["tiles", "pairs of tiles"])
def test_a_split_k_call_seen_before_runs_its_kernel_again(cluster, m_k, monkeypatch):
    """Split-K in one launch (each split's partial into a new workspace, each tile's last split
    summing them, then the epilogue, into the output), prepared at the first run and run again:
    each call its own right answer, the tiles' counters zero after each; in clusters of 2 too (a
    pair of tile rows per unit, B shared), with splits of no K steps (K 128: 2 steps in 4
    splits) adding zeros."""
    from numba_tma.gemm import calls, split_k

    m, n, k = shape((m_k[0], 72, m_k[1]), (m_k[0] + 88, 256, 4096))
    rng = np.random.default_rng(13)
    (b, bv), (bias, biasv) = bf16(rng, (k, n)), bf16(rng, (n,))
    b_d, bias_d = cuda.to_device(b), cuda.to_device(bias)
    monkeypatch.setattr(calls, "SEEN", type(calls.SEEN)())
    splits = 4 if cluster == 2 else 2
    for seed in range(2):                   # planned, then launched through the launch prepared
        a, av = bf16(np.random.default_rng(20 + seed), (m, k))
        got = gemm.matmul(cuda.to_device(a), b_d, bias=bias_d, activation="relu", dtype="bf16",
                          config=gemm.Config(split_k=splits, tile_n=128, cluster=cluster))
        assert relative_error(host(got, "bf16"), np.maximum(av @ bv + biasv, 0)) <= BF16_TOL
        assert not split_k.counters(1, 0).copy_to_host().any()     # (numba arrays: stream 0)
    (again,) = calls.SEEN.values()
    assert again.splits == splits and again.varying == (0, 1, 2, 4) and again.prepared is not None


@pytest.mark.both_ways
def test_a_call_seen_before_that_stores_from_registers_runs_again(monkeypatch):
    """A float32 output (stored from registers, not by TMA): the second call of the shape launches
    the first's kernel with the new output's address (calls.Again's varying array), into a new
    output (a call re-run into a given output: the TMA test above)."""
    from numba_tma.gemm import calls, plans

    m, n, k = shape((72, 136, 72), (300, 520, 264))
    rng = np.random.default_rng(14)
    (b, bv), inputs = bf16(rng, (k, n)), [bf16(rng, (m, k)) for _ in range(2)]
    b_d = cuda.to_device(b)
    monkeypatch.setattr(calls, "SEEN", type(calls.SEEN)())
    planning, planned = plans.plan, []
    monkeypatch.setattr(plans, "plan", lambda *args, **kw: planned.append(args) or planning(*args, **kw))
    got = [gemm.matmul(cuda.to_device(x), b_d, out_dtype="f32", dtype="bf16") for x, _ in inputs[:2]]
    assert len(planned) == 1 and got[1] is not got[0]
    (again,) = calls.SEEN.values()
    assert again.varying == (0, 1, 2, 3)
    for out, (_, av) in zip(got, inputs):
        assert relative_error(out.copy_to_host(), av @ bv) <= 1e-5


@pytest.mark.both_ways
def test_a_call_seen_before_but_misaligned_is_planned_again():
    """The same shapes and strides at an address TMA cannot read (2 bytes past a 16-byte boundary):
    the alignment is part of a call's key, so the second call stages its A instead of re-pointing."""
    m, n, k = shape((72, 72, 64), (300, 256, 512))
    rng = np.random.default_rng(12)
    (raw, rawv), (b, bv) = bf16(rng, (m, k + 8)), bf16(rng, (k, n))
    buffer, b_d = cuda.to_device(raw), cuda.to_device(b)
    aligned = gemm.matmul(buffer[:, :k], b_d, dtype="bf16")
    misaligned = gemm.matmul(buffer[:, 1:k + 1], b_d, dtype="bf16")
    assert relative_error(host(aligned, "bf16"), rawv[:, :k] @ bv) <= BF16_TOL
    assert relative_error(host(misaligned, "bf16"), rawv[:, 1:k + 1] @ bv) <= BF16_TOL
