"""The memory-model checker's cost (issue 21): each example (but the AMD ones) run under the CUDA
simulator with the checker's generic-write marks on (the default) and off
(``NUMBA_TMA_SIM_CHECKER=0``), best of ``--repeat`` runs of a fresh process each (imports
included, as a user runs them).

    python benchmarks/bench_checker.py --repeat 3
"""

import argparse
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).parents[1]


def run(example, checker):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", NUMBA_TMA_SIM_CHECKER="1" if checker else "0",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0 and "PASS" in done.stdout, done.stdout[-1000:] + done.stderr[-2000:]
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()
    examples = sorted(p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith(("_", "amd_")))
    total = {True: 0.0, False: 0.0}
    for example in examples:
        best = {c: min(run(example, c) for _ in range(opts.repeat)) for c in (False, True)}
        for c in best:
            total[c] += best[c]
        print(f"{example.name:40s} without {best[False]:6.2f} s   with {best[True]:6.2f} s   "
              f"({100 * (best[True] / best[False] - 1):+.0f}%)")
    print(f"{'all examples':40s} without {total[False]:6.2f} s   with {total[True]:6.2f} s   "
          f"({100 * (total[True] / total[False] - 1):+.0f}%)")


if __name__ == "__main__":
    main()
