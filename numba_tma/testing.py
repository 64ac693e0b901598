"""Test helpers for your own GPU CI: skip decorators that never crash without a GPU, a barrier wait
that gives up, and a kernel wait with a deadline.

Example::

    from numba_tma import testing

    @testing.skip_unless_tma                   # a pytest test or a unittest.TestCase (class or method)
    def test_tile_copy():
        status = testing.wait_status()
        kernel[1, 128](desc, out, status)      # the kernel waits with testing.bounded_wait(bars, 0, status)
        testing.synchronize(timeout_s=30)      # KernelTimeout instead of a hang
        testing.check_waits(status)            # BarrierTimeout if a bounded_wait gave up

``skip_unless_cc(10, 0)`` and ``skip_unless_cluster`` work the same way.  The decision is taken
when the decorator is applied and never raises: ``numba.cuda.is_available()`` is asked first (numba's
own ``skip_unless_cc_90`` queries the device at import and crashes without one), and under the CUDA
simulator every test is skipped (it has no TMA hardware to test).  Under pytest the pytest plugin
(``numba_tma.pytest_plugin``, loaded automatically once numba-tma is installed) adds the
``kernel_timeout`` fixture and the ``both_ways`` marker (a test run on the GPU and under the CUDA
simulator, in a child process; :data:`WAY` says which run is on).
"""

from __future__ import annotations

import functools
import sys
import time
import unittest
from dataclasses import dataclass

TMA_CC = (9, 0)
WAY: str | None = None       # in a ``both_ways`` test: "gpu" or "simulator" (set by the pytest plugin)
KERNEL_TIMEOUT_S = 60.0
WAIT_SPINS = 1 << 20
_POLL_S = 0.01


class KernelTimeout(AssertionError):
    """The GPU did not finish the launched work within the deadline (a barrier that never completes?)."""


class BarrierTimeout(AssertionError):
    """A :func:`bounded_wait` gave up: its barrier phase never completed."""


@dataclass(frozen=True)
class DeviceFacts:
    """What the skip decisions need to know about the current GPU."""

    name: str
    cc: tuple
    cluster_launch: bool


def _device() -> DeviceFacts | str:
    """The current GPU's facts, or why there is none to test on; never raises."""
    from numba import cuda

    from .ops import BACKEND

    if BACKEND.no_gpu:
        return BACKEND.no_gpu
    if not cuda.is_available():
        return "no CUDA GPU available (numba.cuda.is_available() is False)"
    try:
        dev = cuda.get_current_device()
        return DeviceFacts(dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name),
                           tuple(dev.compute_capability), bool(dev.CLUSTER_LAUNCH))
    except Exception as exc:  # noqa: BLE001 - a broken driver must skip the test, not crash collection
        return f"the CUDA device could not be queried: {exc}"


@functools.lru_cache(maxsize=None)
def device() -> DeviceFacts | str:
    """The current GPU's :class:`DeviceFacts`, or a sentence saying why there is none (cached)."""
    return _device()


def skip_reason(min_cc: tuple = TMA_CC, cluster: bool = False, facts: DeviceFacts | str | None = None) -> str | None:
    """``None`` when a test needing compute capability ``min_cc`` (and thread-block clusters, with
    ``cluster``) can run on ``facts`` (default: the current GPU), else why not."""
    _check_cc("min_cc", min_cc)
    facts = device() if facts is None else facts
    if isinstance(facts, str):
        return facts
    if facts.cc < tuple(min_cc):
        return f"{facts.name} has compute capability {facts.cc[0]}.{facts.cc[1]}; the test needs {min_cc[0]}.{min_cc[1]}"
    if cluster and not facts.cluster_launch:
        return f"{facts.name} cannot launch thread-block clusters (CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH is 0)"
    return None


def _check_cc(argument, cc):
    if not (isinstance(cc, tuple) and len(cc) == 2 and all(isinstance(v, int) and v >= 0 for v in cc)):
        raise ValueError(f"numba_tma.testing: argument '{argument}' must be a (major, minor) tuple of "
                         f"non-negative ints; got {cc!r}")


def skip_if(reason: str | None):
    """A decorator skipping a test function, method or ``unittest.TestCase`` class when ``reason``
    is not ``None``.  Under pytest it also marks the test skipped, so its fixtures are not set up."""
    def decorate(test):
        if reason is None:
            return test
        test = unittest.skip(reason)(test)   # a function comes back wrapped: the original stays unmarked
        pytest = sys.modules.get("pytest")
        return test if pytest is None else pytest.mark.skip(reason=reason)(test)
    return decorate


def skip_unless_cc(major: int, minor: int):
    """Skip unless the GPU has compute capability ``major.minor`` or newer: ``@skip_unless_cc(10, 0)``."""
    _check_cc("(major, minor)", (major, minor))
    return skip_if(skip_reason((major, minor)))


def skip_unless_tma(test):
    """Skip unless the GPU has TMA (compute capability 9.0 or newer)."""
    return skip_if(skip_reason(TMA_CC))(test)


def skip_unless_cluster(test):
    """Skip unless the GPU launches thread-block clusters (compute capability 9.0 or newer and the
    cluster-launch attribute)."""
    return skip_if(skip_reason(TMA_CC, cluster=True))(test)


# -- waits that end --------------------------------------------------------------------------------

