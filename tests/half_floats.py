"""16-bit float codes written from the formats (not by the library): float32 -> bf16 or f16 bits,
rounded to nearest even, and back to float64; the wgmma and attention tests read their data
through them."""

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
