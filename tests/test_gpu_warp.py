"""numba-cuda's warp-level functions on the GPU and under the simulator (both ways), against numpy
models written here: the four shuffles of each type they move (int32, int64, float32, float64;
full and partial masks; source lanes past the warp), a warp reduction, the votes, the matches,
the collectives with exited lanes (and a partial last warp) in the mask, activemask, lanemask_lt
and syncwarp(mask); and an int32 mma.sync accumulator built from a numpy integer kernel argument.
Two warps per block, so each result is per warp."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import mma

pytestmark = pytest.mark.gpu

THREADS = 64
DTYPES = [np.int32, np.int64, np.float32, np.float64]


def _values(dtype):
    """Distinct values per thread that use the type's width (int64: both 32-bit halves)."""
    rng = np.random.default_rng(35)
    if dtype == np.int64:
        return (rng.integers(-(1 << 62), 1 << 62, THREADS)).astype(np.int64)
    if dtype == np.int32:
        return rng.integers(-(1 << 31), (1 << 31) - 1, THREADS).astype(np.int32)
    return rng.standard_normal(THREADS).astype(dtype)


def _shuffled(x, source):
    """The model: thread t reads its warp's lane ``source[t]`` (None: its own value)."""
    out = x.copy()
    for t in range(THREADS):
        if source[t] is not None:
            out[t] = x[32 * (t // 32) + source[t]]
    return out


@cuda.jit
def shuffles(x, delta, idx, up, down, xor):
    t = cuda.threadIdx.x
    lane = t % 32
    v = x[t]
    idx[t] = cuda.shfl_sync(0xFFFFFFFF, v, lane * 7 + 3)      # src_lane past 31: its low 5 bits
    up[t] = cuda.shfl_up_sync(0xFFFFFFFF, v, delta)
    down[t] = cuda.shfl_down_sync(0xFFFFFFFF, v, delta)
    xor[t] = cuda.shfl_xor_sync(0xFFFFFFFF, v, delta)


@pytest.mark.both_ways
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("delta", [1, 5])
def test_shuffles_move_each_type_as_ptx_shfl_sync_does(dtype, delta):
    x = _values(dtype)
    outs = [cuda.to_device(np.zeros(THREADS, dtype)) for _ in range(4)]
    shuffles[1, THREADS](cuda.to_device(x), delta, *outs)
    lanes = np.arange(THREADS) % 32
    want = [_shuffled(x, [(lane * 7 + 3) % 32 for lane in lanes]),
            _shuffled(x, [lane - delta if lane >= delta else None for lane in lanes]),
            _shuffled(x, [lane + delta if lane + delta <= 31 else None for lane in lanes]),
            _shuffled(x, [lane ^ delta for lane in lanes])]
    for name, out, expected in zip(("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"), outs, want):
        np.testing.assert_array_equal(out.copy_to_host(), expected, err_msg=name)


@cuda.jit
def warp_sums(x, out):
    """The user's reduction: a butterfly over the warp, every lane ends with the warp's sum."""
    v = x[cuda.threadIdx.x]
    offset = 16
    while offset > 0:
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    out[cuda.threadIdx.x] = v


@cuda.jit
def half_warp_sums(x, out):
    """Only lanes 0-15 take part (mask 0xFFFF); the others leave ``out`` alone."""
    lane = cuda.threadIdx.x % 32
    if lane < 16:
        v = x[cuda.threadIdx.x]
        for offset in (8, 4, 2, 1):
            v += cuda.shfl_xor_sync(0xFFFF, v, offset)
        out[cuda.threadIdx.x] = v


@pytest.mark.both_ways
def test_a_warp_reduction_with_shfl_xor_sync():
    x = np.arange(THREADS, dtype=np.float32) * 3 - 40         # integers: the sums are exact in float32
    out = cuda.to_device(np.zeros(THREADS, np.float32))
    warp_sums[1, THREADS](cuda.to_device(x), out)
    np.testing.assert_array_equal(out.copy_to_host(), np.repeat(x.reshape(2, 32).sum(axis=1), 32))
    half = cuda.to_device(np.full(THREADS, -1, np.float32))
    half_warp_sums[1, THREADS](cuda.to_device(x), half)
    want = np.full(THREADS, -1, np.float32)
    for w in range(2):
        want[32 * w:32 * w + 16] = x[32 * w:32 * w + 16].sum()
    np.testing.assert_array_equal(half.copy_to_host(), want)


@cuda.jit
def votes(x, threshold, out):
    """Row 0-3: all / any / eq / ballot over the warp; rows 4-7: the same over lanes 0-15 (mask
    0xFFFF; the other lanes leave their entries)."""
    t = cuda.threadIdx.x
    p = x[t] > threshold
    out[0, t] = cuda.all_sync(0xFFFFFFFF, p)
    out[1, t] = cuda.any_sync(0xFFFFFFFF, p)
    out[2, t] = cuda.eq_sync(0xFFFFFFFF, p)
    out[3, t] = cuda.ballot_sync(0xFFFFFFFF, p)
    if t % 32 < 16:
        out[4, t] = cuda.all_sync(0xFFFF, p)
        out[5, t] = cuda.any_sync(0xFFFF, p)
        out[6, t] = cuda.eq_sync(0xFFFF, p)
        out[7, t] = cuda.ballot_sync(0xFFFF, p)


def _votes_model(p):
    out = np.full((8, THREADS), -9, np.int32)
    for w in range(2):
        for row, lanes in ((0, range(32)), (4, range(16))):
            q = p[[32 * w + lane for lane in lanes]]
            bits = sum(1 << lane for lane, v in zip(lanes, q) if v)
            ts = [32 * w + lane for lane in lanes]
            out[row, ts] = int(q.all())
            out[row + 1, ts] = int(q.any())
            out[row + 2, ts] = int(q.all() or not q.any())
            out[row + 3, ts] = np.uint32(bits).view(np.int32)      # ballot_sync returns an int32
    return out


@pytest.mark.both_ways
@pytest.mark.parametrize("threshold", [-100, 0, 100])          # every lane true, some, none
def test_votes(threshold):
    x = np.random.default_rng(7).integers(-50, 50, THREADS).astype(np.int32)
    x[32:48] = 70                  # warp 1's lanes 0-15 agree at every threshold: eq_sync over 0xFFFF is true
    out = cuda.to_device(np.full((8, THREADS), -9, np.int32))
    votes[1, THREADS](cuda.to_device(x), threshold, out)
    np.testing.assert_array_equal(out.copy_to_host(), _votes_model(x > threshold))


@cuda.jit
def matches(keys, fkeys, any_out, all_out, pred_out, fany_out):
    t = cuda.threadIdx.x
    any_out[t] = cuda.match_any_sync(0xFFFFFFFF, keys[t])
    m, pred = cuda.match_all_sync(0xFFFFFFFF, keys[t])
    all_out[t] = m
    pred_out[t] = pred
    fany_out[t] = cuda.match_any_sync(0xFFFFFFFF, fkeys[t])


@pytest.mark.both_ways
def test_matches_compare_bits():
    rng = np.random.default_rng(3)
    keys = np.concatenate([np.full(32, 77, np.int32), rng.integers(0, 4, 32).astype(np.int32)])   # warp 0 agrees
    fkeys = rng.choice(np.array([0.0, -0.0, 1.5, np.nan]), THREADS)                              # -0.0 is not 0.0
    outs = [cuda.to_device(np.zeros(THREADS, np.int32)) for _ in range(4)]
    matches[1, THREADS](cuda.to_device(keys), cuda.to_device(fkeys), *outs)
    bits = fkeys.view(np.uint64)
    want_any, want_fany = np.zeros(THREADS, np.int64), np.zeros(THREADS, np.int64)
    for t in range(THREADS):
        w = 32 * (t // 32)
        want_any[t] = sum(1 << lane for lane in range(32) if keys[w + lane] == keys[t])
        want_fany[t] = sum(1 << lane for lane in range(32) if bits[w + lane] == bits[t])
    as_int32 = lambda a: a.astype(np.uint32).view(np.int32)      # noqa: E731 - the int32 the functions return
    np.testing.assert_array_equal(outs[0].copy_to_host(), as_int32(want_any))
    np.testing.assert_array_equal(outs[1].copy_to_host(), np.repeat(np.array([-1, 0], np.int32), 32))
    np.testing.assert_array_equal(outs[2].copy_to_host(), np.repeat(np.array([1, 0], np.int32), 32))
    np.testing.assert_array_equal(outs[3].copy_to_host(), as_int32(want_fany))


@cuda.jit
def with_exited_lanes(x, out):
    """Lanes 3, 7, 11, ... exit first: the collectives with the full mask neither wait for them nor
    count them (PTX: the non-exited lanes of the mask).  The shuffle's source ``lane ^ 4`` is never
    an exited lane."""
    t = cuda.threadIdx.x
    if t % 4 == 3:
        return
    p = x[t] > 0
    out[0, t] = cuda.ballot_sync(0xFFFFFFFF, p)
    out[1, t] = cuda.all_sync(0xFFFFFFFF, p)
    out[2, t] = cuda.any_sync(0xFFFFFFFF, p)
    out[3, t] = cuda.match_any_sync(0xFFFFFFFF, x[t] % 3)
    m, pred = cuda.match_all_sync(0xFFFFFFFF, 7)
    out[4, t] = m
    out[5, t] = pred
    cuda.syncwarp()
    out[6, t] = cuda.shfl_xor_sync(0xFFFFFFFF, x[t], 4)


@pytest.mark.both_ways
@pytest.mark.parametrize("low", [-5, 1])                 # some predicates false / every one true
def test_exited_lanes_are_left_out(low):
    """48 threads: warp 1 has lanes 0-15 only (the others count as exited too)."""
    n = 48
    x = np.random.default_rng(9).integers(low, 6, n).astype(np.int32)
    out = cuda.to_device(np.full((7, n), -9, np.int32))
    with_exited_lanes[1, n](cuda.to_device(x), out)
    want = np.full((7, n), -9, np.int32)
    as_int32 = lambda bits: np.uint32(bits).view(np.int32)       # noqa: E731 - the int32 the functions return
    for w in range(2):
        live = [lane for lane in range(32) if lane % 4 != 3 and 32 * w + lane < n]
        ts = [32 * w + lane for lane in live]
        p = x[ts] > 0
        want[0, ts] = as_int32(sum(1 << lane for lane, v in zip(live, p) if v))
        want[1, ts], want[2, ts] = int(p.all()), int(p.any())
        for t in ts:
            want[3, t] = as_int32(sum(1 << lane for lane, u in zip(live, ts) if x[u] % 3 == x[t] % 3))
            want[6, t] = x[t ^ 4]
        want[4, ts], want[5, ts] = as_int32(sum(1 << lane for lane in live)), 1
    np.testing.assert_array_equal(out.copy_to_host(), want)


@cuda.jit
def masks(active, even, below):
    t = cuda.threadIdx.x
    active[t] = cuda.activemask()
    below[t] = cuda.lanemask_lt()
    if t % 2:
        return                      # an exited lane is inactive
    even[t] = cuda.activemask()


@pytest.mark.both_ways
def test_activemask_and_lanemask_lt():
    """48 threads: warp 1 has lanes 0-15 only; once the odd lanes have exited, the even ones."""
    n = 48
    active, even, below = (cuda.to_device(np.zeros(n, np.uint32)) for _ in range(3))
    masks[1, n](active, even, below)
    lanes = np.arange(n) % 32
    np.testing.assert_array_equal(active.copy_to_host(), np.where(np.arange(n) < 32, 0xFFFFFFFF, 0xFFFF))
    np.testing.assert_array_equal(even.copy_to_host(),
                                  np.where(np.arange(n) % 2, 0, np.where(np.arange(n) < 32, 0x55555555, 0x5555)))
    np.testing.assert_array_equal(below.copy_to_host(), (np.uint64(1) << lanes.astype(np.uint64)) - 1)


@cuda.jit
def neighbours(x, out, partial):
    s = cuda.shared.array(THREADS, numba.float32)
    t = cuda.threadIdx.x
    lane, base = t % 32, t - t % 32
    if partial:
        if lane < 16:
            s[t] = x[t]
            cuda.syncwarp(0xFFFF)
            out[t] = s[base + (lane + 1) % 16]
    else:
        s[t] = x[t]
        cuda.syncwarp()
        out[t] = s[base + (lane + 1) % 32]


@pytest.mark.both_ways
@pytest.mark.parametrize("partial", [False, True])
def test_syncwarp_orders_the_lanes_writes_before_their_reads(partial):
    x = np.arange(THREADS, dtype=np.float32) + 0.5
    out = cuda.to_device(np.full(THREADS, -1, np.float32))
    neighbours[1, THREADS](cuda.to_device(x), out, partial)
    width = 16 if partial else 32
    want = np.full(THREADS, -1, np.float32)
    for t in range(THREADS):
        lane, base = t % 32, t - t % 32
        if lane < width:
            want[t] = x[base + (lane + 1) % width]
    np.testing.assert_array_equal(out.copy_to_host(), want)


@cuda.jit
def int_mma(start, out):
    acc = (start, start, start, start)            # a numpy int32 kernel argument: an int32 fragment
    a = (0x02020202, 0x02020202, 0x02020202, 0x02020202)    # every s8 element of A is 2
    b = (0xFDFDFDFD, 0xFDFDFDFD)                             # every s8 element of B is -3
    for _ in range(2):
        acc = mma.sync(acc, a, b, dtype="s8")
    for i in range(4):
        out[cuda.threadIdx.x, i] = acc[i]


@pytest.mark.both_ways
def test_an_int32_mma_sync_accumulator_from_a_numpy_integer_argument():
    """m16n8k32 s8: each of the 16 x 8 entries is 32 * (2 * -3) = -192 per step, twice, plus -7."""
    out = cuda.to_device(np.zeros((32, 4), np.int32))
    int_mma[1, 32](np.int32(-7), out)
    np.testing.assert_array_equal(out.copy_to_host(), np.full((32, 4), -7 - 2 * 192, np.int32))