def _bounded_wait():
    from numba import cuda

    from .ops import mbarrier

    @cuda.jit(device=True)
    def bounded_wait(bars, phase, status):
        """``mbarrier.wait(bars, phase)`` that gives up after ``WAIT_SPINS`` ``try_wait`` tries
        and counts the failure in ``status[0]`` (see :func:`check_waits`), so a barrier that never
        completes ends the kernel instead of hanging it."""
        for _ in range(WAIT_SPINS):
            if mbarrier.try_wait(bars, phase):
                return True
        cuda.atomic.add(status, 0, 1)
        return False

    return bounded_wait


bounded_wait = _bounded_wait()


def wait_status():
    """A zeroed one-element ``int32`` device array for :func:`bounded_wait` to count failures in."""
    import numpy as np
    from numba import cuda

    return cuda.to_device(np.zeros(1, np.int32))


def check_waits(status) -> None:
    """Raise :class:`BarrierTimeout` if any :func:`bounded_wait` given ``status`` gave up."""
    failures = int(status.copy_to_host()[0])
    if failures:
        raise BarrierTimeout(f"{failures} bounded_wait call(s) gave up after {WAIT_SPINS} try_wait tries: "
                             "a barrier phase never completed (arrival count or expected bytes wrong?)")


_HUNG: list[str] = []   # what timed out; the CUDA context stays busy with that kernel afterwards


def _record_event(stream):
    from numba import cuda

    event = cuda.event(timing=False)
    event.record(stream)
    return event


def synchronize(timeout_s: float = KERNEL_TIMEOUT_S, stream=0, what: str = "the launched kernels") -> None:
    """Wait until the GPU has finished the work queued on ``stream`` (default: the legacy default
    stream, which follows every blocking stream) by polling an event, so a kernel that never ends
    raises :class:`KernelTimeout` after ``timeout_s`` seconds instead of blocking forever."""
    if not (isinstance(timeout_s, (int, float)) and not isinstance(timeout_s, bool) and timeout_s > 0):
        raise ValueError(f"numba_tma.testing.synchronize: argument 'timeout_s' must be a positive number of "
                         f"seconds; got {timeout_s!r}")
    event = _record_event(stream)
    deadline = time.monotonic() + timeout_s
    while not event.query():
        if time.monotonic() > deadline:
            _HUNG.append(what)
            raise KernelTimeout(f"{what} did not finish within {timeout_s} s: a barrier that never completes? "
                                "The kernel keeps running, so later GPU work in this process will wait behind it")
        time.sleep(_POLL_S)


def hung() -> str | None:
    """What an earlier :func:`synchronize` gave up on in this process (the GPU is still busy with
    it), or ``None``."""
    return _HUNG[0] if _HUNG else None


# -- the CUDA simulator: a kernel under many completion orders ----------------------------------------

@dataclass(frozen=True)
class SeedRun:
    """One run of :func:`run_seeds`: its seed and the error it raised (``None``: it ran clean)."""

    seed: int
    error: BaseException | None


def run_seeds(launch, n: int = 20, seeds=None) -> list:
    """Under the CUDA simulator, call ``launch()`` (which launches a kernel and checks its result)
    once per seed: ``n`` fresh seeds, or the given ``seeds``; returns a :class:`SeedRun` per run.
    Each seed fixes the order in which async copies complete (``NUMBA_TMA_SIM_SEED=<seed>``
    replays one in a new process)."""
    import random

    from .simulator import scheduler

    chosen = list(seeds) if seeds is not None else [random.SystemRandom().randrange(1 << 31) for _ in range(n)]
    before, runs = scheduler.SEED, []
    try:
        for seed in chosen:
            scheduler.SEED = seed
            try:
                launch()
            except Exception as exc:     # noqa: BLE001 - reported with its seed
                runs.append(SeedRun(seed, exc))
            else:
                runs.append(SeedRun(seed, None))
    finally:
        scheduler.SEED = before
    return runs


def check_seeds(launch, n: int = 20, seeds=None) -> None:
    """:func:`run_seeds`, raising ``AssertionError`` naming the first failing seed (and how many of
    the runs failed), so that ``NUMBA_TMA_SIM_SEED=<seed>`` replays it."""
    runs = run_seeds(launch, n, seeds)
    failed = [r for r in runs if r.error is not None]
    if failed:
        raise AssertionError(f"{len(failed)} of {len(runs)} simulator runs failed; the first with "
                             f"NUMBA_TMA_SIM_SEED={failed[0].seed}: {failed[0].error}") from failed[0].error


def gpu_seconds(fn, repeats: int = 20) -> float:
    """Seconds per call of ``fn`` (which launches GPU work), from CUDA events around ``repeats``
    back-to-back calls after one warm-up call: the host queues each launch while the previous one
    runs, so launch overhead is hidden as in a real pipeline of kernels.  A benchmark helper, for
    ratios from one run (the examples and ``benchmarks/`` use it); never for timed tests.

    Example::

        # fragment: the caller's kernel, on a GPU
        seconds = testing.gpu_seconds(lambda: kernel[grid, block](x, y))
    """
    from numba import cuda

    fn()
    start, stop = cuda.event(), cuda.event()
    start.record()
    for _ in range(repeats):
        fn()
    stop.record()
    stop.synchronize()
    return cuda.event_elapsed_time(start, stop) / 1e3 / repeats
