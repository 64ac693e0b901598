"""Triton's side of the reference comparison: the pipelined copy of
``examples/amd_pipelined_copy.py`` as Gluon kernels, compiled by Triton's AMD back end
(CPU only: an explicit GPUTarget needs no GPU, no ROCm).  Imported only when Triton is.

One wave per workgroup (``num_warps=1``), a 3-slot LDS ring, the load of tile t+2
issued before tile t is copied out.  gfx942/gfx950: ``buffer_load_to_shared`` of 64 x
(1 or 4) floats (one DMA instruction per tile), commit and ``wait_group(2)``; gfx1250:
TDM loads of 4 x 64 floats and ``async_wait(2)``.
"""
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.amd import cdna4
from triton.experimental.gluon.language.amd.gfx1250 import tdm

WAVE = {"gfx942": 64, "gfx950": 64, "gfx1250": 32}
FLOATS_PER_LANE = {"gfx942": 1, "gfx950": 4}
_ALIGNED = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}


@gluon.jit
def buffer_copy(x_ptr, y_ptr, ntiles, SPT: ttgl.constexpr):
    TILE: ttgl.constexpr = 64 * SPT
    layout: ttgl.constexpr = ttgl.BlockedLayout([SPT], [64], [1], [0])
    ring = ttgl.allocate_shared_memory(ttgl.float32, [3, TILE],
                                       ttgl.SwizzledSharedLayout(1, 1, 1, [0]))
    offs = ttgl.arange(0, TILE, layout=layout)
    n = ntiles * TILE
    for t in ttgl.static_range(2):
        cdna4.async_copy.buffer_load_to_shared(ring.index(t), x_ptr, t * TILE + offs,
                                               mask=t * TILE + offs < n)
        cdna4.async_copy.commit_group()
    for t in range(ntiles):
        ahead = t + 2
        cdna4.async_copy.buffer_load_to_shared(ring.index(ahead % 3), x_ptr,
                                               ahead * TILE + offs,
                                               mask=ahead * TILE + offs < n)
        cdna4.async_copy.commit_group()
        cdna4.async_copy.wait_group(2)
        ttgl.store(y_ptr + t * TILE + offs, ring.index(t % 3).load(layout))


@gluon.jit
def tdm_copy(x_ptr, y_ptr, rows, ntiles):
    layout: ttgl.constexpr = ttgl.BlockedLayout([1, 8], [4, 8], [1, 1], [1, 0])
    shared: ttgl.constexpr = ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    desc = tdm.make_tensor_descriptor(x_ptr, [rows, 64], [64, 1], [4, 64], shared)
    ring = ttgl.allocate_shared_memory(ttgl.float32, [3, 4, 64], shared)
    for t in ttgl.static_range(2):
        tdm.async_load(desc, [t * 4, 0], ring.index(t))
    r = ttgl.arange(0, 4, layout=ttgl.SliceLayout(1, layout))
    c = ttgl.arange(0, 64, layout=ttgl.SliceLayout(0, layout))
    for t in range(ntiles):
        ahead = t + 2
        tdm.async_load(desc, [ahead * 4, 0], ring.index(ahead % 3))
        tdm.async_wait(2)
        ttgl.store(y_ptr + (t * 4 + r)[:, None] * 64 + c[None, :],
                   ring.index(t % 3).load(layout))


def compile_copy(arch):
    """Triton's AMDGPU assembly of the copy for *arch*."""
    if arch == "gfx1250":
        source = GluonASTSource(tdm_copy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "rows": "i32",
                                           "ntiles": "i32"}, attrs=_ALIGNED)
    else:
        source = GluonASTSource(buffer_copy, {"x_ptr": "*fp32", "y_ptr": "*fp32",
                                              "ntiles": "i32", "SPT": "constexpr"},
                                constexprs={"SPT": FLOATS_PER_LANE[arch]}, attrs=_ALIGNED)
    compiled = triton.compile(source, target=GPUTarget("hip", arch, WAVE[arch]),
                              options={"num_warps": 1, "enable_fp_fusion": True})
    return compiled.asm["amdgcn"]
