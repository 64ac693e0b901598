"""wgmma with A from registers (``wgmma.mma_async_rs``) fed by ``wgmma.a_fragment``: a float32
product turned into the next MMA's A operand without shared memory (attention's P @ V), checked
against numpy in float64 on the GPU and under the simulator (both ways); the fragment's registers
checked one by one against the layout the docstring gives, written out here by hand; the
helper's refusals and its instructions (four F2FP packs, no local memory)."""

import numba
import numpy as np
import pytest
from numba import cuda

import half_floats
from numba_tma import TensorMap, fence, inspect, mbarrier, ops, tma, wgmma
from numba_tma.errors import OpArgumentError

N = 128                # the P @ V product: 64 x N, V held N x 64 (K-major B)
V_ELEMENTS = N * 64    # (a constant: cuda.shared.array takes no expression)


def _pv_kernel(dtype):
    @cuda.jit
    def kernel(s_tile, desc_v, out):
        tv = cuda.shared.array(V_ELEMENTS, numba.uint16, alignment=1024)
        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc_v.box_bytes)
            tma.load(desc_v, tv, (0, 0), bars)
        mbarrier.wait(bars, 0)
        s = wgmma.load(s_tile, 0, 0, 32)                   # a 64 x 64 float32 product (S)
        o = wgmma.fence(wgmma.zeros(N // 2))
        o = wgmma.mma_async_rs(o, wgmma.a_fragment(s, 0, dtype), wgmma.descriptor(tv, desc_v, 0, 0), 0, dtype=dtype)
        o = wgmma.mma_async_rs(o, wgmma.a_fragment(s, 1, dtype), wgmma.descriptor(tv, desc_v, 1, 0), 1, dtype=dtype)
        o = wgmma.mma_async_rs(o, wgmma.a_fragment(s, 2, dtype), wgmma.descriptor(tv, desc_v, 2, 0), 1, dtype=dtype)
        o = wgmma.mma_async_rs(o, wgmma.a_fragment(s, 3, dtype), wgmma.descriptor(tv, desc_v, 3, 0), 1, dtype=dtype)
        wgmma.commit_group()
        o = wgmma.wait_group(0, o)
        wgmma.store(o, out, 0, 0)
    return kernel


@pytest.mark.both_ways
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_a_product_feeds_the_next_mma_from_registers(dtype):
    """O = half(S) @ V: S a float32 64 x 64 fragment, converted K step by K step (a_fragment) into
    the register A of four m64n128k16 MMAs (mma_async_rs) with V from shared memory."""
    rng = np.random.default_rng(7)
    s = rng.standard_normal((64, 64)).astype(np.float32)
    v = half_floats.bits(rng.standard_normal((N, 64)), dtype)                 # V as N x K (K-major B)
    desc_v = TensorMap.tiled(cuda.to_device(v), (N, 64), swizzle="128B",
                             data_type="float16" if dtype == "f16" else "bfloat16")
    out = cuda.to_device(np.full((64, N), np.nan, np.float32))
    _pv_kernel(dtype)[1, 128](cuda.to_device(s), desc_v, out)
    want = half_floats.values(half_floats.bits(s, dtype), dtype) @ half_floats.values(v, dtype).T
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-5, atol=1e-5)


@cuda.jit
def _fragment_registers(s_tile, regs):
    s = wgmma.load(s_tile, 0, 0, 32)
    p = wgmma.a_fragment(s, 1)                            # columns 16 to 31, bf16
    t = cuda.threadIdx.x
    regs[t, 0], regs[t, 1], regs[t, 2], regs[t, 3] = p[0], p[1], p[2], p[3]


@pytest.mark.both_ways
def test_a_fragment_holds_the_documented_elements():
    """Thread t (warp w, lane l) register i of a_fragment(s, 1): S[16 w + l // 4 + 8 (i % 2),
    16 + 2 (l % 4) + 8 (i // 2)] in the low half and the next column in the high half, as bf16
    bits (the register A layout of wgmma's m64nNk16, which mma.sync's m16n8k16 A repeats per warp)."""
    s = np.random.default_rng(8).standard_normal((64, 64)).astype(np.float32)
    regs = cuda.to_device(np.zeros((128, 4), np.uint32))
    _fragment_registers[1, 128](cuda.to_device(s), regs)
    bits = half_floats.bits(s, "bf16").astype(np.uint32)
    want = np.zeros((128, 4), np.uint32)
    for t in range(128):
        w, lane = t // 32, t % 32
        for i in range(4):
            r, c = 16 * w + lane // 4 + 8 * (i % 2), 16 + 2 * (lane % 4) + 8 * (i // 2)
            want[t, i] = bits[r, c] | bits[r, c + 1] << 16
    np.testing.assert_array_equal(regs.copy_to_host(), want)


def _compile(body, count=32):
    source = f"def kernel(s_tile, regs):\n    s = wgmma.load(s_tile, 0, 0, {count})\n    k = regs.shape[0]\n" \
             f"    p = {body}\n    regs[0] = p[0] + p[1] + p[2] + p[3]\n"
    scope = {"wgmma": wgmma}
    exec(source, scope)   # noqa: S102 - the test's own source
    return inspect.compile(cuda.jit(scope["kernel"]), (numba.float32[:, :], numba.uint32[:]), "sm_90a")


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
@pytest.mark.parametrize("body, message", [
    ("wgmma.a_fragment(s, 4)", "argument 'kk' must be a constant in [0, 4): a K step of 16 columns of the 64 x 64"),
    ("wgmma.a_fragment(s, k)", "argument 'kk' must be a constant in [0, 4)"),
    ("wgmma.a_fragment(s, 0, 'e4m3')", "argument 'dtype' must be 'bf16' or 'f16' (an fp8 A fragment needs its bytes"),
])
def test_a_fragment_refuses_what_it_cannot_convert(body, message):
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        _compile(body)


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
def test_a_fragment_is_four_packs_in_registers():
    """Four cvt.rn.bf16x2.f32 (F2FP packs), no local memory (the fragment stays in registers)."""
    compiled = _compile("wgmma.a_fragment(s, 2)")
    assert compiled.sass.count("F2FP.BF16.F32.PACK_AB") == 4 and "LDL" not in compiled.sass and \
        "STL" not in compiled.sass, sorted(set(compiled.opcodes()))


def test_the_simulator_twin_refuses_as_the_compiled_helper():
    """The simulator's a_fragment says what the compiled one says (the GPU half of the suite checks
    the compiled messages)."""
    from numba_tma.simulator import wgmma as twin

    acc = twin.Fragment([0.0] * 32)
    with pytest.raises(OpArgumentError, match=r"argument 'kk' must be a constant in \[0, 4\)"):
        twin.a_fragment(acc, 4)
    with pytest.raises(OpArgumentError, match=r"argument 'dtype' must be 'bf16' or 'f16'"):
        twin.a_fragment(acc, 0, "e5m2")
    assert twin.a_fragment(twin.Fragment([1.0, -2.0] * 16), 0) == (0xC0003F80,) * 4     # bf16 1.0 low, -2.0 high
