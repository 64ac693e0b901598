"""numba_tma.gemm.matmul's other paths both ways (as tests/gemm/test_matmul.py: small under the
simulator, larger and ragged on the GPU, against numpy in float64): fp8 with row and column
scales, operands staged for TMA, configurations given, autotuning with a stand-in clock."""

import os

import numpy as np
import pytest
from numba import cuda

from gemm_models import ACTIVATIONS, relative_error
from half_floats import finite_fp8_codes, fp8_values
from numba_tma import gemm, ops
from numba_tma.gemm import tuning
from test_matmul import BF16_TOL, bf16, col_major, host, shape


@pytest.mark.both_ways
@pytest.mark.parametrize("kind", ["e4m3", "e5m2"])
def test_fp8_with_row_and_column_scales(kind):
    m, n, k = shape((70, 136, 256), (1030, 2056, 1040))      # (simulated: one tile of 128 x 192)
    rng = np.random.default_rng(4)
    a, b = finite_fp8_codes(kind, rng, (m, k), top=8), finite_fp8_codes(kind, rng, (n, k), top=8)
    sa = rng.uniform(0.5, 2, (m, 1)).astype(np.float32)
    sb = rng.uniform(0.5, 2, (1, n)).astype(np.float32)
    out = gemm.matmul(cuda.to_device(a), col_major(np.ascontiguousarray(b.T)), a_scale=cuda.to_device(sa),
                      b_scale=cuda.to_device(sb), activation="gelu", dtype=kind)
    want = ACTIVATIONS["gelu"]((fp8_values(a, kind) @ fp8_values(b, kind).T) * sa * sb)
    # Hopper adds fp8 products with about 14 mantissa bits (promoted every 128 of K), then bf16
    assert relative_error(host(out, "bf16"), want) <= 1e-2


@pytest.mark.both_ways
def test_operands_tma_cannot_read_are_staged_and_a_ragged_output_is_stored_from_registers():
    """A's base 2 bytes past alignment and K = 70 (rows of 140 bytes); B row-major with the same
    K rows; N = 130 (an output row of 260 bytes: no TMA store); a column-major A (staged too)."""
    m, n, k = shape((72, 130, 70), (300, 130, 70))
    rng = np.random.default_rng(5)
    (a, av), (b, bv) = bf16(rng, (m, k + 1)), bf16(rng, (k, n))
    a_dev = cuda.to_device(a)[:, 1:]
    text = gemm.explain(a_dev, cuda.to_device(b), dtype="bf16")
    assert "A: staged" in text and "B: staged" in text and "stored from registers" in text, text
    out = gemm.matmul(a_dev, cuda.to_device(b), dtype="bf16")
    want = av[:, 1:] @ bv
    assert relative_error(host(out, "bf16"), want) <= BF16_TOL
    a_col = col_major(np.ascontiguousarray(a[:, 1:]))
    assert "A: staged" in gemm.explain(a_col, cuda.to_device(b), dtype="bf16")
    assert relative_error(host(gemm.matmul(a_col, cuda.to_device(b), dtype="bf16"), "bf16"), want) <= BF16_TOL


@pytest.mark.both_ways
@pytest.mark.parametrize("config", [gemm.Config(split_k=2, tile_n=128), gemm.Config(cluster=2, tile_n=256, stages=3)],
                         ids=["split-K", "clusters of 2"])
def test_configurations_given_with_a_fused_epilogue(config):
    """Split-K sums its float32 partials in a fixed order (each tile's last split, split_k), then
    applies the epilogue: the same answer as unsplit, into a given output (a split-K call seen
    before: tests/gemm/test_seen_calls.py)."""
    m, n, k = shape((200 if config.cluster else 72, 136, 128), (1000, 1000, 1000))   # a pair: 2 tile rows
    rng = np.random.default_rng(6)
    (a, av), (b, bv), (bias, biasv) = bf16(rng, (m, k)), bf16(rng, (k, n)), bf16(rng, (n,))
    out = cuda.to_device(np.full((m, n), 0xFFFF, np.uint16))
    got = gemm.matmul(cuda.to_device(a), col_major(b), out=out, bias=cuda.to_device(bias), activation="relu",
                      config=config, dtype="bf16")
    assert got is out
    text = gemm.explain(cuda.to_device(a), col_major(b), config=config, dtype="bf16")
    assert (f"split-K {config.split_k}" if config.split_k else "clusters of 2") in text, text
    assert relative_error(host(out, "bf16"), ACTIVATIONS["relu"](av @ bv + biasv)) <= BF16_TOL



@pytest.mark.both_ways
def test_autotune_times_the_candidates_once_and_remembers(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_TMA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tuning, "_MEMORY", {})
    m, n, k = shape((136, 136, 64), (512, 512, 512))
    rng = np.random.default_rng(7)
    (a, av), (b, bv) = bf16(rng, (m, k)), bf16(rng, (k, n))
    timed = []

    def seconds(fn):                         # a stand-in clock: the clusters-of-2 candidate is fastest
        timed.append(fn)
        return 1.0 if len(timed) != 2 else 0.5

    best = gemm.autotune(cuda.to_device(a), col_major(b), seconds=seconds, dtype="bf16")
    assert len(timed) == len(tuning.candidates("bf16", m, n, k))
    assert best == tuning.candidates("bf16", m, n, k)[1]
    assert (tmp_path / "gemm_autotune.json").exists()
    out = gemm.matmul(cuda.to_device(a), col_major(b), config="autotune", dtype="bf16")    # remembered: not timed
    assert len(timed) == len(tuning.candidates("bf16", m, n, k))
    assert relative_error(host(out, "bf16"), av @ bv) <= BF16_TOL


@pytest.mark.both_ways
def test_the_docs_explain_block_is_what_explain_prints():
    """docs/gemm.md shows ``gemm.explain`` of examples/gemm.py's simulated call; it is that text."""
    if not ops.SIMULATOR:
        pytest.skip("the docs' block is the simulator's (its SM count)")
    text = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "gemm.md")).read()
    block = text.split("`gemm.explain(a, b, ...)` (same arguments) prints it:\n\n```\n", 1)[1].split("```", 1)[0]
    rng = np.random.default_rng(0)
    (x, _), (w, _), (bias, _) = bf16(rng, (72, 72)), bf16(rng, (72, 136)), bf16(rng, (136,))
    got = gemm.explain(cuda.to_device(x), cuda.to_device(w), bias=cuda.to_device(bias), activation="gelu_tanh",
                       dtype="bf16")
    assert block.strip() == got.strip()
