"""``numba_tma.LaunchGraph`` without a GPU: every bad input is refused naming the argument and the
rule, before anything is compiled or captured (the GPU half, capture and 1000 replays with the
data checked: ``tests/test_gpu_graphs.py``)."""

import ctypes

import numpy as np
import pytest
from numba import cuda

from numba_tma import LaunchError, LaunchGraph, LaunchNode, cluster_kernel, graphs, ops


@cuda.jit
def scaled(n, x, out):    # never compiled here
    out[0] = n * x


@pytest.fixture
def graph(monkeypatch):
    """A LaunchGraph whose launches are checked and typed but not compiled (no GPU here)."""
    monkeypatch.setattr(ops.BACKEND, "record", lambda node: None)
    return LaunchGraph()


class _Untyped:
    """Nothing numba can pass to a kernel."""


def test_a_launch_is_recorded_with_its_geometry_and_types(graph):
    node = graph.launch(scaled, (4, 2), 64, 3, 2.0, 7, cluster=(2, 1, 1), shared_mem=100_000)
    assert isinstance(node, LaunchNode) and graph.nodes == [node] and len(graph) == 1 and not graph.built
    assert (node.index, node.grid, node.block, node.cluster, node.shared_mem) == (0, (4, 2, 1), (64, 1, 1),
                                                                                 (2, 1, 1), 100_000)
    assert [str(t) for t in node.argtypes] == ["int64", "float64", "int64"] and node.names == ("n", "x", "out")
    assert "LaunchNode(0: scaled, grid=(4, 2, 1)" in repr(node) and "1 launches, recording" in repr(graph)
    graph.set_args(node, 5, 1.5, 8)         # before the build: the arguments it will be captured with
    assert node.args == (5, 1.5, 8)


@pytest.mark.parametrize("call,match", [
    (lambda g: g.launch(lambda n: n, 1, 32, 1), r"kernel=<function .*>: must be a @cuda.jit kernel"),
    (lambda g: g.launch(scaled, 3, 32, 1, 2.0, 3, cluster=(2, 1, 1)),
     r"grid=\(3, 1, 1\): must be divisible by cluster=\(2, 1, 1\)"),
    (lambda g: g.launch(cluster_kernel(cluster=(2, 1, 1))(scaled), 3, 32, 1, 2.0, 3),
     r"grid=\(3, 1, 1\): must be divisible by cluster=\(2, 1, 1\)"),
    (lambda g: g.launch(scaled, 1, 0, 1, 2.0, 3), r"block=0: must be a positive integer"),
    (lambda g: g.launch(scaled, 1, 32, 1, 2.0, 3, shared_mem=-1), r"shared_mem=-1: must be a non-negative"),
    (lambda g: g.launch(scaled, 1, 32, 1, 2.0), r"LaunchGraph.launch\(scaled\): 2 arguments given; the kernel "
                                                r"takes 3 \(n, x, out\)"),
    (lambda g: g.launch(scaled, 1, 32, 1, 2.0, np.zeros(1)),
     r"argument 'out' \(#2\) is a host \(numpy\) array: a graph replays device work only .*cuda.to_device"),
    (lambda g: g.build(), r"LaunchGraph.build: no launches recorded"),
], ids=["not-a-kernel", "grid-by-cluster", "cluster_kernel's-cluster", "block", "shared_mem", "count", "host-array",
        "empty"])
def test_bad_launches_are_refused_naming_the_argument(graph, call, match):
    with pytest.raises(LaunchError, match=match):
        call(graph)
    assert graph.nodes == []


def test_set_args_keeps_the_recorded_types_and_names_the_argument(graph):
    node = graph.launch(scaled, 1, 32, 3, 2.0, 7)
    other = LaunchGraph().launch(scaled, 1, 32, 3, 2.0, 7)
    for call, match in [
        (lambda: graph.set_args(node, 3.0, 2.0, 7), r"set_args\(node 0: scaled\): argument 'n' \(#0\) is float64, "
                                                    r"but the node was recorded with int64: a node keeps the kernel"),
        (lambda: graph.set_args(node, 3, 2.0, 7.0), r"argument 'out' \(#2\) is float64, but the node was recorded "
                                                     r"with int64"),
        (lambda: graph.set_args(node, 3, 2.0, _Untyped()), r"argument 'out' \(#2\) is a _Untyped, which numba cannot "
                                                           r"pass to a kernel"),
        (lambda: graph.set_args(node, 3, 2.0), r"set_args\(node 0: scaled\): 2 arguments given; the kernel takes 3"),
        (lambda: graph.set_args(node, 3, 2.0, np.zeros(2)), r"argument 'out' \(#2\) is a host \(numpy\) array"),
        (lambda: graph.set_args(other, 3, 2.0, 7), r"node=LaunchNode\(0: scaled.*: a launch of another LaunchGraph"),
        (lambda: graph.set_args(1, 3, 2.0, 7), r"node=1: this LaunchGraph has 1 launches \(nodes 0 to 0\)"),
        (lambda: graph.set_args("load", 3, 2.0, 7), r"node='load': must be a LaunchNode"),
    ]:
        with pytest.raises(LaunchError, match=match):
            call()
    assert node.args == (3, 2.0, 7)
    graph.set_args(0, 4, 1.0, 9)
    assert node.args == (4, 1.0, 9)


