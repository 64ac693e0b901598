"""A GEMM's fused epilogue on the wgmma fragment: ``wgmma.map`` (a device function per register at
its (r, c), inlined: no CALL in SASS, the HGMMAs as without it), ``wgmma.store_f16`` and
``wgmma.store_shared_f16`` (``cvt.rn.f16x2.f32``): their PTX written by hand, their refusals, and
their data checked against numpy in float64 on the GPU and under the simulator (both ways)."""

import math
import re

import numba
import numpy as np
import pytest
from numba import cuda

import numba_tma
from numba_tma import TensorMap, fence, mbarrier, tma, wgmma
from numba_tma.errors import OpArgumentError

SWIZZLE_128B_ROW = 128          # the C tile's rows: 64 float16


# -- the device functions mapped --------------------------------------------------------------------

@cuda.jit(device=True)
def _bias_relu(v, r, c, bias, scale):
    x = v + bias[c]
    if x < 0:
        x = 0.0
    return x * scale + r


@cuda.jit(device=True, **({} if numba_tma.ops.SIMULATOR else {"forceinline": True}))   # (not the simulator's)
def _residual(v, r, c, res):
    return v + res[r, c] * numba.float32(0.5)


@cuda.jit(device=True)
def _place(v, r, c, shift):
    return r * 1000 + c + shift[0] + shift[1]            # an int: converted to float32


def _coords(rows, cols, row0, col0):
    """(r, c) of each element of a 64 x N tile stored at (row0, col0), written from the layout
    (independently of the helpers)."""
    r = np.arange(64)[:, None] + row0 + np.zeros((1, cols), np.int64)
    c = np.arange(cols)[None, :] + col0 + np.zeros((64, 1), np.int64)
    return r, c


# -- CPU: the PTX written by hand -------------------------------------------------------------------

def _f32_registers(ptx):
    """``{register: value}`` of the float32 constants NVVM moves into registers (``mov.f32 %f, 0f...``)."""
    return {reg: float(np.uint32(int(bits, 16)).view(np.float32))
            for reg, bits in re.findall(r"mov\.f32\s+(%f\d+), 0f([0-9A-F]{8});", ptx)}


_CONSTANT_ACC = "acc = (numba.float32(1.0), numba.float32(2.0), numba.float32(3.0), numba.float32(4.0))\n"


def _compile(body, sig):
    from numba_tma import inspect

    source = "def k(out, tile):\n    " + body.replace("\n", "\n    ")
    scope = {"wgmma": wgmma, "numba": numba, "cuda": cuda, "_bias_relu": _bias_relu, "_residual": _residual,
             "_place": _place, "math": math}
    exec(source, scope)
    return inspect.compile(scope["k"], sig, "sm_90a")


@pytest.mark.parametrize("out", ["float16", "uint16", "int16"])
def test_store_f16_converts_each_pair_with_the_first_register_in_the_low_half(out):
    """``cvt.rn.f16x2.f32 d, a, b`` puts ``a`` in the upper half: register ``2h + 1`` is ``a``."""
    compiled = _compile(_CONSTANT_ACC + "wgmma.store_f16(acc, out, 0, 0)", f"void({out}[:, ::1], float32[::1])")
    regs = _f32_registers(compiled.ptx)
    f = {v: k for k, v in regs.items()}
    lines = re.findall(r"cvt\.rn\.f16x2\.f32 %r\d+, %f\d+, %f\d+;", compiled.ptx)
    assert [re.sub(r"%r\d+", "%r", line) for line in lines] == [
        f"cvt.rn.f16x2.f32 %r, {f[2.0]}, {f[1.0]};", f"cvt.rn.f16x2.f32 %r, {f[4.0]}, {f[3.0]};"]
    assert "bf16x2" not in compiled.ptx
    assert len(re.findall(r"\bst\.(global\.)?[ub]32", compiled.ptx)) == 2     # C-contiguous: one store per pair


def _shared_ptx():
    """A 64 x 64 fragment of the constants 1 to 32 stored by store_shared_f16 (NVVM moves each into a
    register of its own)."""
    from numba_tma import inspect

    constants = ", ".join(f"numba.float32({k + 1}.0)" for k in range(32))
    source = ("def k(desc, out):\n    t = cuda.shared.array(4096, numba.uint16, alignment=1024)\n"
              f"    acc = ({constants})\n    wgmma.store_shared_f16(acc, t, desc)\n"
              "    out[cuda.threadIdx.x] = t[cuda.threadIdx.x]\n")
    scope = {"wgmma": wgmma, "numba": numba, "cuda": cuda}
    exec(source, scope)
    desc_t = TensorMap.numba_type("float16", (64, 64), swizzle="128B")
    return inspect.compile(scope["k"], (desc_t, numba.uint16[::1]), "sm_90a").ptx


