"""numba_tma.pipeline in numba-cuda-mlir kernels (numba_tma.mlir.pipeline, docs/second_host.md):
rings compiled for sm_90a with no GPU to the mbarrier, TMA and bulk-group instructions the PTX ISA
spells for each step, refused with numba-cuda's messages, and the numba-cuda-mlir defects its
work-around (mlir_adapter.device_function) stands for."""

import re

import numba
import pytest
from numba import cuda as numba_cuda

numba_cuda_mlir = pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed (the mlir extra)")

from numba_cuda_mlir import cuda, extending  # noqa: E402
from numba_cuda_mlir import types as mt  # noqa: E402

import numba_tma  # noqa: E402
import numba_tma.mlir  # noqa: E402
from numba_tma import TensorMap, inspect, pipeline  # noqa: E402
from numba_tma.errors import OpArgumentError  # noqa: E402
from numba_tma.intrinsics.hosts.mlir_adapter import kernel_ptx  # noqa: E402

pytestmark = pytest.mark.skipif(numba_tma.ops.SIMULATOR, reason="compiles")

RING = pipeline.TmaPipeline(2, consumers=pipeline.warps(1))
ASYNC = pipeline.AsyncPipeline(2, producers=pipeline.threads(32), consumers=pipeline.threads(32))
STORES = pipeline.TmaStorePipeline(3)
CLUSTER = pipeline.TmaPipeline(2, consumers=pipeline.warps(1), cluster=True)
MLIR_SIG = (mt.uint8[::1], mt.float32[::1], mt.int32)
NUMBA_SIG = (TensorMap.numba_type(numba.float32, (8, 32)), numba.float32[::1], numba.int32)


def _kernel(body, host):
    """``k(desc, out, n)`` with ``bars`` (8 mbarriers) and ``tiles`` (2 x 8 x 32 float32) in
    shared memory, then ``body``, for ``host``'s families."""
    if host == "mlir":
        families, u64, f32 = numba_tma.mlir, mt.uint64, mt.float32
    else:
        families, u64, f32 = numba_tma, numba.uint64, numba.float32
    source = ("def k(desc, out, n):\n    bars = cuda.shared.array(8, u64)\n"
              "    tiles = cuda.shared.array((2, 8, 32), f32, alignment=128)\n"
              + "".join(f"    {line}\n" for line in body.strip().splitlines()))
    scope = dict(u64=u64, f32=f32, at=families.at, tma=families.tma, RING=RING, ASYNC=ASYNC,
                 STORES=STORES, CLUSTER=CLUSTER, cuda=cuda if host == "mlir" else numba_cuda)
    exec(source, scope)
    return scope["k"]


def _entry_ptx(body):
    """The PTX of the kernel's entry only (the steps' device functions stay in the module as
    uncalled ``.func``s)."""
    compiled = inspect.compile(_kernel(body, "mlir"), MLIR_SIG, "sm_90a", host="mlir")
    start = compiled.ptx.index(f".entry {compiled.entry}")
    end = compiled.ptx.find(".func", start)
    return compiled.ptx[start:end if end > 0 else None]


def _count(ptx, instruction):
    return len(re.findall(rf"^\s*{re.escape(instruction)}\s", ptx, re.M))


# one step of each (a loop's body would be unrolled by LLVM, its counts not the steps')
PRODUCER_CONSUMER = """ring = RING.create(bars)
if cuda.threadIdx.x == 0:
    p = ring.producer_state()
    ring.acquire(p, 1024)
    tma.load(desc, at(tiles, p.index), (0, 0), ring.full(p))
    ring.tail(p.advance())
elif cuda.threadIdx.x >= 32:
    c = ring.consumer_state()
    ring.wait(c)
    out[cuda.threadIdx.x] += tiles[c.index, 0, cuda.threadIdx.x % 32]
    ring.release(c)"""


