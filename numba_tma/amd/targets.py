"""The AMD architectures, and the AMD requirement type (each op declares its own).

Every emitter calls :func:`require` before it writes a single instruction, so an op
that an architecture (or the LLVM inside llvmlite) lacks raises a Python error
instead of aborting the process inside LLVM.
"""
from dataclasses import dataclass

import llvmlite.binding as llvm

from ..declarations import OPS
from .errors import AMDArgumentError, LLVMVersionError, UnsupportedArchError

CDNA3, CDNA4, GFX1250 = "gfx942", "gfx950", "gfx1250"


@dataclass(frozen=True)
class Arch:
    name: str
    wave_size: int
    #: dword 3 of the buffer resource, as Triton's BufferOpsEmitter sets it.  On gfx1250
    #: the V# layout differs and LLVM 22 keeps only flags[3:0] (bits 127:124), so
    #: Triton's 0x31027000 assembles as 0 there; no gfx1250 op here uses a V#.
    rsrc_flags: int
    #: largest ``num_records`` the V# holds (32 bits on gfx9, 45 bits on gfx1250)
    max_num_records: int
    #: LDS bytes one workgroup may allocate (LLVM errors out above it)
    lds_bytes: int
    #: bytes per lane that one LDS-DMA instruction may move
    lds_dma_bytes: tuple
    #: cache modifier -> ``aux`` / ``cpol`` immediate of the memory intrinsics
    cache_bits: dict


# gfx942/gfx950 aux bits: bit0 sc0, bit1 nt, bit4 sc1 (Triton's table for loads).
_GFX94X_LOAD_CACHE = {"": 0, ".ca": 0, ".cg": 0b11, ".cs": 0b11, ".cv": 0b10001}

ARCHS = {
    a.name: a
    for a in (
        # LDS limits: 64 KiB gfx942, 160 KiB gfx950, 320 KiB gfx1250, as LLVM's
        # AMDGPU tests lds-size-hsa-gfx950.ll / lds-size-hsa-gfx1250.ll pin them.
        Arch(CDNA3, 64, 0x00027000, 2**32 - 1, 64 * 1024, (4,), _GFX94X_LOAD_CACHE),
        Arch(CDNA4, 64, 0x00027000, 2**32 - 1, 160 * 1024, (4, 16), _GFX94X_LOAD_CACHE),
        Arch(GFX1250, 32, 0x31027000, 2**45 - 1, 320 * 1024, (1, 4, 8, 16), {"": 0}),
    )
}


@dataclass(frozen=True)
class Requirement:
    """What an AMD op needs (the AMD requirement of :mod:`numba_tma.declarations`): one of
    ``archs``, and an LLVM inside llvmlite from ``min_llvm`` up to ``max_llvm`` (None: no known
    change) with the intrinsic(s) in the form used here."""

    archs: tuple
    min_llvm: int
    max_llvm: int = None

    def __str__(self):
        llvm_ = f"LLVM {self.min_llvm}" + (f"..{self.max_llvm}" if self.max_llvm else "+")
        return f"{', '.join(self.archs)}; {llvm_}"

    def __or__(self, other):
        """The requirement of using both."""
        if other is None:
            return self
        maxes = [m for m in (self.max_llvm, other.max_llvm) if m]
        return Requirement(tuple(a for a in self.archs if a in other.archs),
                           max(self.min_llvm, other.min_llvm), min(maxes) if maxes else None)

    def supported_on(self, arch):
        return arch in self.archs


ALL = tuple(ARCHS)
GFX9 = (CDNA3, CDNA4)

#: what the emitters that are no op of their own need (each op's is in its declaration)
EMITTERS = {
    "make_buffer_rsrc": Requirement(ALL, 22),  # num_records became i64 in LLVM 22
}


def features():
    """Every AMD op's requirement (from its declaration) and the emitters': ``{name: Requirement}``."""
    return {op.short_name: op.need for op in OPS.values() if op.vendor == "amd"} | EMITTERS


def llvm_major():
    """Major version of the LLVM that llvmlite was built against."""
    return llvm.llvm_version_info[0]


def get_arch(arch):
    """Return the :class:`Arch` row for *arch*; raise for a non-str or an unknown name."""
    if not isinstance(arch, str):
        raise AMDArgumentError(f"arch must be a str, one of {', '.join(ARCHS)}; got {arch!r}")
    if arch not in ARCHS:
        raise UnsupportedArchError(
            f"arch {arch!r} is not supported; known archs: {', '.join(ARCHS)}")
    return ARCHS[arch]


def require(op, arch):
    """Check that *op* can be emitted for *arch* with this LLVM; return the Arch row."""
    row = get_arch(arch)
    feature = EMITTERS[op] if op in EMITTERS else OPS[f"amd.{op}"].need
    if arch not in feature.archs:
        raise UnsupportedArchError(
            f"{op} is available on {', '.join(feature.archs)} only; "
            f"requested arch is {arch}"
        )
    major = llvm_major()
    if major < feature.min_llvm or (feature.max_llvm and major > feature.max_llvm):
        wanted = f"{feature.min_llvm}" + (
            f"..{feature.max_llvm}" if feature.max_llvm else "+")
        raise LLVMVersionError(
            f"{op} needs LLVM {wanted} (llvmlite's LLVM is {major}); "
            f"requested arch is {arch}"
        )
    return row


def cache_bits(op, arch, cache_modifier):
    """The ``aux``/``cpol`` immediate for *cache_modifier* on *arch*."""
    table = get_arch(arch).cache_bits
    if cache_modifier not in table:
        raise AMDArgumentError(
            f"{op}: cache_modifier {cache_modifier!r} has no encoding on {arch}; "
            f"allowed: {sorted(table)}"
        )
    return table[cache_modifier]


def check_lds_dma_bytes(op, arch, nbytes):
    """Validate the bytes-per-lane of an LDS-DMA instruction on *arch*."""
    allowed = get_arch(arch).lds_dma_bytes
    if nbytes not in allowed:
        raise AMDArgumentError(
            f"{op}: width must be one of {allowed} bytes per lane on {arch}, "
            f"got {nbytes!r}"
        )


def check_int_range(op, name, value, lo, hi):
    """Raise unless *value* is an int in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise AMDArgumentError(f"{op}: {name} must be an int in [{lo}, {hi}], got {value!r}")
    return value
