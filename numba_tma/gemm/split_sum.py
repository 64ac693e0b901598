"""Split-K's second kernel: the splits' float32 partials (a (splits, M, N) workspace the GEMM kernel
wrote, ``out="workspace"``) summed in a fixed order — split 0, then 1, ... — so that every call
gives the same bits, then the fused epilogue and the cast to the output's type.

A split-K call costs the workspace's memory (4 splits M N bytes) and its traffic (written once,
read once): small beside B for the shapes split-K serves (128 x 8192 x 8192: 4 MB a split against
128 MB of B).
"""

import functools

import numpy as np
from numba import cuda
from numba.cuda import libdevice, types

from ..ops import BACKEND

THREADS = 256


def _bf16_bits(v):
    """float32 -> bfloat16 bits, rounding to nearest even (run as Python: the simulator)."""
    bits = int(np.array([v], np.float32).view(np.uint32)[0])
    if v != v:
        return np.uint16(0x7FC0)
    return np.uint16(((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF)


def _compiled_bf16_bits():
    @BACKEND.device_function
    def bf16_bits(v):
        if v != v:
            return types.uint16(0x7FC0)             # a quiet NaN
        bits = types.uint32(libdevice.float_as_int(v))
        return types.uint16((bits + types.uint32(0x7FFF) + ((bits >> 16) & types.uint32(1))) >> 16)
    return bf16_bits


bf16_bits = BACKEND.twin(_bf16_bits, _compiled_bf16_bits)
"""A float32 as the bits of the nearest bfloat16 (ties to even), in a kernel."""


@BACKEND.device_function
def _as_f16(v):
    return types.float16(v)


@BACKEND.device_function
def _as_f32(v):
    return v


CASTS = {"bf16": bf16_bits, "f16": _as_f16, "f32": _as_f32}


@functools.lru_cache(maxsize=None)
def summing(epilogue, out_dtype):
    """The kernel ``(partials, out, epilogue_args)`` summing ``partials`` (splits, M, N) into ``out``
    (M x N of ``out_dtype``: bf16 as uint16 bits, f16, f32) through ``epilogue`` (the composed
    device function, or None); launched with any grid of THREADS-thread blocks."""
    has_epilogue = epilogue is not None
    cast = CASTS[out_dtype]

    @cuda.jit
    def split_sum(partials, out, epilogue_args):
        splits, rows, cols = partials.shape
        e = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        while e < rows * cols:
            r = e // cols
            c = e - r * cols
            v = partials[0, r, c]
            for s in range(1, splits):
                v += partials[s, r, c]
            if has_epilogue:
                v = epilogue(v, types.int32(r), types.int32(c), epilogue_args)
            out[r, c] = cast(v)
            e += cuda.gridDim.x * cuda.blockDim.x

    return split_sum


def grid(m, n, sms):
    """Blocks of the summing kernel: enough for every element, at most 8 per SM."""
    return max(1, min(8 * sms, -(-m * n // THREADS)))
