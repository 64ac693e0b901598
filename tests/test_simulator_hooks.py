"""The numba-cuda simulator internals numba_tma.simulator.numba_sim (the adapter) relies on are
still there and still behave as it assumes: this fails, naming what moved, when a numba-cuda
release changes one of them.  Runs without the simulator switched on (it imports numba-cuda's
simulator modules directly, and puts back what it replaces)."""

import ast
import inspect
import pathlib
import threading

import numba_cuda
import numpy as np
import pytest
from numba.cuda.simulator import kernel, kernelapi
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray, FakeWithinKernelCUDAArray

from numba_tma.simulator import numba_sim, warp_ops

SIMULATOR = pathlib.Path(numba_sim.__file__).parent


def test_numba_cuda_is_the_release_the_adapter_was_checked_against():
    assert numba_cuda.__version__.startswith(numba_sim.SUPPORTED + "."), (
        f"numba-cuda {numba_cuda.__version__}: re-check numba_tma/simulator/numba_sim.py (written for "
        f"{numba_sim.SUPPORTED})")


def test_the_kernel_call_hands_every_block_to_the_block_manager_it_finds_in_its_module():
    """numba_sim replaces ``kernel.BlockManager``: FakeCUDAKernel.__call__ must look the name up at
    call time, make one per block with (fn, grid_dim, block_dim, debug) and call run(grid_point,
    *args), after pushing the kernel context (whose .shared holds _dynshared_size)."""
    seen = []

    class Recorder:
        def __init__(self, f, grid_dim, block_dim, debug):
            seen.append(("made", f, tuple(grid_dim), tuple(block_dim), debug))

        def run(self, grid_point, *args):
            module = kernel._get_kernel_context()
            seen.append(("run", tuple(grid_point), len(args), module.shared._dynshared_size))
            calls.append(module)

    def fn(a, b):
        pass

    calls = []
    original = kernel.BlockManager
    kernel.BlockManager = Recorder
    try:
        launch = kernel.FakeCUDAKernel(fn, device=False)
        launch[(2, 1), 4, 0, 96](np.zeros(3), 7)
        launch[(2, 1), 4, 0, 96](np.zeros(3), 7)
    finally:
        kernel.BlockManager = original
    assert seen[0] == ("made", fn, (2, 1, 1), (4, 1, 1), False), seen
    runs = [s[1] for s in seen if s[0] == "run"]
    assert runs == [(0, 0, 0), (1, 0, 0)] * 2, \
        f"FakeCUDAKernel.__call__ no longer runs each block via BlockManager: {seen}"
    assert all(s[2:] == (2, 96) for s in seen if s[0] == "run"), seen
    assert calls[0] is calls[1] and calls[2] is calls[3] and calls[1] is not calls[2], \
        "the kernel context is no longer one object per kernel call (numba_sim tells launches apart by it)"


def test_the_kernel_cuda_module_asks_the_current_thread_for_indices_and_barriers():
    """The scheduler's threads stand in for numba-cuda's BlockThread: FakeCUDAModule must read
    threadIdx, blockIdx, thread_id (laneid) and call syncthreads* on threading.current_thread()."""
    module = kernelapi.FakeCUDAModule((1, 1, 1), (64, 1, 1), 0)
    calls = []

    class Thread(threading.Thread):
        threadIdx, blockIdx, thread_id = "tid", "bid", 37

        def syncthreads(self):
            calls.append("syncthreads")

        def syncthreads_count(self, v):
            return ("count", v)

        def syncthreads_and(self, v):
            return ("and", v)

        def syncthreads_or(self, v):
            return ("or", v)

        def run(self):
            calls.extend([module.threadIdx, module.blockIdx, module.laneid])
            module.syncthreads()
            calls.extend([module.syncthreads_count(1), module.syncthreads_and(2), module.syncthreads_or(3)])

    t = Thread()
    t.start()
    t.join()
    assert calls == ["tid", "bid", 5, "syncthreads", ("count", 1), ("and", 2), ("or", 3)], calls


