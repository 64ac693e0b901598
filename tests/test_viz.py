"""numba_tma.viz: the shared-memory layout of a swizzled box, its drawing, and highlighted PTX / SASS."""

import os
import pathlib
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

from numba_tma import TensorMap, descriptors, fence, inspect, mbarrier, tma, viz

import numba.cuda as cuda

SPANS = {"none": 0, "32B": 32, "64B": 64, "128B": 128}


def _map(dtype, box, swizzle):
    """The 128 bytes of a tiled map over a large C-ordered 2-D tensor (no GPU needed)."""
    size = np.dtype(dtype).itemsize
    return descriptors.encode_tiled(dtype, 0, [4096, 256], [4096 * size], list(reversed(box)), swizzle=swizzle)


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "float64"])
@pytest.mark.parametrize("swizzle", list(SPANS))
def test_each_element_gets_its_own_bytes(dtype, swizzle):
    size = np.dtype(dtype).itemsize
    cols = (SPANS[swizzle] or 64) // size
    lay = viz.layout(_map(dtype, (16, cols), swizzle))
    assert lay.offset.shape == (16, cols) and lay.swizzle_bytes == SPANS[swizzle]
    assert sorted(lay.offset.ravel().tolist()) == list(range(0, 16 * cols * size, size))
    assert ((lay.bank == (lay.offset // 4) % 32) & (lay.chunk == (lay.offset // 16) % 8)).all()


def test_without_swizzle_the_box_is_dense():
    lay = viz.layout(_map("float32", (8, 32), "none"))
    r, c = np.indices((8, 32))
    assert (lay.offset == (r * 32 + c) * 4).all()


@pytest.mark.parametrize("swizzle", list(SPANS))
def test_a_swizzle_spreads_a_column_over_the_eight_chunks(swizzle):
    """What swizzling is for: one 16-byte run of 8 consecutive rows (a column read, the 1024 bytes
    the pattern spans) lands in 8 different chunks of the 128-byte line, i.e. in different banks;
    unswizzled 128-byte rows put it in one chunk."""
    row_bytes = SPANS[swizzle] or 128
    lay = viz.layout(_map("uint16", (16, row_bytes // 2), swizzle))
    for run in range(0, row_bytes // 2, 8):
        for group in (0, 8):
            chunks = set(lay.chunk[group:group + 8, run].tolist())
            assert len(chunks) == (1 if swizzle == "none" else 8)


def test_the_layout_refuses_what_tma_swizzled_index_refuses():
    im2col = descriptors.encode_im2col("float16", 0, [64, 16, 16, 2], [128, 2048, 32768], [-1, -1], [-1, -1],
                                       64, 128)
    with pytest.raises(ValueError, match="argument 'desc' must be a tiled map"):
        viz.layout(im2col)
    with pytest.raises(TypeError, match="argument 'desc' must be a numba_tma.TensorMap or the 128 bytes"):
        viz.layout(b"\0" * 64)


def test_a_tensor_map_is_drawn_like_its_bytes():
    """Under the CUDA simulator a TensorMap can be built over a host array (a subprocess: the
    simulator is chosen at import)."""
    code = textwrap.dedent("""
        import numpy as np
        from numba_tma import TensorMap, viz
        desc = TensorMap.tiled(np.zeros((256, 256), np.float16), (32, 64), swizzle="128B")
        print(viz.layout(desc).offset.tobytes().hex())
    """)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(pathlib.Path(__file__).parents[1]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    expected = viz.layout(descriptors.encode_tiled("float16", 0, [256, 256], [512], [64, 32], swizzle="128B"))
    assert out.stdout.strip() == expected.offset.tobytes().hex()


def test_the_drawing_colours_each_element_by_its_bank():
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib (the viz extra) is not installed")
    matplotlib.use("Agg")
    desc = _map("float16", (16, 64), "128B")
    fig = viz.swizzle(desc, rows=8)
    ax = fig.axes[0]
    assert (ax.images[0].get_array() == viz.layout(desc).bank[:8]).all()
    chunk_labels = [int(t.get_text()) for t in ax.texts]
    assert chunk_labels == viz.layout(desc).chunk[:8, ::8].ravel().tolist()   # one label per 16-byte run
    assert "SWIZZLE_128B" in ax.get_title()
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("rows", [0, 17, 2.0])
def test_rows_is_checked(rows):
    pytest.importorskip("matplotlib", reason="matplotlib (the viz extra) is not installed")
    with pytest.raises(ValueError, match=r"argument 'rows' must be an int in \[1, 16\]"):
        viz.swizzle(_map("float16", (16, 64), "128B"), rows=rows)


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'numba-tma\[viz\]'"):
        viz.swizzle(_map("float16", (16, 64), "128B"))


def tile_copy(desc, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((32, 32), numba.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, desc.box_bytes)
        tma.load(desc, tile, (0, 0), bars)
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]


SIG = (TensorMap.numba_type("float32", (32, 32)), numba.float32[::1])


def test_ptx_lines_of_each_kind_are_highlighted_and_counted():
    ptx = inspect.ptx(tile_copy, SIG, "sm_90a")
    page = viz.code_html(ptx, "ptx")
    tma_lines = [line for line in ptx.splitlines() if "cp.async.bulk.tensor" in line]
    barrier_lines = [line for line in ptx.splitlines() if "mbarrier." in line]
    assert tma_lines and barrier_lines
    assert f"TMA: {len(tma_lines)}<" in page and f"mbarrier: {len(barrier_lines)}<" in page
    assert page.count('title="TMA"') == len(tma_lines)


def test_code_html_escapes_and_checks_its_language():
    assert "&lt;" in viz.code_html("ld.param.u64 %rd1, [p<0>];", "ptx")
    with pytest.raises(ValueError, match="argument 'language' must be 'ptx' or 'sass'"):
        viz.code_html("", "llvm")


def test_an_inspect_result_renders_ptx_and_sass_in_jupyter():
    compiled = inspect.compile(tile_copy, SIG, "sm_90a")
    page = compiled._repr_html_()
    assert "<summary>PTX</summary>" in page and "<summary>SASS</summary>" in page
    sass_tma = [line for line in compiled.sass.splitlines() if "UTMALDG" in line]
    assert sass_tma and page.count('title="TMA"') >= len(sass_tma) + 1   # SASS lines plus the PTX line
