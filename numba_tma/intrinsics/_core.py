"""The emission core: the one place that turns an op description into inline PTX.

Every NVIDIA device op in :mod:`numba_tma` is a :class:`PtxOp` (the PTX template, its minimum
architecture and PTX ISA) plus a list of :class:`Operand` kinds.  :func:`ptx_intrinsic` turns that
description into a Numba ``@intrinsic`` that

* validates the Python-level arguments while Numba types the kernel (:class:`OpArgumentError`
  naming the argument and the rule),
* refuses, at compile time, an architecture that lacks the instruction (:class:`ArchError` naming
  the op, the architecture it needs and the one requested), and
* lowers each argument to an inline-asm operand: a shared array becomes a 32-bit shared-window
  address (``addrspacecast`` to addrspace(3) + ``ptrtoint i32``, constraint ``r``), a global array a
  64-bit generic address (``l``, :func:`global_address`), integers are cast to the width the
  instruction takes.

Adding an op is one ``PtxOp`` and one ``ptx_intrinsic(...)`` call in the module of its hardware
family; nothing here changes.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

from llvmlite import ir
from numba.cuda.core.targetconfig import ConfigStack
from numba.cuda import types
from numba.cuda.cudadrv import nvvm
from numba.cuda.extending import _intrinsic

I16, I32, I64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)


class ArchError(TypeError):
    """An op was compiled for an architecture (or PTX ISA) that lacks its instruction."""


class OpArgumentError(TypeError):
    """An op was called with an argument its instruction cannot take (raised at compile time)."""


# --------------------------------------------------------------------------------------------
# Architecture requirements
# --------------------------------------------------------------------------------------------


def arch_name(cc) -> str:
    """``(9, 0, "a")`` -> ``"sm_90a"``; ``(8, 0)`` -> ``"sm_80"``."""
    suffix = cc[2] if len(cc) > 2 else ""
    return f"sm_{cc[0]}{cc[1]}{suffix}"


def parse_arch(arch) -> tuple:
    """``"sm_90a"`` / ``"90a"`` / ``(9, 0, "a")`` -> the ``cc`` tuple numba-cuda takes."""
    if isinstance(arch, tuple):
        return arch
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(\d)([af]?)", str(arch))
    if not m:
        raise ValueError(f"arch={arch!r}: expected a name such as 'sm_90a', 'sm_100a' or 'sm_80'")
    major, minor, suffix = int(m.group(1)), int(m.group(2)), m.group(3)
    return (major, minor, suffix) if suffix else (major, minor)


@dataclass(frozen=True)
class PtxOp:
    """What an op emits and what it needs.

    ``ptx`` is the inline-asm template (``$0``... operands, ``${:uid}`` for unique labels).
    ``min_cc`` is the lowest compute capability with the instruction; ``arch_specific`` means it
    also needs the ``a`` (or ``f``) target of that family, e.g. ``sm_90a``; ``max_cc`` (exclusive)
    bounds instructions a later family dropped (``wgmma`` is sm_90a only).
    """

    name: str
    ptx: str
    min_cc: tuple = (9, 0)
    min_ptx: tuple = (8, 0)
    arch_specific: bool = False
    max_cc: tuple | None = None
    memory: bool = True  # adds the ~{memory} clobber: async and barrier ops must not be reordered

    @property
    def requirement(self) -> str:
        need = arch_name(self.min_cc + (("a",) if self.arch_specific else ()))
        if self.max_cc:
            return f"{need} up to (excluding) {arch_name(self.max_cc)}"
        return f"{need} or newer" + (" (arch-specific 'a' target)" if self.arch_specific else "")

    def supported_on(self, cc) -> bool:
        base = tuple(cc[:2])
        if base < self.min_cc or (self.max_cc and base >= self.max_cc):
            return False
        return not self.arch_specific or (len(cc) > 2 and cc[2] in ("a", "f"))


def current_cc():
    """The target numba-cuda is compiling for, or ``None`` when it is not known yet."""
    cfg = ConfigStack.top_or_none()
    return getattr(cfg, "compute_capability", None) if cfg is not None else None


def check_arch(op: PtxOp) -> None:
    """Raise :class:`ArchError` if the current compilation target lacks ``op``."""
    cc = current_cc()
    if cc is not None and not op.supported_on(cc):
        raise ArchError(
            f"numba_tma: {op.name} needs {op.requirement} (PTX ISA {op.min_ptx[0]}.{op.min_ptx[1]}), "
            f"but the kernel is being compiled for {arch_name(cc)}"
        )
    have = toolkit_ptx_isa()
    if have < op.min_ptx:
        raise ArchError(
            f"numba_tma: {op.name} needs PTX ISA {op.min_ptx[0]}.{op.min_ptx[1]}, but the installed "
            f"NVVM emits PTX ISA {have[0]}.{have[1]}; install a newer CUDA toolkit"
        )


def _empty_device_function():
    pass


@functools.lru_cache(maxsize=None)
def toolkit_ptx_isa() -> tuple:
    """The PTX ISA version (``.version``) the installed libNVVM emits, found once per process."""
    from numba import cuda

    ptx, _ = cuda.compile_ptx(_empty_device_function, (), device=True, cc=(9, 0))
    major, minor = re.search(r"\.version\s+(\d+)\.(\d+)", ptx).groups()
    return int(major), int(minor)


# --------------------------------------------------------------------------------------------
# Operands: one class per way a Python argument becomes asm operands
# --------------------------------------------------------------------------------------------


def reject(op_name: str, arg: str, rule: str, got) -> OpArgumentError:
    """The error for argument ``arg`` of ``op_name`` breaking ``rule``."""
    return OpArgumentError(f"numba_tma: {op_name}: argument '{arg}' {rule}; got {got}")


class Operand:
    """One Python argument of an op and how it lowers to inline-asm operands."""

    def __init__(self, name: str):
        self.name = name

    def check(self, op_name: str, ty) -> None:
        """Raise a TypingError naming the argument if ``ty`` is not acceptable."""

    def lower(self, context, builder, ty, val) -> list[tuple[ir.Value, str]]:
        """Return ``[(llvm value, constraint letter), ...]``."""
        raise NotImplementedError


def _check_literal(op_name, name, ty, lo, hi):
    """A compile-time constant outside [lo, hi] is refused, never truncated."""
    value = getattr(ty, "literal_value", None)
    if isinstance(value, int) and not lo <= value <= hi:
        raise reject(op_name, name, f"must be in [{lo}, {hi}]", value)


class Int(Operand):
    """An integer cast to ``bits`` bits (``r`` for 32, ``l`` for 64, ``h`` for 16).

    A constant argument must lie in ``[lo, hi]`` (default: what ``bits`` can hold).
    """

    _constraint = {16: "h", 32: "r", 64: "l"}

    def __init__(self, name: str, bits: int = 32, signed: bool = False, lo: int | None = None,
                 hi: int | None = None):
        super().__init__(name)
        self.bits, self.signed = bits, signed
        self.lo = lo if lo is not None else (-(1 << (bits - 1)) if signed else 0)
        self.hi = hi if hi is not None else ((1 << (bits - 1)) - 1 if signed else (1 << bits) - 1)

    def check(self, op_name, ty):
        if not isinstance(ty, (types.Integer, types.IntegerLiteral, types.Boolean)):
            raise reject(op_name, self.name, "must be an integer", ty)
        _check_literal(op_name, self.name, ty, self.lo, self.hi)

    def lower(self, context, builder, ty, val):
        target = getattr(types, f"{'int' if self.signed else 'uint'}{self.bits}")
        return [(context.cast(builder, val, ty, target), self._constraint[self.bits])]


def _array_data(context, builder, aryty, ary):
    return context.make_array(aryty)(context, builder, ary).data


def shared_address(context, builder, aryty, ary) -> ir.Value:
    """32-bit shared-window address of element 0 of a shared array (or a slice of one)."""
    ptr = _array_data(context, builder, aryty, ary)
    shared = builder.addrspacecast(ptr, ir.PointerType(ptr.type.pointee, nvvm.ADDRSPACE_SHARED))
    return builder.ptrtoint(shared, I32)


def global_address(context, builder, aryty, ary) -> ir.Value:
    """64-bit generic address of element 0 of a device array."""
    return builder.ptrtoint(_array_data(context, builder, aryty, ary), I64)


class SharedArray(Operand):
    """A ``cuda.shared.array`` (or a slice of one); the op uses element 0's shared address.

    ``dtypes`` restricts the element type (e.g. mbarriers are ``uint64``); ``contiguous`` demands
    a C-contiguous view, for operands the hardware fills densely from element 0.  Whether the
    array really lives in shared memory is not visible in its Numba type and is not checked.
    """

    def __init__(self, name: str, dtypes: Sequence = (), what: str = "a shared array",
                 contiguous: bool = False):
        super().__init__(name)
        self.dtypes, self.what, self.contiguous = tuple(dtypes), what, contiguous

    def check(self, op_name, ty):
        if not isinstance(ty, types.Array):
            raise reject(op_name, self.name, f"must be {self.what}", ty)
        if self.dtypes and ty.dtype not in self.dtypes:
            allowed = " or ".join(str(d) for d in self.dtypes)
            raise reject(op_name, self.name, f"must be {self.what} of {allowed}", ty)
        if self.contiguous and ty.layout != "C":
            raise reject(op_name, self.name, f"must be a C-contiguous view ({self.what} is written densely "
                         "from element 0)", ty)

    def lower(self, context, builder, ty, val):
        return [(shared_address(context, builder, ty, val), "r")]


class IntTuple(Operand):
    """A tuple of integers, each cast to a ``bits``-bit int (``r`` for 32, ``h`` for 16);
    ``lengths`` lists the tuple lengths allowed."""

    def __init__(self, name: str, lengths: Sequence[int], bits: int = 32, range: tuple | None = None):
        super().__init__(name)
        self.lengths, self.bits = tuple(lengths), bits
        self.range = range or (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)

    def check(self, op_name, ty):
        if not isinstance(ty, types.BaseTuple) or not all(
            isinstance(t, (types.Integer, types.IntegerLiteral)) for t in ty
        ):
            raise reject(op_name, self.name, "must be a tuple of integers", ty)
        if len(ty) not in self.lengths:
            raise reject(op_name, self.name, f"must have {self._lengths_text()} entries", f"{len(ty)}")
        lo, hi = self.range
        for i, t in enumerate(ty):
            _check_literal(op_name, f"{self.name}[{i}]", t, lo, hi)

    def _lengths_text(self):
        lo, hi = min(self.lengths), max(self.lengths)
        return str(lo) if lo == hi else f"{lo} to {hi}"

    def lower(self, context, builder, ty, val):
        target = getattr(types, f"int{self.bits}")
        return [
            (context.cast(builder, builder.extract_value(val, i), t, target), Int._constraint[self.bits])
            for i, t in enumerate(ty)
        ]


# --------------------------------------------------------------------------------------------
# Emission
# --------------------------------------------------------------------------------------------


_RESULT = {16: "=h", 32: "=r", 64: "=l"}


def emit_asm(builder, template: str, operands: Sequence[tuple[ir.Value, str]],
             result: str | None = None, memory: bool = True) -> ir.Value | None:
    """Emit one inline-asm call.

    ``operands`` are ``(value, constraint)`` pairs in ``$n`` order after the result (if any);
    ``result`` is the output constraint (``"=r"``...).  Side effects are always declared so NVVM
    never drops or hoists an async or barrier instruction.
    """
    constraints = ([result] if result else []) + [c for _, c in operands]
    if memory:
        constraints.append("~{memory}")
    ret_ty = {None: ir.VoidType(), "=r": I32, "=l": I64, "=h": I16}[result]
    fnty = ir.FunctionType(ret_ty, [v.type for v, _ in operands])
    asm = ir.InlineAsm(fnty, template, ",".join(constraints), side_effect=True)
    return builder.call(asm, [v for v, _ in operands])


def ptx_intrinsic(op: PtxOp, operands: Sequence[Operand], *, doc: str, returns=types.void,
                  check: Callable | None = None, template: Callable | None = None):
    """Build the Numba intrinsic for ``op``; ``doc`` becomes its docstring.

    ``check(**types_by_name)`` may add op-specific typing rules (raise ``TypingError``).
    ``template(**types_by_name)`` returns the PTX text when it depends on the argument types (for
    example the rank of a coordinate tuple); by default ``op.ptx`` is used.
    ``returns``: ``types.void``; ``types.boolean`` (the asm writes a 32-bit 0/1 to ``$0``); or an
    integer type of 16, 32 or 64 bits that the asm writes to ``$0``.
    """
    def typer(typingctx, *argtys):
        check_arch(op)
        for o, ty in zip(operands, argtys):
            o.check(op.name, ty)
        by_name = {o.name: ty for o, ty in zip(operands, argtys)}
        if check is not None:
            check(**by_name)
        text = template(**by_name) if template else op.ptx

        def codegen(context, builder, sig, args):
            # typing results are cached across targets and toolkits; lowering is not
            check_arch(op)
            if check is not None:
                check(**by_name)
            values = []
            for o, ty, val in zip(operands, sig.args, args):
                values.extend(o.lower(context, builder, ty, val))
            if returns == types.boolean:
                out = emit_asm(builder, text, values, result="=r", memory=op.memory)
                return builder.icmp_unsigned("!=", out, ir.Constant(I32, 0))
            if isinstance(returns, types.Integer):
                return emit_asm(builder, text, values, result=_RESULT[returns.bitwidth], memory=op.memory)
            emit_asm(builder, text, values, memory=op.memory)
            return context.get_dummy_value()

        return returns(*argtys), codegen

    # @intrinsic reads the typing function's signature: give it the op's argument names so keyword
    # calls bind like the documented signature (numba folds them into positional order).
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature(
        [inspect.Parameter("typingctx", kind)] + [inspect.Parameter(o.name, kind) for o in operands]
    )

    def defn(typingctx, *argtys, **kwtys):
        try:
            bound = signature.bind(typingctx, *argtys, **kwtys)
        except TypeError as exc:
            names = ", ".join(o.name for o in operands)
            raise OpArgumentError(f"numba_tma: {op.name} takes ({names}): {exc}") from None
        return typer(typingctx, *list(bound.arguments.values())[1:])

    defn.__signature__ = signature
    defn.__name__ = defn.__qualname__ = op.name.rsplit(".", 1)[-1]
    defn.__doc__ = inspect.cleandoc(doc)
    defn.__module__ = sys._getframe(1).f_globals.get("__name__", __name__)
    return _intrinsic(target="cuda", prefer_literal=True)(defn)