def test_store_shared_f16_stores_each_pair_converted_to_float16():
    ptx = _shared_ptx()
    f = {v: k for k, v in _f32_registers(ptx).items()}
    lines = [re.sub(r"%r\d+", "%r", x) for x in re.findall(r"cvt\.rn\.f16x2\.f32 %r\d+, %f\d+, %f\d+;", ptx)]
    want = [f"cvt.rn.f16x2.f32 %r, {f[2.0 * e + 2]}, {f[2.0 * e + 1]};" for e in range(16)]
    assert sorted(lines) == sorted(want)
    assert len(re.findall(r"st\.shared\.b32 \[%r\d+\], %r\d+;", ptx)) == 16
    assert "bf16x2" not in ptx


# -- CPU: map's calls inlined, the wgmmas unserialised ----------------------------------------------

def _mma_kernel(with_map):
    @cuda.jit
    def kernel(desc_a, desc_b, out, bias):
        ta = cuda.shared.array(64 * 64, numba.uint16, alignment=1024)
        tb = cuda.shared.array(128 * 64, numba.uint16, alignment=1024)
        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc_a.box_bytes + desc_b.box_bytes)
            tma.load(desc_a, ta, (0, 0), bars)
            tma.load(desc_b, tb, (0, 0), bars)
        mbarrier.wait(bars, 0)
        acc = wgmma.fence(wgmma.zeros(64))
        for k in range(4):
            acc = wgmma.mma_async(acc, wgmma.descriptor(ta, desc_a, k, 0), wgmma.descriptor(tb, desc_b, k, 0), 1)
        wgmma.commit_group()
        acc = wgmma.wait_group(0, acc)
        if with_map:
            acc = wgmma.map(acc, _bias_relu, 0, 0, bias, 2.0)
            acc = wgmma.map(acc, _residual, 0, 0, out)
        wgmma.store(acc, out, 0, 0)
    return kernel


