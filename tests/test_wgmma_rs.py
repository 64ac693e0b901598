"""wgmma with A from registers (``wgmma.mma_async_rs``) fed by ``wgmma.a_fragment``: a float32
product turned into the next MMA's A operand without shared memory (attention's P @ V), checked
against numpy in float64 on the GPU and under the simulator (both ways), bf16, f16 and fp8; the
fragment's registers checked one by one against the layout the docstring gives, written out here
by hand (fp8's four bytes a register gathered from the quad, and its rounding: ties to even,
saturation, -0, NaN, codes worked out by hand); the helper's refusals and its instructions (four
F2FP packs; fp8's eight shuffles a K step; no local memory)."""

import re

import numba
import numpy as np
import pytest
from numba import cuda

import half_floats
from half_floats import finite_fp8_codes, fp8_round, fp8_values
from numba_tma import TensorMap, fence, inspect, mbarrier, ops, testing, tma, wgmma
from numba_tma.errors import OpArgumentError

N = 128                # the P @ V product: 64 x N, V held N x 64 (K-major B)
V_ELEMENTS = N * 64    # (a constant: cuda.shared.array takes no expression)
V_BYTES = N * 128      # fp8: V held N x 128 (K 128: four K steps of 32)
O_REGISTERS = N // 2   # the 64 x N product's registers a thread


def _pv_kernel(dtype):
    """O = S @ V with S (a float32 64 x 64 fragment, or 64 x 128 for fp8) converted K step by K step
    (four of 16 columns, or of 32) into the register A of four MMAs, V (N x 128 bytes, K-major) by TMA."""
    fp8 = dtype in ("e4m3", "e5m2")
    element, elements = (numba.uint8, V_BYTES) if fp8 else (numba.uint16, V_ELEMENTS)
    s_registers = 64 if fp8 else 32

    @cuda.jit
    def kernel(s_tile, desc_v, out):
        tv = cuda.shared.array(elements, element, alignment=1024)
        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc_v.box_bytes)
            tma.load(desc_v, tv, (0, 0), bars)
        mbarrier.wait(bars, 0)
        s = wgmma.load(s_tile, 0, 0, s_registers)
        p0, p1 = wgmma.a_fragment(s, 0, dtype), wgmma.a_fragment(s, 1, dtype)     # every conversion before the fence
        p2, p3 = wgmma.a_fragment(s, 2, dtype), wgmma.a_fragment(s, 3, dtype)
        o = wgmma.fence(wgmma.zeros(O_REGISTERS))
        o = wgmma.mma_async_rs(o, p0, wgmma.descriptor(tv, desc_v, 0, 0), 0, dtype=dtype)
        o = wgmma.mma_async_rs(o, p1, wgmma.descriptor(tv, desc_v, 1, 0), 1, dtype=dtype)
        o = wgmma.mma_async_rs(o, p2, wgmma.descriptor(tv, desc_v, 2, 0), 1, dtype=dtype)
        o = wgmma.mma_async_rs(o, p3, wgmma.descriptor(tv, desc_v, 3, 0), 1, dtype=dtype)
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


@pytest.mark.both_ways
@pytest.mark.parametrize("dtype", ["e4m3", "e5m2"])
def test_an_fp8_product_feeds_the_next_mma_from_registers(dtype):
    """O = fp8(S) @ V: S a float32 64 x 128 fragment, converted 32 columns at a time (a_fragment's
    quad shuffles) into the register A of four m64n128k32 MMAs with V (N x 128 fp8, K-major); under
    the simulator e4m3 (e5m2 differs in the conversion's constants, checked on the GPU)."""
    if testing.WAY == "simulator" and dtype == "e5m2":
        pytest.skip("under the simulator e4m3 covers the exchange (e5m2: the GPU half)")
    rng = np.random.default_rng(9)
    s = (rng.standard_normal((64, 128)) * 4).astype(np.float32)
    v = finite_fp8_codes(dtype, rng, (N, 128), top=8.0)
    desc_v = TensorMap.tiled(cuda.to_device(v), (N, 128), swizzle="128B", data_type="uint8")
    out = cuda.to_device(np.full((64, N), np.nan, np.float32))
    _pv_kernel(dtype)[1, 128](cuda.to_device(s), desc_v, out)
    want = fp8_values(fp8_round(s, dtype), dtype) @ fp8_values(v, dtype).T
    # Hopper adds fp8 products with about 13-14 bits of mantissa, each K step aligned to its largest
    # term (tests/test_gpu_wgmma.py): the error bound is of the largest output, not of each
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=0, atol=2e-3 * np.abs(want).max())


@cuda.jit
def _fp8_fragment_registers(s_tile, regs):
    s = wgmma.load(s_tile, 0, 0, 64)
    p = wgmma.a_fragment(s, 1, "e4m3")                    # columns 32 to 63, e4m3
    t = cuda.threadIdx.x
    regs[t, 0], regs[t, 1], regs[t, 2], regs[t, 3] = p[0], p[1], p[2], p[3]


