"""Cold JIT: the first call of examples/tma_copy_store.py's copy kernel (Numba's compile, NVVM,
the PTX assembler, the launch) against the first call of a Triton TMA copy with an empty Triton
cache, each in a fresh process.  Needs a GPU (and Triton with PyTorch for the second row).

    python benchmarks/bench_jit.py
"""

import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).parents[1]

NUMBA = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, str(__import__("pathlib").Path.cwd() / "examples"))
import numpy as np
from numba import cuda
import tma_copy_store as ex
t1 = time.perf_counter()
a = cuda.to_device(np.ones((4096, 4096), np.float32)); b = cuda.device_array_like(a)
src, dst = ex.maps(a, b)
counter = cuda.to_device(np.zeros(2, np.uint32))
cuda.synchronize()
t2 = time.perf_counter()
ex.tma_copy(src, dst, a.shape, counter, 264)
cuda.synchronize()
t3 = time.perf_counter()
ex.tma_copy(src, dst, a.shape, counter, 264)
cuda.synchronize()
t4 = time.perf_counter()
assert np.array_equal(b.copy_to_host(), a.copy_to_host())
print(json.dumps(dict(imports=t1 - t0, first_call=t3 - t2, second_call=t4 - t3)))
"""

TRITON = r"""
import json, os, tempfile, time
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()          # cold: nothing cached
t0 = time.perf_counter()
import torch, triton, triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

@triton.jit
def copy_kernel(src, dst, BR: tl.constexpr, BC: tl.constexpr):
    r, c = tl.program_id(1) * BR, tl.program_id(0) * BC
    dst.store([r, c], src.load([r, c]))

t1 = time.perf_counter()
x = torch.ones(4096, 4096, device="cuda"); y = torch.empty_like(x)
sd, dd = TensorDescriptor.from_tensor(x, [16, 256]), TensorDescriptor.from_tensor(y, [16, 256])
torch.cuda.synchronize()
t2 = time.perf_counter()
copy_kernel[(4096 // 256, 4096 // 16)](sd, dd, 16, 256)
torch.cuda.synchronize()
t3 = time.perf_counter()
copy_kernel[(4096 // 256, 4096 // 16)](sd, dd, 16, 256)
torch.cuda.synchronize()
t4 = time.perf_counter()
assert torch.equal(x, y)
print(json.dumps(dict(imports=t1 - t0, first_call=t3 - t2, second_call=t4 - t3)))
"""


def child(source):
    """Run ``source`` from a file (Triton reads its kernels' source files) in a fresh process."""
    with tempfile.TemporaryDirectory() as folder:
        script = pathlib.Path(folder) / "first_call.py"
        script.write_text(source)
        run = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if run.returncode:
        return {"error": run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"rc {run.returncode}"}
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    print(f"{'first call of a TMA copy kernel, fresh process':48s} {'imports s':>9s} {'1st call s':>10s} "
          f"{'2nd call s':>10s}")
    for name, source in (("numba-tma (examples/tma_copy_store.py)", NUMBA), ("Triton, empty cache", TRITON)):
        r = child(source)
        if "error" in r:
            print(f"{name:48s} failed: {r['error'][:120]}")
        else:
            print(f"{name:48s} {r['imports']:9.3f} {r['first_call']:10.3f} {r['second_call']:10.4f}")


if __name__ == "__main__":
    main()
