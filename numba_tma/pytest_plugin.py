"""pytest plugin of numba-tma (registered as the ``pytest11`` entry point of its own module name, so loaded
by pytest once numba-tma is installed; importing it imports nothing of numba).

The ``kernel_timeout`` fixture is a function that waits for the test's kernels with a deadline::

    @testing.skip_unless_tma
    def test_ring(kernel_timeout):
        ring_kernel[grid, block](desc, out)
        kernel_timeout()                  # fails the test with KernelTimeout if the kernel hangs
        assert (out.copy_to_host() == expected).all()

It waits again when the test ends, so a hang the test did not wait for fails this test, not the
next one.  The deadline is ``numba_tma.testing.KERNEL_TIMEOUT_S`` seconds, or
``@pytest.mark.kernel_timeout(seconds)``.  After a hang the GPU is still busy with that kernel, so
later tests asking for the fixture are skipped, naming the test that hung.  Without a usable GPU
a test asking for the fixture is skipped.
"""

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "kernel_timeout(seconds): the deadline of the kernel_timeout fixture")


@pytest.fixture
def kernel_timeout(request):
    from . import testing

    marker = request.node.get_closest_marker("kernel_timeout")
    seconds = marker.args[0] if marker is not None else testing.KERNEL_TIMEOUT_S
    reason = testing.skip_reason((0, 0))
    if reason is not None:
        pytest.skip(reason)
    if testing.hung() is not None:
        pytest.skip(f"the GPU is still busy with the kernel of {testing.hung()}, which timed out")
    what = f"the kernels of {request.node.nodeid}"

    def wait():
        testing.synchronize(seconds, what=what)

    yield wait
    if testing.hung() is None:
        wait()
