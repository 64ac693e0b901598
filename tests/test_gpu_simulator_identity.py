"""The simulator's TMA loads against the H200's: for the descriptor sweep's random tiled maps
(every dtype of 8 bits and more, every swizzle, element strides, NaN fill, boxes off both edges,
ranks 1-5), the shared memory the simulator leaves is byte-identical to the GPU's after the same
load.  The GPU runs here; the simulator runs the same cases in a child process
(``NUMBA_ENABLE_CUDASIM=1`` is read when numba is imported)."""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import numba
import pytest
from numba import cuda

from numba_tma.descriptors import TensorMapError, decode, encode_tiled

from numba_tma import fence, mbarrier, tma

from gpu_support import bounded_wait
from test_gpu_descriptor_sweep import SMEM_BYTES, _loader, _random_case

pytestmark = pytest.mark.gpu

ROOT = pathlib.Path(__file__).parents[1]
CASES_PER_RANK = 40

SIMULATE = r'''
import json, sys
import numpy as np, numba
from numba import cuda
from numba_tma import fence, mbarrier, tma
from numba_tma.descriptors import encode_tiled
from numba_tma.simulator import memory

SMEM = {smem}

@cuda.jit
def load(desc, coords, nbytes, out):
    bars = cuda.shared.array(1, numba.uint64)
    smem = cuda.shared.array(SMEM, numba.uint8, alignment=1024)
    smem[:] = 0xA5
    mbarrier.init(bars, 1)
    fence.mbarrier_init()
    mbarrier.arrive_expect_tx(bars, nbytes)
    tma.load(desc, smem, tuple(int(x) for x in coords), bars)
    mbarrier.wait(bars, 0)
    out[:] = smem[:]

data = np.load(sys.argv[1])
cases = json.loads(open(sys.argv[2]).read())
dumps, skipped = [], []
for i, case in enumerate(cases):
    src = cuda.to_device(data[f"host{{i}}"])
    address = memory.address(memory.host(src))
    desc = cuda.to_device(np.frombuffer(encode_tiled(global_address=address, **case["params"]), np.uint8).copy())
    out = cuda.to_device(np.zeros(SMEM, np.uint8))
    try:
        load[1, 1](desc, np.array(case["coords"], np.int32), case["nbytes"], out)
    except Exception as exc:                     # a form the simulator refuses, with its reason
        if "not simulated" not in str(exc):
            raise
        skipped.append([i, str(exc).split("numba_tma simulator: ")[-1]])
    dumps.append(out.copy_to_host())
np.save(sys.argv[3], np.stack(dumps))
open(sys.argv[3] + ".skipped.json", "w").write(json.dumps(skipped))
print("simulated", len(dumps) - len(skipped), "refused", len(skipped))
'''


def _simulate(script, cases, hosts, gpu, name):
    """Run ``script`` under the simulator on ``cases``: ``(differing (index, case) pairs, {index:
    why the simulator refused it}, the simulator's dumps)`` against the GPU's dumps.  With ``$OUT``
    set (the device machine's result folder), the cases, inputs and both dumps are saved there as
    ``<name>.npz`` / ``<name>.json`` for study off the GPU."""
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        np.savez(folder / "hosts.npz", **hosts)
        (folder / "cases.json").write_text(json.dumps(cases))
        (folder / "sim.py").write_text(script)
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        run = subprocess.run([sys.executable, str(folder / "sim.py"), str(folder / "hosts.npz"),
                              str(folder / "cases.json"), str(folder / "sim.npy")], env=env, capture_output=True,
                             text=True, timeout=1200)
        assert run.returncode == 0, run.stderr[-3000:]
        simulated = np.load(folder / "sim.npy")
        refused = dict(json.loads((folder / "sim.npy.skipped.json").read_text()))
    differ = [(i, c) for i, (c, g, s) in enumerate(zip(cases, gpu, simulated))
              if i not in refused and not np.array_equal(g, s)]
    if os.environ.get("OUT"):         # the cases to study: refused or differing
        keep = sorted(set(refused) | {i for i, _ in differ})
        np.savez_compressed(pathlib.Path(os.environ["OUT"]) / f"{name}.npz",      # inputs: same seeds here
                            **{f"gpu{i}": gpu[i] for i in keep})
        (pathlib.Path(os.environ["OUT"]) / f"{name}.json").write_text(json.dumps(dict(cases=cases, refused=refused)))
    return differ, refused, simulated


