"""Ranges the PTX ISA and the hardware state, refused at compile time when the value is a
constant (and trapped in debug mode when it is not): each case names the argument and the rule.
The expected rules are written here from the ISA, not read back from the code."""

import numba
import numpy as np
import pytest
from numba import cuda

from numba_tma import (OpArgumentError, SharedMemoryPlan, SharedMemoryPlanError, TensorMap, debug, inspect, mbarrier,
                       tensormap, tma)

from test_debug import _strings
from test_simulator import simulate
from test_tensor_map_arg import FakeCudaArray

BUF = (numba.uint8[::1], numba.int64)


def _compile(call, sig=BUF, arch=None):
    namespace = {"tensormap": tensormap, "tma": tma, "mbarrier": mbarrier, "cuda": cuda, "numba": numba}
    exec(f"def k(buf, x):\n    bars = cuda.shared.array(1, numba.uint64)\n    {call}\n", namespace)
    return inspect.compile(namespace["k"], sig, arch) if arch else inspect.ptx(namespace["k"], sig)


@pytest.mark.parametrize("arch", ["sm_91", "sm_80a", "sm_90f", "sm_99"])
def test_architectures_that_do_not_exist_are_refused(arch):
    with pytest.raises(ValueError, match=rf"arch='{arch}': no such NVIDIA architecture"):
        inspect.compile(lambda out: None, (numba.int32[::1],), arch)


@pytest.mark.parametrize("call, match", [
    ("tensormap.replace_box_dim(buf, 0, 257)", r"'value' must be 1 to 256 \(elements per box dimension\); got 257"),
    ("tensormap.replace_box_dim(buf, 1, 0)", r"'value' must be 1 to 256.*got 0"),
    ("tensormap.replace_rank(buf, 5)", r"'value' must be 0 to 4 \(rank - 1, for ranks 1 to 5\); got 5"),
    ("tensormap.replace_global_dim(buf, 0, 0)", r"'value' must be 1 to 4294967295"),
    ("tensormap.replace_global_stride(buf, 0, 4104)", r"'value' must be 16 to \d+, a multiple of 16 \(bytes, below 2\*\*40\); got 4104"),
    ("tensormap.replace_global_stride(buf, 0, 1 << 40)", r"'value' must be 16 to 1099511627760"),
    ("tensormap.replace_global_stride(buf, 4, 4096)", r"'i' must be in \[0, 3\]; got 4"),
    ("tensormap.replace_element_stride(buf, 0, 9)", r"'value' must be 1 to 8 \(elements\); got 9"),
    ("tensormap.replace_global_address(buf, 0x7f0000000008)", r"a multiple of 16 \(TMA addresses are 16-byte aligned\)"),
])
def test_tensormap_fields_outside_their_range_are_refused(call, match):
    with pytest.raises(OpArgumentError, match=match):
        _compile(call)


def test_run_time_tensormap_fields_are_trapped_in_debug_mode():
    call = "tensormap.replace_box_dim(buf, 0, x)\n    tensormap.replace_global_stride(buf, 0, x)"
    assert "trap;" not in _compile(call)
    with debug():
        texts = _strings(_compile(call))
    for message in ("tensormap.replace_box_dim: value = %lld: must be 1 to 256 (elements per box dimension)",
                    "tensormap.replace_global_stride: value = %lld: times 1 bytes it must be a multiple of 16",
                    "tensormap.replace_global_stride: value = %lld: must be 16 to 1099511627760"):
        assert any(message in t for t in texts), message


def test_multicast_into_the_cta_window_is_refused():
    sig = (TensorMap.numba_type("float32", (8, 32)), numba.int64)
    call = "tile = cuda.shared.array((8, 32), numba.float32, alignment=128)\n    " \
           "tma.load(buf, tile, (0, 0), bars, multicast=3, dst_space='cta')"
    with pytest.raises(OpArgumentError, match=r"tma.load: argument 'dst_space' must be 'cluster' with multicast"):
        _compile(call, sig)
    assert "multicast::cluster" in _compile(call.replace(", dst_space='cta'", ""), sig)


def test_swizzled_index_outside_the_box_is_refused():
    sig = (TensorMap.numba_type("uint16", (64, 64), swizzle="128B"), numba.int64)
    with pytest.raises(OpArgumentError, match=r"'c' must be 0 to 63 \(the box's innermost extent"):
        _compile("x = tma.swizzled_index(buf, 3, 64)", sig)
    with pytest.raises(OpArgumentError, match=r"'r' must be in \[0, 4294967295\]; got -1"):
        _compile("x = tma.swizzled_index(buf, -1, 0)", sig)
    _compile("x = tma.swizzled_index(buf, 64, 0)", sig)     # the first row of a second box stacked after it


