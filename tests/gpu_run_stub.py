"""benchmarks/gpu_run.sh run here, without a GPU: a stand-in ``python3`` that prints its arguments
(and a pytest-like summary line), so a part's steps, their order and its summary can be checked."""

import os
import subprocess

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "gpu_run.sh")


def run_part(tmp_path, *args):
    """``bash gpu_run.sh *args`` with the stand-in first on PATH and $OUT under ``tmp_path``:
    ``(the finished process, the summary's text or "" where none was written)``."""
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    (stub / "python3").write_text('#!/bin/sh\necho "ran: $*"\necho "1 passed"\n')
    (stub / "python3").chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{stub}:{os.environ['PATH']}", OUT=str(out))
    done = subprocess.run(["bash", SCRIPT, *args], env=env, capture_output=True, text=True, timeout=60)
    summary = out / "summary.txt"
    return done, summary.read_text() if summary.exists() else ""
