#!/usr/bin/env bash
# The whole GPU check in one go (on a machine with a GPU; logs under ${OUT:-.}):
#   each GPU test file in its own process (a CUDA fault is sticky: one bad file must not fail the
#   next; their logs end up in one file, gpu_tests.log), then (GPU_RUN_CPU=1) the rest of the
#   suite, then every example and benchmark (bench_kernels also writes kernels.json and the
#   bandwidth-vs-size plot bandwidth.png).
#   bash benchmarks/gpu_run.sh
set -u
out=${OUT:-.}
cd "$(dirname "$0")/.."
pass=0; fail=0
logs=$(mktemp -d)
for f in tests/test_gpu_*.py; do
  log="$logs/$(basename "$f" .py).log"
  timeout 300 python3 -m pytest -q -p no:cacheprovider "$f" > "$log" 2>&1
  rc=$?
  { echo "===== $f (rc=$rc)"; cat "$log"; } >> "$out/gpu_tests.log"
  summary=$(tail -1 "$log")
  echo "$f: rc=$rc $summary"
  [ $rc -eq 0 ] && pass=$((pass + 1)) || fail=$((fail + 1))
done
if [ "${GPU_RUN_CPU:-0}" = 1 ]; then
  timeout 900 python3 -m pytest -q -p no:cacheprovider -m "not gpu" -x > "$out/cpu_part.log" 2>&1
  echo "rest of the suite (-m 'not gpu'): rc=$? $(tail -1 "$out/cpu_part.log")"
fi
echo "GPU files: $pass passed, $fail failed"
for e in examples/*.py; do
  case "$e" in examples/_*|examples/amd_*) continue ;; esac
  echo "== $e"; timeout 120 python3 "$e" 2>&1 | grep -v -i warn | tail -6
done
for b in benchmarks/bench_*.py; do
  args=(); [ "$b" = benchmarks/bench_kernels.py ] && args=(--json "$out/kernels.json" --png "$out/bandwidth.png")
  echo "== $b"; timeout 300 python3 "$b" "${args[@]}" 2>&1 | grep -v -i warn | tail -45
done
