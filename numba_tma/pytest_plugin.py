"""pytest plugin of numba-tma (registered as the ``pytest11`` entry point of its own module name, so loaded
by pytest once numba-tma is installed; importing it imports nothing of numba).

The ``kernel_timeout`` fixture is a function that waits for the test's kernels with a deadline::

    # fragment: a test of the caller's ring_kernel
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

The ``both_ways`` marker runs a test twice, ``[gpu]`` and ``[simulator]``: on the GPU in this
process (skipped without one), and under numba-cuda's CUDA simulator in a child pytest process
(``NUMBA_ENABLE_CUDASIM=1`` is read when numba is imported, so it cannot be switched on here); the
first ``[simulator]`` half of a module runs all of that module's in the session's child (one per
process, importing numba once), whose JUnit report gives each its result.  The
same kernel, the same numpy model, both ways; on a machine without a GPU the simulator half still
runs.  The child must report the test passed (not skipped)::

    # fragment: a test of the caller's ring kernel
    @pytest.mark.both_ways
    def test_ring():
        numba_tma.launch(ring, 8, 64, out, cluster=(4, 1, 1))
        assert (out == model()).all()

``numba_tma.testing.WAY`` (``"gpu"`` or ``"simulator"``) says which run is on, for a test that
must size its work to the simulator (a test that skips itself there is reported skipped, with
its reason).
"""

import os
import subprocess
import sys

import pytest

WAY = "numba_tma_way"       # the parameter both_ways adds


def pytest_configure(config):
    config.addinivalue_line("markers", "kernel_timeout(seconds): the deadline of the kernel_timeout fixture")
    config.addinivalue_line("markers", "both_ways: run the test on the GPU and, in a child process, under "
                                       "numba-cuda's CUDA simulator")


def _way_here() -> str:
    """The way this process runs kernels (``"gpu"`` or ``"simulator"``: its backend's name)."""
    from .ops import BACKEND

    return BACKEND.name


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("both_ways") is not None:
        metafunc.fixturenames.append(WAY)
        metafunc.parametrize(WAY, ["gpu", "simulator"])


@pytest.fixture(autouse=True)
def _both_ways(request):
    """For a ``both_ways`` test: skip the ``[gpu]`` run without a GPU (or in the simulator's
    child process) and set ``numba_tma.testing.WAY``."""
    callspec = getattr(request.node, "callspec", None)
    way = callspec.params.get(WAY) if callspec is not None else None
    if way is None:
        yield
        return
    from . import testing

    if way == "gpu":
        reason = "this process runs the CUDA simulator" if _way_here() == "simulator" else testing.skip_reason()
        if reason is not None:
            pytest.skip(reason)
    testing.WAY = way
    yield
    testing.WAY = None


def is_simulator_run(item) -> bool:
    """Whether ``item`` is the ``[simulator]`` half of a ``both_ways`` test."""
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get(WAY) == "simulator"


