"""The numba-cuda simulator internals numba_tma.simulator.hooks relies on are still there: this
fails, naming what moved, when a numba-cuda release changes them."""

import inspect

import numba_cuda
from numba.cuda.simulator import kernel, kernelapi

from numba_tma.simulator import hooks


def test_numba_cuda_is_the_release_the_hooks_were_checked_against():
    assert numba_cuda.__version__.startswith(hooks.SUPPORTED + "."), (
        f"numba-cuda {numba_cuda.__version__}: re-check numba_tma/simulator/hooks.py (written for {hooks.SUPPORTED})")


def test_the_patched_names_exist_with_the_signatures_replaced():
    assert list(inspect.signature(kernelapi.FakeCUDAShared.array).parameters) == ["self", "shape", "dtype",
                                                                                   "alignment"]
    assert list(inspect.signature(hooks._original_thread_init).parameters)[:3] == ["self", "f", "manager"]
    assert hasattr(kernelapi, "FakeCUDAModule") and hasattr(kernelapi, "numpy_support")
    assert callable(kernel._get_kernel_context), "the simulator no longer tracks the running kernel's cuda module"


def test_the_attributes_read_are_set_where_expected():
    thread_init = inspect.getsource(hooks._original_thread_init)      # (install() wrapped it)
    for name in ("self._manager", "self.syncthreads_blocked", "self.abort", "self.thread_id", "self.exception"):
        assert name in thread_init, f"BlockThread.__init__ no longer sets {name}"
    manager = inspect.getsource(kernel.BlockManager.__init__)
    for name in ("self._grid_dim", "self._block_dim"):
        assert name in manager, f"BlockManager.__init__ no longer sets {name}"
    shared = inspect.getsource(kernelapi.FakeCUDAShared.__init__)
    assert "self._allocations" in shared, "FakeCUDAShared no longer keys allocations in _allocations"


def test_the_kernel_call_that_run_clusters_mirrors_is_unchanged():
    """hooks.run_clusters is FakeCUDAKernel.__call__ with the blocks of a cluster run at once: it
    repeats the argument handling and the per-block managers seen here."""
    call = inspect.getsource(kernel.FakeCUDAKernel.__call__)
    for piece in ("normalize_kernel_dimensions(", "FakeCUDAModule(", "_push_kernel_context(fake_cuda_module)",
                  "extension.prepare_args(", "InOut(arg).to_device(retr)", "isinstance(arg, ArgHint)",
                  "FakeWithinKernelCUDAArray(ret)", "swapped_cuda_module(self.fn, fake_cuda_module)",
                  "BlockManager(self.fn, grid_dim, block_dim, self._debug)", "bm.run(grid_point, *fake_args)",
                  "for wb in retr:"):
        assert piece in call, f"FakeCUDAKernel.__call__ changed ({piece!r}): re-check hooks.run_clusters"
    assert list(inspect.signature(kernel.BlockManager.run).parameters) == ["self", "grid_point", "args"]
    run = inspect.getsource(kernel.BlockManager.run)      # hooks._run_block repeats it, yielding the GIL
    for piece in ("np.ndindex(*self._block_dim)", "BlockThread(target, self, grid_point, block_point, self._debug)",
                  "t.syncthreads_blocked", "t_other.abort = True", "t_other.syncthreads_event.set()",
                  "raise t.exception[0].with_traceback(t.exception[1])", "t.syncthreads_event.set()"):
        assert piece in run, f"BlockManager.run changed ({piece!r}): re-check hooks._run_block"
    manager = inspect.getsource(kernel.BlockManager.__init__)
    assert "self._f = f" in manager and "self._debug = debug" in manager, "BlockManager keeps f / debug elsewhere"
    assert "self._dynshared_size" in inspect.getsource(kernelapi.FakeCUDAShared.__init__)


def test_the_launch_configuration_checked_is_set_where_expected():
    """Hook 5 wraps ``FakeCUDAKernel.__getitem__`` and checks what it set: the normalised grid and
    block, and the dynamic shared memory (item 4 of the configuration)."""
    getitem = inspect.getsource(hooks._original_configure)
    for piece in ("self.grid_dim, self.block_dim = normalize_kernel_dimensions(", "self.dynshared_size = configuration[3]",
                  "return self"):
        assert piece in getitem, f"FakeCUDAKernel.__getitem__ changed ({piece!r}): re-check hooks._configure"
    assert kernel.FakeCUDAKernel.__getitem__ is hooks._configure, "hook 5 not installed"
