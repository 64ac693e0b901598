"""Every public device op has a simulator twin, and the tables the twins copied from the
intrinsics (the reductions each element type takes) still agree with them."""

from test_simulator import simulate

from numba_tma.intrinsics import _core
from numba_tma.intrinsics import bulk as bulk_ops
from numba_tma.intrinsics import cluster as cluster_ops
from numba_tma.intrinsics import tma as tma_ops
from numba_tma.simulator import FAMILIES, copies, tensor


def test_every_public_op_has_a_twin():
    public = set(_core.OPS) | {f"cluster.{h}" for h in cluster_ops.HELPERS} | {f"tma.{a}" for a in tma_ops.ALIASES}
    missing = sorted(n for n in public if not hasattr(FAMILIES[n.split(".")[0]], n.split(".", 1)[1]))
    assert not missing, f"ops without a simulator twin: {missing}"


def test_reduction_tables_agree():
    assert copies.REDUCE_TYPES == bulk_ops.REDUCE_TYPES, "bulk.reduce's table changed: update simulator/copies.py"
    assert tensor.TENSOR_REDUCE_TYPES == tma_ops.TENSOR_REDUCE_TYPES, \
        "tma.reduce's table changed: update simulator/tensor.py"


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
            if cuda.threadIdx.x < 4:
                out[cuda.threadIdx.x] = inbox[cuda.threadIdx.x]
            if cuda.threadIdx.x == 0:
                out[4], out[5] = counts[0], counts[1]

        out = np.zeros(6, np.int32)
        k[1, 32](out)
        assert out.tolist() == [1, 2, 3, 4, 8, 7], out
        print("dsmem ok")
    """)
    assert "dsmem ok" in out
