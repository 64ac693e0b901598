"""Every example (but the AMD one) runs under numba-cuda's CUDA simulator, as it does on a machine
without a GPU, says so first and prints its check (small sizes when simulated)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[1]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py") if not p.name.startswith(("_", "amd_")))


def test_every_example_is_listed():
    assert "tma_tile_copy.py" in EXAMPLES and "simulate_tile_copy.py" in EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs_simulated(example):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, str(ROOT / "examples" / example)], capture_output=True, text=True, env=env,
                         timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[0].startswith("simulated on the CPU"), lines[:2]
    assert "PASS" in run.stdout and "FAIL" not in run.stdout, run.stdout
