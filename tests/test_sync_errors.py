"""Compile-time errors of the synchronisation families (mbarrier variants, fences, named barriers,
cp.async, tensormap editing): each names the argument and the rule."""

import numba
import pytest
from numba import cuda
from numba.cuda import types

from numba_tma import ArchError, OpArgumentError, cp_async, fence, inspect, mbarrier, sync, tensormap

SIG = (numba.uint8[::1], numba.uint64[::1])


def _kernel(body):
    namespace = {"cuda": cuda, "types": types, "mbarrier": mbarrier, "fence": fence, "sync": sync,
                 "cp_async": cp_async, "tensormap": tensormap}
    exec("def k(desc, out):\n    bar = cuda.shared.array(2, types.uint64)\n"
         "    smem = cuda.shared.array(64, types.uint8, alignment=16)\n    " + body, namespace)
    return namespace["k"]


@pytest.mark.parametrize("call,match", [
    ("mbarrier.arrive(bar, sem='acquire')", r"argument 'sem' must be a constant, one of None, 'release', 'relaxed'"),
    ("mbarrier.wait(bar, 0, sem='release')", r"argument 'sem' must be a constant, one of None, 'acquire', 'relaxed'"),
    ("mbarrier.arrive(bar, scope='gpu')", r"argument 'scope' must be a constant, one of None, 'cta', 'cluster'"),
    ("fence.acq_rel('device')", r"argument 'scope' must be a constant, one of 'cta', 'cluster', 'gpu', 'sys'"),
    ("fence.proxy_async('local')", r"argument 'space' must be a constant"),
    ("mbarrier.arrive(bar, no_complete=True)", r"argument 'count' must be given with no_complete=True"),
    ("mbarrier.arrive(bar, count=2, scope='cluster', no_complete=True)", r"'no_complete' cannot be combined"),
])
def test_sem_scope_names(call, match):
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(_kernel(call), SIG)


@pytest.mark.parametrize("call,arch,match", [
    ("mbarrier.arrive(bar, scope='cluster')", "sm_80", r"mbarrier.arrive with scope='cluster' needs sm_90 or newer"),
    ("mbarrier.arrive(bar, count=2)", "sm_80", r"mbarrier.arrive with 'count' needs sm_90 or newer"),
    ("fence.acq_rel('cluster')", "sm_80", r"fence.acq_rel with scope='cluster' needs sm_90 or newer"),
    ("fence.sc('cluster')", "sm_80", r"fence.sc with scope='cluster' needs sm_90 or newer"),
    ("sync.elect_one()", "sm_80", r"sync.elect_one needs sm_90 or newer"),
    ("tensormap.replace_global_dim(desc, 0, 64)", "sm_90", r"tensormap.replace_global_dim needs sm_90a or newer"),
    ("mbarrier.expect_tx(bar, 64)", "sm_80", r"mbarrier.expect_tx needs sm_90 or newer"),
])
def test_an_arch_that_lacks_the_form(call, arch, match):
    with pytest.raises(ArchError, match=match):
        inspect.ptx(_kernel(call), SIG, arch)


@pytest.mark.parametrize("call,match", [
    ("sync.named_barrier_sync(16, 64)", r"'barrier_id' must be in \[0, 15\]; got 16"),
    ("sync.named_barrier_sync(1, 48)", r"'nthreads' must be a positive multiple of 32"),
    ("sync.named_barrier_arrive(1, 2048)", r"'nthreads' must be in \[32, 1024\]"),
    ("cp_async.load(smem, desc, 12)", r"cp_async.load: argument 'nbytes' must be 4, 8 or 16; got 12"),
    ("cp_async.load(smem, desc, 8, cache='cg')", r"'nbytes' must be 16 with cache='cg'"),
    ("cp_async.load(smem, desc, out[0])", r"'nbytes' must be a compile-time integer constant"),
    ("cp_async.wait_group(8)", r"'n' must be in \[0, 7\]; got 8"),
    ("tensormap.replace_box_dim(desc, 5, 8)", r"'i' must be in \[0, 4\]; got 5"),
    ("tensormap.replace_swizzle(desc, 4)", r"'value' must be in \[0, 3\]; got 4"),
    ("tensormap.replace_global_dim(bar, 0, 8)", r"argument 'buf' must be a uint8 array"),
])
def test_constants_out_of_range(call, match):
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(_kernel(call), SIG, "sm_90a")
