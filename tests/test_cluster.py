"""Cluster ops on the CPU: special-register reads are pure (combined), arch and argument errors."""

import re

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


def test_multicast_masks_fold_to_constants():
    def k(out):
        out[0] = cluster.mask_all(4)
        out[1] = cluster.mask_row(2, 1)
        out[2] = cluster.mask_column(2, 3, 1)

    ptx = inspect.ptx(k, SIG)
    # 4 blocks: bits 0-3; row 1 of a 2-wide cluster: bits 2-3; column 1 of 2 x 3: bits 1, 3, 5
    assert [int(v) for v in re.findall(r"mov.u32 \t%r\d+, (\d+);", ptx)] == [0b1111, 0b1100, 0b101010]


@pytest.mark.parametrize("call, match", [
    ("cluster.mask_all(17)", r"cluster.mask_all: argument 'size' must be 1 to 16 \(blocks; a multicast mask has 16 bits\); got 17"),
    ("cluster.mask_all(0)", r"argument 'size' must be 1 to 16"),
    ("cluster.mask_row(4, 4)", r"cluster.mask_row: argument 'row' must be 0 or more, and \(row \+ 1\) \* cluster_x at most 16"),
    ("cluster.mask_row(out[0], -1)", r"argument 'row' must be 0 or more"),
    ("cluster.mask_column(4, 5, 0)", r"cluster.mask_column: argument 'cluster_y' times cluster_x must be at most 16"),
    ("cluster.mask_column(2, 2, 2)", r"argument 'column' must be 0 to cluster_x - 1; got 2"),
    ("cluster.map_shared(cuda.shared.array(4, numba.int32), 16)", r"cluster.map_shared: argument 'cta_rank' must be 0 to 15"),
])
def test_constant_cluster_shapes_beyond_16_blocks_are_refused(call, match):
    namespace = {"cluster": cluster, "cuda": cuda, "numba": numba}
    exec(f"def k(out):\n    x = {call}\n", namespace)
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(namespace["k"], SIG)


def test_run_time_mask_arguments_compile():
    def k(out):
        out[0] = cluster.mask_row(out[1], out[2])
        out[3] = cluster.mask_column(out[1], out[2], out[4])

    assert "shl.b" in inspect.ptx(k, SIG)
