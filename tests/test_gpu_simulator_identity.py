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
import pytest
from numba import cuda

from numba_tma.descriptors import TensorMapError, decode, encode_tiled

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
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        np.savez(folder / "hosts.npz", **hosts)
        (folder / "cases.json").write_text(json.dumps(cases))
        (folder / "sim.py").write_text(SIMULATE.format(smem=SMEM_BYTES))
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
        run = subprocess.run([sys.executable, str(folder / "sim.py"), str(folder / "hosts.npz"),
                              str(folder / "cases.json"), str(folder / "sim.npy")], env=env, capture_output=True,
                             text=True, timeout=1200)
        assert run.returncode == 0, run.stderr[-3000:]
        simulated = np.load(folder / "sim.npy")
        refused = dict(json.loads((folder / "sim.npy.skipped.json").read_text()))
    differ = [(i, c) for i, (c, g, s) in enumerate(zip(cases, gpu, simulated))
              if i not in refused and not np.array_equal(g, s)]
    compared = len(cases) - len(refused)
    print(f"{len(cases)} maps: {compared} compared, {compared - len(differ)} byte-identical; {len(refused)} forms the "
          f"simulator refuses ({sorted(set(r.split(':')[1].strip()[:60] for r in refused.values()))})")
    for i, case in differ[:5]:
        first = int(np.flatnonzero(gpu[i] != simulated[i])[0])
        print(f"  differs: {case}, first at byte {first}: gpu {gpu[i][first]:#x} sim {simulated[i][first]:#x}")
    assert compared >= len(cases) // 2, "the simulator refused most maps"
    assert not differ, f"{len(differ)} of {compared} maps differ (first: {differ[0][1]})"
