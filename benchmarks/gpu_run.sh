#!/usr/bin/env bash
# The whole GPU check in two device calls of at most 10 minutes each (on a machine with a GPU):
#
#   part 1: every GPU test file under numba-cuda, each in its own process, 4 at a time (a CUDA fault
#           is sticky: one bad file must not fail the next), then every example;
#   part 2: numba-cuda-mlir's GPU tests and the examples under NUMBA_TMA_HOST=mlir (numba-cuda-mlir
#           carried as the two parts of benchmarks/pack_mlir_host.sh), the sanitizer set
#           (benchmarks/sanitize_examples.sh, memcheck), then the benchmarks;
#   part gemm: issue 37's call in one: the GEMM test files (the library's 4 workers beside the rest),
#           the host time of a seen call (profile_call.py), bench_gemm.py, then sweep_gemm.py (the
#           rule's data);
#   part attention: issue 38's: the attention and register-A wgmma test files, the named-barrier
#           file, then bench_attention.py.
#
# Each part stops starting new work when its time (GPU_RUN_S, default 560 s) is spent and says what it
# skipped.  Each writes its lines (also printed) into $OUT/summary.txt, headed with the part, the time,
# the device and the driver; full logs go to $OUT/logs/.  Record both parts' summaries in BENCHMARKS.md.
# From this machine (no GPU), with the device tool:
#   bash benchmarks/pack_mlir_host.sh                       # once: .mlirhost/part-a, .mlirhost2/part-b
#   run  carry [".whl", ".mlirhost"]:   source .whl/prelude.sh; bash benchmarks/gpu_run.sh 1
#   run  carry [".whl", ".mlirhost2"]:  source .whl/prelude.sh; bash benchmarks/gpu_run.sh 2   (right after)
#   run  carry [".whl"]:                source .whl/prelude.sh; bash benchmarks/gpu_run.sh gemm   (or attention)
# GPU_RUN_CPU=1 adds the rest of the suite (-m 'not gpu') to part 1.
# GPU_FILE_TIMEOUT (default 300 s) bounds each test file (a kernel that hangs costs no more).
set -u
part=${1:?usage: gpu_run.sh 1|2|gemm|attention}
cd "$(dirname "$0")/.."
out=${OUT:-.gpu_run}
logs="$out/logs"
mkdir -p "$logs"
summary="$out/summary.txt"
: > "$summary"
budget=${GPU_RUN_S:-560}
start=$SECONDS

note() { echo "$*" | tee -a "$summary"; }
left() { echo $((budget - (SECONDS - start))); }
enough() {   # enough NEEDED_S WHAT: true when NEEDED_S seconds are left, else the skip is noted
  if [ "$(left)" -lt "$1" ]; then note "SKIPPED (out of time): $2"; return 1; fi
}

run_test_file() {   # one GPU test file in its own process; prints its summary line
  local f=$1 log
  log="$logs/$(basename "$f" .py)${NUMBA_TMA_HOST:+.$NUMBA_TMA_HOST}.log"
  timeout "${GPU_FILE_TIMEOUT:-300}" python3 -m pytest -q -p no:cacheprovider "$f" > "$log" 2>&1
  local rc=$?
  local by_value
  by_value=$(grep -o "by-value descriptors checked equal.*" "$log" | head -1)
  echo "$f: rc=$rc $(grep -E '(passed|failed|error|skipped)' "$log" | tail -1)${by_value:+ [$by_value]}"
}
export -f run_test_file
export logs

