"""Compile-time errors: wrong architecture and bad arguments get messages naming the rule."""

import numba
import pytest
from numba import cuda

from numba_tma import ArchError, OpArgumentError, fence, inspect, mbarrier, tma
from numba_tma.intrinsics._core import parse_arch, toolkit_ptx_isa

import kernels

SM80_CASES = [
    (kernels.mbarrier_arrive_expect_tx, kernels.U64_OUT, "mbarrier.arrive_expect_tx"),
    (kernels.mbarrier_try_wait, kernels.U64_OUT, "mbarrier.try_wait"),
    (kernels.mbarrier_wait, kernels.U64_OUT, "mbarrier.wait"),
    (kernels.fence_proxy_async, kernels.U64_OUT, "fence.proxy_async"),
    (kernels.tma_load_kernel(2), kernels.TMA_SIG, "tma.load"),
]


@pytest.mark.parametrize("kernel,sig,op", SM80_CASES, ids=[c[2] for c in SM80_CASES])
def test_sm80_is_refused_with_a_clear_error(kernel, sig, op):
    with pytest.raises(ArchError) as err:
        inspect.ptx(kernel, sig, "sm_80")
    msg = str(err.value)
    assert op in msg and "sm_90 or newer" in msg and "sm_80" in msg


def test_arch_error_after_the_same_kernel_compiled_for_sm90():
    """Numba caches typing per argument types; the arch check must still run for a new target."""
    inspect.ptx(kernels.mbarrier_try_wait, kernels.U64_OUT, "sm_90a")
    with pytest.raises(ArchError, match="mbarrier.try_wait needs sm_90"):
        inspect.ptx(kernels.mbarrier_try_wait, kernels.U64_OUT, "sm_80")


@pytest.mark.parametrize("kernel,ptx_text,opcode", [
    (kernels.mbarrier_init, "mbarrier.init.shared::cta.b64", "STS.64"),
    (kernels.mbarrier_arrive, "mbarrier.arrive.shared::cta.b64", "ATOMS.ARRIVE.64"),
    (kernels.mbarrier_test_wait, "mbarrier.test_wait.parity.shared::cta.b64", "LDS"),
], ids=["init", "arrive", "test_wait"])
def test_sm80_mbarrier_ops_assemble(kernel, ptx_text, opcode):
    """init, arrive and test_wait are sm_80 instructions (Ampere emulates them with shared ops)."""
    out = inspect.compile(kernel, kernels.U64_OUT, "sm_80")
    assert ptx_text in out.ptx and opcode in out.opcodes()


def _compile(fn, sig):
    return cuda.compile_ptx(fn, sig, cc=(9, 0, "a"))


def test_barrier_must_be_uint64_array():
    def k(out):
        bars = cuda.shared.array(1, numba.int32)
        mbarrier.init(bars, 1)

    with pytest.raises(OpArgumentError, match=r"mbarrier.init: argument 'bar' must be a uint64 shared array"):
        _compile(k, kernels.U64_OUT)


def test_barrier_must_be_an_array_not_an_element():
    def k(out):
        bars = cuda.shared.array(1, numba.uint64)
        mbarrier.arrive(bars[0])

    with pytest.raises(OpArgumentError, match=r"argument 'bar' must be a uint64 shared array.*got uint64"):
        _compile(k, kernels.U64_OUT)


def test_count_must_be_integer():
    def k(out):
        bars = cuda.shared.array(1, numba.uint64)
        mbarrier.init(bars, 1.5)

    with pytest.raises(OpArgumentError, match=r"argument 'count' must be an integer; got float64"):
        _compile(k, kernels.U64_OUT)


def test_coords_rank_is_1_to_5():
    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array(64, numba.float32)
        tma.load(desc, tile, (0, 0, 0, 0, 0, 0), bars)

    with pytest.raises(OpArgumentError, match=r"argument 'coords' must have 1 to 5 entries; got 6"):
        _compile(k, kernels.TMA_SIG)


def test_coords_must_be_integers():
    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array(64, numba.float32)
        tma.load(desc, tile, (0.0, 1), bars)

    with pytest.raises(OpArgumentError, match=r"argument 'coords' must be a tuple of integers"):
        _compile(k, kernels.TMA_SIG)


