"""The simulator's TMA stores and reduces against the H200's, at the 16-byte edge: random tiled
maps of ranks 1-5 and 1-, 2-, 4- and 8-byte elements, rows whose bytes are and are not a multiple
of 16, boxes that cross the end of dimension 0 (and the far edges of the others), stored or
add-reduced with ``allow_overrun=True`` into a poisoned, pitched buffer.  The whole buffer after the
GPU's op must equal the simulator's, byte for byte, and a numpy model written here (the box clipped
at the next 16-byte boundary of each row, nothing else touched).  The simulator half runs in a
child process (``NUMBA_ENABLE_CUDASIM=1``)."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import fence, tma
from numba_tma.descriptors import TensorMapError, encode_tiled

from test_gpu_simulator_identity import _simulate

pytestmark = pytest.mark.gpu

SMEM = 8192
BUFFER = 40960
CASES_PER_RANK = 24
# (numpy dtype, TMA data type) per element size; the reduces add, on a type each size has
STORE_TYPES = {1: ("uint8", "uint8"), 2: ("uint16", "uint16"), 4: ("float32", "float32"), 8: ("uint64", "uint64")}
REDUCE_TYPES = {2: ("float16", "float16"), 4: ("int32", "int32"), 8: ("uint64", "uint64")}


def _kernel(reduce):
    @cuda.jit
    def kernel(desc, coords, tile_bytes):
        tile = cuda.shared.array(SMEM, numba.uint8, alignment=1024)
        for i in range(cuda.threadIdx.x, SMEM, cuda.blockDim.x):
            tile[i] = tile_bytes[i]
        fence.proxy_async()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            c = (coords[0], coords[1], coords[2], coords[3], coords[4])
            rank = coords[5]
            if reduce:
                if rank == 1:
                    tma.reduce(desc, tile, c[:1], "add", allow_overrun=True)
                elif rank == 2:
                    tma.reduce(desc, tile, c[:2], "add", allow_overrun=True)
                elif rank == 3:
                    tma.reduce(desc, tile, c[:3], "add", allow_overrun=True)
                elif rank == 4:
                    tma.reduce(desc, tile, c[:4], "add", allow_overrun=True)
                else:
                    tma.reduce(desc, tile, c, "add", allow_overrun=True)
            else:
                if rank == 1:
                    tma.store(desc, tile, c[:1], allow_overrun=True)
                elif rank == 2:
                    tma.store(desc, tile, c[:2], allow_overrun=True)
                elif rank == 3:
                    tma.store(desc, tile, c[:3], allow_overrun=True)
                elif rank == 4:
                    tma.store(desc, tile, c[:4], allow_overrun=True)
                else:
                    tma.store(desc, tile, c, allow_overrun=True)
            tma.commit_group()
            tma.wait_group(0)
    return kernel


SIMULATE = r'''
import json, sys
import numpy as np, numba
from numba import cuda
from numba_tma import fence, tma
from numba_tma.descriptors import encode_tiled
from numba_tma.simulator import memory
SMEM = {smem}
REDUCE = {reduce}

@cuda.jit
def kernel(desc, coords, tile_bytes):
    tile = cuda.shared.array(SMEM, numba.uint8, alignment=1024)
    tile[:] = tile_bytes[:]
    fence.proxy_async()
    c = tuple(int(x) for x in coords[:int(coords[5])])
    if REDUCE:
        tma.reduce(desc, tile, c, "add", allow_overrun=True)
    else:
        tma.store(desc, tile, c, allow_overrun=True)
    tma.commit_group()
    tma.wait_group(0)

data = np.load(sys.argv[1])
cases = json.loads(open(sys.argv[2]).read())
dumps = []
for i, case in enumerate(cases):
    buf = cuda.to_device(data[f"host{{i}}"])
    address = memory.address(memory.host(buf)) + case["offset"]
    desc = cuda.to_device(np.frombuffer(encode_tiled(global_address=address, **case["params"]), np.uint8).copy())
    kernel[1, 1](desc, np.array(case["coords"], np.int32), data[f"tile{{i}}"])
    dumps.append(buf.copy_to_host())
np.save(sys.argv[3], np.stack(dumps))
open(sys.argv[3] + ".skipped.json", "w").write("[]")
print("simulated", len(dumps))
'''


def _case(rng, rank, size, reduce):
    """Random store parameters over a pitched buffer: ``(params, coords, buffer, tile, model
    inputs)``, or ``None`` where the encoder refuses them."""
    name, data_type = (REDUCE_TYPES if reduce else STORE_TYPES)[size]
    per16 = 16 // size
    ragged = rng.random() < 0.75
    width = int(rng.integers(1, 6)) * per16 + (int(rng.integers(1, per16)) if ragged else 0)
    dims = [width] + [int(rng.integers(1, 5)) for _ in range(rank - 1)]
    box = [int(rng.integers(1, 4)) * per16] + [int(rng.integers(1, d + 2)) for d in dims[1:]]
    if np.prod(box) * size > SMEM:
        return None
    row = -(-width * size // 16) * 16 + 16 * int(rng.integers(0, 2))        # pitch: padded, 16-byte aligned
    strides, step = [], row
    for d in dims[1:]:
        strides.append(step)
        step *= d
    nbytes = BUFFER                                                        # one size: dumps stack
    if step + 64 + 32 > nbytes:                                            # the last row's overrun fits
        return None
    # coords[0]: 16-byte aligned, the box crossing the end of the row in most cases
    last_start = (width - 1) // per16 * per16
    first = last_start if rng.random() < 0.7 else per16 * int(rng.integers(0, last_start // per16 + 1))
    coords = [first] + [int(rng.integers(0, d)) for d in dims[1:]]
    params = dict(data_type=data_type, global_dim=dims, global_strides=strides, box_dim=box)
    try:
        encode_tiled(global_address=1 << 40, **params)
    except TensorMapError:
        return None
    if reduce:
        buf = rng.integers(0, 50, nbytes // size).astype(name).view(np.uint8)
        tile = rng.integers(1, 50, SMEM // size).astype(name).view(np.uint8)
    else:
        buf = rng.integers(0, 256, nbytes, dtype=np.uint8)
        tile = rng.integers(0, 256, SMEM, dtype=np.uint8)
    return params, coords, buf, tile, (name, dims, box, row, strides)


def _model(buf, tile, coords, offset, geometry, reduce):
    """The buffer after the op, as measured (the rule written out here, not the simulator's):
    the box's elements written (or added) wherever each index is inside its dimension, dimension 0
    counting up to the next 16 bytes past the row's end."""
    name, dims, box, row, strides = geometry
    size = np.dtype(name).itemsize
    out = buf.copy()
    values = tile.view(name)
    reach = -(-dims[0] * size // 16) * 16 // size
    limits = [reach] + dims[1:]
    steps = [size] + strides
    for flat, index in enumerate(np.ndindex(*reversed(box))):        # C order over the box, outermost first
        index = index[::-1]                                           # innermost first
        pos = [c + i for c, i in zip(coords, index)]
        if all(p < n for p, n in zip(pos, limits)):
            at = offset + sum(p * s for p, s in zip(pos, steps))
            old = out[at:at + size].view(name)[0]
            new = old + values[flat] if reduce else values[flat]
            out[at:at + size] = np.array([new], name).view(np.uint8)
    return out


@pytest.mark.parametrize("reduce", [False, True], ids=["store", "reduce_add"])
def test_store_and_reduce_edges_are_byte_identical_to_the_gpu(reduce):
    kernel = _kernel(reduce)
    cases, hosts, gpu, models = [], {}, [], []
    sizes = sorted(REDUCE_TYPES if reduce else STORE_TYPES)
    for rank in range(1, 6):
        rng = np.random.default_rng(500 + rank + 10 * reduce)
        made = 0
        while made < CASES_PER_RANK:
            size = sizes[made % len(sizes)]
            case = _case(rng, rank, size, reduce)
            if case is None:
                continue
            params, coords, host, tile, geometry = case
            offset = 32                                 # the tensor starts inside the buffer
            buf = cuda.to_device(host)
            address = buf.__cuda_array_interface__["data"][0] + offset
            desc = cuda.to_device(np.frombuffer(encode_tiled(global_address=address, **params), np.uint8).copy())
            padded = coords + [0] * (5 - rank) + [rank]
            kernel[1, 128](desc, np.array(padded, np.int32), tile)
            gpu.append(buf.copy_to_host())
            models.append(_model(host, tile, coords, offset, geometry, reduce))
            hosts[f"host{len(cases)}"], hosts[f"tile{len(cases)}"] = host, tile
            cases.append(dict(params=params, coords=padded, offset=offset, ragged=bool(
                geometry[1][0] * np.dtype(geometry[0]).itemsize % 16)))
            made += 1
    name = "store_reduce" if reduce else "store"
    differ, _, simulated = _simulate(SIMULATE.format(smem=SMEM, reduce=reduce), cases, hosts, gpu, f"identity_{name}")
    off_model = [i for i, (g, m) in enumerate(zip(gpu, models)) if not np.array_equal(g, m)]
    ragged = sum(c["ragged"] for c in cases)
    print(f"{len(cases)} {name} maps ({ragged} with rows not a multiple of 16 bytes): "
          f"{len(cases) - len(differ)} simulator byte-identical, {len(cases) - len(off_model)} as the numpy model")
    for i in off_model[:3]:
        first = int(np.flatnonzero(gpu[i] != models[i])[0])
        print(f"  off the model: {cases[i]}, first at byte {first}: gpu {gpu[i][first]} model {models[i][first]}")
    assert not off_model, f"{len(off_model)} of {len(cases)} GPU results differ from the model ({cases[off_model[0]]})"
    assert not differ, f"{len(differ)} of {len(cases)} maps differ (first: {differ[0][1]})"
    assert ragged >= len(cases) // 2
