"""The AMD binding: an op declared on :mod:`numba_tma.declarations`, lowered by the library's
``amdgcn`` Numba target (llvmlite) through the emitters of this package.

An op is one :class:`AmdOp` in the module of its family (:mod:`numba_tma.amd.ops`): its operands
(the kinds below, each checked on the Numba type of its argument), its requirement
(:class:`~numba_tma.amd.targets.Requirement`: gfx archs and LLVM versions), the LLVM intrinsics it
calls and the ISA instructions they become, its TLX names, documentation, :class:`Sample` rows
(hand-written ISA lines, ``tests/amd/test_amd_declarations.py``) and refused calls
(:class:`~numba_tma.declarations.Refusal`).  ``typing(**argument types)`` returns the op's result
type and its codegen ``(context, builder, sig, args)``, which calls the op's emitter; every emitter
checks the arch against the declaration (``targets.require``) before writing an instruction.  AMD
ops have no simulator twin: numba-cuda's simulator is CUDA-only.

This module and :mod:`.numba_target` are everything of the AMD path that is specific to the host
compiler (Numba's lowering with llvmlite); the emitters take an llvmlite ``IRBuilder``.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from numba.core import types
from numba.core.extending import intrinsic as _numba_intrinsic

from ..declarations import REQUIRED, Declaration, Operand, missing_in_order
from . import lds
from .errors import reject
from .numba_target import TARGET_NAME
from .targets import Requirement


# -- the compile-time value of an argument ---------------------------------------------

def shown(value):
    """An argument as written: its value when it is a constant, else its type."""
    if isinstance(value, types.Literal):
        return repr(value.literal_value)
    if isinstance(value, types.Omitted):
        return repr(value.value)
    if isinstance(value, types.NoneType):
        return "None"
    if isinstance(value, types.BaseTuple):
        items = [shown(t) for t in value]
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
    return str(value)


def const(value, op, arg):
    """The compile-time value of argument ``arg`` of ``op`` (a literal, or a default left out);
    refused when it is not a constant."""
    if isinstance(value, types.Omitted):
        return value.value
    if isinstance(value, types.Literal):
        return value.literal_value
    if isinstance(value, types.NoneType):
        return None
    if isinstance(value, types.BaseTuple) and all(isinstance(t, types.Literal) for t in value):
        return tuple(t.literal_value for t in value)
    if isinstance(value, types.Type):
        raise reject(op, arg, "must be a compile-time constant", shown(value))
    return value


def is_given(value):
    """An optional argument that the call passed (not left out, not None)."""
    return isinstance(value, types.Type) and not isinstance(value, (types.NoneType, types.Omitted))


def data(context, builder, aryty, value):
    """The data pointer of an array argument."""
    return context.make_array(aryty)(context, builder, value=value).data


def no_result(codegen):
    """The typing result of a void op: ``(types.none, lowering)``, the lowering running
    ``codegen`` and returning nothing."""
    def lower(context, builder, sig, args):
        codegen(context, builder, sig, args)
        return context.get_dummy_value()
    return types.none, lower


# -- operand kinds -----------------------------------------------------------------------

class Array(Operand):
    """An array: in LDS (``space="lds"``: an :func:`~numba_tma.amd.lds_array` or a slice of
    one), in global memory (``"global"``: a kernel argument), or either; ``dtype`` restricts its
    element type, ``contiguous`` demands a C-contiguous one."""

    def __init__(self, name, space=None, dtype=None, contiguous=False):
        super().__init__(name)
        self.space, self.dtype, self.contiguous = space, dtype, contiguous
        self.annotation = {"lds": "LDSArray", "global": "DeviceArray"}.get(space, "DeviceArray | LDSArray")

    def check(self, op_name, ty):
        op = op_name
        if not isinstance(ty, types.Array):
            raise reject(op, self.name, "must be an array", shown(ty))
        if self.dtype is not None and ty.dtype != self.dtype:
            raise reject(op, self.name, f"must be an {self.dtype} LDS array", ty)
        if self.space == "lds":
            lds.require_lds(op, self.name, ty)
        elif self.space == "global":
            lds.require_global(op, self.name, ty)
        if self.contiguous and ty.layout != "C":
            raise reject(op, self.name, "must be C-contiguous", ty)


def _in_range(op_name, name, ty, lo, hi, rule):
    """A constant integer ``ty`` outside ``[lo, hi]`` (when ``lo`` is given) is refused."""
    if lo is not None and isinstance(ty, types.IntegerLiteral) and not lo <= ty.literal_value <= hi:
        raise reject(op_name, name, rule or f"must be an int in [{lo}, {hi}]", repr(ty.literal_value))


class Int(Operand):
    """An integer, constant or not (per lane, or wave-uniform where the op says so); with a
    ``default``, an optional one; a constant must lie in ``[lo, hi]`` when they are given (``rule``
    says so in the op's terms)."""

    annotation = "int"

    def __init__(self, name, default=REQUIRED, lo=None, hi=None, rule=None):
        super().__init__(name)
        self.default, self.lo, self.hi, self.rule = default, lo, hi, rule

    def check(self, op_name, ty):
        if isinstance(ty, types.Omitted) and self.default is not REQUIRED:
            return
        if not isinstance(ty, types.Integer) or isinstance(ty, types.Boolean):
            raise reject(op_name, self.name, "must be an integer", shown(ty))
        _in_range(op_name, self.name, ty, self.lo, self.hi, self.rule)


class Const(Operand):
    """A compile-time constant (an ``int`` in ``[lo, hi]`` when they are given, one of ``choices``
    when they are, else whatever the op's typing accepts; ``rule`` says so in the op's terms);
    ``annotation`` its kind in the stubs."""

    def __init__(self, name, default=REQUIRED, lo=None, hi=None, annotation="int", choices=None, rule=None):
        super().__init__(name)
        self.default, self.lo, self.hi, self.annotation = default, lo, hi, annotation
        self.choices, self.rule = choices, rule

    def check(self, op_name, ty):
        value = const(ty, op_name, self.name)
        if self.lo is not None and (isinstance(value, bool) or not isinstance(value, int)
                                    or not self.lo <= value <= self.hi):
            raise reject(op_name, self.name, self.rule or f"must be an int in [{self.lo}, {self.hi}]", repr(value))
        if self.choices is not None and (isinstance(value, bool) or value not in self.choices):
            raise reject(op_name, self.name, self.rule or f"must be one of {self.choices}", repr(value))


CACHE_MODIFIER = Const("cache_modifier", "", annotation="str")   # the DMA ops' cache policy, a constant string


class Flag(Operand):
    """A compile-time ``True`` or ``False``."""

    annotation = "bool"

    def __init__(self, name, default):
        super().__init__(name)
        self.default = default

    def check(self, op_name, ty):
        if not isinstance(const(ty, op_name, self.name), bool):
            raise reject(op_name, self.name, "must be True or False", shown(ty))


class Pred(Operand):
    """An optional predicate: a boolean, e.g. ``lane < n`` or ``True``."""

    default, annotation = None, "bool | None"

    def check(self, op_name, ty):
        if is_given(ty) and not isinstance(ty, types.Boolean):
            raise reject(op_name, self.name, "must be a boolean", shown(ty))


class Number(Operand):
    """An optional number (the value masked lanes store)."""

    default, annotation = None, "int | float | None"

    def check(self, op_name, ty):
        if is_given(ty) and not isinstance(ty, (types.Number, types.Boolean)):
            raise reject(op_name, self.name, "must be a number", shown(ty))


class Ints(Operand):
    """An optional tuple of integers (constants or not; a constant one in ``[lo, hi]`` when they
    are given)."""

    default, annotation = None, "tuple[int, ...] | None"

    def __init__(self, name, lo=None, hi=None):
        super().__init__(name)
        self.lo, self.hi = lo, hi

    def check(self, op_name, ty):
        if is_given(ty) and not (isinstance(ty, types.BaseTuple) and all(isinstance(t, types.Integer) for t in ty)):
            raise reject(op_name, self.name, "must be a tuple of integers", shown(ty))
        for i, t in enumerate(ty if is_given(ty) else ()):
            _in_range(op_name, f"{self.name}[{i}]", t, self.lo, self.hi, None)


LANE_KINDS = {types.float32: "f", types.int32: "i", types.uint32: "u"}
_WIDE = {types.float64, types.int64, types.uint64}


class LaneValue(Operand):
    """This lane's value: an int32, uint32 or float32 (``wide``: or a 64-bit one)."""

    annotation = "int | float"

    def __init__(self, name, wide=False):
        super().__init__(name)
        self.wide = wide

    def check(self, op_name, ty):
        if ty in LANE_KINDS or (self.wide and ty in _WIDE):
            return
        allowed = "an int32, uint32 or float32" + (" (or int64, uint64, float64)" if self.wide else "")
        hint = ""
        if isinstance(ty, types.Integer) and ty.bitwidth == 64:
            hint = (" (Numba computes integer arithmetic in 64 bits: convert with numba.int32(...) or "
                    "numba.uint32(...))")
        elif ty == types.float64:
            hint = " (convert with numba.float32(...))"
        raise reject(op_name, self.name, f"must be {allowed} value{hint}", shown(ty))


class Like(Operand):
    """A value of the type of the operand ``like`` (a peer)."""

    def __init__(self, name, like, default=REQUIRED):
        super().__init__(name)
        self.peers, self.default, self.annotation = (like,), default, "int | float" + (
            "" if default is REQUIRED else " | None")

    def check(self, op_name, ty, like):
        if is_given(ty) and ty != like:
            raise reject(op_name, self.name, f"must have the type of {self.peers[0]} ({like})", shown(ty))


class Typed(Operand):
    """An argument the op's own typing checks (``annotation``: its kind in the stubs)."""

    def __init__(self, name, annotation, default=REQUIRED):
        super().__init__(name)
        self.annotation, self.default = annotation, default


# -- assembly rows -------------------------------------------------------------------------

# The placeholders of a sample's hand-written ISA lines: each stands for what LLVM chose.
ISA_PLACEHOLDERS = {
    "%v": r"v(?:\d+|\[\d+:\d+\])",   # a VGPR (or a range of them)
    "%s": r"s(?:\d+|\[\d+:\d+\])",   # an SGPR (or a range)
    "%n": r"-?(?:0x[0-9a-fA-F]+|\d+)",   # a number LLVM chose (an offset)
}
_PLACEHOLDER = re.compile("(" + "|".join(ISA_PLACEHOLDERS) + r")(?![\w%])")


def _squash(line):
    """An instruction line without its trailing comment, or (a line that starts with ``;``) an
    assembler comment, in one spacing."""
    line = line.strip()
    if line.startswith(";"):   # an assembler comment: what LLVM prints for an op with no encoding
        return "; " + _squash(line[1:].replace(";", " "))
    line = re.sub(r"\s+", " ", line.split(";")[0].strip())
    return re.sub(r"\s*,\s*", ", ", line)


def isa_line_pattern(line):
    """The regular expression an assembly line matches, in full, when it is the hand-written
    ``line`` (placeholders: :data:`ISA_PLACEHOLDERS`)."""
    parts = _PLACEHOLDER.split(_squash(line))
    return re.compile("".join(ISA_PLACEHOLDERS[p] if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def isa_missing(lines, asm, comments=False):
    """The hand-written ``lines`` not found, in that order, as whole instruction lines of ``asm``
    (``comments``: its assembler comment lines too, for the ops LLVM prints only as a comment)."""
    skip = (".",) if comments else (".", ";")
    kernel = [_squash(line) for line in asm.splitlines() if line.strip() and not line.strip().startswith(skip)]
    return missing_in_order(lines, kernel, isa_line_pattern)


@dataclass(frozen=True)
class Sample:
    """One row of the AMD assembly test: ``call``, compiled in the test kernel (``x``, ``y``:
    float32 kernel arguments, ``n`` an int32, ``lane = amd.workitem_id_x()``, ``tile`` a 4096-float
    LDS array, ``bar`` an int64 LDS word; ``amd`` and ``numba`` are there) for every arch the op
    claims, must put the hand-written ``isa`` lines into the assembly, in order (``{arch: lines}``,
    ``""`` for every other arch).  Registers are placeholders (:data:`ISA_PLACEHOLDERS`), the rest
    literal.  ``ref``: the documents the lines were written from (the arch's ISA guide, LLVM's
    AMDGPUUsage / AMDGPUModifierSyntax); ``archs``: the claimed archs the row is for (default:
    all of them); ``comments``: the row's lines may be assembler comments (``; sched_barrier
    ...``: what LLVM prints for a scheduling barrier, which has no encoding), which other rows
    never match."""

    call: str
    isa: object
    ref: str
    archs: tuple = ()
    comments: bool = False

    def lines(self, arch):
        isa = self.isa if not isinstance(self.isa, Mapping) else self.isa.get(arch, self.isa.get(""))
        return (isa,) if isinstance(isa, str) else tuple(isa)


@dataclass(frozen=True)
class AmdOp(Declaration):
    """One AMD op, declared once (see the module docstring).  ``name``: ``"amd.op"``.
    ``llvm``: the LLVM intrinsics it calls; ``isa``: the instructions they become (both found by
    :func:`numba_tma.catalog.find`); ``result``: what it returns, as the stubs write it."""

    name: str
    typing: Callable
    operands: tuple = ()
    need: Requirement = None
    llvm: tuple = ()
    isa: tuple = ()
    doc: str = ""
    tlx: tuple = ()
    samples: tuple = ()
    refusals: tuple = ()
    qualifiers: tuple = ()
    check: Callable | None = None
    order: tuple = ()
    result: str = "None"

    vendor, twin = "amd", False   # numba-cuda's simulator is CUDA-only

    def code_block(self):
        lines = list(self.llvm) or ["(no LLVM intrinsic: integer IR only)"]
        return "LLVM", "\n".join(lines + ([f"-> {', '.join(self.isa)}"] if self.isa else []))

    def words(self):
        return super().words() + list(self.llvm) + list(self.isa)

    def result_annotation(self):
        return self.result

    def intrinsic(self):
        """The Numba intrinsic (``amdgcn`` target) for this op, registered in ``OPS``."""
        self.register()
        op = self

        def typer(typingctx, *args, **kwargs):
            tys = op.argument_types(args, kwargs)
            op.check_types(tys)
            restype, codegen = op.typing(**tys)
            return restype(*tys.values()), codegen

        typer.__name__ = typer.__qualname__ = self.short_name
        typingctx = inspect.Parameter("typingctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        typer.__signature__ = self.signature.replace(parameters=[typingctx, *self.signature.parameters.values()])
        return self.public(_numba_intrinsic(prefer_literal=True, target=TARGET_NAME)(typer), "numba_tma.amd")
