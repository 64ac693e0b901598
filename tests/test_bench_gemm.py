"""benchmarks/bench_gemm.py without a GPU: it imports without torch (and without numba_tma.gemm),
its rows are the ones the GEMM issue asks for, and --quick / --only select among them."""

import importlib.util
import os

import pytest

import gpu_run_stub

PATH = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "bench_gemm.py")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_gemm_under_test", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rows_are_the_issues(bench):
    got = {(r.case, r.dtype, r.m, r.n, r.k, r.groups) for r in bench.ROWS}
    want = {("plain", "bf16", 8192, 8192, 8192, 0), ("plain", "bf16", 4096, 4096, 4096, 0),
            ("plain", "bf16", 8192, 8192, 1024, 0), ("plain", "bf16", 256, 8192, 8192, 0),
            ("plain", "bf16", 128, 8192, 8192, 0), ("plain", "e4m3", 8192, 8192, 8192, 0),
            ("plain", "e4m3", 4096, 4096, 4096, 0),
            ("plain", "bf16", 1000, 1000, 1000, 0), ("plain", "bf16", 4097, 4096, 4096, 0),
            ("plain", "bf16", 7, 4096, 4096, 0), ("plain", "bf16", 8192, 8192, 8200, 0),
            ("bias_gelu", "bf16", 8192, 8192, 8192, 0), ("bias_gelu", "bf16", 4096, 4096, 4096, 0),
            ("epilogue", "bf16", 4096, 4096, 4096, 0), ("rowwise", "e4m3", 8192, 8192, 8192, 0),
            ("grouped", "bf16", 16384, 4096, 7168, 8), ("grouped", "bf16", 16384, 4096, 7168, 64),
            ("overhead", "bf16", 128, 128, 128, 0)}
    assert got == want
    assert len(bench.ROWS) == len(want)
    assert len({r.name for r in bench.ROWS}) == len(bench.ROWS)           # names select rows: unique
    assert set(bench.CASES) | {"overhead"} == {r.case for r in bench.ROWS}
    assert set(bench.TOLERANCE) == {r.dtype for r in bench.ROWS}


def test_quick_and_only_select_rows(bench):
    quick = bench.select(["--quick"])
    assert 3 <= len(quick) < len(bench.ROWS) and {r.name for r in quick} == set(bench.QUICK)
    assert [r.name for r in bench.select([])] == [r.name for r in bench.ROWS]
    ragged = bench.select(["--only", "ragged"])
    assert [(r.m, r.n, r.k) for r in ragged] == [(1000, 1000, 1000), (4097, 4096, 4096), (7, 4096, 4096),
                                                 (8192, 8192, 8200)]
    assert {r.case for r in bench.select(["--only", "grouped", "--only", "overhead"])} == {"grouped", "overhead"}
    assert [r.name for r in bench.select(["--quick", "--only", "e4m3"])] == ["e4m3 4096x4096x4096"]
    assert bench.select(["--only", "no such row"]) == []
    assert bench.budget(["--budget", "30"]) == 30 and bench.budget([]) == bench.BUDGET_S


@pytest.mark.parametrize("groups", [8, 64])
def test_group_sizes_are_uneven_and_sum_to_the_rows(bench, groups):
    sizes = bench.group_sizes(16384, groups)
    assert len(sizes) == groups and sum(sizes) == 16384 and min(sizes) >= 0
    assert min(sizes) < 128 and max(sizes) > 2 * 16384 // groups      # some small, some large
    assert sizes == bench.group_sizes(16384, groups)                    # a fixed seed


def test_the_gemm_part_of_gpu_run_runs_each_step_and_notes_it(tmp_path):
    """``benchmarks/gpu_run.sh gemm`` (the GEMM issue's device call) with a stand-in ``python3`` that
    prints its arguments: each test command and benchmark runs, in order, and its line reaches the
    summary."""
    done, summary = gpu_run_stub.run_part(tmp_path, "gemm")
    assert done.returncode == 0, done.stderr
    steps = ["# gpu_run part gemm", "tests/gemm and the launch files: rc=0", "tests/test_gpu_gemm_library.py: rc=0",
             "benchmarks/profile_call.py: rc=0", "benchmarks/bench_gemm.py: rc=0", "benchmarks/sweep_gemm.py: rc=0",
             "# part gemm done"]
    assert [s for s in steps if s in summary] == steps, summary
    assert [summary.index(s) for s in steps] == sorted(summary.index(s) for s in steps), summary
    assert "ran: benchmarks/sweep_gemm.py --budget 115" in done.stdout
    bad, _ = gpu_run_stub.run_part(tmp_path, "3")
    assert bad.returncode == 2 and "part must be 1, 2, gemm or attention, got 3" in bad.stderr
