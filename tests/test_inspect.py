"""numba_tma.inspect compiles and links like numba, for any arch, with no GPU."""

import numba
import pytest
from numba import cuda
from numba.cuda import types

from numba_tma import inspect, wgmma
from numba_tma.errors import RegisterCountError


def half_math(a, out):
    i = cuda.grid(1)
    out[i] = a[i] + a[i] * a[i]          # fp16 operators: numba links its cuda_fp16 shims


def uses_libdevice(a, out):
    i = cuda.grid(1)
    out[i] = numba.float32(abs(a[i])) ** 0.5 + cuda.libdevice.expf(a[i])


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_fp16_arithmetic_links_numbas_shims(arch):
    out = inspect.compile(half_math, (types.float16[::1], types.float16[::1]), arch)
    assert out.cubin[:4] == b"\x7fELF"
    assert any(op.startswith("HFMA2") or op.startswith("HADD2") or op.startswith("HMUL2") for op in out.opcodes())


def test_libdevice_functions_link():
    out = inspect.compile(uses_libdevice, (numba.float32[::1], numba.float32[::1]), "sm_90a")
    assert out.cubin[:4] == b"\x7fELF" and "MUFU.EX2" in out.opcodes()


def test_cubin_and_sass_are_made_only_when_read(monkeypatch):
    calls = []
    monkeypatch.setattr(inspect, "sass", lambda cubin: calls.append(cubin) or "")
    out = inspect.compile(half_math, (types.float16[::1], types.float16[::1]), "sm_90a", fastmath=True)
    assert "cubin" not in vars(out) and not calls       # PTX only so far
    assert out.opcodes() == set() and len(calls) == 1   # SASS on first use, once
    out.opcodes()
    assert len(calls) == 1


def test_options_reach_numbas_compiler():
    plain = inspect.ptx(half_math, (types.float16[::1], types.float16[::1]), "sm_90a")
    debug = inspect.ptx(half_math, (types.float16[::1], types.float16[::1]), "sm_90a", debug=True, opt=False)
    assert ".loc" in debug and plain != debug


def test_kernels_assembled_together_each_get_their_own_sass():
    from numba_tma import bulk, mbarrier

    def arrive(out):
        bars = cuda.shared.array(1, numba.uint64)
        mbarrier.arrive(bars)

    def store(out):
        buf = cuda.shared.array(64, numba.float32)
        bulk.store(out, buf, 256)

    sig = (numba.float32[::1],)
    together = [inspect.compile(arrive, sig, "sm_90a"), inspect.compile(store, sig, "sm_90a")]
    inspect.assemble_together(together)
    first, second = (k.opcodes() for k in together)
    assert "SYNCS.ARRIVE.TRANS64.A1T0" in first and "UBLKCP.G.S" not in first
    assert "UBLKCP.G.S" in second and not any(o.startswith("SYNCS.ARRIVE") for o in second)
    assert together[0].cubin == together[1].cubin          # one link


def _warp_specialised(out):
    """Warpgroup 0 gives registers back, warpgroups 1 and 2 take them (the GEMM's producer and consumers)."""
    if cuda.threadIdx.x // 128 == 0:
        wgmma.setmaxnreg(40, "dec")
    else:
        wgmma.setmaxnreg(232, "inc")
    out[cuda.threadIdx.x] = cuda.threadIdx.x // 128


def _control(out):
    out[cuda.threadIdx.x] = cuda.threadIdx.x // 128


def test_setmaxnreg_takes_effect_linked_whole_program():
    """A kernel calling setmaxnreg links as LTO-IR (nvJitLink -lto, whole program) and its SASS has
    USETMAXREG; the same PTX linked relocatable, as numba-cuda links other kernels, loses it (ptxas
    C7504), and a kernel without the op links as before, with no USETMAXREG."""
    sig = (numba.int32[::1],)
    out = inspect.compile(_warp_specialised, sig, "sm_90a", launch_bounds=(384, 1))
    assert [type(c).__name__ for c in out._codes] == ["LTOIR"]
    assert {"USETMAXREG.DEALLOC.CTAPOOL", "USETMAXREG.TRY_ALLOC.CTAPOOL"} <= out.opcodes()
    with pytest.raises(RegisterCountError, match=r"\(C7504\).*'setmaxnreg' ignored to maintain compatibility"):
        inspect.link(out.ptx, "sm_90a")
    control = inspect.compile(_control, sig, "sm_90a", launch_bounds=(384, 1))
    assert control._codes == [control.ptx] and not any(o.startswith("USETMAXREG") for o in control.opcodes())


def test_a_jit_kernels_launch_bounds_apply_and_setmaxnreg_without_them_is_refused():
    sig = (numba.int32[::1],)
    bounded = cuda.jit(launch_bounds=(384, 1))(_warp_specialised)
    assert ".minnctapersm 1" in inspect.ptx(bounded, sig) and "USETMAXREG.DEALLOC.CTAPOOL" in \
        inspect.compile(bounded, sig).opcodes()
    unbounded = inspect.compile(_warp_specialised, sig, "sm_90a", launch_bounds=384)   # no blocks per SM
    with pytest.raises(RegisterCountError, match=r"\(C7508\).*launch_bounds=\(threads, min_blocks\)"):
        unbounded.cubin


def test_a_jit_kernels_fastmath_applies():
    """inspect compiles what the launch compiles: a ``@cuda.jit(fastmath=True)`` kernel's float
    division is the approximate one (an IEEE ``div.rn.f32`` without it)."""
    def divide(out, x):
        out[0] = x / out[1]

    sig = (numba.float32[::1], numba.float32)
    assert "div.approx" in inspect.ptx(cuda.jit(fastmath=True)(divide), sig, "sm_90a")
    assert "div.rn.f32" in inspect.ptx(cuda.jit(divide), sig, "sm_90a")
