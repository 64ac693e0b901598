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
    assert list(inspect.signature(hooks._original_shared_array).parameters) == ["self", "shape", "dtype", "alignment"]
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
