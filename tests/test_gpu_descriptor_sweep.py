"""Functional proof of the pure-Python encoder: for a sweep of random descriptors (dtypes,
swizzles, boxes, element strides, OOB fill; boxes at and past the tensor edge), a TMA load through
our bytes and through the driver's bytes leave identical shared memory, and plain loads match a
numpy model.  The mbarrier expects ``transfer_bytes``, so a wrong transfer size hangs the barrier
and fails the case.  Interleaved maps are left out: how many bytes their loads deliver is not
established (docs/descriptors.md)."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import fence, mbarrier, tma
from numba_tma.descriptors import TensorMapError, decode, driver, encode_tiled
from numba_tma.descriptors.enums import TYPE_INFO, DataType

from gpu_support import bounded_wait

pytestmark = pytest.mark.gpu

SMEM_BYTES = 16384
CASES_PER_RANK = 40
DTYPES = [dt for dt in DataType if TYPE_INFO[dt].bits >= 8]  # the packed sub-byte types need sm_100


def _loader(rank):
    """A kernel loading one box at ``coords`` into raw shared bytes and dumping them."""

    @cuda.jit
    def kernel(desc, coords, nbytes, out, status):
        bars = cuda.shared.array(1, numba.uint64)
        smem = cuda.shared.array(SMEM_BYTES, numba.uint8, alignment=1024)
        for i in range(cuda.threadIdx.x, SMEM_BYTES, cuda.blockDim.x):
            smem[i] = 0xA5  # poison: a byte TMA did not write stays visible
        fence.proxy_async()
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, nbytes)
            if rank == 1:
                tma.load(desc, smem, (coords[0],), bars)
            elif rank == 2:
                tma.load(desc, smem, (coords[0], coords[1]), bars)
            elif rank == 3:
                tma.load(desc, smem, (coords[0], coords[1], coords[2]), bars)
            elif rank == 4:
                tma.load(desc, smem, (coords[0], coords[1], coords[2], coords[3]), bars)
            else:
                tma.load(desc, smem, (coords[0], coords[1], coords[2], coords[3], coords[4]), bars)
        bounded_wait(bars, 0, status)
        for i in range(cuda.threadIdx.x, SMEM_BYTES, cuda.blockDim.x):
            out[i] = smem[i]

    return kernel


def _random_case(rng, rank):
    """Random tiled parameters our encoder accepts, over a small tensor, or None."""
    dt = DTYPES[rng.integers(len(DTYPES))]
    size = TYPE_INFO[dt].bits // 8
    interleave = "none"  # interleaved transfer sizes are not established (docs/descriptors.md)
    swizzle = "32B" if interleave == "32B" else rng.choice(["none", "none", "32B", "64B", "128B"])
    dims = [int(rng.integers(1, 48)) for _ in range(rank)]
    row = -(-dims[0] * size // 32) * 32 + 32 * int(rng.integers(0, 2))  # padded rows, 32-byte multiple
    strides = [row]
    for d in dims[1:-1]:
        strides.append(strides[-1] * d)
    unit = 16 if interleave == "none" else {"16B": 16, "32B": 32}[interleave]
    inner = unit // size if interleave != "none" else max(1, 16 // size) * int(rng.integers(1, 5))
    box = [inner] + [int(rng.integers(1, 9)) for _ in range(rank - 1)]
    estr = [int(rng.integers(1, 4)) if rng.random() < 0.5 else 1 for _ in range(rank)]
    oob = "nan" if TYPE_INFO[dt].floating and rng.random() < 0.3 else "none"
    if rng.random() < 0.4:  # a plain load, also checked against numpy
        interleave, swizzle, estr, oob = "none", "none", [1] * rank, "none"
        box[0] = max(1, 16 // size) * int(rng.integers(1, 5))
    # boxes hanging off both edges; the innermost coordinate must address a 16-byte multiple
    # (32 with 32B interleave): the H200 raises an illegal-instruction error otherwise
    step = (32 if interleave == "32B" else 16) // size
    coords = [step * int(rng.integers(-2, dims[0] // step + 2))]
    coords += [int(rng.integers(-4, d + 2)) for d in dims[1:]]
    nbytes = row * int(np.prod(dims[1:]))
    return dict(data_type=dt, global_dim=dims, global_strides=strides[: rank - 1], box_dim=box,
                element_strides=estr, interleave=interleave, swizzle=str(swizzle), l2_promotion="128B",
                oob_fill=oob), coords, nbytes


def _expected_box(host, params, coords):
    """What a plain load (no swizzle, no interleave, unit element strides, zero fill) must leave in
    shared memory: the box, innermost dimension fastest, with out-of-bounds elements zero."""
    size = TYPE_INFO[params["data_type"]].bits // 8
    dims, strides, box = params["global_dim"], [size] + list(params["global_strides"]), params["box_dim"]
    out = np.zeros(int(np.prod(box)) * size, np.uint8)
    for n, index in enumerate(np.ndindex(*reversed(box))):
        pos = [c + i for c, i in zip(coords, reversed(index))]
        if all(0 <= p < d for p, d in zip(pos, dims)):
            at = sum(p * st for p, st in zip(pos, strides))
            out[n * size:(n + 1) * size] = host[at:at + size]
    return out


# Loads of these types change the bits (seen on the H200: TF32 rounds to nearest even, 10 mantissa bits),
# so the byte-copy model does not apply to them.
CONVERTING = {DataType.TFLOAT32, DataType.TFLOAT32_FTZ, DataType.FLOAT32_FTZ}


def _is_plain(params):
    return (params["swizzle"] == "none" and params["interleave"] == "none" and params["oob_fill"] == "none"
            and all(e == 1 for e in params["element_strides"]) and params["data_type"] not in CONVERTING)


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_our_bytes_load_like_the_driver_bytes(rank):
    rng = np.random.default_rng(100 + rank)
    kernel = _loader(rank)
    compared = nonzero = plain = 0
    for _ in range(CASES_PER_RANK * 4):
        if compared == CASES_PER_RANK:
            break
        params, coords, nbytes = _random_case(rng, rank)
        host = rng.integers(1, 255, size=nbytes, dtype=np.uint8)
        src = cuda.to_device(host)
        address = src.__cuda_array_interface__["data"][0]
        try:
            ours = encode_tiled(global_address=address, **params)
        except TensorMapError:
            continue
        theirs = driver.encode_tiled(global_address=address, **params)
        box_bytes = decode(ours).transfer_bytes
        if int(np.prod(params["box_dim"])) * TYPE_INFO[params["data_type"]].bits // 8 > SMEM_BYTES:
            continue  # keep even the full, unstrided box inside the shared buffer
        dumps = []
        for desc in (ours, theirs):
            out = cuda.to_device(np.zeros(SMEM_BYTES, np.uint8))
            status = cuda.to_device(np.zeros(1, np.int32))
            kernel[1, 128](cuda.to_device(np.frombuffer(desc, np.uint8)), np.array(coords + [0] * (5 - rank), np.int32),
                           box_bytes, out, status)
            assert status.copy_to_host()[0] == 0, f"TMA never completed: {params} coords {coords}"
            dumps.append(out.copy_to_host())
        assert ours == theirs, f"bytes differ for {params}"
        np.testing.assert_array_equal(dumps[0], dumps[1], err_msg=f"{params} coords {coords}")
        if _is_plain(params):
            np.testing.assert_array_equal(dumps[0][:box_bytes], _expected_box(host, params, coords),
                                          err_msg=f"{params} coords {coords}")
            plain += 1
        assert (dumps[0][:box_bytes] != 0xA5).any()
        nonzero += bool(dumps[0][:box_bytes].any())
        compared += 1
    assert compared == CASES_PER_RANK, f"only {compared} valid cases generated"
    # random 5-D coordinates often put the whole box outside the tensor; still demand real data
    assert nonzero >= CASES_PER_RANK // 4, "too few boxes contained tensor data, not only fill"
    print(f"rank {rank}: {compared} descriptors compared, {plain} also checked against numpy")