@pytest.mark.both_ways
def test_an_fp8_a_fragment_holds_the_documented_bytes():
    """Thread t (warp w, lane l) register i of a_fragment(s, 1, "e4m3"): byte b is S[16 w + l // 4 +
    8 (i % 2), 32 + 4 (l % 4) + 16 (i // 2) + b] as e4m3 (the ISA's register A layout of
    m64nNk32: four consecutive K of one row a register).  Row 0's first four of the step hold
    values whose codes are worked out by hand: 1.0625 (halfway between 1 = 0x38 and 1.125 = 0x39:
    the even 0x38), 1.07 (0x39), 500 (past 448: 0x7E) and -0.0 (0x80); row 9's first, NaN (0x7F)."""
    s = np.random.default_rng(10).standard_normal((64, 128)).astype(np.float32)
    s[0, 32:36] = [1.0625, 1.07, 500.0, -0.0]
    s[9, 32] = np.nan
    regs = cuda.to_device(np.zeros((128, 4), np.uint32))
    _fp8_fragment_registers[1, 128](cuda.to_device(s), regs)
    got = regs.copy_to_host()
    assert got[0, 0] == 0x807E3938 and got[4, 1] & 0xFF == 0x7F, (hex(got[0, 0]), hex(got[4, 1]))
    codes = fp8_round(np.nan_to_num(s, nan=0.0), "e4m3").astype(np.uint32)
    want = np.zeros((128, 4), np.uint32)
    for t in range(128):
        w, lane = t // 32, t % 32
        for i in range(4):
            r, c = 16 * w + lane // 4 + 8 * (i % 2), 32 + 4 * (lane % 4) + 16 * (i // 2)
            want[t, i] = codes[r, c] | codes[r, c + 1] << 8 | codes[r, c + 2] << 16 | codes[r, c + 3] << 24
    want[4, 1] = want[4, 1] & 0xFFFFFF00 | 0x7F
    np.testing.assert_array_equal(got, want)


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
    ("wgmma.a_fragment(s, 2, 'e4m3')", "argument 'kk' must be a constant in [0, 2): a K step of 32 columns of the 64"),
    ("wgmma.a_fragment(s, 0, 'tf32')", "argument 'dtype' must be 'bf16', 'f16', 'e4m3' or 'e5m2'"),
])
def test_a_fragment_refuses_what_it_cannot_convert(body, message):
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        _compile(body)


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
@pytest.mark.parametrize("dtype, element, mma", [("bf16", "bfloat16", "HGMMA.64x128x16.F32.BF16"),
                                                 ("e4m3", "uint8", "QGMMA.64x128x32.F32.E4M3.E4M3")])
def test_the_gpu_tests_kernels_issue_their_mmas_from_registers(dtype, element, mma):
    """The kernels the GPU half runs compile here (a kernel only the GPU compiled broke unseen
    twice): four MMAs with A from registers, no subroutine call."""
    box = (N, 64) if dtype == "bf16" else (N, 128)
    sig = (numba.float32[:, :], TensorMap.numba_type(element, box, swizzle="128B"), numba.float32[:, :])
    sass = inspect.compile(_pv_kernel(dtype), sig, "sm_90a").sass
    mmas = re.findall(rf"{re.escape(mma)} R\d+, R\d+, gdesc", sass)
    assert len(mmas) == 4 and "CALL" not in sass, sorted(set(re.findall(r"[HQ]GMMA\S*", sass)))


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
def test_a_fragment_is_four_packs_in_registers():
    """Four cvt.rn.bf16x2.f32 (F2FP packs), no local memory (the fragment stays in registers)."""
    compiled = _compile("wgmma.a_fragment(s, 2)")
    assert compiled.sass.count("F2FP.BF16.F32.PACK_AB") == 4 and "LDL" not in compiled.sass and \
        "STL" not in compiled.sass, sorted(set(compiled.opcodes()))


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
def test_an_fp8_a_fragment_is_eight_packs_and_eight_shuffles():
    """An fp8 K step: eight e4m3 pair packs, eight index shuffles within the quad, a byte permute a
    register, no local memory."""
    compiled = _compile("wgmma.a_fragment(s, 1, 'e4m3')")
    counts = compiled.opcode_counts()
    packs = sum(n for o, n in counts.items() if o.startswith("F2FP") and "E4M3" in o)
    assert packs == 8 and counts["SHFL.IDX"] == 8 and sum(n for o, n in counts.items() if o.startswith("PRMT")) >= 4 \
        and "LDL" not in compiled.sass and "STL" not in compiled.sass, counts


def test_the_simulator_twin_refuses_as_the_compiled_helper():
    """The simulator's a_fragment says what the compiled one says (the GPU half of the suite checks
    the compiled messages)."""
    from numba_tma.simulator import wgmma as twin

    acc = twin.Fragment([0.0] * 32)
    with pytest.raises(OpArgumentError, match=r"argument 'kk' must be a constant in \[0, 4\)"):
        twin.a_fragment(acc, 4)
    with pytest.raises(OpArgumentError, match=r"argument 'dtype' must be 'bf16', 'f16', 'e4m3' or 'e5m2'"):
        twin.a_fragment(acc, 0, "tf32")
    with pytest.raises(OpArgumentError, match=r"argument 'kk' must be a constant in \[0, 2\): a K step of 32 columns"):
        twin.a_fragment(acc, 2, "e5m2")
    assert twin.a_fragment(twin.Fragment([1.0, -2.0] * 16), 0) == (0xC0003F80,) * 4     # bf16 1.0 low, -2.0 high
