"""Test configuration: GPU tests are marked ``gpu`` and skip cleanly without a Hopper-class GPU."""

import functools

import pytest

GPU_TIMEOUT_S = 120


@functools.lru_cache(maxsize=None)
def gpu_skip_reason():
    """``None`` when a CUDA GPU of compute capability >= 9.0 is usable, else why not."""
    from numba import cuda

    if not cuda.is_available():
        return "no CUDA GPU available (numba.cuda.is_available() is False)"
    cc = cuda.get_current_device().compute_capability
    if cc < (9, 0):
        return f"GPU has compute capability {cc}; TMA needs 9.0 or newer"
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("gpu") is None:
            continue
        # A hung mbarrier must fail the run, not hang it: the thread method also ends a test
        # stuck inside a driver call.
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(GPU_TIMEOUT_S, method="thread"))
        reason = gpu_skip_reason()
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
