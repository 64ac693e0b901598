"""numba_tma.testing and its pytest plugin: skip decisions (with faked devices), skipping without a
GPU under pytest and unittest, deadlines on kernels and barrier waits."""

import unittest

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import fence, inspect, mbarrier, testing
from numba_tma.testing import DeviceFacts

pytest_plugins = ["pytester", "numba_tma.pytest_plugin"]   # auto-loaded where numba-tma is installed

H200 = DeviceFacts("NVIDIA H200", (9, 0), True)
B200 = DeviceFacts("NVIDIA B200", (10, 0), True)
A100 = DeviceFacts("NVIDIA A100", (8, 0), False)
NO_GPU = "no CUDA GPU available (numba.cuda.is_available() is False)"


@pytest.mark.parametrize("facts,min_cc,cluster,runs", [
    (H200, (9, 0), False, True), (H200, (9, 0), True, True), (H200, (10, 0), False, False),
    (B200, (10, 0), True, True), (A100, (9, 0), False, False), (A100, (8, 0), True, False),
    (A100, (8, 0), False, True), (NO_GPU, (0, 0), False, False),
])
def test_skip_decision(facts, min_cc, cluster, runs):
    reason = testing.skip_reason(min_cc, cluster=cluster, facts=facts)
    assert (reason is None) == runs
    if isinstance(facts, str):
        assert reason == facts
    elif not runs:
        assert facts.name in reason


def test_skip_reason_names_the_capability_missing():
    assert testing.skip_reason((10, 0), facts=H200) == \
        "NVIDIA H200 has compute capability 9.0; the test needs 10.0"
    assert "CLUSTER_LAUNCH" in testing.skip_reason((8, 0), cluster=True, facts=A100)


@pytest.mark.parametrize("bad", [(9,), "9.0", (9, -1), (9.0, 0)])
def test_a_malformed_capability_is_refused(bad):
    with pytest.raises(ValueError, match="'min_cc' must be a \\(major, minor\\) tuple"):
        testing.skip_reason(bad, facts=H200)


def test_the_real_device_query_does_not_raise():
    facts = testing.device()
    assert isinstance(facts, (str, DeviceFacts))
    if not cuda.is_available():
        assert isinstance(facts, str)


@pytest.fixture
def fake_device(monkeypatch):
    def use(facts):
        monkeypatch.setattr(testing, "device", lambda: facts)
    return use


def _check_me():
    return "ran"


@pytest.mark.parametrize("decorator,facts,runs", [
    (testing.skip_unless_tma, H200, True), (testing.skip_unless_tma, A100, False),
    (testing.skip_unless_tma, NO_GPU, False), (testing.skip_unless_cluster, H200, True),
    (testing.skip_unless_cluster, DeviceFacts("X", (9, 0), False), False),
    (lambda f: testing.skip_unless_cc(10, 0)(f), H200, False), (lambda f: testing.skip_unless_cc(10, 0)(f), B200, True),
])
def test_decorators_follow_the_decision(fake_device, decorator, facts, runs):
    fake_device(facts)
    decorated = decorator(_check_me)
    if runs:
        assert decorated is _check_me
    else:
        assert [m.name for m in decorated.pytestmark] == ["skip"] and not hasattr(_check_me, "pytestmark")
        with pytest.raises(unittest.SkipTest):
            decorated()


PYTEST_FILE = """
import unittest
import pytest
from numba_tma import testing

@testing.skip_unless_tma
def test_function(kernel_timeout):
    raise AssertionError("must not run")

@testing.skip_unless_cc(10, 0)
class TestCase(unittest.TestCase):
    def test_method(self):
        raise AssertionError("must not run")

class TestMethods(unittest.TestCase):
    @testing.skip_unless_cluster
    def test_method(self):
        raise AssertionError("must not run")

@testing.skip_unless_tma
class TestPlain:
    def test_method(self):
        raise AssertionError("must not run")
"""


def test_without_a_gpu_pytest_skips_functions_classes_and_testcases(pytester, fake_device):
    fake_device(NO_GPU)
    pytester.makepyfile(PYTEST_FILE)
    result = pytester.runpytest("-p", "numba_tma.pytest_plugin", "-rs")
    result.assert_outcomes(skipped=4)
    result.stdout.fnmatch_lines(["*no CUDA GPU available*"])


def test_without_a_gpu_unittest_skips_testcases(fake_device):
    fake_device(NO_GPU)

    @testing.skip_unless_tma
    class Whole(unittest.TestCase):
        def test_a(self):
            raise AssertionError("must not run")

    class Methods(unittest.TestCase):
        @testing.skip_unless_cc(10, 0)
        def test_b(self):
            raise AssertionError("must not run")

    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    suite.addTests(loader.loadTestsFromTestCase(Whole))
    suite.addTests(loader.loadTestsFromTestCase(Methods))
    result = unittest.TestResult()
    suite.run(result)
    assert result.testsRun == 2 and not result.failures and not result.errors
    assert [why for _, why in result.skipped] == [NO_GPU, NO_GPU]


class _Event:
    def __init__(self, polls_until_done):
        self.left = polls_until_done

    def query(self):
        self.left -= 1
        return self.left < 0