def test_the_replaced_and_added_methods_keep_their_signatures():
    assert list(inspect.signature(kernelapi.FakeCUDAShared.array).parameters) in (
        ["self", "shape", "dtype", "alignment"],), "FakeCUDAShared.array's signature changed"
    assert "self._dynshared_size" in inspect.getsource(kernelapi.FakeCUDAShared.__init__), \
        "FakeCUDAShared no longer keeps the dynamic shared size in _dynshared_size"
    assert isinstance(kernelapi.FakeCUDAModule.shared, property)
    assert callable(kernel._get_kernel_context), "the simulator no longer tracks the running kernel's cuda module"


def test_the_warp_level_functions_are_numba_tmas_on_the_kernels_cuda_module():
    """Hook 3: numba_sim adds each of warp_ops.FUNCTIONS to FakeCUDAModule (the kernel's ``cuda``)
    as a method calling numba_tma's function.  numba-cuda's simulator must not define any of them
    itself (a release that adds one: re-check which should win), and the method must reach the
    function from a kernel's module object (here lanemask_lt, which reads the running simulated
    thread's lane)."""
    own = inspect.getsource(kernelapi)
    added = [name for name in warp_ops.FUNCTIONS if f"def {name}(" in own]
    assert not added, f"numba-cuda's simulator now defines cuda.{added}: re-check numba_sim's hook 3"
    assert set(warp_ops.FUNCTIONS) >= {"shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "activemask",
                                       "all_sync", "any_sync", "eq_sync", "ballot_sync", "match_any_sync",
                                       "match_all_sync", "lanemask_lt", "syncwarp"}
    for name in warp_ops.FUNCTIONS:
        assert vars(kernelapi.FakeCUDAModule)[name].__name__ == name, f"cuda.{name} is not installed"
    module = kernelapi.FakeCUDAModule((1, 1, 1), (64, 1, 1), 0)
    got = []

    class Thread(threading.Thread):
        sim = type("Sim", (), {"thread_id": 37})()

        def run(self):
            got.append(module.lanemask_lt())

    t = Thread()
    t.start()
    t.join()
    assert got == [(1 << 5) - 1], got


def test_device_arrays_forward_numpys_array_interface_to_the_memory():
    """numba_sim.host_array reads a device array (and the in-kernel wrapper around it) as numpy
    without copying."""
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    device = FakeCUDAArray(data)
    for wrapped in (device, FakeWithinKernelCUDAArray(device)):
        host = numba_sim.host_array(wrapped)
        assert isinstance(host, np.ndarray) and host.shape == (2, 3)
        host[1, 2] = 42
        assert data[1, 2] == 42, "the numpy view is not the device array's memory"
        data[1, 2] = 5


def test_a_kernels_store_into_a_device_array_goes_where_the_replacement_stores():
    """Hook 5: the in-kernel wrapper keeps its FakeCUDAArray in ``_item``, which stores into its numpy
    array ``_ary`` (as numba_sim._store does, before telling the checker)."""
    data = np.zeros(4, np.float32)
    device = FakeCUDAArray(data)
    assert device._ary is data, "FakeCUDAArray no longer keeps its numpy array in _ary"
    assert FakeWithinKernelCUDAArray(device)._item is device, "FakeWithinKernelCUDAArray no longer keeps _item"
    assert "self._ary.__setitem__(idx, val)" in inspect.getsource(FakeCUDAArray.__setitem__), \
        "FakeCUDAArray.__setitem__ no longer stores into _ary"
    assert FakeWithinKernelCUDAArray.__setitem__ is numba_sim._store, "the store hook is not installed"


