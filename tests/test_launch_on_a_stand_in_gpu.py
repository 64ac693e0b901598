"""The code that otherwise runs only on a GPU, run on a stand-in one (``tests/fake_gpu.py``): the
by-value twins numba's launcher passes, numba-tma's own launch, a LaunchGraph's capture, replay
and ``set_args``, and the GPU suite's echo of every by-value map (``gpu_support.echoing``, which
``conftest.py`` installs on a GPU).  Each launch's parameters are read as the driver copies them,
and every map's bytes are compared with ``TensorMap.bytes``: a twin overwritten by a later
argument, a twin the harness cannot make, a graph node re-pointed at the wrong parameters all fail
here, on every CI run."""

import numba
import numpy as np
import pytest
from numba import cuda

import fake_gpu
import gpu_support
from numba_tma import LaunchError, LaunchGraph, TensorMap, launch, prepare_launch
from numba_tma.descriptors import by_value
from numba_tma.intrinsics.tensor_map_type import TensorMapType
from numba_tma.numba_cuda.kernel_arguments import BY_VALUE as _BY_VALUE
from numba_tma.numba_cuda.launching import prepared_args


@cuda.jit
def two_maps(first, n, second):   # never compiled: the stand-in overloads stand for its compiled code
    pass


@pytest.fixture
def gpu(monkeypatch):
    """The stand-in GPU and driver, and the maps the tests pass: two tiled maps (float32 and a
    swizzled bfloat16-width one) and an im2col map, over arrays at three addresses."""
    gpu, driver = fake_gpu.install(monkeypatch)
    a = fake_gpu.device_array((64, 64), np.float32, 0x7F0000200000)
    b = fake_gpu.device_array((32, 128), np.float16, 0x7F0000400000)
    x = fake_gpu.device_array((2, 16, 16, 64), np.float16, 0x7F0000600000)
    maps = {"a": TensorMap.tiled(a, (32, 32)), "b": TensorMap.tiled(b, (16, 64), swizzle="128B"),
            "x": TensorMap.im2col(x, (-1, -2), (1, 0), 64, 128),
            "a2": TensorMap.tiled(fake_gpu.device_array((64, 64), np.float32, 0x7F0000800000), (32, 32))}
    yield gpu, driver, maps, fake_gpu.FakeDevice()
    two_maps.overloads.clear()


@cuda.jit
def map_and_array(desc, out, n):   # never compiled, as two_maps
    pass


def types_of(*args):
    return [two_maps.typeof_pyval(a) for a in args]


def test_numbas_launch_passes_each_map_in_the_twin_of_its_position(gpu):
    """numba-cuda's ``_prepare_args`` with numba-tma's hook: each by-value map becomes the twin of
    its parameter position holding exactly ``TensorMap.bytes``; later launches rewrite the same
    twins in place (no new driver descriptor), whatever maps they pass."""
    gpu, driver, maps, device = gpu
    a, b, x = maps["a"], maps["b"], maps["x"]
    overload = fake_gpu.FakeOverload(types_of(a, 3, b), device)
    assert fake_gpu.params(prepared_args(overload, (a, 3, b), 0)[0]) == [a.bytes, 3, b.bytes]
    assert by_value.in_place() and len(driver.made) == 2    # the driver's bytes for a were found in its twin
    assert fake_gpu.params(prepared_args(overload, (b, 4, a), 0)[0]) == [b.bytes, 4, a.bytes]
    im2col = fake_gpu.FakeOverload(types_of(x, 5, a), device)
    assert fake_gpu.params(prepared_args(im2col, (x, 5, a), 0)[0]) == [x.bytes, 5, a.bytes]
    assert len(driver.made) == 2                            # one twin per position, made once


def test_a_map_the_driver_encodes_otherwise_is_never_written_in_place(gpu, monkeypatch):
    """If the twin's bytes cannot be found (cuda.core stores them otherwise, or the twin is made
    from other arguments than the map's), every launch gets a new twin from the driver."""
    gpu, driver, maps, device = gpu
    a = maps["a"]
    other = TensorMap.tiled(fake_gpu.device_array((64, 64), np.float32, 0x7F0000200000), (16, 32))
    monkeypatch.setattr(driver, "_twin", lambda encoded, made=driver._twin: made(other.bytes))   # not a's bytes
    overload = fake_gpu.FakeOverload(types_of(a, 1, a), device)
    prepared_args(overload, (a, 1, a), 0)
    assert not by_value.in_place() and len(driver.made) == 2
    prepared_args(overload, (a, 1, a), 0)
    assert len(driver.made) == 4