@pytest.fixture
def fresh_hangs(monkeypatch):
    monkeypatch.setattr(testing, "_HUNG", [])


def test_synchronize_returns_when_the_work_finishes(monkeypatch, fresh_hangs):
    event = _Event(3)
    monkeypatch.setattr(testing, "_record_event", lambda stream: event)
    testing.synchronize(timeout_s=5)
    assert event.left == -1 and testing.hung() is None


def test_synchronize_raises_after_the_deadline(monkeypatch, fresh_hangs):
    monkeypatch.setattr(testing, "_record_event", lambda stream: _Event(10 ** 9))
    with pytest.raises(testing.KernelTimeout, match="the ring kernel did not finish within 0.05 s"):
        testing.synchronize(timeout_s=0.05, what="the ring kernel")
    assert testing.hung() == "the ring kernel"


@pytest.mark.parametrize("bad", [0, -1, True, "5"])
def test_synchronize_refuses_a_bad_timeout(bad):
    with pytest.raises(ValueError, match="'timeout_s' must be a positive number"):
        testing.synchronize(timeout_s=bad)


PLUGIN_FILE = """
import pytest

@pytest.mark.kernel_timeout(0.05)
def test_hangs(kernel_timeout):
    pass                 # the teardown wait times out

def test_after(kernel_timeout):
    raise AssertionError("must not run: the GPU is busy")
"""


def test_the_fixture_fails_the_hung_test_and_skips_later_ones(pytester, fake_device, monkeypatch, fresh_hangs):
    fake_device(H200)
    monkeypatch.setattr(testing, "_record_event", lambda stream: _Event(10 ** 9))
    pytester.makepyfile(PLUGIN_FILE)
    result = pytester.runpytest("-p", "numba_tma.pytest_plugin", "-rs")
    result.assert_outcomes(passed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*KernelTimeout: the kernels of test_*::test_hangs did not finish within 0.05 s*",
                                 "*the GPU is still busy with the kernel of the kernels of*test_hangs*"])


def test_the_fixture_waits_and_passes(pytester, fake_device, monkeypatch, fresh_hangs):
    fake_device(H200)
    monkeypatch.setattr(testing, "_record_event", lambda stream: _Event(2))
    pytester.makepyfile("def test_ok(kernel_timeout):\n    kernel_timeout()\n")
    pytester.runpytest("-p", "numba_tma.pytest_plugin").assert_outcomes(passed=1)


class _Status:
    def __init__(self, failures):
        self.failures = failures

    def copy_to_host(self):
        return np.array([self.failures], np.int32)


def test_check_waits():
    testing.check_waits(_Status(0))
    with pytest.raises(testing.BarrierTimeout, match="2 bounded_wait call\\(s\\) gave up"):
        testing.check_waits(_Status(2))


def never_completes(status):
    """A barrier expecting two arrivals that gets one: every bounded_wait gives up."""
    bars = cuda.shared.array(1, numba.uint64)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 2)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive(bars)
    testing.bounded_wait(bars, 0, status)


def test_bounded_wait_is_a_try_wait_loop_that_counts_failures():
    ptx = inspect.ptx(never_completes, (numba.int32[::1],), "sm_90a")
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    assert "atom.global.add" in ptx or "red.global.add" in ptx


@pytest.mark.gpu
@testing.skip_unless_tma
def test_on_the_gpu_a_barrier_that_never_completes_fails_instead_of_hanging(kernel_timeout):
    status = testing.wait_status()
    cuda.jit(never_completes)[1, 32](status)
    kernel_timeout()
    with pytest.raises(testing.BarrierTimeout, match="32 bounded_wait call"):
        testing.check_waits(status)


def test_both_ways_runs_the_simulator_half_in_a_child_process(pytester):
    """``@pytest.mark.both_ways``: ``[gpu]`` here (skipped without a GPU), ``[simulator]`` in a child
    pytest under NUMBA_ENABLE_CUDASIM=1, whose failure fails the test here."""
    pytester.makepyfile(test_both="""
        import numpy as np
        import pytest
        from numba import cuda
        from numba_tma import testing

        @cuda.jit
        def twice(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] *= 2

        @pytest.mark.both_ways
        def test_twice():
            a = np.arange(8.0)
            d = cuda.to_device(a)
            twice[1, 8](d)
            assert (d.copy_to_host() == 2 * a).all() and testing.WAY in ("gpu", "simulator")

        @pytest.mark.both_ways
        def test_fails_in_the_simulator():
            assert testing.WAY != "simulator", "ran in the simulator"

        @pytest.mark.both_ways
        def test_skips_in_the_simulator():
            if testing.WAY == "simulator":
                pytest.skip("too big for the simulator")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    gpu = testing.skip_reason() is None
    result.assert_outcomes(passed=4 if gpu else 1, failed=1, skipped=1 if gpu else 4)
    result.stdout.fnmatch_lines(["*under the CUDA simulator: too big for the simulator*"])
    result.stdout.fnmatch_lines(["*under the CUDA simulator (failed in the child process)*", "*ran in the simulator*"])
