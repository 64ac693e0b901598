"""Float codes written from the formats (not by the library): float32 -> bf16 or f16 bits,
rounded to nearest even, and back to float64; fp8 (e4m3, e5m2) codes as float64, random finite
ones, and float32 rounded to them; the wgmma, GEMM and attention tests read their data through
them."""

import numpy as np


def bits(x, dtype):
    """``x`` as ``dtype`` ("bf16" or "f16") bits in uint16, rounded to nearest even."""
    x = np.asarray(x, np.float32)
    if dtype == "f16":
        return x.astype(np.float16).view(np.uint16)
    b = np.ascontiguousarray(x).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def values(codes, dtype):
    """``dtype`` bits as float64."""
    codes = np.asarray(codes)
    if dtype == "f16":
        return codes.view(np.float16).astype(np.float64)
    return (codes.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def fp8_values(codes, kind):
    """e4m3 (bias 7, no infinities, S.1111.111 NaN) or e5m2 (bias 15) codes as float64."""
    codes = np.asarray(codes, np.int64)
    exp_bits, bias = (4, 7) if kind == "e4m3" else (5, 15)
    man_bits = 7 - exp_bits
    sign = np.where(codes >> 7, -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    normal = (1 + m / (1 << man_bits)) * np.exp2(e - bias)
    sub = (m / (1 << man_bits)) * 2.0 ** (1 - bias)
    return sign * np.where(e == 0, sub, normal)


def finite_fp8(kind):
    """Which of the 256 fp8 codes are finite values (e4m3: all but S.1111.111; e5m2: those whose
    exponent is not all ones)."""
    codes = np.arange(256)
    return (codes & 0x7F) != 0x7F if kind == "e4m3" else (codes & 0x7C) != 0x7C


def finite_fp8_codes(kind, rng, shape, top=None):
    """Random fp8 codes of finite values of at most ``top`` in magnitude."""
    ok = finite_fp8(kind)
    if top is not None:
        ok &= np.abs(fp8_values(np.arange(256), kind)) <= top
    return rng.choice(np.flatnonzero(ok).astype(np.uint8), shape)


def fp8_round(x, kind):
    """float32 values as the fp8 codes of the nearest finite value of their sign (a tie: the even
    code; beyond the largest finite value: it), by search over all 256 codes (the test's own
    model of ``cvt.rn.satfinite``)."""
    shape = np.shape(x)
    x = np.asarray(x, np.float32).astype(np.float64).ravel()
    codes = np.flatnonzero(finite_fp8(kind))
    gaps = np.abs(fp8_values(codes, kind)[None, :] - x[:, None])
    gaps[(codes[None, :] >> 7) != np.signbit(x)[:, None]] = np.inf      # a code of the value's own sign
    nearest = gaps == gaps.min(axis=1, keepdims=True)
    even = nearest & (codes[None, :] % 2 == 0)
    pick = np.where(even.any(axis=1), even.argmax(axis=1), nearest.argmax(axis=1))
    return codes[pick].astype(np.uint8).reshape(shape)
