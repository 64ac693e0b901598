"""TMA shared -> global on the GPU, checked against numpy: stores of rank 1-5 clipped at the tensor's
edges, the load -> modify -> store round trip, ``tma.reduce`` for every op and data type, tensor and
descriptor prefetch, L2 cache hints, ``wait_group_read`` freeing the source tile, and maps in global
memory typed by their layout (``to_device()``: refused past a row edge at compile time, opted in
writing to the 16-byte boundary) beside descriptor bytes of one's own."""

import functools

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import OpArgumentError, TensorMap, cache, fence, mbarrier, tma
from numba_tma.intrinsics.tensor_map_type import global_map_type
from numba_tma.intrinsics.tma import TENSOR_REDUCE_TYPES

from gpu_support import TILE_C, TILE_R, bounded_wait

pytestmark = pytest.mark.gpu

THREADS = 128
SENTINEL = -7.0
TILE_BYTES = TILE_R * TILE_C * 4           # one float32 tile of gpu_support's shape


def new_status():
    return cuda.to_device(np.zeros(1, np.int32))


def check_status(status):
    assert status.copy_to_host()[0] == 0, "TMA never completed the barrier"


def clipped(shape, box, at):
    """``(tensor slices, box slices)`` of the part of a ``box`` placed at ``at`` (array order) that
    lies inside a tensor of ``shape``: what a clipped store writes, and from where."""
    inside, of_box = [], []
    for n, b, c in zip(shape, box, at):
        lo, hi = max(c, 0), max(min(c + b, n), max(c, 0))
        inside.append(slice(lo, hi))
        of_box.append(slice(lo - c, hi - c))
    return tuple(inside), tuple(of_box)


def grid_of(shape):
    """Blocks of TILE_R x TILE_C tiles covering a 2-D ``shape``: (x = column tiles, y = row tiles)."""
    return (shape[1] + TILE_C - 1) // TILE_C, (shape[0] + TILE_R - 1) // TILE_R


# -- 1. stores of every rank, clipped at the edges --------------------------------------------------

