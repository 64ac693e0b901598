"""The compile-time errors of numba_tma's device ops (importable without compiling anything)."""


class ArchError(TypeError):
    """An op was compiled for an architecture (or PTX ISA) that lacks its instruction."""


class OpArgumentError(TypeError):
    """An op was called with an argument its instruction cannot take (raised at compile time)."""
