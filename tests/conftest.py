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
    from numba_tma.pytest_plugin import is_simulator_run

    for item in items:
        if item.get_closest_marker("gpu") is None or is_simulator_run(item):   # the simulator half runs anywhere
            continue
        # A hung mbarrier must fail the run, not hang it: the thread method also ends a test
        # stuck inside a driver call.
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(GPU_TIMEOUT_S, method="thread"))
        reason = gpu_skip_reason()
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


BY_VALUE_CHECKED = []


@pytest.fixture(scope="session", autouse=True)
def by_value_bytes_are_ours():
    """On a GPU, every map any test launches by value (numba's launcher passes a cuda.core twin
    holding ``TensorMap.bytes``) is echoed once, the first time its bytes are seen, to check the
    kernel receives exactly our bytes (``gpu_support.echoing``; on the CPU,
    ``tests/test_launch_on_a_stand_in_gpu.py`` runs the same echo on a stand-in GPU)."""
    if gpu_skip_reason():
        yield
        return
    from numba_tma.intrinsics.tensor_map_type import TensorMapType
    from numba_tma.numba_cuda.kernel_arguments import BY_VALUE as _BY_VALUE

    from gpu_support import echoing, received_bytes

    original = _BY_VALUE[TensorMapType]
    _BY_VALUE[TensorMapType] = echoing(original, received_bytes, BY_VALUE_CHECKED)
    yield
    _BY_VALUE[TensorMapType] = original


def pytest_terminal_summary(terminalreporter):
    if BY_VALUE_CHECKED:
        terminalreporter.write_line(f"by-value descriptors checked equal to TensorMap.bytes in the kernel: "
                                    f"{len(BY_VALUE_CHECKED)} ({BY_VALUE_CHECKED.count('im2col')} im2col)")
