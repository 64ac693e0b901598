"""Every public device op has a simulator twin, and the twins reproduce what the H200 measured."""

import inspect
import types

import pytest
from test_simulator import simulate

from numba_tma.intrinsics import _core
from numba_tma.intrinsics import cluster as cluster_ops
from numba_tma.intrinsics import fence as fence_ops
from numba_tma.intrinsics import tma as tma_ops
from numba_tma.simulator import FAMILIES, SimulatorError, twins_of
from numba_tma.simulator import fence as fence_twins
from numba_tma.simulator import tma as tma_twins
from numba_tma.simulator.state import RUNNING


def test_every_public_op_has_a_twin():
    """Every op whose declaration says it has a twin (the NVIDIA ones; AMD ops declare none)."""
    public = {name for name, op in _core.OPS.items() if op.twin} | {f"cluster.{h}" for h in cluster_ops.HELPERS} | {f"tma.{a}" for a in tma_ops.ALIASES}
    missing = sorted(n for n in public if not hasattr(FAMILIES[n.split(".")[0]], n.split(".", 1)[1]))
    assert not missing, f"ops without a simulator twin: {missing}"


def test_every_twin_takes_its_declarations_parameters():
    """A declared op's twin is called with the declaration's parameters, in order (so a twin
    holds only semantics: its signature, defaults and argument rules are the declaration's)."""
    wrong = []
    for name, op in sorted(_core.OPS.items()):
        if not op.twin:
            continue
        family, short = name.split(".", 1)
        call = getattr(FAMILIES[family], short)
        declared = list(op.signature.parameters)
        semantics = list(inspect.signature(call.__wrapped__).parameters)
        if semantics != declared or list(inspect.signature(call).parameters) != declared:
            wrong.append(f"{name}: twin {semantics}, declaration {declared}")
    assert wrong == []


def _fence_module(drop=(), stray=None):
    """A copy of the simulator's fence module without the functions ``drop``, with ``stray``
    defined in it."""
    fake = types.ModuleType(fence_twins.__name__)
    for name, value in vars(fence_twins).items():
        if name not in drop:
            setattr(fake, name, value)
    if stray is not None:
        stray.__module__ = fake.__name__
        setattr(fake, stray.__name__, stray)
    return fake


def test_the_twins_are_the_declared_ops_and_nothing_else():
    assert sorted(twins_of("fence", fence_ops, _fence_module(), None)) == [
        "acq_rel", "mbarrier_init", "proxy_async", "proxy_tensormap_acquire", "proxy_tensormap_release", "sc"]
    with pytest.raises(LookupError, match=r"declared without a twin: fence\.sc \(no function sc in "
                                          r"numba_tma\.simulator\.fence\)"):
        twins_of("fence", fence_ops, _fence_module(drop=("sc",)), None)

    def barrier_of(bar):
        pass

    with pytest.raises(LookupError, match=r"numba_tma\.simulator\.fence\.barrier_of is a public function but no "
                                          "op of fence"):
        twins_of("fence", fence_ops, _fence_module(stray=barrier_of), None)


def test_an_aliased_twin_runs_as_the_op_called():
    """tma.commit_group is bulk.commit_group's twin; it runs as the name the kernel called."""
    assert FAMILIES["tma"].commit_group.__wrapped__ is FAMILIES["bulk"].commit_group.__wrapped__
    for family, called in (("tma", "tma.commit_group"), ("bulk", "bulk.commit_group")):
        with pytest.raises(SimulatorError, match="outside a kernel"):
            getattr(FAMILIES[family], "commit_group")()
        assert RUNNING.op == called