def test_map_is_inlined_and_keeps_the_hgmmas_as_without_it():
    """No subroutine CALL (one makes ptxas serialise every wgmma, C7509): the same HGMMAs and the
    same warpgroup waits as the kernel without the map."""
    from numba_tma import inspect

    maps = tuple(TensorMap.numba_type("bfloat16", box, swizzle="128B") for box in ((64, 64), (128, 64)))
    sig = (*maps, numba.float32[:, ::1], numba.float32[::1])
    with_map, without = (inspect.compile(_mma_kernel(m), sig, "sm_90a") for m in (True, False))
    assert "CALL" not in with_map.sass and "call" not in with_map.ptx.replace("call.uni", "")
    for name in ("HGMMA.64x128x16.F32.BF16", "WARPGROUP.DEPBAR.LE", "WARPGROUP.ARRIVE"):
        counts = [len(re.findall(re.escape(name), c.sass)) for c in (with_map, without)]
        assert counts[0] == counts[1] and counts[0] >= 1, (name, counts)
    assert len(re.findall(r"HGMMA\.64x128x16\.F32\.BF16", with_map.sass)) == 4
    assert len(re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x0", with_map.sass)) == 1


def test_map_compiles_a_forceinline_twin_of_a_device_function_once():
    from numba_tma.intrinsics import wgmma as intrinsics

    twin = intrinsics.inlined(_bias_relu)
    assert twin is not _bias_relu and twin.targetoptions["forceinline"] and twin.py_func is _bias_relu.py_func
    assert intrinsics.inlined(_bias_relu) is twin
    assert intrinsics.inlined(_residual) is _residual          # already forceinline


def test_map_converts_an_integer_result_and_passes_a_tuple():
    compiled = _compile("acc = wgmma.map(wgmma.load(out, 0, 0, 8), _place, 3, 5, (1, 2))\nwgmma.store(acc, out, 0, 0)",
                        "void(float32[:, ::1], float32[::1])")
    assert "CALL" not in compiled.sass


@pytest.mark.parametrize("body,message", [
    ("acc = wgmma.map(wgmma.zeros(8), math.exp, 0, 0)",
     "wgmma.map: argument 'fn' must be a numba.cuda.jit(device=True) function, called as fn(v, r, c, *args)"),
    ("acc = wgmma.map(wgmma.zeros(8), KERNEL, 0, 0)",
     "wgmma.map: argument 'fn' must be a numba.cuda.jit(device=True) function"),
    ("acc = wgmma.map(wgmma.zeros(8), _bias_relu, 0, 0)",
     "wgmma.map: argument 'fn' must accept (float32, int32, int32) and return a number"),
    ("acc = wgmma.map(wgmma.zeros(8), _residual, 0, 0, tile)",
     "wgmma.map: argument 'fn' must accept (float32, int32, int32, array(float32, 1d, C)) and return a number"),
    ("acc = wgmma.map(wgmma.zeros(8), _pair, 0, 0)",
     "wgmma.map: argument 'fn' must accept (float32, int32, int32) and return a number; got "),
    ("acc = wgmma.map(wgmma.zeros(8, numba.int32), _residual, 0, 0, out)",
     "wgmma.map: argument 'acc' must be a float32 fragment"),
    ("acc = wgmma.map((numba.float32(0), numba.float32(1)), _residual, 0, 0, out)",
     "wgmma.map: argument 'acc' must be an accumulator fragment"),
    ("acc = wgmma.map(wgmma.zeros(8), _residual, 0.5, 0, out)", "wgmma.map: argument 'row' must be an integer"),
    ("wgmma.store_f16(wgmma.zeros(8), tile, 0, 0)",
     "wgmma.store_f16: argument 'out' must be a 2-D float16 array (or uint16 / int16: float16 bits)"),
    ("wgmma.store_f16(wgmma.zeros(8, numba.int32), out, 0, 0)",
     "wgmma.store_f16: argument 'acc' must be a float32 fragment"),
])
def test_the_epilogue_helpers_refuse_with_the_rule(body, message):
    from numba_tma import inspect

    @cuda.jit
    def kernel_fn(x):
        pass

    @cuda.jit(device=True)
    def pair(v, r, c):
        return v, v

    source = "def k(out, tile):\n    " + body.replace("\n", "\n    ")
    scope = {"wgmma": wgmma, "numba": numba, "cuda": cuda, "_bias_relu": _bias_relu, "_residual": _residual,
             "_pair": pair, "KERNEL": kernel_fn, "math": math}
    exec(source, scope)
    with pytest.raises(OpArgumentError, match=re.escape(message)):
        inspect.ptx(scope["k"], "void(float32[:, ::1], float32[::1])")


def test_store_shared_f16_refuses_a_map_of_another_layout():
    from numba_tma import inspect

    def k(desc, out):
        t = cuda.shared.array(4096, numba.uint16, alignment=1024)
        wgmma.store_shared_f16(wgmma.zeros(32), t, desc)

    with pytest.raises(OpArgumentError, match=re.escape("wgmma.store_shared_f16: argument 'desc' must be a 16-bit "
                                                        "map with box (64, 64) and swizzle '128B'")):
        inspect.ptx(k, (TensorMap.numba_type("float32", (64, 32), swizzle="128B"), numba.uint16[::1]))


# -- data: the GPU and the simulator (both ways) ----------------------------------------------------

@pytest.mark.both_ways
@pytest.mark.parametrize("n, row0, col0", [(32, 0, 0), (64, 3, 8)])
def test_map_matches_numpy(n, row0, col0):
    """relu(v + bias[c]) * 2 + r, then v + res[r, c] / 2, at the elements' places (row0, col0) on."""
    count = n // 2

    @cuda.jit
    def kernel(tile, bias, res, out, places):
        acc = wgmma.load(tile, 0, 0, count)
        acc = wgmma.map(acc, _bias_relu, row0, col0, bias, 2.0)
        acc = wgmma.map(acc, _residual, row0, col0, res)
        wgmma.store(acc, out, row0, col0)
        wgmma.store(wgmma.map(acc, _place, row0, col0, (1, 2)), places, row0, col0)

    rng = np.random.default_rng(n)
    tile = rng.standard_normal((64, n)).astype(np.float32)
    bias = rng.standard_normal(col0 + n).astype(np.float32)
    res = rng.standard_normal((row0 + 64, col0 + n)).astype(np.float32)
    outs = [cuda.to_device(np.full((row0 + 64, col0 + n), np.nan, np.float32)) for _ in range(2)]
    kernel[1, 128](cuda.to_device(tile), cuda.to_device(bias), cuda.to_device(res), *outs)
    out, places = (o.copy_to_host()[row0:, col0:] for o in outs)

    r, c = _coords(64, n, row0, col0)
    x = tile.astype(np.float64) + bias[c].astype(np.float64)
    want = np.maximum(x, 0) * 2 + r + res[r, c].astype(np.float64) * 0.5
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(places, (r * 1000 + c + 3).astype(np.float32))


def _f16_bits(x):
    return np.asarray(x, np.float32).astype(np.float16).view(np.uint16)


@pytest.mark.both_ways
@pytest.mark.parametrize("dtype", [np.float16, np.uint16, np.int16])
def test_store_f16_matches_numpy_with_ragged_edges(dtype):
    @cuda.jit
    def kernel(tile, out):
        wgmma.store_f16(wgmma.load(tile, 0, 0, 32), out, 0, 0)

    rng = np.random.default_rng(7)
    tile = (rng.standard_normal((64, 64)) * 100).astype(np.float32)
    tile[0, :4] = [70000.0, -70000.0, 2.0 ** -20, 1.0 + 2.0 ** -11]   # beyond float16: inf; tiny: subnormal; a tie
    sentinel = np.array(0x7E00, np.uint16).view(dtype)              # a NaN's bits, written nowhere else
    out = cuda.to_device(np.full((50, 61), sentinel, dtype))         # ragged: rows 50+, cols 61+ skipped
    kernel[1, 128](cuda.to_device(tile), out)
    got = out.copy_to_host().view(np.uint16)
    np.testing.assert_array_equal(got, _f16_bits(tile[:50, :61]))
    assert got[0, 0] == 0x7C00 and got[0, 1] == 0xFC00 and got[0, 3] == 0x3C00


@pytest.mark.both_ways
@pytest.mark.parametrize("first, count", [(0, 2), (1, 1)])
def test_store_shared_f16_writes_the_swizzled_boxes(first, count):
    """The boxes of a 64 x 128 fragment as float16 in the 128B-swizzled layout of a (64, 64) box:
    byte ``o`` of a box at ``o ^ (((o >> 7) & 7) << 4)`` (the map's swizzle, written here)."""
    boxes = count
    words = boxes * 64 * 64

    @cuda.jit
    def kernel(tile, desc, out):
        staging = cuda.shared.array(2 * 64 * 64, numba.uint16, alignment=1024)
        for i in range(cuda.threadIdx.x, 2 * 64 * 64, 128):
            staging[i] = 0x7E00
        cuda.syncthreads()
        wgmma.store_shared_f16(wgmma.load(tile, 0, 0, 64), staging, desc, first, count)
        cuda.syncthreads()
        for i in range(cuda.threadIdx.x, words, 128):
            out[i] = staging[i]

    rng = np.random.default_rng(first)
    tile = rng.standard_normal((64, 128)).astype(np.float32)
    c = np.zeros((64, 128), np.uint16)
    desc = TensorMap.tiled(cuda.to_device(c.view(np.float16)), (64, 64), swizzle="128B", data_type="float16")
    out = cuda.to_device(np.zeros(words, np.uint16))
    kernel[1, 128](cuda.to_device(tile), desc, out)
    raw = out.copy_to_host().view(np.uint8)
    want = _f16_bits(tile)
    for b in range(boxes):
        for row in range(64):
            for col in range(64):
                o = row * SWIZZLE_128B_ROW + 2 * col
                o ^= ((o >> 7) & 7) << 4
                at = b * 64 * SWIZZLE_128B_ROW + o
                got = raw[at:at + 2].view(np.uint16)[0]
                assert got == want[row, 64 * (first + b) + col], (b, row, col)



# -- the numba-cuda-mlir host -----------------------------------------------------------------------

def test_numba_cuda_mlir_stores_float16_and_refuses_map_as_numba_cuda_only():
    pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed (the mlir extra)")
    from numba_tma import inspect
    from test_mlir_host import MLIR_FRAGMENTS_SIG, MLIR_SIG, _mlir_kernel, _with_tiles

    call = ("x = wgmma.load(c, 0, 0, 32)\nwgmma.store_f16(x, c16, 0, 0)\n"
            "wgmma.store_shared_f16(x, at(smem, 0), desc)")
    ptx = inspect.compile(_mlir_kernel(call, "f16", _with_tiles()), MLIR_FRAGMENTS_SIG, "sm_90a", host="mlir").ptx
    # the 16 conversions (one per pair, shared by both stores: the same asm on the same registers)
    assert len(re.findall(r"cvt\.rn\.f16x2\.f32 %r\d+, %f\d+, %f\d+;", ptx)) == 16 and "bf16x2" not in ptx
    assert len(re.findall(r"st\.shared\.b32", ptx)) == 16
    with pytest.raises(OpArgumentError, match=re.escape("numba_tma: wgmma.map: numba-cuda only")):
        inspect.compile(_mlir_kernel("acc = wgmma.map(wgmma.zeros(8), out, 0, 0)"), MLIR_SIG, "sm_90a", host="mlir")
