"""Cluster ops on the CPU: special-register reads are pure (combined), arch and argument errors."""

import numba
import pytest
from numba import cuda

from numba_tma import ArchError, OpArgumentError, cluster, inspect

SIG = (numba.uint32[::1],)


def test_two_reads_of_a_register_become_one():
    def k(out):
        out[0] = cluster.ctarank()
        out[1] = cluster.ctarank() + cluster.nctaid("y")
        out[2] = cluster.nctaid("y")

    ptx = inspect.ptx(k, SIG)
    assert ptx.count("%cluster_ctarank") == 1 and ptx.count("%cluster_nctaid.y") == 1


def test_the_barrier_is_not_combined():
    def k(out):
        cluster.sync()
        cluster.sync()

    assert inspect.ptx(k, SIG).count("barrier.cluster.wait;") == 2


def test_cluster_ops_need_sm90():
    def k(out):
        out[0] = cluster.ctarank()

    with pytest.raises(ArchError, match=r"cluster.ctarank needs sm_90 or newer.*sm_80"):
        inspect.ptx(k, SIG, "sm_80")


@pytest.mark.parametrize("body,match", [
    ("out[0] = cluster.ctaid('w')", r"argument 'axis' must be a constant, one of 'x', 'y', 'z'"),
    ("out[0] = cluster.map_shared(out[0], 1)[0]", r"cluster.map_shared: argument 'array' must be a shared array"),
    ("out[0] = cluster.map_shared(cuda.shared.array(4, numba.uint32), 1.5)[0]", r"argument 'cta_rank' must be an int"),
])
def test_argument_errors(body, match):
    namespace = {"cluster": cluster, "cuda": cuda, "numba": numba}
    exec(f"def k(out):\n    {body}\n", namespace)
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(namespace["k"], SIG)


def test_multicast_masks():
    def k(out):
        out[0] = cluster.mask_all(4)
        out[1] = cluster.mask_row(2, 1)
        out[2] = cluster.mask_column(2, 3, 1)

    ptx = inspect.ptx(k, SIG)
    assert "mov.u32" in ptx or "st.global" in ptx
    from numba_tma.intrinsics.cluster import mask_all, mask_column, mask_row
    assert (mask_all.py_func(4), mask_row.py_func(2, 1), mask_column.py_func(2, 3, 1)) == (0b1111, 0b1100, 0b101010)
