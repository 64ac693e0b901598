"""The fragment row operations of an attention kernel's online softmax (``wgmma.row_max``,
``row_sum``, ``exp2_rows``, ``scale_rows``), ``wgmma.add`` and ``wgmma.load``, checked against numpy on the GPU
and under the simulator (both ways) from a known 64 x N tile; their refusals; and their SASS
(row_max over 128 registers: FMNMX and 4 SHFL.BFLY, no local memory)."""

import math

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import ops, wgmma
from numba_tma.errors import FRAGMENT_FLOAT_ONLY, OpArgumentError


def _rows_kernel(count):
    @cuda.jit
    def kernel(tile, ragged, scale, f, maxes, sums, exps, scaled, loaded, added):
        acc = wgmma.load(tile, 0, 0, count)
        m0, m1 = wgmma.row_max(acc)
        s0, s1 = wgmma.row_sum(acc)
        t = cuda.threadIdx.x
        r, q = 16 * (t // 32) + (t % 32) // 4, t % 4            # this thread's rows: r and r + 8
        maxes[r, q], maxes[r + 8, q] = m0, m1
        sums[r, q], sums[r + 8, q] = s0, s1
        wgmma.store(wgmma.exp2_rows(acc, scale, m0 * scale, m1 * scale), exps, 0, 0)
        wgmma.store(wgmma.scale_rows(acc, f[r], f[r + 8]), scaled, 0, 0)
        wgmma.store(wgmma.load(ragged, 0, 0, count), loaded, 0, 0)   # outside `ragged`: zeros
        wgmma.store(wgmma.add(acc, wgmma.scale(acc, f[0])), added, 0, 0)
    return kernel


def _tree(values):
    """The documented order of a row's sum: a thread's registers of the row (columns
    ``8 j + 2 q + e``, by j then e) pairwise, level by level, an odd one out carried up."""
    while len(values) > 1:
        values = [values[k] + values[k + 1] for k in range(0, len(values) - 1, 2)] + \
            values[len(values) - len(values) % 2:]
    return values[0]


def _row_sums(tile):
    """(64, 4): each row's float32 sum in the helpers' order (the thread of lane-quad q sums its
    columns, then ``(s0 + s1) + (s2 + s3)`` across the quad: the same for every q)."""
    n = tile.shape[1]
    out = np.zeros((64, 4), np.float32)
    for row in range(64):
        part = [_tree([tile[row, 8 * j + 2 * q + e] for j in range(n // 8) for e in (0, 1)]) for q in range(4)]
        for q in range(4):
            pair, other = part[q] + part[q ^ 1], part[q ^ 2] + part[q ^ 3]
            out[row, q] = pair + other
    return out


@pytest.mark.parametrize("n", [8, 24, 256])
@pytest.mark.both_ways
def test_row_operations_match_numpy(n):
    rng = np.random.default_rng(n)
    tile = (4 * rng.standard_normal((64, n))).astype(np.float32)
    tile[::5, n // 3] = -1e4                   # exp2 of a very negative argument: flushed to 0 both ways
    scale = np.float32(0.125 * np.log2(np.e))
    f = rng.uniform(0.25, 2, 64).astype(np.float32)
    ragged = rng.standard_normal((37, n - 3)).astype(np.float32)
    outs = [cuda.to_device(np.full(shape, np.nan, np.float32)) for shape in [(64, 4), (64, 4)] + [(64, n)] * 4]
    _rows_kernel(n // 2)[1, 128](cuda.to_device(tile), cuda.to_device(ragged), scale, cuda.to_device(f), *outs)
    maxes, sums, exps, scaled, loaded, added = (o.copy_to_host() for o in outs)

    np.testing.assert_array_equal(maxes, np.repeat(tile.max(axis=1)[:, None], 4, axis=1))   # all 4 lanes
    np.testing.assert_array_equal(sums, _row_sums(tile))                   # add.rn: the same bits both ways
    np.testing.assert_allclose(sums[:, 0], tile.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-2)
    # the fma rounded once to float32, then 2^t: ex2.approx within 2 ulp (2^-22 relative) on the GPU
    m = tile.max(axis=1).astype(np.float32) * scale
    t = (tile.astype(np.float64) * np.float64(scale) - m[:, None].astype(np.float64)).astype(np.float32)
    want = np.exp2(t.astype(np.float64))
    np.testing.assert_allclose(exps, want, rtol=2.0 ** -21, atol=2.0 ** -126)
    assert (exps[::5, n // 3] == 0).all()
    np.testing.assert_array_equal(scaled, tile * f[:, None])              # mul.rn: exact
    np.testing.assert_array_equal(added, tile + tile * f[0])              # add.rn of float32s
    want_loaded = np.zeros((64, n), np.float32)
    want_loaded[:37, :n - 3] = ragged
    np.testing.assert_array_equal(loaded, want_loaded)


# -- CPU: refusals and the SASS -------------------------------------------------------------------

SIG = "void(float32[:, ::1], float32[:, ::1])"


def _kernel(body):
    source = "def k(tile, out):\n    " + body.replace("\n", "\n    ")
    scope = {"wgmma": wgmma, "numba": numba, "cuda": cuda}
    exec(source, scope)
    return scope["k"]


@pytest.mark.parametrize("body,message", [
    ("m0, m1 = wgmma.row_max(wgmma.zeros(8, numba.int32))",
     "wgmma.row_max: argument 'acc' must be a float32 fragment (row operations are for float accumulators"),
    ("s0, s1 = wgmma.row_sum((numba.float32(0), numba.float32(1)))",
     "wgmma.row_sum: argument 'acc' must be an accumulator fragment (wgmma.zeros(n))"),
    ("wgmma.store(wgmma.exp2_rows(wgmma.zeros(8), 1, out[0, 0], out[0, 1]), out, 0, 0)",
     "wgmma.exp2_rows: argument 'scale' must be a float (float32; a float64 is converted to float32); got int64"),
    ("wgmma.store(wgmma.scale_rows(wgmma.zeros(8), out[0, 0], 2), out, 0, 0)",
     "wgmma.scale_rows: argument 'f1' must be a float"),
    ("wgmma.store(wgmma.add(wgmma.zeros(8), wgmma.zeros(16)), out, 0, 0)",
     "wgmma.add: arguments 'acc' and 'other' must be float32 fragments of one length"),
    ("wgmma.store(wgmma.load(out, 0, 0, out.shape[0]), out, 0, 0)",
     "wgmma.load: argument 'count' must be a constant N / 2"),
    ("wgmma.store(wgmma.load(out, 0, 0.5, 8), out, 0, 0)", "wgmma.load: argument 'col' must be an integer"),
    ("wgmma.store(wgmma.zeros(8, numba.int32), out, 0, 0)", "wgmma.store: argument 'acc' " + FRAGMENT_FLOAT_ONLY),
    ("wgmma.store_bf16(wgmma.zeros(8, numba.int32), tile, 0, 0)",
     "wgmma.store_bf16: argument 'acc' " + FRAGMENT_FLOAT_ONLY),
])
def test_row_operations_refuse_with_the_rule(body, message):
    from numba_tma import inspect

    with pytest.raises(OpArgumentError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        inspect.ptx(_kernel(body), SIG)


def test_load_refuses_other_arrays():
    from numba_tma import inspect

    with pytest.raises(OpArgumentError, match="wgmma.load: argument 'array' must be a 2-D float32 array; got array"):
        inspect.ptx(_kernel("wgmma.store(wgmma.load(tile, 0, 0, 8), out, 0, 0)"),
                    "void(int32[:, ::1], float32[:, ::1])")


def test_row_max_of_128_registers_is_fmnmx_and_four_shuffles():
    """SASS of a kernel taking row_max of a 64 x 256 fragment against the same kernel without it:
    126 FMNMX of the registers (63 a row) + 4 after the shuffles, 4 SHFL.BFLY, no local memory."""
    from numba_tma import inspect

    with_max = inspect.compile(_kernel("acc = wgmma.load(tile, 0, 0, 128)\nm0, m1 = wgmma.row_max(acc)\n"
                                       "out[cuda.threadIdx.x, 0] = m0\nout[cuda.threadIdx.x, 1] = m1"), SIG)
    control = inspect.compile(_kernel("acc = wgmma.load(tile, 0, 0, 128)\n"
                                      "out[cuda.threadIdx.x, 0] = acc[0]\nout[cuda.threadIdx.x, 1] = acc[127]"), SIG)
    inspect.assemble_together([with_max, control])
    got, base = with_max.opcode_counts(), control.opcode_counts()
    assert got["FMNMX"] - base["FMNMX"] == 130
    assert got["SHFL.BFLY"] - base["SHFL.BFLY"] == 4
    assert not [op for op in got if op.startswith(("LDL", "STL"))]


@pytest.mark.both_ways
def test_a_partial_warp_is_reported_under_the_simulator():
    """The shuffles are .sync with the full mask: a warp of 16 lanes is undefined on the GPU
    (not run there) and reported under the simulator."""
    from numba_tma import testing

    if testing.WAY != "simulator":          # the GPU (a plain pytest run too: WAY is None there)
        pytest.skip("undefined behaviour on the GPU: the simulator's diagnostic only")
    from numba_tma.simulator import SimulatorError

    @cuda.jit
    def partial(out):
        m0, m1 = wgmma.row_max(wgmma.zeros(4))
        out[cuda.threadIdx.x] = m0 + m1

    with pytest.raises(SimulatorError, match="wgmma.row_max: 16 lanes of warp 0 took part; its shfl.sync.bfly with "
                                             "the full mask needs all 32"):
        partial[1, 16](cuda.to_device(np.zeros(16, np.float32)))


@pytest.mark.both_ways
def test_the_documented_layout_stores_a_fragment_by_hand():
    """wgmma.store's documented register layout, written by hand as its docs show for an int32
    fragment (here a float32 one read from a known tile), gives the tile back."""
    @cuda.jit
    def by_hand(tile, out):
        acc = wgmma.load(tile, 0, 0, 16)
        t = cuda.threadIdx.x % 128
        w, lane = t // 32, t % 32
        for j in range(len(acc) // 4):
            for h in range(4):
                out[16 * w + lane // 4 + 8 * (h // 2), 8 * j + 2 * (lane % 4) + h % 2] = acc[4 * j + h]

    tile = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    out = cuda.to_device(np.full((64, 32), -1, np.float32))
    by_hand[1, 128](cuda.to_device(tile), out)
    np.testing.assert_array_equal(out.copy_to_host(), tile)


@pytest.mark.both_ways
def test_an_int32_fragment_is_refused_by_store():
    from numba_tma import testing

    if testing.WAY != "simulator":
        pytest.skip("refused at compile time: test_row_operations_refuse_with_the_rule")

    @cuda.jit
    def store_int(out):
        wgmma.store(wgmma.zeros(8, numba.int32), out, 0, 0)

    with pytest.raises(OpArgumentError, match="wgmma.store: argument 'acc' must be a float32 fragment: store an "
                                              "int32 one register by register"):
        store_int[1, 128](cuda.to_device(np.zeros((64, 16), np.float32)))


@cuda.jit
def _masked(tile, out, row, col, cols, diagonal):
    acc = wgmma.load(tile, 0, 0, 64)                          # 64 x 128
    wgmma.store(wgmma.mask(acc, row, col, cols, diagonal, -math.inf), out, 0, 0)


@pytest.mark.both_ways
@pytest.mark.parametrize("row, col, cols, diagonal", [
    (0, 0, 100, 1 << 20),           # the keys' end only: columns 100 and on
    (64, 0, 1 << 20, 0),            # causal, the tile's rows 64-127: column C masked past row R
    (16, 128, 200, 3),              # both, the diagonal 3 above (bottom-right alignment of 3 more keys)
    (0, 256, 1 << 20, 0),           # a tile wholly above the diagonal: every element
], ids=["keys' end", "causal", "both", "all"])
def test_mask_sets_the_keys_past_the_end_and_past_the_diagonal(row, col, cols, diagonal):
    """Element (R, C) = (row + r, col + c) becomes -inf where C >= cols or C - R > diagonal, the
    rest kept bit for bit."""
    tile = np.random.default_rng(9).standard_normal((64, 128)).astype(np.float32)
    out = cuda.to_device(np.full((64, 128), np.nan, np.float32))
    _masked[1, 128](cuda.to_device(tile), out, row, col, cols, diagonal)
    big_r, big_c = row + np.arange(64)[:, None], col + np.arange(128)[None, :]
    want = np.where((big_c >= cols) | (big_c - big_r > diagonal), -np.inf, tile).astype(np.float32)
    np.testing.assert_array_equal(out.copy_to_host(), want)


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
def test_mask_is_a_select_an_element_without_branches():
    """64 registers masked: 64 FSEL (or SEL) against a control kernel, no branch region, no local
    memory."""
    from numba_tma import inspect

    body = "acc = wgmma.load(tile, 0, 0, 64)\n{}wgmma.store(acc, out, 0, 0)"
    masked = inspect.compile(_kernel(body.format("acc = wgmma.mask(acc, 3, 5, 7, 0, -1.0)\n")), SIG)
    control = inspect.compile(_kernel(body.format("")), SIG)
    inspect.assemble_together([masked, control])
    got, base = masked.opcode_counts(), control.opcode_counts()
    selects = sum(n for op, n in got.items() if op.startswith(("FSEL", "SEL"))) - \
        sum(n for op, n in base.items() if op.startswith(("FSEL", "SEL")))
    assert selects == 64 and got["BSSY"] == base["BSSY"], (selects, got["BSSY"], base["BSSY"])
    assert not [op for op in got if op.startswith(("LDL", "STL"))]


@pytest.mark.parametrize("body, message", [
    ("wgmma.store(wgmma.mask(wgmma.zeros(8, numba.int32), 0, 0, 1, 0, -1.0), out, 0, 0)",
     "wgmma.mask: argument 'acc' must be a float32 fragment (a mask is for scores"),
    ("wgmma.store(wgmma.mask(wgmma.zeros(8), 0, 0.5, 1, 0, -1.0), out, 0, 0)",
     "wgmma.mask: argument 'col' must be an integer"),
])
def test_mask_refuses_with_the_rule(body, message):
    from numba_tma import inspect

    with pytest.raises(OpArgumentError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        inspect.ptx(_kernel(body), SIG)
