"""Triton's side of the cross-lane comparison: the row-sum and transpose kernels of
``examples/amd_lanes.py`` as Gluon kernels, compiled by Triton's AMD back end (CPU only:
an explicit GPUTarget needs no GPU, no ROCm).  Imported only when Triton is.

* ``row_sum``: one warp (``num_warps=1``), a 4-slot LDS ring with three tile loads in
  flight, masked past the last row; a tile is one ``buffer_load_to_shared`` instruction:
  4 x 16 floats on gfx942 (1 float a lane), 16 x 16 on gfx950 (4 floats a lane).  Each
  row is summed with ``ttgl.sum(axis=1)`` over the lanes that hold it, which Triton
  lowers to DPP.
* ``transpose``: four warps, a 64 x 64 tile double-buffered in LDS; each warp's DMA
  moves 16 of its rows, one row (64 floats) per instruction, and each warp stores 16
  transposed rows, as each wave of numba-tma's kernel does.
"""
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.amd import cdna4

COLS = 16
FLOATS_PER_LANE = {"gfx942": 1, "gfx950": 4}
_ALIGNED = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}


@gluon.jit
def row_sum(x_ptr, y_ptr, nrows, ntiles, SPT: ttgl.constexpr, COLS: ttgl.constexpr):
    LANES: ttgl.constexpr = COLS // SPT  # lanes per row
    ROWS: ttgl.constexpr = 64 // LANES  # rows per tile
    TILE: ttgl.constexpr = ROWS * COLS
    layout: ttgl.constexpr = ttgl.BlockedLayout([1, SPT], [ROWS, LANES], [1, 1], [1, 0])
    ring = ttgl.allocate_shared_memory(ttgl.float32, [4, ROWS, COLS],
                                       ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    r = ttgl.arange(0, ROWS, layout=ttgl.SliceLayout(1, layout))
    c = ttgl.arange(0, COLS, layout=ttgl.SliceLayout(0, layout))
    offs = r[:, None] * COLS + c[None, :]
    for t in ttgl.static_range(3):
        cdna4.async_copy.buffer_load_to_shared(ring.index(t), x_ptr, t * TILE + offs,
                                               mask=(t * ROWS + r)[:, None] < nrows)
        cdna4.async_copy.commit_group()
    for t in range(ntiles):
        ahead = t + 3
        cdna4.async_copy.buffer_load_to_shared(ring.index(ahead % 4), x_ptr,
                                               ahead * TILE + offs,
                                               mask=(ahead * ROWS + r)[:, None] < nrows)
        cdna4.async_copy.commit_group()
        cdna4.async_copy.wait_group(3)
        sums = ttgl.sum(ring.index(t % 4).load(layout), axis=1)
        ttgl.store(y_ptr + t * ROWS + r, sums, mask=t * ROWS + r < nrows)


@gluon.jit
def transpose(x_ptr, y_ptr, ntiles):
    load_l: ttgl.constexpr = ttgl.BlockedLayout([1, 1], [1, 64], [4, 1], [1, 0])
    tr_l: ttgl.constexpr = ttgl.BlockedLayout([16, 1], [1, 64], [4, 1], [0, 1])
    ring = ttgl.allocate_shared_memory(ttgl.float32, [2, 64, 64],
                                       ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    r = ttgl.arange(0, 64, layout=ttgl.SliceLayout(1, load_l))
    c = ttgl.arange(0, 64, layout=ttgl.SliceLayout(0, load_l))
    offs = r[:, None] * 64 + c[None, :]
    rt = ttgl.arange(0, 64, layout=ttgl.SliceLayout(1, tr_l))
    ct = ttgl.arange(0, 64, layout=ttgl.SliceLayout(0, tr_l))
    nrows = ntiles * 64
    cdna4.async_copy.buffer_load_to_shared(ring.index(0), x_ptr, offs)
    cdna4.async_copy.commit_group()
    for t in range(ntiles):
        nxt = t + 1
        cdna4.async_copy.buffer_load_to_shared(ring.index(nxt % 2), x_ptr, nxt * 4096 + offs,
                                               mask=(nxt * 64 + r)[:, None] < nrows)
        cdna4.async_copy.commit_group()
        cdna4.async_copy.wait_group(1)
        vals = ring.index(t % 2).load(tr_l)
        ttgl.store(y_ptr + ct[None, :] * nrows + (t * 64 + rt)[:, None], vals)
        ttgl.barrier()


def _compile(source, arch, warps):
    compiled = triton.compile(source, target=GPUTarget("hip", arch, 64),
                              options={"num_warps": warps, "enable_fp_fusion": True})
    return compiled.asm["amdgcn"]


def compile_row_sum(arch):
    """Triton's AMDGPU assembly of the row sum for *arch* (gfx942 or gfx950)."""
    source = GluonASTSource(row_sum, {"x_ptr": "*fp32", "y_ptr": "*fp32", "nrows": "i32",
                                      "ntiles": "i32", "SPT": "constexpr", "COLS": "constexpr"},
                            constexprs={"SPT": FLOATS_PER_LANE[arch], "COLS": COLS},
                            attrs=_ALIGNED)
    return _compile(source, arch, 1)


def compile_transpose(arch):
    """Triton's AMDGPU assembly of the transpose for *arch* (gfx942 or gfx950)."""
    source = GluonASTSource(transpose, {"x_ptr": "*fp32", "y_ptr": "*fp32", "ntiles": "i32"},
                            attrs=_ALIGNED)
    return _compile(source, arch, 4)
