"""numba_tma kernels under numba-cuda's CUDA simulator (no GPU): each case runs in a process of its
own with ``NUMBA_ENABLE_CUDASIM=1`` (numba reads it at import; ``numba_tma.pytest_plugin.run_script``) and prints what
it checked."""

import pathlib
import tempfile
import textwrap

import pytest

from numba_tma.pytest_plugin import run_script

PRELUDE = """
import numpy as np, numba
from numba import cuda
import numba_tma
from numba_tma import TensorMap, at, fence, mbarrier, tma, bulk
assert numba_tma.SIMULATOR
"""


def simulate(body, timeout=300, setup=""):
    """Run ``setup`` and ``body`` under the simulator; return the stdout (stderr on failure, in the
    assertion)."""
    with tempfile.TemporaryDirectory() as folder:        # a file, so messages can quote its source lines
        script = pathlib.Path(folder) / "kernel.py"
        script.write_text(PRELUDE + setup + textwrap.dedent(body))
        code, stdout, stderr = run_script(script, timeout)
    assert code == 0, stderr[-3000:]
    return stdout


def test_load_modify_store_with_ragged_edges():
    out = simulate("""
        @cuda.jit
        def twice_plus_one(src, dst):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((8, 16), numba.float32, alignment=128)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
                fence.mbarrier_init()
            cuda.syncthreads()
            x0, y0 = cuda.blockIdx.x * 16, cuda.blockIdx.y * 8
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(bars, src.box_bytes)
                tma.load(src, tile, (x0, y0), bars)
            mbarrier.wait(bars, 0)
            for i in range(cuda.threadIdx.x, 128, cuda.blockDim.x):
                tile[i // 16, i % 16] = 2 * tile[i // 16, i % 16] + 1
            fence.proxy_async()
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                tma.store(dst, tile, (x0, y0))
                tma.commit_group()
                tma.wait_group(0)

        x = np.random.default_rng(0).standard_normal((20, 40)).astype(np.float32)
        a, b = cuda.to_device(x), cuda.to_device(np.full_like(x, -7))
        twice_plus_one[(3, 3), 4](TensorMap.tiled(a, (8, 16)), TensorMap.tiled(b, (8, 16)))
        print("equal", np.array_equal(b.copy_to_host(), 2 * x + 1))
    """)
    assert "equal True" in out


@pytest.mark.parametrize("swizzle", ["none", "32B", "64B", "128B"])
def test_swizzled_tile_placement(swizzle):
    """The simulator's shared memory, read through tma.swizzled_index (the indexing the H200 test
    confirms for the same maps), gives back the tensor; out of bounds is zero."""
    out = simulate(f"""
        span = {{"none": 64, "32B": 32, "64B": 64, "128B": 128}}["{swizzle}"]
        cols = span // 2
        @cuda.jit
        def read_back(desc, out):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array(16 * cols, numba.uint16, alignment=1024)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
                fence.mbarrier_init()
                mbarrier.arrive_expect_tx(bars, desc.box_bytes)
                tma.load(desc, tile, (0, 0), bars)
            cuda.syncthreads()
            mbarrier.wait(bars, 0)
            for i in range(cuda.threadIdx.x, 16 * cols, cuda.blockDim.x):
                out[i // cols, i % cols] = tile[tma.swizzled_index(desc, i // cols, i % cols)]

        host = np.random.default_rng(1).integers(1, 60000, (12, cols)).astype(np.uint16)
        out = np.zeros((16, cols), np.uint16)
        read_back[1, 8](TensorMap.tiled(cuda.to_device(host), (16, cols), swizzle="{swizzle}"), out)
        want = np.zeros_like(out); want[:12] = host
        print("equal", np.array_equal(out, want))
    """)
    assert "equal True" in out


def test_a_misaligned_first_coordinate_is_reported():
    out = simulate("""
        @cuda.jit
        def misaligned(desc):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array(64, numba.float32, alignment=128)
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            tma.load(desc, tile, (2, 0), bars)

        try:
            misaligned[1, 1](TensorMap.tiled(cuda.to_device(np.zeros((8, 64), np.float32)), (1, 64)))
        except Exception as exc:
            print("raised", exc)
    """)
    # the compiled op's own rule and text (a constant coords[0]); the twin checks maps in memory alike
    assert "numba_tma: tma.load: argument 'coords[0]' times the element size (4 bytes) must be a multiple of 16 " \
        "bytes (the H200 faults otherwise); got 2" in out


def test_bulk_copies_and_at():
    out = simulate("""
        @cuda.jit
        def rows(src, dst):
            bars = cuda.shared.array(2, numba.uint64)
            buf = cuda.shared.array((2, 64), numba.float32, alignment=16)
            r = cuda.blockIdx.x
            if cuda.threadIdx.x == 0:
                mbarrier.init(at(bars, 1), 1)
                fence.mbarrier_init()
                mbarrier.arrive_expect_tx(at(bars, 1), 256)
                bulk.load(at(buf, 1), src[r], 256, at(bars, 1))
                mbarrier.wait(at(bars, 1), 0)
                bulk.store(dst[r], at(buf, 1), 256)
                bulk.commit_group()
                bulk.wait_group_read(0)          # the block's shared memory outlives the store's read

        x = np.arange(4 * 64, dtype=np.float32).reshape(4, 64)
        y = np.zeros_like(x)
        rows[4, 1](x, y)
        print("equal", np.array_equal(x, y))
    """)
    assert "equal True" in out


def test_a_dimension_0_element_stride_loads_the_whole_row():
    """The H200 ignores dimension 0's element stride: all box_dim[0] elements arrive, densely (41 of
    41 random maps byte-identical); dimension 1's stride steps through the rows."""
    out = simulate("""
        src = cuda.to_device(np.arange(16 * 32, dtype=np.float32).reshape(16, 32))
        desc = TensorMap.tiled(src, (4, 8), element_strides=(2, 2))     # array order: (rows, columns)
        @cuda.jit
        def load(desc, out):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((2, 8), numba.float32, alignment=128)
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (8, 4), bars)
            mbarrier.wait(bars, 0)
            for i in range(2):
                for j in range(8):
                    out[i, j] = tile[i, j]
        out = np.zeros((2, 8), np.float32)
        load[1, 1](desc, out)
        print(desc.box_bytes, out.astype(int).tolist())
    """)
    assert "64 [[136, 137, 138, 139, 140, 141, 142, 143], [200, 201, 202, 203, 204, 205, 206, 207]]" \
        in out, out


def test_each_block_has_its_own_shared_memory_and_finished_blocks_free_theirs():
    out = simulate("""
        import weakref

        memories = []                                       # every block's shared arrays, weakly

        @cuda.jit
        def k(out):
            a = cuda.shared.array(256, numba.float32)
            b = cuda.shared.array(4, numba.int32)
            if cuda.threadIdx.x == 0:
                out[cuda.blockIdx.x, 0] = b[0]              # 0: a fresh block's array (zeroed here)
                b[0] = cuda.blockIdx.x + 1
                memories.extend([weakref.ref(a.base), weakref.ref(b.base)])
                out[cuda.blockIdx.x, 1] = sum(m() is not None for m in memories)   # still held
            a[cuda.threadIdx.x] = 1

        out = np.full((40, 2), -1, np.int64)
        k[40, 32](out)
        print("first reads", sorted(set(out[:, 0].tolist())), "arrays held at most", out[:, 1].max())
    """)
    assert "first reads [0] arrays held at most 2" in out, out
