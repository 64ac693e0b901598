"""Every kernel of benchmarks/kernels.py (the ones bench_kernels.py times on the GPU) run under the
CUDA simulator on small shapes and checked against numpy, so a benchmark figure always belongs to a
kernel that is right (the benchmark also checks each output against torch before timing)."""

from test_simulator import simulate

SETUP = """
import sys
sys.path.insert(0, "benchmarks")
import kernels as K
rng = np.random.default_rng(0)
"""


def test_copies():
    out = simulate(setup=SETUP, body="""
        a = rng.standard_normal((64, 512)).astype(np.float32)
        da, db = cuda.to_device(a), cuda.to_device(np.zeros_like(a))
        src, dst = TensorMap.tiled(da, (16, 256)), TensorMap.tiled(db, (16, 256))
        K.make_copy_tile(numba.float32, (16, 256))[(2, 4), 32](src, dst)
        print("tile", np.array_equal(db.copy_to_host(), a))
        counter = cuda.to_device(np.zeros(2, np.uint32))
        for evict_first in (False, True):
            db = cuda.to_device(np.zeros_like(a))
            dst = TensorMap.tiled(db, (16, 256))
            kern, shared = K.make_dynamic_ring(numba.float32, (16, 256), 3, evict_first)
            numba_tma.launch(kern, 3, 32, src, dst, 2, 8, counter, shared_mem=shared)
            print("ring", evict_first, np.array_equal(db.copy_to_host(), a), counter.copy_to_host().tolist())
        words = rng.integers(0, 2**62, (64, 256), dtype=np.int64)   # the tile is uint64: values both types hold
        dw = cuda.to_device(np.zeros_like(words))
        K.make_load_thread_store((16, 16))[(words.shape[1] // 16, words.shape[0] // 16), 64](
            TensorMap.tiled(cuda.to_device(words), (16, 16)), dw)
        print("thread stores", np.array_equal(dw.copy_to_host(), words))
        flat, dflat = words.reshape(-1), cuda.to_device(np.zeros(words.size, np.int64))
        K.simt_copy[(flat.size + 1023) // 1024, 256](cuda.to_device(flat), dflat)
        print("simt", np.array_equal(dflat.copy_to_host(), flat))
    """)
    assert "tile True" in out and "ring False True [0, 0]" in out and "ring True True [0, 0]" in out, out
    assert "thread stores True" in out and "simt True" in out, out


def test_transposes():
    out = simulate(setup=SETUP, body="""
        for pairs in (False, True):
            rows = 128 if pairs else 64
            if pairs:
                half = rng.integers(0, 2**16, (rows * 2, 256), dtype=np.uint16)
                x, want = half.view(np.uint32), half.T.copy().view(np.uint32)
            else:
                x = rng.integers(0, 2**32, (rows * 2, 128), dtype=np.uint32)
                want = x.T.copy()
            dx, dt = cuda.to_device(x), cuda.to_device(np.zeros(want.shape, np.uint32))
            kern, shared = K.make_transpose_wide(pairs, 64, group=2)
            tiles_x = x.shape[1] // 64
            numba_tma.launch(kern, tiles_x * (x.shape[0] // rows), 64, TensorMap.tiled(dx, (rows, 64)),
                             TensorMap.tiled(dt, (rows, 64)), tiles_x, shared_mem=shared)
            print("transpose", pairs, np.array_equal(dt.copy_to_host(), want))
    """)
    assert "transpose False True" in out and "transpose True True" in out, out


def test_gather_and_split_k():
    out = simulate(setup=SETUP, body="""
        table = rng.integers(0, 2**15, (16, K.ROW_BYTES // 2), dtype=np.int16)
        idx = rng.integers(0, 16, 24).astype(np.int32)
        out = cuda.to_device(np.zeros((24, K.ROW_BYTES // 2), np.int16))
        kern, shared = K.make_bulk_ring(K.ROW_BYTES, 2, 4, True)
        numba_tma.launch(kern, 3, 32, cuda.to_device(table), cuda.to_device(idx), out, 24, shared_mem=shared)
        print("gather", np.array_equal(out.copy_to_host(), table[idx]))
        parts = rng.standard_normal((2, 64, 128)).astype(np.float32)
        c = cuda.to_device(np.zeros((64, 128), np.float32))
        pmap = TensorMap.tiled(cuda.to_device(parts.reshape(128, 128)), K.SPLIT_BOX)
        K.split_k_tma[(2, 1, 2), 32](pmap, TensorMap.tiled(c, K.SPLIT_BOX), 64)
        print("split-K tma", np.allclose(c.copy_to_host(), parts.sum(0), atol=1e-5))
        c2 = cuda.to_device(np.zeros((64, 128), np.float32))
        K.split_k_atomic[(1, 64, 2), 32](cuda.to_device(parts), c2)
        print("split-K atomic", np.allclose(c2.copy_to_host(), parts.sum(0), atol=1e-5))
    """)
    assert "gather True" in out and "split-K tma True" in out and "split-K atomic True" in out, out


def test_im2col_columns():
    out = simulate(setup=SETUP, body="""
        batch, hw, ch, pixels = 2, 6, 8, 8
        image = rng.standard_normal((batch, hw, hw, ch)).astype(np.float16)
        m = batch * hw * hw
        columns = cuda.to_device(np.zeros((m, 9 * ch), np.float16))
        kern, shared = K.make_im2col_columns(pixels, ch)
        numba_tma.launch(kern, m // pixels, 32, TensorMap.im2col(cuda.to_device(image), (-1, -1), (-1, -1), ch, pixels),
                         TensorMap.tiled(columns, (pixels, ch)), hw, hw * hw, shared_mem=shared)
        padded = np.pad(image, ((0, 0), (1, 1), (1, 1), (0, 0)))
        want = np.stack([padded[:, dh:dh + hw, dw:dw + hw] for dh in range(3) for dw in range(3)], axis=3)
        print("im2col", np.array_equal(columns.copy_to_host(), want.reshape(m, 9 * ch)))
    """)
    assert "im2col True" in out, out
