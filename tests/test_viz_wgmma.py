"""numba_tma.viz.wgmma_reads: which elements of a tile one wgmma reads, and where they lie in shared
memory, checked against expectations derived by hand from the ISA's layouts (no GPU, no compile)."""

import numpy as np
import pytest

from numba_tma import TensorMap, viz
from numba_tma.descriptors.tile_layout import TileLayout

BF16_128B = TileLayout.describe("bfloat16", (64, 64), swizzle="128B")


@pytest.mark.parametrize("kk", range(4))
@pytest.mark.parametrize("row", [0, 64])
def test_a_128b_bf16_k_step_reads_16_columns_of_64_rows_in_swizzled_chunks(kk, row):
    """K step ``kk`` reads columns [16 kk, 16 kk + 16) of rows row..row+63; element (r, c) (2 bytes)
    lies in row r's 128 bytes, at 16-byte chunk (2 c // 16) ^ (r % 8) — the 128B swizzle."""
    reads = viz.wgmma_reads(BF16_128B, (128, 64), kk, row, "m64n128k16", "bf16", "A")
    r = row + np.arange(64)[:, None]
    c = 16 * kk + np.arange(16)[None, :]
    assert (reads.rows == r).all() and (reads.cols == c).all()
    chunk = ((2 * c) // 16) ^ (r % 8)
    assert (reads.chunk == chunk).all()
    assert (reads.offset == r * 128 + chunk * 16 + (2 * c) % 16).all()
    mask = np.zeros((128, 64), bool)
    mask[row:row + 64, 16 * kk:16 * kk + 16] = True
    assert (reads.mask == mask).all()


def test_b_reads_n_rows_and_a_64b_fp8_tile_swizzles_within_its_span():
    """Operand B of m64n32k32 reads 32 rows; with 64-byte rows (64B swizzle) byte b of row r lies at
    16-byte chunk (b // 16) ^ ((r // 2) % 4) of its 64 bytes (bits 4-5 XOR the offset's bits 7-8)."""
    layout = TileLayout.describe("uint8", (64, 64), swizzle="64B")
    reads = viz.wgmma_reads(layout, None, 1, 8, "m64n32k32", "e4m3", "B")
    r, b = 8 + np.arange(32)[:, None], 32 + np.arange(32)[None, :]
    assert (reads.rows == r).all() and (reads.cols == b).all()
    assert (reads.offset == r * 64 + (((b // 16) ^ ((r // 2) % 4)) * 16) + b % 16).all()


def test_the_table_names_rows_columns_offsets_and_chunks():
    text = str(viz.wgmma_reads(TensorMap.numba_type("uint16", (64, 64), swizzle="128B"), k=1))
    lines = text.splitlines()
    assert lines[0] == ("wgmma.mma_async m64n128k16 bf16, operand A = wgmma.descriptor(tile, desc, k=1, row=0): "
                        "tile 64 x 64 uint16, SWIZZLE_128B (rows of 128 bytes)")
    assert lines[1] == "reads tile rows 0-63, columns 16-31 (64 x 16 elements)"
    assert lines[3].split() == ["tile", "row", "cols", "16-23", "cols", "24-31"]
    assert lines[4].split() == ["0", "32", "c2", "48", "c3"] and lines[5].split() == ["1", "176", "c3", "160", "c2"]
    assert lines[-1] == "... tile rows 8-63: each 8 rows as the 8 above, 1024 bytes on" and len(lines) == 13
    assert repr(viz.wgmma_reads(BF16_128B, k=1)) == text.replace("uint16", "bfloat16")   # a notebook cell
    assert len(viz.wgmma_reads(BF16_128B, k=1).text(rows=None).splitlines()) == 4 + 64


@pytest.mark.parametrize("kwargs,message", [
    ({"k": 4}, r"argument 'k' must be in \[0, 4\): a K step of 32 bytes inside the 128-byte swizzle span"),
    ({"row": 4}, r"argument 'row' must be a multiple of 8 \(the 8-row swizzle atom\); got 4"),
    ({"row": 64}, r"argument 'row' must be below the tile's 64 rows of 128 bytes"),
    ({"row": 8}, r"argument 'row' = 8: operand A of m64n128k16 reads 64 rows from it, past the tile's 64 rows"),
    ({"shape": "m64n128k32"}, r"argument 'shape' must be 'm64nNk16' for dtype='bf16'"),
    ({"dtype": "e4m3", "shape": "m64n128k32"}, r"argument 'desc' must hold 8-bit elements for dtype='e4m3'"),
    ({"operand": "C"}, r"argument 'operand' must be 'A' \(64 rows\) or 'B' \(N rows\)"),
    ({"tile_shape": (64, 32)}, r"argument 'tile_shape' must be \(rows, 64\)"),
])
def test_what_the_descriptor_refuses_is_refused_naming_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        viz.wgmma_reads(BF16_128B, **kwargs)


def test_a_map_without_a_wgmma_layout_is_refused():
    with pytest.raises(ValueError, match=r"argument 'desc' must have a box whose rows are one swizzle span"):
        viz.wgmma_reads(TileLayout.describe("bfloat16", (64, 32), swizzle="128B"))
    with pytest.raises(TypeError, match=r"argument 'desc' must be a numba_tma.TensorMap, its Numba type"):
        viz.wgmma_reads(b"\0" * 128)


def test_the_example_in_the_docs_is_what_it_prints():
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[1] / "docs" / "tensor_cores.md").read_text()
    block = re.search(r">>> print\(viz\.wgmma_reads\(.*?\)\)\n(.*?)\n```", text, re.S).group(1)
    assert block == str(viz.wgmma_reads(TensorMap.numba_type("bfloat16", (64, 64), swizzle="128B"), k=1))