@functools.cache
def box_store_kernel(n):
    """Write ``values`` (``n`` float32) to a shared box and TMA-store it at ``coords`` (innermost
    first).  TMA reads the box densely from element 0, so a flat array serves every rank."""

    @cuda.jit
    def kernel(desc, values, coords):
        box = cuda.shared.array(n, numba.float32, alignment=128)
        for i in range(cuda.threadIdx.x, n, cuda.blockDim.x):
            box[i] = values[i]
        fence.proxy_async()          # ordinary stores -> visible to the TMA (async proxy)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            tma.store(desc, box, coords)
            tma.commit_group()
            tma.wait_group(0)

    return kernel


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_tma_store_every_rank_is_clipped_at_the_edges(rank):
    """Half the box in every dimension hangs over the far edge.  (A box starting *before* the
    tensor kills the kernel on the H200 — measured for ranks 1-5 — so that is refused, not tested.)"""
    box = (4,) * (rank - 1) + (8,)
    shape = (6,) * (rank - 1) + (12,)        # 48-byte rows: every global stride a multiple of 16 bytes
    at = tuple(n - b // 2 for n, b in zip(shape, box))
    assert at[-1] * 4 % 16 == 0              # the innermost coordinate must be 16-byte aligned
    pattern = np.arange(1, np.prod(box) + 1, dtype=np.float32).reshape(box)
    out = cuda.to_device(np.full(shape, SENTINEL, np.float32))
    box_store_kernel(pattern.size)[1, THREADS](TensorMap.tiled(out, box), pattern.ravel(), at[::-1])
    expect = np.full(shape, SENTINEL, np.float32)
    inside, of_box = clipped(shape, box, at)
    expect[inside] = pattern[of_box]
    assert 0 < np.count_nonzero(expect != SENTINEL) < pattern.size   # part in, part out
    np.testing.assert_array_equal(out.copy_to_host(), expect)


# -- 2. load -> modify -> store (the CCCL pattern) ---------------------------------------------------

@cuda.jit
def twice_plus_one_kernel(src, dst, nbytes, status):
    """Block (x, y): TMA-load its tile of ``src`` (``nbytes`` expected), tile = 2 * tile + 1,
    TMA-store it to ``dst``."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((TILE_R, TILE_C), numba.float32, alignment=128)
    row0, col0 = cuda.blockIdx.y * TILE_R, cuda.blockIdx.x * TILE_C
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, nbytes)
        tma.load(src, tile, (col0, row0), bars)
    bounded_wait(bars, 0, status)
    for i in range(cuda.threadIdx.x, TILE_R * TILE_C, cuda.blockDim.x):
        r, c = i // TILE_C, i % TILE_C
        tile[r, c] = numba.float32(2) * tile[r, c] + numba.float32(1)
    fence.proxy_async()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        tma.store(dst, tile, (col0, row0))
        tma.commit_group()
        tma.wait_group_read(0)       # the tile may be reused; the kernel's end completes the write


def test_load_modify_store_round_trip():
    shape = (100, 180)               # 4 x 3 blocks, ragged in both dimensions
    host = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    out = cuda.to_device(np.full(shape, SENTINEL, np.float32))
    status = new_status()
    twice_plus_one_kernel[grid_of(shape), THREADS](TensorMap.tiled(cuda.to_device(host), (TILE_R, TILE_C)),
                                                   TensorMap.tiled(out, (TILE_R, TILE_C)), TILE_BYTES, status)
    check_status(status)
    np.testing.assert_array_equal(out.copy_to_host(), np.float32(2) * host + np.float32(1))


# -- 3. tma.reduce: every op x every data type -------------------------------------------------------

RED_SHAPE, RED_BOX = (12, 48), (8, 32)
RED_AT = (8, 16)                     # (row, col): the box's last 4 rows hang over the edge
RED_COORDS = RED_AT[::-1]            # innermost first; 16 columns are 16-byte aligned for every type
RED_CASES = [(op, t) for op, data_types in TENSOR_REDUCE_TYPES.items() for t in data_types]
ADD_RTOL = {"FLOAT32": 1e-6, "FLOAT16": 2.0 ** -10, "BFLOAT16": 2.0 ** -7}


@functools.cache
def reduce_kernel(op, tile_dtype):
    """Write ``values`` to a shared box and TMA-reduce it into the tensor at RED_COORDS with ``op``."""
    n = RED_BOX[0] * RED_BOX[1]

    @cuda.jit
    def kernel(desc, values):
        box = cuda.shared.array(n, tile_dtype, alignment=128)
        for i in range(cuda.threadIdx.x, n, cuda.blockDim.x):
            box[i] = values[i]
        fence.proxy_async()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            tma.reduce(desc, box, RED_COORDS, op)
            tma.commit_group()
            tma.wait_group(0)

    return kernel


def reduce_operands(op, dtype, rng, shape, box):
    """(initial tensor of ``shape``, values of ``box`` shape) for ``op`` on ``dtype``, in ranges
    where nothing overflows.  Also used by test_gpu_bulk."""
    shapes = (shape, box)
    if op in ("inc", "dec"):          # small counters: both branches of each rule occur
        return rng.integers(0, 24, shape).astype(dtype), rng.integers(0, 16, box).astype(dtype)
    if dtype.kind == "f":             # multiples of 1/8 in [-16, 16): exact in fp32, fp16 and bf16, sums too
        return tuple((rng.integers(-128, 128, s) / 8).astype(dtype) for s in shapes)
    info = np.iinfo(dtype)
    lo, hi = (info.min // 2, info.max // 2) if op == "add" else (info.min, info.max)   # no carry out of add
    return tuple(rng.integers(lo, hi, s, dtype=dtype, endpoint=True) for s in shapes)


def reduce_reference(op, old, src):
    """``op(old, src)`` element-wise, ``old`` the tensor's value and ``src`` the box's.  inc and dec
    follow the PTX ISA definition shared by atom / red / cp.reduce.async.bulk(.tensor) (the same as
    CUDA's atomicInc / atomicDec):
        inc: old = (old >= src) ? 0 : old + 1
        dec: old = ((old == 0) || (old > src)) ? src : old - 1"""
    if op == "inc":
        return np.where(old >= src, 0, old + 1).astype(old.dtype)
    if op == "dec":
        return np.where((old == 0) | (old > src), src, old - 1).astype(old.dtype)
    ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum,
             "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    return ufunc(old, src)


def assert_both_branches(op, old, src):
    """The data must take both branches of the inc / dec rule somewhere."""
    if op in ("inc", "dec"):
        taken = old >= src if op == "inc" else (old == 0) | (old > src)
        assert taken.any() and not taken.all(), f"the data must take both branches of {op}"


@pytest.mark.parametrize("op,data_type", RED_CASES, ids=[f"{op}-{t.lower()}" for op, t in RED_CASES])
def test_tma_reduce_matches_numpy(op, data_type):
    bf16 = data_type == "BFLOAT16"
    dtype = np.dtype(np.float32 if bf16 else data_type.lower())      # bf16 values are computed in fp32
    rng = np.random.default_rng(RED_CASES.index((op, data_type)))
    old, src = reduce_operands(op, dtype, rng, RED_SHAPE, RED_BOX)
    inside, of_box = clipped(RED_SHAPE, RED_BOX, RED_AT)
    expect = old.copy()
    expect[inside] = reduce_reference(op, old[inside], src[of_box])
    assert_both_branches(op, old[inside], src[of_box])

    if bf16:          # numba has no bfloat16 arrays: a torch tensor, and the box as raw uint16 bits
        torch = pytest.importorskip("torch")
        tensor = torch.tensor(old, device="cuda").to(torch.bfloat16)
        torch.cuda.synchronize()
        values = (src.view(np.uint32) >> 16).astype(np.uint16)     # exact: the low 16 bits are zero
    else:
        tensor, values = cuda.to_device(old), src
    reduce_kernel(op, values.dtype)[1, THREADS](TensorMap.tiled(tensor, RED_BOX), values.ravel())
    cuda.synchronize()
    got = tensor.float().cpu().numpy() if bf16 else tensor.copy_to_host()
    if op == "add" and dtype.kind == "f":
        np.testing.assert_allclose(got, expect, rtol=ADD_RTOL[data_type], atol=ADD_RTOL[data_type])
    else:
        np.testing.assert_array_equal(got, expect)


# -- 4. tensor and descriptor prefetch ---------------------------------------------------------------

@functools.cache
def strip_copy_kernel(prefetch):
    """Block x walks its column strip down the tensor one tile at a time through one shared tile and
    one barrier (phase k & 1 for tile k); with ``prefetch``, each step first prefetches the
    descriptor and the next tile into L2."""

    @cuda.jit
    def kernel(desc, out, status):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((TILE_R, TILE_C), numba.float32, alignment=128)
        col0 = cuda.blockIdx.x * TILE_C
        tiles = (out.shape[0] + TILE_R - 1) // TILE_R
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        for k in range(tiles):
            if cuda.threadIdx.x == 0:
                if prefetch:
                    tma.prefetch_descriptor(desc)
                    if k + 1 < tiles:
                        tma.prefetch(desc, (col0, (k + 1) * TILE_R))
                mbarrier.arrive_expect_tx(bars, TILE_BYTES)
                tma.load(desc, tile, (col0, k * TILE_R), bars)
            bounded_wait(bars, k & 1, status)
            for i in range(cuda.threadIdx.x, TILE_R * TILE_C, cuda.blockDim.x):
                r, c = k * TILE_R + i // TILE_C, col0 + i % TILE_C
                if r < out.shape[0] and c < out.shape[1]:
                    out[r, c] = tile[i // TILE_C, i % TILE_C]
            cuda.syncthreads()       # everyone is done with the tile before it is refilled

    return kernel


@pytest.mark.parametrize("form", ["by-value", "global"])
def test_prefetch_changes_no_result(form):
    shape = (200, 180)               # 7 tiles down each of 3 strips, ragged
    host = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    desc = TensorMap.tiled(cuda.to_device(host), (TILE_R, TILE_C))
    results = []
    for prefetch in (False, True):
        out = cuda.to_device(np.full(shape, SENTINEL, np.float32))
        status = new_status()
        strip_copy_kernel(prefetch)[grid_of(shape)[0], THREADS](desc if form == "by-value" else desc.to_device(),
                                                                out, status)
        check_status(status)
        results.append(out.copy_to_host())
    np.testing.assert_array_equal(results[1], results[0])
    np.testing.assert_array_equal(results[1], host)


# -- 5. L2 cache hints ----------------------------------------------------------------------------

POLICIES = {k: (k, 1.0, None) for k in ("evict_first", "evict_last", "evict_normal", "evict_unchanged")}
POLICIES["evict_last-half-rest-evict_first"] = ("evict_last", 0.5, "evict_first")


@functools.cache
def hinted_copy_kernel(kind, fraction, rest):
    """Tile copy whose TMA load and TMA store both carry ``cache.policy(kind, fraction, rest)``."""

    @cuda.jit
    def kernel(src, dst, status):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((TILE_R, TILE_C), numba.float32, alignment=128)
        row0, col0 = cuda.blockIdx.y * TILE_R, cuda.blockIdx.x * TILE_C
        policy = cache.policy(kind, fraction, rest)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()           # nobody polls the barrier before it is initialized
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, src.box_bytes)
            tma.load(src, tile, (col0, row0), bars, cache_hint=policy)
        bounded_wait(bars, 0, status)
        if cuda.threadIdx.x == 0:
            fence.proxy_async()
            tma.store(dst, tile, (col0, row0), cache_hint=policy)
            tma.commit_group()
            tma.wait_group(0)

    return kernel


@pytest.mark.parametrize("policy", list(POLICIES), ids=list(POLICIES))
def test_cache_hints_leave_data_unchanged(policy):
    shape = (100, 180)
    host = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    out = cuda.to_device(np.full(shape, SENTINEL, np.float32))
    status = new_status()
    hinted_copy_kernel(*POLICIES[policy])[grid_of(shape), THREADS](
        TensorMap.tiled(cuda.to_device(host), (TILE_R, TILE_C)), TensorMap.tiled(out, (TILE_R, TILE_C)), status)
    check_status(status)
    np.testing.assert_array_equal(out.copy_to_host(), host)


# -- 6. wait_group_read frees the source -----------------------------------------------------------

@cuda.jit
def store_then_overwrite_kernel(desc, a, b, seen):
    """Block (x, y) TMA-stores its tile of ``a``, waits only until the store has *read* the tile
    (``wait_group_read``), overwrites the tile with ``b`` and only then waits for the store itself.
    ``seen`` receives the tile's final contents (``b``: the overwrite happened)."""
    tile = cuda.shared.array((TILE_R, TILE_C), numba.float32, alignment=128)
    row0, col0 = cuda.blockIdx.y * TILE_R, cuda.blockIdx.x * TILE_C
    for i in range(cuda.threadIdx.x, TILE_R * TILE_C, cuda.blockDim.x):
        tile[i // TILE_C, i % TILE_C] = a[row0 + i // TILE_C, col0 + i % TILE_C]
    fence.proxy_async()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        tma.store(desc, tile, (col0, row0))
        tma.commit_group()
        tma.wait_group_read(0)
    cuda.syncthreads()
    for i in range(cuda.threadIdx.x, TILE_R * TILE_C, cuda.blockDim.x):
        tile[i // TILE_C, i % TILE_C] = b[row0 + i // TILE_C, col0 + i % TILE_C]
    fence.proxy_async()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        tma.wait_group(0)
    for i in range(cuda.threadIdx.x, TILE_R * TILE_C, cuda.blockDim.x):
        seen[row0 + i // TILE_C, col0 + i % TILE_C] = tile[i // TILE_C, i % TILE_C]


def test_wait_group_read_lets_the_source_be_overwritten():
    shape = (4 * TILE_R, 4 * TILE_C)
    rng = np.random.default_rng(10)
    for _ in range(4):
        a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
        out = cuda.to_device(np.full(shape, SENTINEL, np.float32))
        seen = cuda.to_device(np.zeros(shape, np.float32))
        store_then_overwrite_kernel[grid_of(shape), THREADS](TensorMap.tiled(out, (TILE_R, TILE_C)),
                                                             cuda.to_device(a), cuda.to_device(b), seen)
        np.testing.assert_array_equal(out.copy_to_host(), a)     # the store read the tile before it changed
        np.testing.assert_array_equal(seen.copy_to_host(), b)


# -- 6. maps in global memory typed by their layout (TensorMap.to_device()) ---------------------------

def edge_store_kernel(allow):
    """Store a (2, 16) float32 box of 100, 101, ... at column 48 of a map whose rows may end short of
    16 bytes (``allow``: the call opts in)."""
    @cuda.jit
    def kernel(desc):
        tile = cuda.shared.array((2, 16), numba.float32, alignment=128)
        if cuda.threadIdx.x < 32:
            tile[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16] = 100 + cuda.threadIdx.x
        fence.proxy_async()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            tma.store(desc, tile, (48, 0), allow_overrun=allow)
            tma.commit_group()
            tma.wait_group(0)
    return kernel


def test_a_store_through_to_device_past_a_row_edge_is_refused_at_compile_time():
    """The H100 wrote up to the next 16-byte boundary past every row through ``to_device()`` of a
    59-wide view (its type said no layout); it is now typed by the map's and refused like the
    by-value map, before anything runs."""
    buf = cuda.to_device(np.full((2, 64), SENTINEL, np.float32))
    desc = TensorMap.tiled(buf[:, :59], (2, 16))
    arg = desc.to_device()
    assert numba.typeof(arg) == global_map_type(desc.layout) and arg.copy_to_host().tobytes() == desc.bytes
    with pytest.raises(OpArgumentError, match=r"tma.store: argument 'desc' would write outside the tensor: "
                                              r"TensorMap\[float32, rank=2, box=\(2, 16\), tiled, store_overrun=4\]"):
        edge_store_kernel(False)[1, THREADS](arg)
    np.testing.assert_array_equal(buf.copy_to_host(), np.full((2, 64), SENTINEL, np.float32))


@pytest.mark.parametrize("opt_in", ["map", "call"])
def test_an_opted_in_store_through_to_device_writes_to_the_16_byte_boundary(opt_in):
    """Opted in, the bytes up to the boundary are the caller's: columns 48..58 and 59 (236 -> 240
    bytes) get the box, 60..63 keep the sentinel (the H200's measured edge, tests/test_store_edge.py)."""
    buf = cuda.to_device(np.full((2, 64), SENTINEL, np.float32))
    desc = TensorMap.tiled(buf[:, :59], (2, 16), allow_store_overrun=opt_in == "map")
    edge_store_kernel(opt_in == "call")[1, THREADS](desc.to_device())
    expect = np.full((2, 64), SENTINEL, np.float32)
    expect[0, 48:60] = np.arange(100, 112)
    expect[1, 48:60] = np.arange(116, 128)
    np.testing.assert_array_equal(buf.copy_to_host(), expect)


@pytest.mark.parametrize("form", ["to_device", "bytes"])
def test_maps_in_global_memory_load_modify_store_as_by_value_maps(form):
    """``to_device()``'s arrays (typed by the maps' layouts) and descriptor bytes of one's own in a
    plain uint8 array round-trip as the by-value maps do."""
    shape = (100, 180)
    host = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    out = cuda.to_device(np.full(shape, SENTINEL, np.float32))
    src, dst = TensorMap.tiled(cuda.to_device(host), (TILE_R, TILE_C)), TensorMap.tiled(out, (TILE_R, TILE_C))
    status = new_status()
    if form == "to_device":
        twice_plus_one_kernel[grid_of(shape), THREADS](src.to_device(), dst.to_device(), src.box_bytes, status)
    else:
        def own(desc):
            return cuda.to_device(np.frombuffer(desc.bytes, np.uint8))
        twice_plus_one_kernel[grid_of(shape), THREADS](own(src), own(dst), TILE_BYTES, status)
    check_status(status)
    np.testing.assert_array_equal(out.copy_to_host(), np.float32(2) * host + np.float32(1))