def test_descriptor_must_be_uint8_array():
    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array(64, numba.float32)
        tma.load(out, tile, (0, 0), bars)

    with pytest.raises(OpArgumentError, match=r"argument 'desc' must be a numba_tma.TensorMap or a uint8 device array"):
        _compile(k, kernels.TMA_SIG)


def test_wrong_argument_count():
    def k(out):
        fence.mbarrier_init(1)

    with pytest.raises(OpArgumentError, match=r"fence.mbarrier_init takes \(\): too many positional arguments"):
        _compile(k, kernels.U64_OUT)


@pytest.mark.parametrize("text,cc", [("sm_90a", (9, 0, "a")), ("100a", (10, 0, "a")), ("sm_80", (8, 0)),
                                     ("sm_120f", (12, 0, "f")), ((9, 0), (9, 0))])
def test_parse_arch(text, cc):
    assert parse_arch(text) == cc


def test_parse_arch_rejects_nonsense():
    with pytest.raises(ValueError, match="arch='hopper'"):
        parse_arch("hopper")


def test_toolkit_ptx_isa_is_what_nvvm_emits():
    major, minor = toolkit_ptx_isa()
    assert f".version {major}.{minor}" in inspect.ptx(kernels.mbarrier_init, kernels.U64_OUT, "sm_90a")


def test_keyword_arguments_bind_like_the_signature():
    def k(out):
        bars = cuda.shared.array(1, numba.uint64)
        mbarrier.init(bar=bars, count=1)
        mbarrier.arrive_expect_tx(bars, nbytes=128)

    ptx, _ = _compile(k, kernels.U64_OUT)
    assert "mbarrier.init.shared::cta.b64" in ptx and "mbarrier.arrive.expect_tx" in ptx


def test_unknown_keyword_is_named():
    def k(out):
        bars = cuda.shared.array(1, numba.uint64)
        mbarrier.init(bars, counts=1)

    with pytest.raises(OpArgumentError, match=r"mbarrier.init takes \(bar, count\): missing a required argument: 'count'"):
        _compile(k, kernels.U64_OUT)


@pytest.mark.parametrize("count", [0, 1 << 20])
def test_constant_count_out_of_range_is_refused(count):
    def k(out):
        bars = cuda.shared.array(1, numba.uint64)
        mbarrier.init(bars, count)

    with pytest.raises(OpArgumentError, match=r"'count' must be in \[1, 1048575\]"):
        _compile(k, kernels.U64_OUT)


def test_constant_im2col_offset_is_not_truncated():
    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        block = cuda.shared.array(256, numba.float32)
        tma.load_im2col(desc, block, (0, 0, 0, 0), (70000, 0), bars)

    with pytest.raises(OpArgumentError, match=r"'offsets\[0\]' must be in \[0, 255\] for a 4-D map \(8-bit offsets\); got 70000"):
        _compile(k, kernels.TMA_SIG)


def test_dst_must_be_contiguous():
    def k(desc, out):
        bars = cuda.shared.array(1, numba.uint64)
        tile = cuda.shared.array((32, 80), numba.float32)
        tma.load(desc, tile[:, 8:72], (0, 0), bars)

    with pytest.raises(OpArgumentError, match=r"'dst' must be a C-contiguous view"):
        _compile(k, kernels.TMA_SIG)


def test_inspect_takes_a_signature_string():
    assert "mbarrier.init" in inspect.ptx(kernels.mbarrier_init, "void(uint64[::1])")


def test_old_toolkit_is_refused_for_the_global_descriptor_form(monkeypatch):
    """The global-memory descriptor form needs PTX ISA 8.3 (its tensormap acquire fence); a
    toolkit emitting an older ISA gets a clear error instead of a ptxas failure."""
    from numba_tma.intrinsics import _core

    monkeypatch.setattr(_core, "toolkit_ptx_isa", lambda: (8, 2))
    with pytest.raises(ArchError, match=r"descriptor in global memory\) needs PTX ISA 8.3.*emits PTX ISA 8.2"):
        cuda.compile_ptx(kernels.tma_load_kernel(2), kernels.TMA_SIG, cc=(9, 0, "a"))
