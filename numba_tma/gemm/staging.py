"""Staging copies: an operand TMA cannot address (a base not 16-byte aligned, a row pitch not a
multiple of 16 bytes, a layout the kernel does not read) is copied into a fresh row-major buffer
whose rows are padded with zeros to a multiple of 16 bytes, and the kernel reads the copy.

The cost: one read and one write of the operand (an M x K bf16 A: 4 M K bytes of memory traffic;
the copy reads the source with its own strides, so a transposing copy reads it uncoalesced), and
the buffer's memory for the call.  ``numba_tma.gemm.explain`` says which operands a call stages.
"""

from numba import cuda


@cuda.jit
def pad_copy(src, dst):
    """``dst[i, j] = src[i, j]`` inside ``src``, 0 in ``dst``'s padding (``dst`` at least as big)."""
    rows, cols = dst.shape
    src_rows, src_cols = src.shape
    start = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    for e in range(start, rows * cols, cuda.gridDim.x * cuda.blockDim.x):
        i, j = e // cols, e % cols
        if i < src_rows and j < src_cols:
            dst[i, j] = src[i, j]
        else:
            dst[i, j] = 0


def padded_cols(cols, itemsize):
    """``cols`` rounded up to a 16-byte row."""
    per = 16 // itemsize
    return -(-cols // per) * per


def buffer(src, stream=0):
    """A fresh row-major device array of ``src``'s rows and its columns padded to 16 bytes (``src``:
    a 2-D numba device array, any strides), for :func:`copy`."""
    rows, cols = src.shape
    return buffer_of((rows, padded_cols(cols, src.dtype.itemsize)), src.dtype, stream)


def buffer_of(shape, dtype, stream=0):
    """A fresh row-major device array of ``shape`` and ``dtype``."""
    return cuda.device_array(shape, dtype, stream=stream)


def stage(src, stream, launches):
    """A :func:`buffer` for ``src``, its :func:`copy` appended to ``launches`` (a call's work)."""
    dst = buffer(src, stream)
    launches.append(lambda: copy(src, dst, stream))
    return dst


def copy(src, dst, stream=0):
    """Launch the copy of ``src`` into its :func:`buffer` ``dst`` (zeros in the padding)."""
    threads = 256
    blocks = max(1, min(1024, -(-dst.size // threads)))
    pad_copy[blocks, threads, stream](src, dst)
