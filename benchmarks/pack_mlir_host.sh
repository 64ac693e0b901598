#!/usr/bin/env bash
# Run here (no GPU): packs numba-cuda-mlir's cp312 wheel (the `mlir` extra, ~71 MB: more than one device call
# carries beside .whl/) into two git-ignored parts, .mlirhost/part-a and .mlirhost2/part-b (a tar.xz of its
# contents, ~47 MiB in all).  On the GPU machine, `source benchmarks/mlir_host.sh` after .whl/prelude.sh joins
# and unpacks them onto PYTHONPATH: carry both parts in one call (with .whl/ it stays under the 64 MiB a call
# carries), or part-a in one call and part-b in the next while the machine is warm.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
version=$(python3 -c "import re; print(re.search(r'numba-cuda-mlir==([0-9.*]+)', open('pyproject.toml').read())[1])")
work=$(mktemp -d)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 -d "$work" "numba-cuda-mlir==$version"
mkdir "$work/site"
python3 -m zipfile -e "$work"/numba_cuda_mlir-*.whl "$work/site"
tar -cJf "$work/mlir.tar.xz" -C "$work/site" .
split -n 2 -d "$work/mlir.tar.xz" "$work/part-"
mkdir -p .mlirhost .mlirhost2
mv "$work/part-00" .mlirhost/part-a
mv "$work/part-01" .mlirhost2/part-b
rm -rf "$work"
ls -la .mlirhost/part-a .mlirhost2/part-b