def test_a_built_or_closed_graph_refuses_more_launches(graph):
    graph.launch(scaled, 1, 32, 3, 2.0, 7)
    graph._built = True                   # as build() leaves it (which needs a GPU or the simulator)
    with pytest.raises(LaunchError, match=r"the graph is built .* record every launch before the first replay"):
        graph.launch(scaled, 1, 32, 3, 2.0, 7)
    graph._built = False
    graph.close()
    for call in (lambda: graph.launch(scaled, 1, 32, 3, 2.0, 7), graph.replay, lambda: graph.set_args(0, 1, 2.0, 3)):
        with pytest.raises(LaunchError, match=r"the graph is closed"):
            call()


def test_cuda_cores_parameter_packer_takes_numbas_kernel_arguments():
    """``set_args`` packs arguments with cuda.core's own packer (``_kernel_arg_handler.ParamHolder``,
    which its launch uses): a pointer to one pointer per argument, each to the argument's bytes."""
    from cuda.core._kernel_arg_handler import ParamHolder

    holder = ParamHolder([0, 5, ctypes.c_float(1.5), ctypes.c_int64(-7)])
    pointers = (ctypes.c_void_p * 4).from_address(holder.ptr)
    assert ctypes.c_ssize_t.from_address(pointers[1]).value == 5
    assert ctypes.c_float.from_address(pointers[2]).value == 1.5
    assert ctypes.c_int64.from_address(pointers[3]).value == -7


def test_the_grid_of_a_node_is_in_blocks():
    assert graphs.shapes_grid(((2, 3, 1), (32, 1, 1), (2, 1, 1), 2)) == (4, 3, 1)


def test_under_the_simulator_a_replay_runs_the_recorded_launches():
    """One child under numba-cuda's simulator: replays run the launches (a map by value, a cluster,
    more than 48 KB of dynamic shared memory) in order, re-pointed by ``set_args``; the checks are
    the same."""
    from test_simulator import simulate

    out = simulate("""
        @cuda.jit
        def first_row_scaled(desc, out, scale):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((8, 16), numba.float32, alignment=128)
            dyn = cuda.shared.array(0, numba.float32)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
                fence.mbarrier_init()
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(bars, desc.box_bytes)
                tma.load(desc, tile, (0, 0), bars)
            mbarrier.wait(bars, 0)
            dyn[20000 + cuda.threadIdx.x] = tile[0, cuda.threadIdx.x] * scale
            cuda.syncthreads()
            out[cuda.blockIdx.x, cuda.threadIdx.x] = dyn[20000 + cuda.threadIdx.x] + numba_tma.cluster.ctarank()

        a, b = (cuda.to_device(np.arange(128, dtype=np.float32).reshape(8, 16) + k) for k in (0, 100))
        out = cuda.to_device(np.zeros((2, 16), np.float32))
        desc = TensorMap.tiled(a, (8, 16))
        g = numba_tma.LaunchGraph()
        node = g.launch(first_row_scaled, 2, 16, desc, out, 2, cluster=(2, 1, 1), shared_mem=100_000)
        g.replay()
        print(out.copy_to_host()[:, :3].tolist())
        g.set_args(node, desc.with_array(b), out, 3)
        g.replay()
        print(out.copy_to_host()[:, :3].tolist())
        try:
            g.set_args(node, TensorMap.tiled(a, (4, 16)), out, 3)
        except numba_tma.LaunchError as refusal:
            print("refused:", refusal)
    """)
    lines = out.splitlines()
    assert lines[:2] == ["[[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]", "[[300.0, 303.0, 306.0], [301.0, 304.0, 307.0]]"]
    assert lines[2].startswith("refused: LaunchGraph.set_args(node 0: first_row_scaled): argument 'desc' (#0) is "
                               "TensorMap[float32, rank=2, box=(4, 16), tiled], but the node was recorded with "
                               "TensorMap[float32, rank=2, box=(8, 16), tiled]")