def test_dsmem_in_a_cluster_of_one_block():
    out = simulate("""
        from numba_tma import dsmem

        @cuda.jit
        def k(out):
            inbox = cuda.shared.array(8, numba.int32, alignment=16)
            counts = cuda.shared.array(2, numba.uint32)
            bars = cuda.shared.array(1, numba.uint64)
            if cuda.threadIdx.x == 0:
                counts[0] = 5
                counts[1] = 0
                mbarrier.init(bars, 1)
                fence.mbarrier_init()
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(bars, 16 + 4 + 4)
                dsmem.store_async(inbox, (1, 2, 3, 4), bars, 0)
                dsmem.reduce_async(counts, 3, bars, 0, op="add")
                dsmem.reduce_async(at(counts, 1), 7, bars, 0, op="max")
            mbarrier.wait(bars, 0)
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(bars, 16)
                dsmem.copy_async(at(inbox, 4), inbox, 16, bars, 0)          # inbox[4:8] = inbox[0:4]
            mbarrier.wait(bars, 1)
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(bars, 16)
                dsmem.reduce_copy_async(at(inbox, 4), inbox, 16, bars, 0, op="add")   # then += inbox[0:4]
            mbarrier.wait(bars, 0)
            if cuda.threadIdx.x < 8:
                out[cuda.threadIdx.x] = inbox[cuda.threadIdx.x]
            if cuda.threadIdx.x == 0:
                out[8], out[9] = counts[0], counts[1]

        out = np.zeros(10, np.int32)
        k[1, 32](out)
        assert out.tolist() == [1, 2, 3, 4, 2, 4, 6, 8, 8, 7], out
        print("dsmem ok")
    """)
    assert "dsmem ok" in out


# Measured on the H200 (2026-11-30, .scratch probes; BENCHMARKS.md): what the simulator must reproduce.
TF32_IN = [0x7FC01FFF, 0x7F801234, 0xFF800FFF, 0x7F800000, 0x00001FFF, 0x00401001, 0x80000FFF, 0x007FFFFF,
           0x3F801000, 0x3F803000, 0x3F800FFF, 0x3F801001, 0x7F7FFFFF, 0x00000001, 0x7FFFFFFF, 0x807FF000]
TF32_OUT = [0x7FFFE000, 0x7FFFE000, 0x7FFFE000, 0x7F800000, 0x00002000, 0x00402000, 0x80000000, 0x00800000,
            0x3F800000, 0x3F804000, 0x3F800000, 0x3F802000, 0x7F800000, 0x00000000, 0x7FFFE000, 0x80800000]


def test_tf32_loads_round_like_the_h200():
    from types import SimpleNamespace

    import numpy as np

    from numba_tma.descriptors.enums import DataType

    values = np.array(TF32_IN, np.uint32).view(np.float32)
    for dt, want in ((DataType.TFLOAT32, TF32_OUT), (DataType.TFLOAT32_FTZ, TF32_OUT), (DataType.FLOAT32_FTZ, TF32_IN)):
        got = tma_twins._convert(SimpleNamespace(data_type=dt), values, np.ones(16, bool)).view(np.uint32)
        assert got.tolist() == want, dt


def test_narrow_swizzled_rows_lie_a_span_apart_like_the_h200():
    """A 16-byte uint8 row with 64B swizzle: the H200 wrote bytes 0-15, 64-79, 144-159, 208-223."""
    from numba_tma.descriptors import decode, encode_tiled

    fields = decode(encode_tiled(data_type="uint8", global_address=1 << 20, global_dim=[256, 8], global_strides=[256],
                                 box_dim=[16, 4], swizzle="64B"))
    offsets = tma_twins._smem_offsets(64, fields)
    assert sorted({int(o) // 16 * 16 for o in offsets}) == [0, 64, 144, 208]
    assert tma_twins._NAN[2] == 0x7FF7 and tma_twins._NAN[4] == 0x7FF77FF7      # the H200's NaN fill


def test_tlx_names_run_under_the_simulator():
    out = simulate("""
        from numba_tma import tlx

        @cuda.jit
        def k(desc, out):
            bars = tlx.alloc_barriers(1, 1)
            tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
            if cuda.threadIdx.x == 0:
                tlx.barrier_expect_bytes(bars, 8 * 32 * 4)
                tlx.async_descriptor_load(desc, tile, (8, 0), bars)      # (row, col): rows 8-15
            tlx.barrier_wait(bars, 0)
            out[cuda.threadIdx.x] = tile[cuda.threadIdx.x // 32, cuda.threadIdx.x % 32]

        src = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
        out = np.zeros(256, np.float32)
        k[1, 256](TensorMap.tiled(cuda.to_device(src), (8, 32)), out)
        assert np.array_equal(out.reshape(8, 32), src[8:16]), out
        print("tlx ok")
    """)
    assert "tlx ok" in out
