"""numba_tma.tlx's TLX names in numba-cuda-mlir kernels (numba_tma/mlir/tlx.py): the same wrapper
functions, compiled with this host's families, give the same instructions as under numba-cuda; what
this host cannot take is refused, naming numba-cuda-mlir's defect, and the defects themselves are
checked so that these tests fail when upstream fixes them (docs/numba_cuda_mlir_defects.md, items 9
and 10)."""

import re

import pytest

pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed (the mlir extra)")

import numba  # noqa: E402
from numba import cuda as numba_cuda  # noqa: E402
from numba_cuda_mlir import cuda, extending  # noqa: E402
from numba_cuda_mlir import types as mt  # noqa: E402

import numba_tma.mlir  # noqa: E402
from numba_tma import TensorMap, inspect, tlx  # noqa: E402
from numba_tma.intrinsics.hosts.mlir_adapter import kernel_ptx  # noqa: E402
from numba_tma.mlir import map_in_global_type  # noqa: E402

pytestmark = pytest.mark.skipif(numba_tma.ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")

BODY = """
def kernel(desc, out):
    bars = cuda.shared.array(1, types.uint64)
    tile = cuda.shared.array((64, 64), types.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        tlx.fence_mbarrier_init_cluster()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        tlx.barrier_expect_bytes(bars, 64 * 64 * 4)
        tlx.async_descriptor_load(desc, tile, (cuda.blockIdx.y * 64, cuda.blockIdx.x * 64), bars)
    tlx.barrier_wait(bars, 0)
    tlx.fence("async_shared")
    tlx.async_descriptor_store(desc, tile, (64, 0))
    tlx.async_descriptor_store_wait(0)
    tlx.named_barrier_wait(1, 128)
    out[cuda.threadIdx.x] = tile[0, cuda.threadIdx.x] + tlx.cluster_cta_rank()
"""


def _kernel(host):
    namespace = {"tlx": tlx, "cuda": cuda if host == "mlir" else numba_cuda,
                 "types": mt if host == "mlir" else numba.cuda.types,
                 "mbarrier": numba_tma.mlir.mbarrier if host == "mlir" else numba_tma.mbarrier}
    exec(BODY, namespace)
    return namespace["kernel"]


def test_a_tlx_kernel_compiles_to_numba_cudas_instructions():
    """The same TLX kernel under both hosts (its map in global memory on this one, by value under
    numba-cuda): the same TMA, mbarrier and barrier instructions, and no call (the wrappers are
    inlined)."""
    mlir = inspect.compile(_kernel("mlir"), (map_in_global_type("float32", (64, 64)), mt.float32[::1]), "sm_90a",
                           host="mlir")
    llvmlite = inspect.compile(_kernel("numba-cuda"), (TensorMap.numba_type("float32", (64, 64)),
                                                       numba.float32[::1]), "sm_90a")
    wanted = {"UTMALDG.2D", "UTMASTG.2D", "UTMACMDFLUSH", "SYNCS.EXCH.64", "SYNCS.ARRIVE.TRANS64",
              "SYNCS.PHASECHK.TRANS64.TRYWAIT", "BAR.SYNC.DEFER_BLOCKING"}

    def mine(out):
        return {o for o in out.opcodes() if o.startswith(("SYNCS", "UTMA", "BAR"))}

    assert wanted <= mine(mlir)
    assert mine(mlir) - {"UTMACCTL.IV"} == mine(llvmlite)      # (the map in global memory's acquire fence)
    assert "CALL" not in mlir.sass
    for line in ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                 "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", "fence.proxy.async.shared::cta;",
                 "fence.mbarrier_init.release.cluster;"):
        assert line in mlir.ptx and line in llvmlite.ptx, line
    assert all(re.search(r"bar\.sync %r\d+, %r\d+;", out.ptx) for out in (mlir, llvmlite))   # named barrier 1


@pytest.mark.parametrize("call,line", [
    ("tlx.async_descriptor_load(desc, tile, (0, 0), bars, eviction_policy='evict_first')",
     "createpolicy.fractional.L2::evict_first"),
    ("tlx.async_descriptor_store(desc, tile, (0, 0), store_reduce='add')",
     "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"),
    ("tlx.barrier_arrive(bars, 1, 1)", "mapa.shared::cluster"),
    ("tlx.async_descriptor_prefetch_tensor(desc, (0, 0), eviction_policy='evict_last')", ".L2::cache_hint")])
def test_an_option_picks_the_same_form_as_under_numba_cuda(call, line):
    """A string option (a constant in the inlined body: it never reaches a device function's
    parameter, defect 10) or a given ``remote_cta_rank`` picks the same PTX on both hosts."""
    def kernel(host):
        namespace = {"tlx": tlx, "cuda": cuda if host == "mlir" else numba_cuda,
                     "types": mt if host == "mlir" else numba.cuda.types}
        exec("def kernel(desc, out):\n    bars = cuda.shared.array(1, types.uint64)\n"
             "    tile = cuda.shared.array((64, 64), types.float32, alignment=128)\n    " + call + "\n", namespace)
        return namespace["kernel"]

    mlir = inspect.compile(kernel("mlir"), (map_in_global_type("float32", (64, 64)), mt.float32[::1]), "sm_90a",
                           host="mlir")
    llvmlite = inspect.compile(kernel("numba-cuda"), (TensorMap.numba_type("float32", (64, 64)), numba.float32[::1]),
                               "sm_90a")
    assert line in mlir.ptx and line in llvmlite.ptx
    assert "CALL" not in mlir.sass


