"""SharedMemoryPlan on the CPU: offsets, alignment, the launch size, errors naming the piece, and
the views' code (constant shapes, one run-time round-up of the buffer's start)."""

import re

import numba
import pytest
from numba import cuda
from numba.cuda import types

from numba_tma import SharedMemoryPlan, SharedMemoryPlanError, TensorMap, at, inspect, mbarrier, tma


def _plan():
    return (SharedMemoryPlan().array("acc", 5, types.float32, align=16)
            .array("ring", (3, 32, 64), types.float16, swizzle="128B")
            .barriers("full", 3).array("tile", (16, 16), types.float32))


def test_offsets_follow_alignment():
    layout = _plan().layout
    assert layout["acc"] == (0, (5,), types.float32, 16)
    assert layout["ring"] == (1024, (3, 32, 64), types.float16, 1024)           # 128B swizzle: 1024
    assert layout["full"] == (1024 + 3 * 32 * 64 * 2, (3,), types.uint64, 8)    # mbarriers: 8
    assert layout["tile"][0] == 13440 and layout["tile"][3] == 128               # TMA tile default: 128
    for offset, _, _, align in layout.values():
        assert offset % align == 0


def test_nbytes_includes_the_round_up_slack():
    plan = _plan()
    end = plan.layout["tile"][0] + 16 * 16 * 4
    assert plan.nbytes == end + 1024 - 16          # the start is only 16-byte aligned
    assert SharedMemoryPlan().barriers("b", 2).nbytes == 16


@pytest.mark.parametrize("call,match", [
    (lambda p: p.array("x", (4, 0), types.float32), r"x: shape=\(4, 0\) must be a positive integer"),
    (lambda p: p.array("x", 4, float), r"x: dtype=<class 'float'> must be a Numba integer or float type"),
    (lambda p: p.array("x", 4, types.float32, align=48), r"x: align=48 must be a power of two"),
    (lambda p: p.array("x", 4, types.float32, swizzle="256B"), r"x: .*swizzle"),
    (lambda p: p.array("2x", 4, types.float32), r"name='2x': must be a Python identifier"),
    (lambda p: p.array("x", 4, types.float32).barriers("x", 1), r"name='x': already in this plan"),
    (lambda p: p.barriers("b", 0), r"b: count=0 must be a positive integer"),
    (lambda p: p.carver(), r"the plan is empty"),
])
def test_errors_name_the_piece_and_the_rule(call, match):
    with pytest.raises(SharedMemoryPlanError, match=match):
        call(SharedMemoryPlan())


def test_views_have_compile_time_shapes():
    carve = _plan().carver()

    def k(out):
        s = carve()
        if cuda.threadIdx.x == 0:
            mbarrier.init(at(s.full, 2), 1)
        s.tile[cuda.threadIdx.x % 16, 3] = 1.0
        out[0] = s.ring.shape[0] * s.ring.shape[2]

    ptx = inspect.ptx(k, (numba.float32[::1],))
    assert "%dynamic_smem_size" not in ptx                 # no run-time shape, unlike shared.array(0)
    assert ".extern .shared .align 16 .b8 numba_tma_dynamic_shared[]" in ptx
    assert re.search(r"and\.b32\s+%r\d+, %r\d+, -1024;", ptx)     # the one round-up
    assert re.search(r"add\.s32\s+%r\d+, %r\d+, 13328;", ptx)       # full[2]: 1024 + 3 * 32 * 64 * 2 + 16
    assert "1128267776" in ptx                                     # 192.0 (3 * 64) folded at compile time


def test_a_tma_load_into_a_carved_swizzled_ring_assembles():
    plan = SharedMemoryPlan().array("ring", (2, 32, 64), types.float16, swizzle="128B").barriers("full", 2)
    carve = plan.carver()

    def k(desc, out):
        s = carve()
        tma.load(desc, at(s.ring, 1), (0, 0), at(s.full, 1))

    sig = (TensorMap.numba_type("float16", (32, 64), swizzle="128B"), numba.float32[::1])
    out = inspect.compile(k, sig, "sm_90a")
    assert "cp.async.bulk.tensor.2d" in out.ptx and "UTMALDG.2D" in out.opcodes()
