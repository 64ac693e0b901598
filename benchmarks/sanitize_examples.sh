#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) over the examples, at small sizes where an
# example takes them; one line per (example, tool) with the sanitizer's summary.
# --report-api-errors no: cuda-bindings' driver start-up probes symbols with cuGetProcAddress, which
# answers CUDA_ERROR_INVALID_VALUE for the ones this driver lacks (34 host-side "errors" on the
# H200's driver 580, none from a kernel); memcheck still reports every device memory error.
#   bash benchmarks/sanitize_examples.sh
set -u
cd "$(dirname "$0")/.."
san=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
runs=("examples/tma_tile_copy.py" "examples/tma_copy_store.py 512 512" "examples/warp_specialized_ring.py"
      "examples/grouped_copy_device_descriptors.py" "examples/cluster_multicast.py --once"
      "examples/simulate_tile_copy.py")
for run in "${runs[@]}"; do
  for tool in ${TOOLS:-memcheck racecheck synccheck}; do
    result=$(timeout 240 "$san" --tool "$tool" --report-api-errors no --error-exitcode 9 python3 $run 2>&1)
    rc=$?
    echo "$run [$tool] rc=$rc: $(echo "$result" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL" | tr '\n' ' ' | cut -c1-200)"
  done
done