def _echo_kernel(gpu):
    """``gpu_support.read_param_kernel`` on the stand-in: out[i] = 64-bit word i of its map."""
    def body(parameters, memory):
        desc, out_address = parameters[0], parameters[5]   # a map, then an array's meminfo, parent, size, itemsize, data
        memory[out_address][:] = np.frombuffer(desc, np.uint64)
    return fake_gpu.FakeKernel(gpu, gpu_support.read_param_kernel, body)


def test_the_gpu_suites_echo_runs_inside_an_outer_launch(gpu, monkeypatch):
    """conftest's echo on a GPU: the first time a map's bytes are launched, a kernel receiving them
    as one fixed map type (``gpu_support._AsLaunched``) echoes them, with twins of its own, in the
    middle of the outer launch's argument preparation; the outer launch's parameters are still its
    own maps.  (On 0878de9's harness this raised AttributeError: '_AsLaunched' object has no
    attribute '_params', in every GPU test launching a map.)"""
    gpu, driver, maps, device = gpu
    a, b, x = maps["a"], maps["b"], maps["x"]
    monkeypatch.setattr(gpu_support, "cuda", type("cuda", (), {"to_device": staticmethod(gpu.to_device)}))
    monkeypatch.setattr(gpu_support, "read_param_kernel", _echo_kernel(gpu))
    checked = []
    monkeypatch.setitem(_BY_VALUE, TensorMapType, gpu_support.echoing(_BY_VALUE[TensorMapType],
                                                                       gpu_support.received_bytes, checked))
    overload = fake_gpu.FakeOverload(types_of(a, 3, b), device)
    assert fake_gpu.params(prepared_args(overload, (a, 3, b), 0)[0]) == [a.bytes, 3, b.bytes]
    assert checked == ["tiled", "tiled"]
    assert fake_gpu.params(prepared_args(overload, (b, 4, a), 0)[0]) == [b.bytes, 4, a.bytes]
    assert checked == ["tiled", "tiled"]                    # each map's bytes echoed once
    im2col = fake_gpu.FakeOverload(types_of(x, 5, b), device)
    assert fake_gpu.params(prepared_args(im2col, (x, 5, b), 0)[0]) == [x.bytes, 5, b.bytes]
    assert checked == ["tiled", "tiled", "im2col"]


def test_the_echo_fails_on_bytes_the_kernel_did_not_receive(gpu, monkeypatch):
    gpu, driver, maps, device = gpu
    a = maps["a"]

    def received_other(tmap, one_kernel):
        return bytes(128)

    monkeypatch.setitem(_BY_VALUE, TensorMapType, gpu_support.echoing(_BY_VALUE[TensorMapType], received_other, []))
    with pytest.raises(AssertionError, match="the kernel received other bytes than TensorMap.tiled"):
        prepared_args(fake_gpu.FakeOverload(types_of(a, 3, a), device), (a, 3, a), 0)


def test_numba_tma_launch_prepares_checks_opts_in_and_launches(gpu):
    """``numba_tma.launch`` on the stand-in: numba's overload resolution picks the compiled kernel,
    the device and kernel are checked, the opt-ins above 48 KB and 8 blocks per cluster are set,
    and the launch gets the configuration in clusters and every map's bytes."""
    gpu, driver, maps, device = gpu
    a, b = maps["a"], maps["b"]
    overload = fake_gpu.compiled(two_maps, types_of(a, 7, b), device, static=1024)
    swapped = fake_gpu.compiled(two_maps, types_of(b, 8, a), device, static=1024)
    launch(two_maps, (32, 2), 128, a, 7, b, cluster=(16, 1, 1), shared_mem=100_000, stream=0)
    stream, config, kernel, parameters = gpu.launches[-1]
    assert (stream, kernel, parameters) == ("stream 0", overload.cufunc.kernel, [a.bytes, 7, b.bytes])
    assert (config.grid, config.cluster, config.block, config.shmem_size) == ((2, 2, 1), (16, 1, 1), (128, 1, 1),
                                                                              100_000)
    from cuda.bindings.driver import CUfunction_attribute as attribute

    assert gpu.attributes == [(attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100_000),
                              (attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)]
    launch(two_maps, (32, 2), 128, b, 8, a, cluster=(16, 1, 1), shared_mem=100_000)
    assert gpu.launches[-1][2:] == (swapped.cufunc.kernel, [b.bytes, 8, a.bytes]) and len(gpu.attributes) == 4
    launch(two_maps, (32, 2), 128, a, 9, b, cluster=(16, 1, 1), shared_mem=100_000)
    assert gpu.launches[-1][3] == [a.bytes, 9, b.bytes] and len(gpu.attributes) == 4   # once per kernel
    with pytest.raises(LaunchError, match=r"shared_mem=232000: .* of which the kernel's static shared arrays take "
                                          r"1024"):
        launch(two_maps, 4, 128, a, 7, b, shared_mem=232_000)