def test_a_typed_device_array_is_passed_to_a_kernel_as_itself_in_the_wrapper():
    """``TensorMap.to_device()``'s array here: a ``FakeCUDAArray`` subclass whose ``_numba_type_``
    and attributes are its own; the kernel call wraps it, not a copy (``fake_arg``: a FakeCUDAArray
    goes in a ``FakeWithinKernelCUDAArray`` as it is), and :func:`numba_sim.numba_type_of` finds it
    behind the wrapper (whose ``__getattr__`` would index the array for a missing name)."""
    source = inspect.getsource(kernel.FakeCUDAKernel.__call__)
    assert "if isinstance(ret, FakeCUDAArray):" in source and "return FakeWithinKernelCUDAArray(ret)" in source, \
        "the simulator's kernel call no longer passes a device array argument in FakeWithinKernelCUDAArray"
    assert isinstance(vars(FakeCUDAArray)["_numba_type_"], property), "FakeCUDAArray._numba_type_ changed"
    data = np.arange(128, dtype=np.uint8)
    typed = numba_sim.typed_device_array(data, "the type", {"box_bytes": 512})
    assert isinstance(typed, FakeCUDAArray) and typed._numba_type_ == "the type" and typed.box_bytes == 512
    assert typed.nbytes == 128 and numba_sim.host_array(typed)[3] == 3 and numba_sim.host_array(typed) is not data
    with pytest.raises(ValueError, match="read-only"):     # as its type: a kernel's store is refused
        FakeWithinKernelCUDAArray(typed)[0] = 1
    seen = []

    def fn(desc):
        seen.append((numba_sim.numba_type_of(desc), desc.box_bytes, type(desc)))

    kernel.FakeCUDAKernel(fn, device=False)[1, 1](typed)
    assert seen == [("the type", 512, FakeWithinKernelCUDAArray)], seen
    assert numba_sim.numba_type_of(FakeWithinKernelCUDAArray(FakeCUDAArray(data))) is None
    assert numba_sim.numba_type_of(typed[8:]) is None and numba_sim.numba_type_of(data) is None


def test_only_the_adapter_names_numba_cudas_simulator():
    """No other module of numba_tma imports from numba.cuda.simulator, so a numba-cuda change
    lands in numba_sim.py alone."""
    package = SIMULATOR.parent
    offenders = []
    for path in package.rglob("*.py"):
        if path == pathlib.Path(numba_sim.__file__):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n.startswith("numba.cuda.simulator") for n in names):
                offenders.append(str(path.relative_to(package)))
    assert not offenders, f"modules naming numba-cuda's simulator besides numba_sim.py: {offenders}"


def test_the_simulator_modules_import_only_downwards():
    """simulator/: each module imports only modules below it (no circle), the adapter nothing of
    numba_tma (tests/test_layers.py places the package among numba_tma's layers)."""
    order = ["numba_sim", "device_functions", "scheduler", "memory", "state", "elect", "warp", "warp_ops", "gates",
             "delivery", "barriers",
             "wgmma", "mma", "arguments",
             "mbarrier", "tensormap", "tma", "bulk", "dsmem", "cp_async", "sync", "cluster", "fence", "cache", "tcgen05",
             "__init__", "backend"]
    for path in SIMULATOR.glob("*.py"):
        name = path.stem
        assert name in order, f"simulator/{path.name} is not in the layer order of this test"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                imported = [node.module] if node.module else [a.name for a in node.names]
                for other in imported:
                    other = other if other in order else "__init__"     # a name of the package itself
                    assert order.index(other) < order.index(name), f"simulator/{name}.py imports .{other}, above it"
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                assert name != "numba_sim", f"simulator/{name}.py imports numba_tma itself"


def test_numbas_scalar_types_cast_a_value_as_the_fast_call_does():
    """numba_sim replaces Integer/Float.__call__ (numba's Type.__call__: a single non-Type argument
    is cast_python_value(arg)) with a shortcut for plain numbers: the same results, and numba's own
    call for anything else."""
    from numba.core import types

    source = inspect.getsource(numba_sim._TYPE_CALL)
    assert "if len(args) == 1 and not isinstance(args[0], Type):" in source and \
        "return self.cast_python_value(args[0])" in source, "numba's Type.__call__ changed: re-check numba_sim"
    for cls in (types.Integer, types.Float):
        assert cls.__call__ in (numba_sim._TYPE_CALL, numba_sim._number_call), f"{cls.__name__} has its own __call__"
    for numba_type, value in ((types.uint32, 5), (types.int8, np.int64(-3)), (types.float32, 0.1),
                              (types.uint64, np.uint32(7)), (types.float64, True)):
        fast, slow = numba_sim._number_call(numba_type, value), numba_sim._TYPE_CALL(numba_type, value)
        assert type(fast) is type(slow) and fast == slow, (numba_type, value, fast, slow)
    assert numba_sim._number_call(types.uint32, types.int32) == numba_sim._TYPE_CALL(types.uint32, types.int32)