def _alloc_barriers_kernel(out):
    bars = tlx.alloc_barriers(3, 2)
    if cuda.threadIdx.x == 1:
        tlx.barrier_arrive(bars[2:])
    out[0] = bars[1]


def test_alloc_barriers_allocates_and_initialises_as_under_numba_cuda():
    """Three barriers in static shared memory (24 bytes aligned to 8), each initialised by thread 0
    to 2 arrivals, the fence, the block barrier; then the array works as numba-cuda's (a slice to an
    op, an element read).  Expected PTX from the ISA (mbarrier.init, fence.mbarrier_init)."""
    ptx = inspect.compile(_alloc_barriers_kernel, (mt.uint64[::1],), "sm_90a", host="mlir").ptx
    name = re.search(r"\.shared \.align 8 \.b8 (numba_tma_static_shared_\d+)\[24\];", ptx)[1]
    lines = [line.strip() for line in ptx.splitlines()]
    inits = [i for i, line in enumerate(lines) if re.fullmatch(r"mbarrier\.init\.shared::cta\.b64 \[%r\d+\], %r\d+;",
                                                                 line)]
    fence = lines.index("fence.mbarrier_init.release.cluster;")
    assert len(inits) == 3 and inits[-1] < fence < lines.index("bar.sync 0;")
    assert re.search(r"setp\.ne\.s32\s+%p\d+, %r\d+, 0;", ptx), "only thread 0 initialises"
    assert re.search(rf"mov\.u32\s+%r\d+, 2;|mbarrier\.init.*, 2;", ptx), "the arrival count"
    assert re.search(rf"ld\.shared\.u64\s+%rd\d+, \[{name}\+8\];", ptx), "bars[1]"
    assert re.search(r"mbarrier\.arrive\.shared::cta\.b64 %rd\d+, \[%r\d+\], %r\d+;", ptx)   # bars[2:]
    assert "tlx.alloc_barriers" not in numba_tma.mlir.MISSING and not numba_tma.mlir.MISSING


def test_alloc_barriers_refuses_a_run_time_count_as_under_numba_cuda():
    def kernel(out):
        tlx.alloc_barriers(out[0])

    with pytest.raises(Exception, match=r"tlx\.alloc_barriers: argument 'num_barriers' must be a positive integer "
                                        r"constant \(it sizes a shared array\); got int64"):
        inspect.compile(kernel, (mt.int64[::1],), "sm_90a", host="mlir")


def test_the_wrappers_bodies_call_this_hosts_families():
    copies = numba_tma.mlir.TLX_BODIES
    assert copies["_load"].__globals__["tma"] is numba_tma.mlir.tma
    assert copies["barrier_wait"].__globals__["mbarrier"] is numba_tma.mlir.mbarrier
    assert copies["_load"].__code__ is tlx._load.__code__          # the same code, not a second copy of it


# -- the numba-cuda-mlir defects this module works around ------------------------------------------

def _compiles(kernel):
    try:
        kernel_ptx(kernel, (mt.int32[::1],), (9, 0), "sm_90a")
    except Exception as exc:   # noqa: BLE001 - the defect's error, whatever class it is (and what it wraps)
        chain = []
        while exc is not None:
            chain.append(f"{type(exc).__name__}: {exc}")
            exc = exc.__cause__ or exc.__context__
        return "\n".join(chain)
    return "compiled"


def test_numba_cuda_mlir_still_cannot_return_a_shared_array_from_an_overload():
    """docs/numba_cuda_mlir_defects.md item 9: when this fails, tlx.alloc_barriers can return its
    shared array itself (numba_tma.mlir.tlx's _barrier_array returns it as a generic array)."""
    def barriers():
        pass

    @extending.overload(barriers, typing_registry=extending.typing_registry)
    def _barriers():
        def impl():
            return cuda.shared.array(1, mt.uint64)
        return impl

    def kernel(out):
        b = barriers()
        b[0] = 1
        out[0] = b[0]

    assert "doesn't match function result type" in _compiles(kernel)


def test_numba_cuda_mlir_still_cannot_pass_a_string_to_an_overload():
    """docs/numba_cuda_mlir_defects.md item 10: when this fails, string options can be passed."""
    def takes(s, out):
        pass

    @extending.overload(takes, typing_registry=extending.typing_registry, prefer_literal=True)
    def _takes(s, out):
        def impl(s, out):
            out[0] = 1
        return impl

    def kernel(out):
        takes("x", out)

    assert "Type cast not implemented: !llvm.struct<(ptr, i64, i32, i32, i64, ptr, ptr)> to !llvm.ptr" in \
        _compiles(kernel)
