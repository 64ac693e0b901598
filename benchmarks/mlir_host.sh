# Sourced on the GPU machine after .whl/prelude.sh: numba-cuda-mlir (packed here by benchmarks/pack_mlir_host.sh,
# carried as .mlirhost/part-a and .mlirhost2/part-b) unpacked once into /tmp/mlirhost and put on PYTHONPATH.
if [ ! -d /tmp/mlirhost/numba_cuda_mlir ]; then
  mkdir -p /tmp/mlirhost
  cat .mlirhost/part-a .mlirhost2/part-b | tar -xJf - -C /tmp/mlirhost || { echo "mlir_host: unpack failed"; return 1; }
fi
export PYTHONPATH="$PYTHONPATH:/tmp/mlirhost"
python3 -c "import numba_cuda_mlir, importlib.metadata as m; print('mlir_host: numba-cuda-mlir', m.version('numba-cuda-mlir'))"