def test_a_prepared_launch_passes_what_a_launch_of_its_arguments_would(gpu):
    """``numba_tma.prepare_launch`` types, checks and prepares once; each ``launch(*values)`` then
    passes exactly the parameters ``numba_tma.launch`` would with the ``varying`` arguments
    replaced (a map's bytes in its position's twin, an array's new address where numba-cuda's launch
    puts an array's data: ``numba_cuda.launching.ARRAY_DATA``, checked when prepared), the rest as
    prepared; preparing launches nothing."""
    gpu, driver, maps, device = gpu
    out = fake_gpu.device_array((8, 16), np.float32, 0x7F0000A00000)
    other = fake_gpu.device_array((8, 16), np.float32, 0x7F0000C00000)
    fake_gpu.compiled(map_and_array, [map_and_array.typeof_pyval(x) for x in (maps["a"], out, 7)], device)
    prepared = prepare_launch(map_and_array, (4, 2), 128, maps["a"], out, 7, varying=(0, 1), cluster=(2, 1, 1),
                              shared_mem=100_000)
    assert gpu.launches == []
    for desc, array in ((maps["a2"], other), (maps["a"], out), (maps["a2"], out)):
        prepared.launch(desc, array)
        launch(map_and_array, (4, 2), 128, desc, array, 7, cluster=(2, 1, 1), shared_mem=100_000)
        (*_, got), (*_, want) = gpu.launches[-2:]
        assert got == want and got[0] == desc.bytes and array.device_ctypes_pointer.value in got
        assert gpu.launches[-2][:3] == gpu.launches[-1][:3]
    with pytest.raises(LaunchError, match=r"varying argument 2 must be a TensorMap or an array; got int64"):
        prepare_launch(map_and_array, 4, 128, maps["a"], out, 7, varying=(2,))
    with pytest.raises(LaunchError, match=r"varying=\(3,\): positions of the 3 arguments"):
        prepare_launch(map_and_array, 4, 128, maps["a"], out, 7, varying=(3,))


def test_a_launch_graph_captures_replays_and_repoints_its_nodes(gpu):
    """LaunchGraph on the stand-in: the capture copies each node's parameters when its launch is
    made (the second node reuses the first's twins: the first keeps its own bytes), a replay
    launches both, and ``set_args`` re-points one node in the executable graph only."""
    gpu, driver, maps, device = gpu
    a, b, a2 = maps["a"], maps["b"], maps["a2"]
    overload = fake_gpu.compiled(two_maps, types_of(a, 1, b), device)
    swapped = fake_gpu.compiled(two_maps, types_of(b, 2, a), device)
    graph = LaunchGraph()
    first = graph.launch(two_maps, 2, 64, a, 1, b)
    graph.launch(two_maps, (4, 1), 64, b, 2, a, cluster=(2, 1, 1))
    assert gpu.launches == []                               # recorded, not launched
    graph.replay()
    graph_handle = graph._captured.graph.handle
    assert [(c.grid, c.cluster, p) for _, c, _, p in gpu.launches] == [((2, 1, 1), (1, 1, 1), [a.bytes, 1, b.bytes]),
                                                                       ((2, 1, 1), (2, 1, 1), [b.bytes, 2, a.bytes])]
    assert [k for _, _, k, _ in gpu.launches] == [overload.cufunc.kernel, swapped.cufunc.kernel]
    gpu.launches.clear()
    graph.set_args(first, a2, 9, b)
    graph.replay()
    assert [p for *_, p in gpu.launches] == [[a2.bytes, 9, b.bytes], [b.bytes, 2, a.bytes]]
    with pytest.raises(LaunchError, match=r"argument 'n' \(#1\) is float64, but the node was recorded with int64"):
        graph.set_args(first, a2, 9.0, b)
    graph.close()
    assert gpu.closed == [graph_handle] and list(gpu.streams.values()) == [True]   # graph and capture stream freed
