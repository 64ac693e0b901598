"""SASS parity: the steady-state loop of examples/tma_copy_store.py's persistent copy, written with
numba-tma, against the same loop written in CUDA C++ with CCCL's ``cuda::ptx`` (compiled here by
NVRTC from the CUDA wheels, linked by nvJitLink: no GPU needed).  Prints the loop's SASS opcode
counts side by side, per tile.

    python benchmarks/sass_parity.py
"""

import collections
import os
import pathlib
import re
import sys

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "0")      # compile for the GPU even on a machine without one
sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "examples"))

import numba  # noqa: E402

from numba_tma import TensorMap, inspect  # noqa: E402

import tma_copy_store as example  # noqa: E402

CUDA_SOURCE = r"""
#include <cuda/ptx>
#include <cuda/std/cstdint>
namespace ptx = cuda::ptx;
struct alignas(64) TensorMap { unsigned long long opaque[16]; };
constexpr int STAGES = 6, BOX_R = 16, BOX_C = 256;

extern "C" __global__ void copy_ring(const __grid_constant__ TensorMap src, const __grid_constant__ TensorMap dst,
                                     unsigned tiles_x, unsigned n_tiles, unsigned* counter) {
  extern __shared__ __align__(128) unsigned char smem[];
  auto ring = reinterpret_cast<float (*)[BOX_R][BOX_C]>(smem);
  __shared__ alignas(8) cuda::std::uint64_t full[STAGES];
  __shared__ unsigned tile_of[STAGES];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
  ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  const unsigned bytes = BOX_R * BOX_C * 4;
  unsigned loaded = 0;
  while (loaded < STAGES) {
    unsigned t = atomicAdd(counter, 1u);
    if (t >= n_tiles) break;
    tile_of[loaded] = t;
    int c[2] = {int((t % tiles_x) * BOX_C), int((t / tiles_x) * BOX_R)};
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[loaded], bytes);
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, &ring[loaded], &src, c, &full[loaded]);
    ++loaded;
  }
  bool more = loaded == STAGES;
  unsigned next = 0;
  for (unsigned k = 0; k < loaded; ++k) {
    unsigned s = k % STAGES;
    if (k >= 1 && more) next = atomicAdd(counter, 1u);
    while (!ptx::mbarrier_try_wait_parity(&full[s], (k / STAGES) & 1)) {}
    unsigned t = tile_of[s];
    int c[2] = {int((t % tiles_x) * BOX_C), int((t / tiles_x) * BOX_R)};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &dst, c, &ring[s]);
    ptx::cp_async_bulk_commit_group();
    if (k >= 1 && more) {
      if (next < n_tiles) {
        unsigned r = (k - 1) % STAGES;
        ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>());
        tile_of[r] = next;
        int c2[2] = {int((next % tiles_x) * BOX_C), int((next / tiles_x) * BOX_R)};
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[r], bytes);
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, &ring[r], &src, c2, &full[r]);
        ++loaded;
      } else {
        more = false;
      }
    }
  }
  ptx::cp_async_bulk_wait_group(ptx::n32_t<0>());
  if (atomicAdd(counter + 1, 1u) == gridDim.x - 1) { counter[0] = 0; counter[1] = 0; }
}
"""


def cuda_ptx_sass(arch="sm_90a"):
    """The CUDA C++ kernel's SASS: NVRTC (with the CCCL headers of the CUDA wheels), then nvJitLink."""
    from cuda.bindings import nvrtc

    include = pathlib.Path(nvrtc.__file__).parents[2] / "nvidia" / "cu13" / "include"
    err, prog = nvrtc.nvrtcCreateProgram(CUDA_SOURCE.encode(), b"copy_ring.cu", 0, [], [])
    options = [f"-arch=compute_{arch[3:]}".encode(), b"-std=c++17", b"-default-device",
               f"-I{include / 'cccl'}".encode(), f"-I{include}".encode()]
    err, = nvrtc.nvrtcCompileProgram(prog, len(options), options)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(f"NVRTC: {log.decode()}")
    _, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    nvrtc.nvrtcGetPTX(prog, ptx)
    return inspect.sass(inspect.link(ptx.rstrip(b"\0").decode(), arch))


def steady_loop(sass_text):
    """Opcode counts of the smallest loop holding a TMA store and a TMA load, and the tiles it copies."""
    ins = [(int(m.group(1), 16), m.group(2).strip()) for m in
           (re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line) for line in sass_text.splitlines()) if m]
    store = next(a for a, s in ins if "UTMASTG" in s)
    loads = [a for a, s in ins if "UTMALDG" in s]
    best = None
    for a, s in ins:
        m = re.search(r"\bBRA(?:\.\S+)?\s+(0x[0-9a-f]+)", s)
        if m:
            target = int(m.group(1), 16)
            if target <= store <= a and any(target <= x <= a for x in loads) and \
                    (best is None or a - target < best[1] - best[0]):
                best = (target, a)
    body = [s for a, s in ins if best[0] <= a <= best[1]]
    counts = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", s).split()[0] for s in body)
    return counts, counts["UTMASTG.2D"]


def main():
    desc = TensorMap.numba_type("float32", (example.BOX_R, example.BOX_C))
    ours, our_tiles = steady_loop(inspect.compile(example.copy_ring.py_func, (desc, desc, numba.int64, numba.int64,
                                                                     numba.types.Array(numba.uint32, 1, "C")),
                                                  "sm_90a").sass)
    theirs, their_tiles = steady_loop(cuda_ptx_sass())
    print(f"steady-state loop, SASS instructions per tile: numba-tma {sum(ours.values()) / our_tiles:.1f}, "
          f"cuda::ptx (NVRTC) {sum(theirs.values()) / their_tiles:.1f}")
    print(f"{'opcode':32s} {'numba-tma':>9s} {'cuda::ptx':>9s}   (per tile)")
    for op in sorted(set(ours) | set(theirs)):
        a, b = ours[op] / our_tiles, theirs[op] / their_tiles
        if a != b:
            print(f"{op:32s} {a:9.1f} {b:9.1f}")


if __name__ == "__main__":
    main()