_BATCHES: dict = {}        # module path -> {test name: (outcome, text)} of its simulator halves, run together


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Note each module's ``[simulator]`` halves: the first one to run runs them all in one child
    process (a child pays numba's import once per module, not once per test)."""
    config.stash[_HALVES] = {}
    for item in items:
        if is_simulator_run(item):
            config.stash[_HALVES].setdefault(str(item.path), []).append(item)


_HALVES = pytest.StashKey()


# One child per process, kept for the whole session: it imports numba (under the simulator) and
# numba_tma once, and answers two kinds of request, a JSON line each on its stdin: a module's
# simulator halves ({"report": path, "nodeids": [...], "cwd": the rootdir}), run through pytest.main,
# answered "done"; and a script ({"script", "out", "err", "cwd", "timeout"}: :func:`run_script`), run
# in a process forked from it as ``python script`` would run it, answered with its exit code or
# "timeout" (it was killed).  Answers come on a pipe of its own (its stdout and stderr go to a
# log), so pytest's output never mixes with the protocol.
_SERVE = """
import json, os, runpy, signal, sys, time, traceback
import pytest
import numba.cuda, numba_tma
answers = os.fdopen(int(sys.argv[1]), "w")


def run_script(script, out, err, cwd, timeout):
    sys.stdout.flush()
    sys.stderr.flush()          # (nothing of the log may reach the script's files)
    pid = os.fork()
    if pid == 0:   # the script, as `python script` runs it; SystemExit ends this process, not the loop
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY | os.O_CREAT),
                                (2, err, os.O_WRONLY | os.O_CREAT)):
            os.dup2(os.open(path, flags), fd)
        os.chdir(cwd)
        sys.argv, sys.path[0] = [script], os.path.dirname(script)
        here = os.path.realpath(sys.path[0])
        for name, module in list(sys.modules.items()):   # the script's siblings import anew, as under python
            if os.path.dirname(os.path.realpath(getattr(module, "__file__", None) or "/")) == here:
                del sys.modules[name]
        try:
            runpy.run_path(script, run_name="__main__")
        except Exception:
            traceback.print_exc()
            sys.exit(1)
        sys.exit(0)
    deadline = time.monotonic() + timeout
    while not (done := os.waitpid(pid, os.WNOHANG))[0] and time.monotonic() < deadline:
        time.sleep(0.005)
    if not done[0]:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return "timeout"
    return str(os.waitstatus_to_exitcode(done[1]))


for line in sys.stdin:
    request = json.loads(line)
    if "script" in request:
        answer = run_script(**request)
    else:
        os.chdir(request["cwd"])
        pytest.main(["-q", "-rs", "-p", "no:cacheprovider", "--junitxml=" + request["report"], *request["nodeids"]])
        answer = "done"
    answers.write(answer + "\\n")
    answers.flush()
"""
_CHILD: dict = {}          # "child": the Popen, "answers": its pipe, "log": its output
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # where this numba_tma is


def _child():
    """The session's simulator child, started at the first need; it imports the numba_tma this
    process has."""
    child = _CHILD.get("child")
    if child is not None and child.poll() is None:
        return child
    import tempfile

    read, write = os.pipe()
    log = tempfile.TemporaryFile(mode="w+")
    path = os.pathsep.join([_PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")])
    child = subprocess.Popen([sys.executable, "-c", _SERVE, str(write)], stdin=subprocess.PIPE, stdout=log,
                             stderr=subprocess.STDOUT, text=True, pass_fds=(write,),
                             env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=path))
    os.close(write)
    _CHILD.update(child=child, answers=os.fdopen(read), log=log)
    return child


def _ask_child(request) -> str:
    """The session's child's answer to ``request``; "" if it died."""
    import json

    child = _child()
    try:
        child.stdin.write(json.dumps(request) + "\n")
        child.stdin.flush()
        return _CHILD["answers"].readline().strip()
    except (BrokenPipeError, OSError):
        return ""


def run_script(script, timeout=300, cwd=None) -> tuple:
    """``(exit code, stdout, stderr)`` of ``python script`` under the simulator, run from ``cwd``
    (by default this process's) in a process forked from the session's child (no interpreter start,
    numba already imported); ``subprocess.TimeoutExpired`` past ``timeout`` seconds."""
    import pathlib
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out, err = pathlib.Path(folder) / "stdout", pathlib.Path(folder) / "stderr"
        answer = _ask_child({"script": str(script), "out": str(out), "err": str(err), "cwd": str(cwd or os.getcwd()),
                             "timeout": timeout})
        if answer == "timeout":
            raise subprocess.TimeoutExpired([sys.executable, str(script)], timeout)
        if not answer:
            raise RuntimeError(f"the simulator's child process died running {script}:\n{_child_log_tail()}")
        return int(answer), out.read_text(), err.read_text()


def _child_log_tail() -> str:
    log = _CHILD.get("log")
    if log is None:
        return ""
    log.seek(0)
    return log.read()[-6000:]


def pytest_sessionfinish(session):
    child = _CHILD.pop("child", None)
    if child is not None and child.poll() is None:
        child.stdin.close()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()


def _run_children(config, path, items):
    """Run ``items`` (one module's simulator halves) under the simulator in the session's child:
    ``{item name: ("passed" | "skipped" | "failed", reason or report)}``."""
    import tempfile
    import xml.etree.ElementTree as ElementTree

    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.xml")
        answered = _ask_child({"report": report, "nodeids": [item.nodeid for item in items],
                               "cwd": str(config.rootpath)}) == "done"
        outcomes = {}
        if answered and os.path.exists(report):
            for case in ElementTree.parse(report).iter("testcase"):
                problem = next((c for c in case if c.tag in ("failure", "error")), None)
                skipped = next((c for c in case if c.tag == "skipped"), None)
                if problem is not None:
                    outcomes[case.get("name")] = ("failed", f"{problem.get('message', '')}\n{(problem.text or '')[-4000:]}")
                elif skipped is not None:
                    outcomes[case.get("name")] = ("skipped", skipped.get("message", ""))
                else:
                    outcomes.setdefault(case.get("name"), ("passed", ""))
    tail = "" if outcomes else _child_log_tail()
    return {item.name: outcomes.get(item.name, ("failed", f"no result from the simulator's child process:\n{tail}"))
            for item in items}


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """The ``[simulator]`` half: its result from the child pytest process that runs the module's
    simulator halves under the simulator (started by the first of them)."""
    if not is_simulator_run(pyfuncitem) or _way_here() == "simulator":
        return None
    config, path = pyfuncitem.config, str(pyfuncitem.path)
    halves = config.stash.get(_HALVES, {}).get(path, [pyfuncitem])
    names = [item.name for item in halves]
    if pyfuncitem.name not in _BATCHES.get(path, {}):
        together = halves if len(set(names)) == len(names) and pyfuncitem in halves else [pyfuncitem]
        _BATCHES.setdefault(path, {}).update(_run_children(config, path, together))
    outcome, text = _BATCHES[path].pop(pyfuncitem.name)
    if outcome == "skipped":   # the test skipped itself there: say why here
        pytest.skip(f"under the CUDA simulator: {text}")
    if outcome != "passed":
        pytest.fail(f"under the CUDA simulator (failed in the child process):\n{text}", pytrace=False)
    return True


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