def test_a_transaction_count_beyond_one_phase_is_refused():
    with pytest.raises(OpArgumentError, match=r"mbarrier.arrive_expect_tx: argument 'nbytes' must be 0 to 2\*\*20 - 1 = "
                       r"1048575 bytes \(the most one mbarrier phase's transaction count holds\); got 1048576"):
        _compile("mbarrier.arrive_expect_tx(bars, 1 << 20)")


def test_a_state_token_is_not_a_parity():
    with pytest.raises(OpArgumentError, match=r"mbarrier.test_wait: argument 'phase' must be a phase parity .*not the "
                                              r"state token arrive\(\) returned"):
        _compile("t = mbarrier.arrive(bars)\n    ok = mbarrier.test_wait(bars, t)")
    with pytest.raises(OpArgumentError, match=r"mbarrier.wait: argument 'phase'"):
        _compile("mbarrier.wait(bars, mbarrier.arrive_expect_tx(bars, 64))")
    ptx = _compile("t = mbarrier.arrive(bars)\n    buf[0] = mbarrier.test_wait_token(bars, t)\n    x = t")
    assert "mbarrier.test_wait.shared::cta.b64" in ptx


def test_the_simulator_refuses_a_token_as_a_parity_too():
    out = simulate("""
        @cuda.jit
        def k(out):
            bars = cuda.shared.array(1, numba.uint64)
            mbarrier.init(bars, 2)
            token = mbarrier.arrive(bars)
            out[0] = mbarrier.test_wait_token(bars, token)
            out[1] = mbarrier.test_wait(bars, token)
        out = np.zeros(2, np.int64)
        try:
            k[1, 1](out)
        except Exception as exc:
            print(type(exc).__name__, str(exc).split(": ", 1)[-1])
    """)
    assert "OpArgumentError numba_tma: mbarrier.test_wait: argument 'phase' must be a phase parity" in out


def test_a_plan_larger_than_any_gpu_is_refused():
    plan = SharedMemoryPlan().array("a", (200 * 1024,), numba.uint8)
    with pytest.raises(SharedMemoryPlanError, match=r"b: shape=\(32768,\) brings the plan to 237568 bytes .*more than "
                                                     r"any GPU's shared memory per block \(232448 bytes"):
        plan.array("b", (32 * 1024,), numba.uint8)


def test_a_swizzled_ring_keeps_every_stage_aligned():
    with pytest.raises(SharedMemoryPlanError, match=r"ring: shape=\(3, 8, 64\): each stage \(512 bytes\) must be a "
                                                     r"multiple of 1024 bytes.*pad the stage to 1024 bytes"):
        SharedMemoryPlan().array("ring", (3, 8, 64), numba.uint8, swizzle="128B")
    assert SharedMemoryPlan().array("ring", (3, 16, 64), numba.uint8, swizzle="128B").nbytes >= 3 * 1024


GLOBAL_MAP = TensorMap.tiled(FakeCudaArray((64, 64), np.float32), (8, 32))


def test_a_map_as_a_global_variable_says_maps_are_kernel_arguments():
    def k(out):
        tma.prefetch_descriptor(GLOBAL_MAP)

    with pytest.raises(OpArgumentError, match=r"a TensorMap must be a kernel argument \(it is passed by value as a "
                                              r"__grid_constant__ parameter\), not a global or closure variable"):
        inspect.ptx(k, (numba.int32[::1],))



def test_the_simulator_refuses_multicast_into_the_cta_window_too():
    out = simulate("""
        @cuda.jit
        def k(desc):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
            mbarrier.init(bars, 1)
            tma.load(desc, tile, (0, 0), bars, multicast=1, dst_space="cta")
        desc = TensorMap.tiled(cuda.to_device(np.zeros((8, 32), np.float32)), (8, 32))
        try:
            k[1, 1](desc)
        except Exception as exc:
            print(type(exc).__name__, str(exc).split(": ", 1)[-1])
    """)
    assert "OpArgumentError numba_tma: tma.load: argument 'dst_space' must be 'cluster' with multicast" in out


def test_map_shared_of_an_array_outside_shared_memory_traps_in_debug_mode():
    from numba_tma import cluster

    def k(out):
        peer = cluster.map_shared(out, 1)
        peer[0] = 1

    with debug():
        texts = _strings(inspect.ptx(k, (numba.int32[::1],)))
    assert any("cluster.map_shared: argument 'array' is not in shared memory" in t for t in texts)