def test_a_tma_ring_compiles_to_its_mbarrier_steps():
    ptx = _entry_ptx(PRODUCER_CONSUMER)
    assert _count(ptx, "mbarrier.init.shared::cta.b64") == 4             # full and empty of 2 stages
    assert _count(ptx, "fence.mbarrier_init.release.cluster;") == 1
    assert _count(ptx, "bar.sync") == 1                                   # create's block barrier
    assert _count(ptx, "mbarrier.arrive.expect_tx.shared::cta.b64") == 1  # acquire: 1024 bytes on full
    assert re.search(r"mbarrier\.arrive\.expect_tx\.shared::cta\.b64 \S+, \[%r\d+\], %r\d+;", ptx)
    assert _count(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") == 1
    # waits: acquire's on empty, tail's (2 stages, unrolled), the consumer's on full
    assert _count(ptx, "mbarrier.try_wait.parity.shared::cta.b64") == 4
    assert _count(ptx, "mbarrier.arrive.shared::cta.b64") == 1            # release: one lane of the warp
    assert _count(ptx, "elect.sync") == 1


def test_a_ring_advances_its_state_as_under_numba_cuda():
    body = "ring = RING.create(bars)\np = ring.producer_state()\nfor i in range(n):\n    p = p.advance()\n" \
           "out[0] = p.index * 10 + p.phase + p.stages * 100"
    ptx = _entry_ptx(body)
    assert re.search(r"xor\.b32\s+%r\d+, %r\d+, 1;", ptx)      # the phase flips when the index wraps
    assert "mov.f32" in ptx or "cvt.rn.f32" in ptx              # the result stored as float32


def test_an_async_ring_commits_with_arrivals_and_cp_async():
    body = """ring = ASYNC.create(bars)
p = ring.producer_state()
ring.acquire(p)
tiles[p.index, 0, cuda.threadIdx.x] = 1.0
ring.commit(p)
p = p.advance()
ring.acquire(p)
ring.commit_cp_async(p)
c = ring.consumer_state()
ring.wait(c)
ring.release(c)"""
    ptx = _entry_ptx(body)
    assert _count(ptx, "mbarrier.init.shared::cta.b64") == 4
    assert _count(ptx, "cp.async.mbarrier.arrive.noinc.shared::cta.b64") == 1
    assert _count(ptx, "mbarrier.arrive.shared::cta.b64") == 2          # commit (a thread) and release


def test_a_store_ring_is_bulk_groups():
    ptx = _entry_ptx("STORES.acquire()\nSTORES.commit()\nSTORES.tail()\ns = STORES.state()\nout[0] = s.phase")
    assert _count(ptx, "cp.async.bulk.wait_group.read") == 1 and "cp.async.bulk.wait_group.read 2;" in ptx
    assert _count(ptx, "cp.async.bulk.commit_group;") == 1
    assert "cp.async.bulk.wait_group 0;" in ptx


def test_a_cluster_ring_initialises_for_the_cluster_and_releases_in_every_block():
    body = "ring = CLUSTER.create(bars)\nc = ring.consumer_state()\nring.wait(c)\nring.release(c)"
    ptx = _entry_ptx(body)
    assert "barrier.cluster.arrive" in ptx and "barrier.cluster.wait" in ptx      # cluster.sync
    assert "%cluster_nctarank" in ptx
    assert "fence.acq_rel.cluster;" in ptx
    assert re.search(r"mbarrier\.arrive\.relaxed\.cluster\.shared::cluster\.b64", ptx)


@pytest.mark.parametrize("body", [
    "ring = RING.create(bars)\nring.acquire(pipeline_state_of_other)",
    "ring = RING.create(bars)\nring.acquire(ring.producer_state())",
    "ring = RING.create(bars)\nring.acquire(ring.producer_state(), 1 << 20)",
    "ring = RING.create(bars)\nring.acquire(ring.producer_state(), 1.5)",
    "ring = RING.create(out)",
    "ring = ASYNC.create(bars)\nring.acquire(ring.producer_state(), 64)",
    "ring = ASYNC.create(bars)\nring.load(ring.producer_state(), desc, tiles, (0, 0))",
    "ring = RING.create(bars)\nring.commit(ring.producer_state())",
    "STORES.create(bars)",
    "RING.commit()",
])
def test_misuse_is_refused_with_numba_cudas_message(body):
    body = body.replace("pipeline_state_of_other", "STORES.state()")
    with pytest.raises(OpArgumentError) as numba_host:
        inspect.compile(numba_cuda.jit(_kernel(body, "numba-cuda")), NUMBA_SIG, "sm_90a")
    message = str(numba_host.value).splitlines()[0]
    assert message.startswith("numba_tma: "), message
    with pytest.raises(Exception, match=re.escape(message)):
        inspect.compile(_kernel(body, "mlir"), MLIR_SIG, "sm_90a", host="mlir")


# -- the numba-cuda-mlir defects mlir_adapter.device_function works around ------------------------

def _compiles(kernel):
    try:
        kernel_ptx(kernel, (mt.int32[::1],), (9, 0), "sm_90a")
    except Exception as exc:   # noqa: BLE001 - the defect's error, whatever class it is
        return f"{type(exc).__name__}: {exc}"
    return "compiled"


def test_numba_cuda_mlir_still_loses_a_free_builtin_when_inlining_in_numba_ir():
    """docs/numba_cuda_mlir_defects.md item 6: when this fails, Numba-IR inlining of the steps works."""
    def make(h):
        @cuda.jit(device=True, inline="always")
        def f(out):
            h()
        return f

    f = make(cuda.syncwarp)

    def kernel(out):
        f(out)

    assert "name 'h' is not defined" in _compiles(kernel)


def test_numba_cuda_mlir_still_fails_an_inlined_call_of_nothing_in_an_overload():
    """docs/numba_cuda_mlir_defects.md item 7."""
    @cuda.jit(device=True, inline="always")
    def nothing():
        cuda.syncwarp()

    def make(h, flag):
        @cuda.jit(device=True, inline="always")
        def f(out):
            h()
            if flag:
                out[0] = 1
            elif out[1] == 0:
                out[0] = 2
        return f

    f = make(nothing, False)

    def store(out):
        pass

    @extending.overload(store, typing_registry=extending.typing_registry)
    def _store(out):
        return lambda out: f(out)

    def direct(out):
        f(out)

    def through_overload(out):
        store(out)

    assert _compiles(direct) == "compiled"
    assert "Stack allocated var" in _compiles(through_overload)
