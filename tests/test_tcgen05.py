"""tcgen05's descriptors, bit by bit against the PTX ISA's tables (the expected values are written
out here from the tables, not computed by the code under test), and what the family refuses on the
wrong architecture and under the simulator.  The ops' assembly rows are in tests/test_assembles.py,
their declared refusals in tests/test_refusals.py."""

import numba
import numpy as np
import pytest

from numba_tma import ArchError, OpArgumentError, inspect
from numba_tma.intrinsics import tcgen05
from numba_tma.simulator import FAMILIES, SimulatorError

SIG = (numba.uint64[::1],)


def _bits(value, lo, hi):
    """Bits ``lo`` to ``hi`` (inclusive) of ``value``."""
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


# PTX ISA 9.7.16.4.2, Table 42: (call, the descriptor written out field by field)
IDESC = [
    # D F32 (1, bits 4-5), A BF16 (1, bits 7-9), B BF16 (1, bits 10-12), N 256 >> 3 = 32 (bits 17-22),
    # M 128 >> 4 = 8 (bits 24-28)
    (dict(m=128, n=256, dtype="bf16"), 0x10 | 0x80 | 0x400 | 0x400000 | 0x8000000),
    # D F32, A TF32 (2), B TF32 (2), transpose B (bit 16), N 8 >> 3 = 1, M 64 >> 4 = 4
    (dict(m=64, n=8, dtype="tf32", trans_b=True), 0x10 | 0x100 | 0x800 | 0x10000 | 0x20000 | 0x4000000),
    # D S32 (2), A signed 8b (1), B unsigned 8b (0), N 48 >> 3 = 6, M 128 >> 4 = 8
    (dict(m=128, n=48, dtype="s8.u8"), 0x20 | 0x80 | 0xC0000 | 0x8000000),
    # D F32, A E5M2 (1), B E4M3 (0), negate A (bit 13), transpose A (bit 15), N 128 >> 3 = 16, M 256 >> 4 = 16
    (dict(m=256, n=128, dtype="e5m2.e4m3", negate_a=True, trans_a=True),
     0x10 | 0x80 | 0x2000 | 0x8000 | 0x200000 | 0x10000000),
    # D F32, A and B E2M1 (5), negate B (bit 14), N 16 >> 3 = 2, M 64 >> 4 = 4
    (dict(m=64, n=16, dtype="e2m1", negate_b=True), 0x10 | 0x280 | 0x1400 | 0x4000 | 0x40000 | 0x4000000),
]


@pytest.mark.parametrize("call,expected", IDESC, ids=[c["dtype"] for c, _ in IDESC])
def test_the_instruction_descriptor_has_the_isa_fields(call, expected):
    bits = tcgen05.instruction_descriptor(**call)
    assert bits == expected, f"{bits:#010x} != {expected:#010x}"
    assert _bits(bits, 0, 3) == 0 and _bits(bits, 6, 6) == 0 and _bits(bits, 23, 23) == 0 and _bits(bits, 29, 31) == 0


# PTX ISA 9.7.16.4.1, Table 40: the high 32 bits (descriptor bits 32-63) of a K-major tile whose rows
# are one swizzle span: SBO = 8 rows >> 4 in bits 32-45, 0b001 in bits 46-48, base offset 0 in bits
# 49-51, bit 52 0, bits 53-60 0, the swizzle mode in bits 61-63 (2: 128B, 4: 64B, 6: 32B)
SMEM_HI = [
    (128, 0x40 | 1 << 14 | 2 << 29),     # SBO 1024 >> 4 = 64
    (64, 0x20 | 1 << 14 | 4 << 29),      # SBO 512 >> 4 = 32
    (32, 0x10 | 1 << 14 | 6 << 29),      # SBO 256 >> 4 = 16
]


@pytest.mark.parametrize("swizzle,expected", SMEM_HI)
def test_the_shared_memory_descriptor_has_the_isa_fields(swizzle, expected):
    hi = tcgen05.descriptor_hi(swizzle, swizzle)
    assert hi == expected, f"{hi:#010x} != {expected:#010x}"
    descriptor = hi << 32
    assert _bits(descriptor, 32, 45) == 8 * swizzle >> 4
    assert _bits(descriptor, 46, 48) == 0b001
    assert _bits(descriptor, 49, 51) == 0 and _bits(descriptor, 52, 52) == 0 and _bits(descriptor, 53, 60) == 0
    assert _bits(descriptor, 61, 63) == {128: 2, 64: 4, 32: 6}[swizzle]


def test_tcgen05_needs_sm100a():
    def kernel(out):
        tcgen05.fence_after_thread_sync()

    with pytest.raises(ArchError, match=r"tcgen05\.fence_after_thread_sync needs sm_100a up to \(excluding\) sm_120"):
        inspect.ptx(kernel, SIG, "sm_90a")


def test_a_single_register_load_returns_a_tuple_of_one():
    """A lone asm output is its value in LLVM IR, not a struct of one: the op still returns a tuple."""
    def kernel(out):
        r = tcgen05.ld(numba.uint32(out[0]), 1)
        out[1] = r[0]

    assert "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r" in inspect.ptx(kernel, SIG, "sm_100a")


def test_the_simulator_refuses_tcgen05_after_the_argument_rules():
    twins = FAMILIES["tcgen05"]
    with pytest.raises(SimulatorError, match=r"tcgen05\.alloc: tcgen05 .* is not simulated: the simulator models "
                                             r"sm_90"):
        twins.alloc(np.zeros(1, np.uint32), 64)
    with pytest.raises(OpArgumentError, match=r"tcgen05\.alloc: argument 'ncols' must be a power of 2"):
        twins.alloc(np.zeros(1, np.uint32), 48)