run_examples() {   # the examples named (default: every one but the AMD ones), each with a time limit
  for e in ${*:-examples/*.py}; do
    case "$e" in examples/_*|examples/amd_*) continue ;; esac
    enough 60 "$e${NUMBA_TMA_HOST:+ (host $NUMBA_TMA_HOST)}" || continue
    local log="$logs/$(basename "$e" .py)${NUMBA_TMA_HOST:+.$NUMBA_TMA_HOST}.log"
    timeout 120 python3 "$e" > "$log" 2>&1
    local rc=$?
    note "$e${NUMBA_TMA_HOST:+ (host $NUMBA_TMA_HOST)}: rc=$rc $(grep -v -i warn "$log" | grep -E 'PASS|FAIL|ratio|GB/s|TFLOP' | tail -2 | tr '\n' ' ' | cut -c1-220)"
  done
}

device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
if [ "$part" = 1 ]; then
  note "# gpu_run part 1, $(date -u +%FT%TZ), $device"
  ls tests/test_gpu_*.py tests/gemm/test_*.py tests/attention/test_*.py | grep -v test_gpu_mlir_host | xargs -P 4 -I{} bash -c 'run_test_file {}' | sort | tee -a "$summary"
  grep -h "rc=" "$summary" | grep -q "rc=[1-9]" && note "GPU files: some FAILED" || note "GPU files: all passed"
  if [ "${GPU_RUN_CPU:-0}" = 1 ] && enough 300 "the rest of the suite"; then
    timeout 300 python3 -m pytest -q -p no:cacheprovider -m "not gpu" -x > "$logs/cpu_part.log" 2>&1
    note "rest of the suite (-m 'not gpu'): rc=$? $(tail -1 "$logs/cpu_part.log")"
  fi
  run_examples
elif [ "$part" = 2 ]; then
  note "# gpu_run part 2, $(date -u +%FT%TZ), $device"
  if source benchmarks/mlir_host.sh > "$logs/mlir_host.log" 2>&1; then
    NUMBA_TMA_HOST=mlir bash -c 'run_test_file tests/test_gpu_mlir_host.py' | tee -a "$summary"
    NUMBA_TMA_HOST=mlir run_examples examples/tma_tile_copy.py examples/tma_copy_store.py \
      examples/warp_specialized_ring.py   # the examples written for both hosts (README)
  else
    note "numba-cuda-mlir could not be unpacked (are .mlirhost/part-a and .mlirhost2/part-b both here?): $(tail -1 "$logs/mlir_host.log")"
  fi
  if enough 120 "the sanitizer set"; then
    TOOLS=memcheck timeout $(($(left) - 60)) bash benchmarks/sanitize_examples.sh 2>&1 | tee -a "$summary"
  fi
  first="benchmarks/bench_launch.py benchmarks/bench_map_host.py benchmarks/bench_kernels.py benchmarks/bench_gemm.py
         benchmarks/bench_attention.py"   # the figures issues name first; then the rest
  for b in $first $(ls benchmarks/bench_*.py | grep -v -F -x -f <(tr ' ' '\n' <<< "$first" | grep .)); do
    enough 90 "$b" || continue
    args=(); [ "$b" = benchmarks/bench_kernels.py ] && args=(--json "$out/kernels.json" --png "$out/bandwidth.png")
    limit=$(( $(left) - 30 < 240 ? $(left) - 30 : 240 ))
    PYTHONPATH="$PYTHONPATH:tests" timeout "$limit" python3 "$b" "${args[@]}" > "$logs/$(basename "$b" .py).log" 2>&1
    note "$b: rc=$? (log: logs/$(basename "$b" .py).log)"
  done
elif [ "$part" = gemm ]; then
  note "# gpu_run part gemm, $(date -u +%FT%TZ), $device, $(git log --oneline -1 2>/dev/null | cut -c1-60)"
  (timeout 200 python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_gpu_gemm_library.py > "$logs/library.log" 2>&1
   echo "tests/test_gpu_gemm_library.py: rc=$? $(tail -1 "$logs/library.log")") > "$logs/library.rc" &
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gemm tests/test_gpu_gemm_torch_ops.py tests/test_gpu_launch.py \
    tests/test_launch_on_a_stand_in_gpu.py > "$logs/gemm.log" 2>&1
  note "tests/gemm and the launch files: rc=$? $(tail -1 "$logs/gemm.log")"
  wait
  note "$(cat "$logs/library.rc")"
  for b in "profile_call.py:40:" "bench_gemm.py:175:--budget 150" "sweep_gemm.py:130:--budget 115"; do
    IFS=: read -r name limit args <<< "$b"
    enough "$limit" "benchmarks/$name" || continue
    timeout "$limit" python3 "benchmarks/$name" $args > "$logs/${name%.py}.log" 2>&1
    note "benchmarks/$name: rc=$? (log: logs/${name%.py}.log)"
    cat "$logs/${name%.py}.log"
  done
elif [ "$part" = attention ]; then
  note "# gpu_run part attention, $(date -u +%FT%TZ), $device, $(git log --oneline -1 2>/dev/null | cut -c1-60)"
  ls tests/attention/test_*.py tests/test_wgmma_rs.py tests/test_wgmma_rows.py tests/test_gpu_sync_tensormap.py |
    xargs -P 4 -I{} bash -c 'run_test_file {}' | sort | tee -a "$summary"
  if enough 150 benchmarks/bench_attention.py; then
    timeout $(($(left) - 20)) python3 benchmarks/bench_attention.py > "$logs/bench_attention.log" 2>&1
    note "benchmarks/bench_attention.py: rc=$? (log: logs/bench_attention.log)"
    cat "$logs/bench_attention.log"
  fi
else
  echo "gpu_run.sh: part must be 1, 2, gemm or attention, got $part" >&2; exit 2
fi
note "# part $part done in $((SECONDS - start)) s"
exit 0
