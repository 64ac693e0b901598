"""numba_tma.launch: argument errors named before anything touches the device (no GPU needed)."""

import numpy as np
import pytest
from numba import cuda

from numba_tma import LaunchError, launch


@cuda.jit
def noop(out):
    out[0] = 1


@pytest.mark.parametrize("grid,block,cluster,match", [
    (6, 32, (4, 1, 1), r"grid=\(6, 1, 1\): must be divisible by cluster=\(4, 1, 1\) in every dimension"),
    ((4, 3), 32, (2, 2), r"grid=\(4, 3, 1\): must be divisible by cluster=\(2, 2, 1\)"),
    (0, 32, (1, 1, 1), r"grid=0: must be a positive integer or a tuple of 1 to 3 positive integers"),
    (4, (32, 2, 1, 1), (1, 1, 1), r"block=\(32, 2, 1, 1\): must be a positive integer or a tuple of 1 to 3"),
    (4, 32, (2.0, 1, 1), r"cluster=\(2.0, 1, 1\): must be a positive integer"),
])
def test_bad_shapes_are_refused(grid, block, cluster, match):
    with pytest.raises(LaunchError, match=match):
        launch(noop, grid, block, np.zeros(1, np.int32), cluster=cluster)


def test_a_cached_shape_never_answers_for_a_float():
    from numba_tma.launch import _shapes

    assert _shapes(4, 32, (2, 1, 1), 0)[3] == 2
    with pytest.raises(LaunchError, match=r"cluster=\(2.0, 1, 1\)"):
        _shapes(4, 32, (2.0, 1, 1), 0)


def test_cluster_kernel_keeps_numbas_launch_syntax():
    from numba_tma import ClusterKernel, cluster_kernel

    k = cluster_kernel(cluster=(2, 1))(noop)
    assert isinstance(k, ClusterKernel) and k.dispatcher is noop and k.cluster == (2, 1, 1)
    assert callable(k[4, 32]) and callable(k[4, 32, 0, 1024])
    with pytest.raises(LaunchError, match=r"takes \[grid, block\], \[grid, block, stream\] or"):
        k[4]
    with pytest.raises(LaunchError, match=r"grid=\(3, 1, 1\): must be divisible by cluster=\(2, 1, 1\)"):
        k[3, 32](np.zeros(1, np.int32))
    plain = cluster_kernel(cluster=4)(lambda out: None)
    assert plain.cluster == (4, 1, 1) and hasattr(plain.dispatcher, "overloads")
    with pytest.raises(LaunchError, match=r"cluster=0: must be a positive integer"):
        cluster_kernel(cluster=0)
