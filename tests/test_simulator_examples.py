"""Every example (but the AMD one) runs under numba-cuda's CUDA simulator, as it does on a machine
without a GPU, says so first and prints its check (small sizes when simulated)."""

import pathlib

import pytest

from numba_tma.pytest_plugin import run_script

ROOT = pathlib.Path(__file__).parents[1]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py") if not p.name.startswith(("_", "amd_")))


def test_every_example_is_listed():
    assert "tma_tile_copy.py" in EXAMPLES and "simulate_tile_copy.py" in EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_simulated(example):
    code, stdout, stderr = run_script(ROOT / "examples" / example, timeout=300, cwd=ROOT)
    assert code == 0, stdout[-2000:] + stderr[-3000:]
    lines = stdout.splitlines()
    assert lines[0].startswith("simulated on the CPU"), lines[:2]
    assert "PASS" in stdout and "FAIL" not in stdout, stdout