def test_simulator_shared_memory_is_byte_identical_to_the_gpu():
    cases, hosts, gpu = [], {}, []
    for rank in range(1, 6):
        rng = np.random.default_rng(100 + rank)            # the descriptor sweep's cases
        kernel = _loader(rank)
        made = 0
        for _ in range(CASES_PER_RANK * 4):
            if made == CASES_PER_RANK:
                break
            params, coords, nbytes = _random_case(rng, rank)
            host = rng.integers(1, 255, size=nbytes, dtype=np.uint8)
            src = cuda.to_device(host)
            try:
                desc = encode_tiled(global_address=src.__cuda_array_interface__["data"][0], **params)
            except TensorMapError:
                continue
            box_bytes = decode(desc).transfer_bytes
            if box_bytes > SMEM_BYTES or int(np.prod(params["box_dim"])) * 8 > SMEM_BYTES:
                continue
            out = cuda.to_device(np.zeros(SMEM_BYTES, np.uint8))
            status = cuda.to_device(np.zeros(1, np.int32))
            kernel[1, 128](cuda.to_device(np.frombuffer(desc, np.uint8)), np.array(coords + [0] * (5 - rank), np.int32),
                           box_bytes, out, status)
            assert status.copy_to_host()[0] == 0, f"TMA never completed: {params} coords {coords}"
            gpu.append(out.copy_to_host())
            hosts[f"host{len(cases)}"] = host
            cases.append(dict(params={k: (v.name if hasattr(v, "name") else v) for k, v in params.items()},
                              coords=coords, nbytes=box_bytes))
            made += 1
    differ, refused, simulated = _simulate(SIMULATE.format(smem=SMEM_BYTES), cases, hosts, gpu, "identity_tiled")
    compared = len(cases) - len(refused)
    print(f"{len(cases)} maps: {compared} compared, {compared - len(differ)} byte-identical; {len(refused)} forms the "
          f"simulator refuses ({sorted(set(r.split(':')[1].strip()[:60] for r in refused.values()))})")
    for i, case in differ[:5]:
        first = int(np.flatnonzero(gpu[i] != simulated[i])[0])
        print(f"  differs: {case}, first at byte {first}: gpu {gpu[i][first]:#x} sim {simulated[i][first]:#x}")
    assert compared >= len(cases) // 2, "the simulator refused most maps"
    assert not differ, f"{len(differ)} of {compared} maps differ (first: {differ[0][1]})"



IM2COL_CASES = 40
IM2COL_SIMULATE = r'''
import json, sys
import numpy as np, numba
from numba import cuda
from numba_tma import TensorMap, fence, mbarrier, tma

WORDS = {words}

@cuda.jit
def load(desc, coords, offsets, nbytes, out):
    bars = cuda.shared.array(1, numba.uint64)
    smem = cuda.shared.array(WORDS, numba.uint32, alignment=1024)
    smem[:] = 0xA5A5A5A5
    mbarrier.init(bars, 1)
    fence.mbarrier_init()
    mbarrier.arrive_expect_tx(bars, nbytes)
    tma.load_im2col(desc, smem, tuple(int(x) for x in coords), tuple(int(x) for x in offsets), bars)
    mbarrier.wait(bars, 0)
    out[:] = smem[:]

data = np.load(sys.argv[1])
cases = json.loads(open(sys.argv[2]).read())
dumps, skipped = [], []
for i, case in enumerate(cases):
    desc = TensorMap.im2col(cuda.to_device(data[f"host{{i}}"]), case["lower"], case["upper"], case["channels"],
                            case["pixels"], swizzle=case["swizzle"])
    out = cuda.to_device(np.zeros(WORDS, np.uint32))
    try:
        load[1, 1](desc, np.array(case["coords"], np.int32), np.array(case["offsets"], np.int32), desc.box_bytes, out)
    except Exception as exc:
        if "not simulated" not in str(exc):
            raise
        skipped.append([i, str(exc).split("numba_tma simulator: ")[-1]])
    dumps.append(out.copy_to_host())
np.save(sys.argv[3], np.stack(dumps))
open(sys.argv[3] + ".skipped.json", "w").write(json.dumps(skipped))
print("simulated", len(dumps) - len(skipped), "refused", len(skipped))
'''
WORDS = SMEM_BYTES // 4


@cuda.jit
def im2col_loader(desc, coords, offsets, nbytes, out, status):
    """One im2col load of a rank-4 (NHWC) float32 map into poisoned shared words, dumped."""
    bars = cuda.shared.array(1, numba.uint64)
    smem = cuda.shared.array(WORDS, numba.uint32, alignment=1024)
    for i in range(cuda.threadIdx.x, WORDS, cuda.blockDim.x):
        smem[i] = 0xA5A5A5A5                   # poison: a word TMA did not write stays visible
    fence.proxy_async()
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, nbytes)
        tma.load_im2col(desc, smem, (coords[0], coords[1], coords[2], coords[3]), (offsets[0], offsets[1]), bars)
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, WORDS, cuda.blockDim.x):
        out[i] = smem[i]


def _im2col_case(rng):
    """Random NHWC float32 im2col parameters: corners, channels, pixels, coordinates, offsets,
    a swizzle whose span equals the channel bytes (or none)."""
    n, h, w = int(rng.integers(1, 4)), int(rng.integers(3, 12)), int(rng.integers(3, 12))
    c = int(rng.choice([4, 8, 16, 32]))
    channels = c if rng.random() < 0.7 else max(4, c // 2)
    swizzle = {8: "32B", 16: "64B", 32: "128B"}.get(channels, "none") if rng.random() < 0.4 else "none"
    pixels = int(rng.integers(1, min(64, WORDS // channels) + 1))
    lower = [int(rng.integers(-1, 1)), int(rng.integers(-1, 1))]          # (H, W), array order
    upper = [int(rng.integers(-1, 2)), int(rng.integers(-1, 2))]
    # the first pixel inside the bounding box (lower .. size - 1 + upper): on the H200 a start past
    # it in H faults with an illegal instruction (4 of 4 such cases; 36 of 36 inside worked)
    coords = [channels * int(rng.integers(0, c // channels)), int(rng.integers(lower[1], w + upper[1])),
              int(rng.integers(lower[0], h + upper[0])), int(rng.integers(0, n))]     # (c, w, h, n)
    offsets = [int(rng.integers(0, 3)), int(rng.integers(0, 3))]            # (w, h)
    return dict(shape=[n, h, w, c], lower=lower, upper=upper, channels=channels, pixels=pixels, swizzle=swizzle,
                coords=coords, offsets=offsets)


def test_simulator_im2col_is_byte_identical_to_the_gpu():
    from numba_tma import TensorMap

    rng = np.random.default_rng(77)
    cases, hosts, gpu = [], {}, []
    while len(cases) < IM2COL_CASES:
        case = _im2col_case(rng)
        host = rng.standard_normal(case["shape"]).astype(np.float32)
        try:
            desc = TensorMap.im2col(cuda.to_device(host), case["lower"], case["upper"], case["channels"],
                                    case["pixels"], swizzle=case["swizzle"])
        except ValueError:
            continue
        out = cuda.to_device(np.zeros(WORDS, np.uint32))
        status = cuda.to_device(np.zeros(1, np.int32))
        im2col_loader[1, 128](desc, np.array(case["coords"], np.int32), np.array(case["offsets"], np.int32),
                              desc.box_bytes, out, status)
        assert status.copy_to_host()[0] == 0, f"TMA never completed: {case}"
        gpu.append(out.copy_to_host())
        hosts[f"host{len(cases)}"] = host
        cases.append(case)
    differ, refused, _ = _simulate(IM2COL_SIMULATE.format(words=WORDS), cases, hosts, gpu, "identity_im2col")
    compared = len(cases) - len(refused)
    print(f"{len(cases)} im2col maps: {compared} compared, {compared - len(differ)} byte-identical")
    for i, case in differ[:5]:
        print(f"  differs: {case}")
    assert compared >= len(cases) // 2, "the simulator refused most maps"
    assert not differ, f"{len(differ)} of {compared} im2col maps differ (first: {differ[0][1]})"


FAULT = r'''
import sys
import numpy as np
sys.path.insert(0, "tests")
from numba import cuda
from numba_tma import TensorMap
from test_gpu_simulator_identity import WORDS, im2col_loader
h, w = int(sys.argv[1]), int(sys.argv[2])
image = np.arange(6 * 6 * 8, dtype=np.float32).reshape(1, 6, 6, 8)
desc = TensorMap.im2col(cuda.to_device(image), (0, 0), (-1, -1), 8, 4)        # H and W boxes: [0, 4]
out, status = cuda.to_device(np.zeros(WORDS, np.uint32)), cuda.to_device(np.zeros(1, np.int32))
im2col_loader[1, 128](desc, np.array([0, w, h, 0], np.int32), np.zeros(2, np.int32), desc.box_bytes, out, status)
cuda.synchronize()
print("loaded", out.copy_to_host()[:8].view(np.float32).tolist())
'''


@pytest.mark.parametrize("h, w", [(5, 0), (0, 5), (-1, 0), (0, -1)])
def test_an_im2col_start_outside_the_box_faults_on_the_gpu(h, w):
    """What the simulator's diagnostic prevents (tests/test_simulator_diagnostics.py): on the H200
    an im2col load starting outside the bounding box kills the kernel.  Each case runs in its own
    process (the fault is sticky); the start (4, 4), inside, loads pixel (4, 4)."""
    def run(h, w):
        return subprocess.run([sys.executable, "-c", FAULT, str(h), str(w)], cwd=ROOT, capture_output=True, text=True,
                              timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                  [str(ROOT), os.environ.get("PYTHONPATH", "")])))
    inside = run(4, 4)
    assert inside.returncode == 0 and "loaded [224.0, 225.0" in inside.stdout, inside.stderr[-2000:]
    outside = run(h, w)
    assert outside.returncode != 0 and "CUDA_ERROR_ILLEGAL_INSTRUCTION" in outside.stderr, outside.stdout + \
        outside.stderr[-2000:]
