"""The emission core: the one place that turns an op declaration into a Numba intrinsic.

An op is one :class:`PtxOp`: its PTX template, operands, qualifier sets (``sem``, ``scope``,
reduce op, cache hint... each value with the PTX text and the architecture it needs), its minimum
architecture, its TLX name, the SASS opcode it becomes and a sample call.  From that declaration
come

* the ``@intrinsic`` (:meth:`PtxOp.intrinsic`): typing-time validation naming the argument and the
  rule (:class:`OpArgumentError`), the architecture check (:class:`ArchError`), and lowering of
  every operand to inline-asm operands — a shared array becomes a 32-bit shared-window address
  (``addrspacecast`` to addrspace(3) + ``ptrtoint i32``, constraint ``r``), a global array a 64-bit
  generic address (``l``), integers are cast to the width the instruction takes;
* its docstring's PTX block and requirement lines;
* its family module's ``__all__`` (:func:`exported`), the catalogue (``numba_tma.catalog``,
  ``docs/ops.md``) and its row in the assembly test (``tests/test_assembles.py``).

The template is rendered while *lowering*, with the compilation target known, so an op whose PTX
depends on the architecture emits the right text for each target of one kernel.  Templates are
``str.format`` strings: ``{name}`` is an operand (``$n``; a tuple operand expands to ``$n, $m``),
a qualifier (its PTX fragment) or a key of the op's ``fields(...)``; ``{out}`` is the result,
``{uid}`` a per-instance unique number for labels; PTX braces are doubled.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from numba.cuda import types
from numba.cuda.datamodel import PrimitiveModel
from numba.cuda.extending import register_model   # (not from numba.cuda.models, which imports extending partway)

from . import debug
from .hosts.llvm_emitter import LlvmEmitter, global_address, shared_address  # noqa: F401  (re-exported)
from .hosts.llvm_host import (I16, I32, I64, build_intrinsic, current_cc, emit_asm, emit_tied_asm,  # noqa: F401  (re-exported)
                        mark_constant_multicast)
from .tensor_map_type import TensorMapType
from ..errors import ArchError, OpArgumentError  # noqa: F401  (re-exported)
from ..declarations import (IMMEDIATE, OPS, REQUIRED, Choice, Declaration, Qualifier, Refusal,  # noqa: F401
                            exported, literal, reject)
from ..declarations import Operand as _Operand
from ..declarations import check_range as _check_literal
from ..declarations import missing_in_order
from ..declarations import omitted as _omitted

_RESULT = {16: "=h", 32: "=r", 64: "=l"}   # an op's result register, by its bits




# --------------------------------------------------------------------------------------------
# Architecture requirements
# --------------------------------------------------------------------------------------------


def arch_name(cc) -> str:
    """``(9, 0, "a")`` -> ``"sm_90a"``; ``(8, 0)`` -> ``"sm_80"``."""
    suffix = cc[2] if len(cc) > 2 else ""
    return f"sm_{cc[0]}{cc[1]}{suffix}"


# The NVIDIA architectures that exist (CUDA 12-13): ``a`` targets from sm_90, ``f`` from sm_100.
KNOWN_ARCHS = ((5, 0), (5, 2), (5, 3), (6, 0), (6, 1), (6, 2), (7, 0), (7, 2), (7, 5), (8, 0), (8, 6), (8, 7), (8, 8),
               (8, 9), (9, 0), (10, 0), (10, 1), (10, 3), (11, 0), (12, 0), (12, 1))


def parse_arch(arch) -> tuple:
    """``"sm_90a"`` / ``"90a"`` / ``(9, 0, "a")`` -> the ``cc`` tuple numba-cuda takes; an
    architecture that does not exist (``sm_91``, ``sm_80a``) is refused."""
    if isinstance(arch, tuple):
        cc = arch
    else:
        m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(\d)([af]?)", str(arch))
        if not m:
            raise ValueError(f"arch={arch!r}: expected a name such as 'sm_90a', 'sm_100a' or 'sm_80'")
        major, minor, suffix = int(m.group(1)), int(m.group(2)), m.group(3)
        cc = (major, minor, suffix) if suffix else (major, minor)
    suffix = cc[2] if len(cc) > 2 else ""
    if tuple(cc[:2]) not in KNOWN_ARCHS or (suffix == "a" and cc[:2] < (9, 0)) or (suffix == "f" and cc[:2] < (10, 0)):
        known = ", ".join(arch_name(k) for k in KNOWN_ARCHS if k >= (8, 0))
        raise ValueError(f"arch={arch!r}: no such NVIDIA architecture (from sm_80: {known}; 'a' targets from sm_90a, "
                         "'f' from sm_100f)")
    return cc


@dataclass(frozen=True)
class Requirement:
    """The lowest compute capability and PTX ISA with an instruction.  ``arch_specific``: it also
    needs the ``a`` (or ``f``) target of that family (``sm_90a``); ``max_cc`` (exclusive) bounds an
    instruction a later family dropped."""

    min_cc: tuple = (9, 0)
    min_ptx: tuple = (8, 0)
    arch_specific: bool = False
    max_cc: tuple | None = None

    def __str__(self) -> str:
        need = arch_name(self.min_cc + (("a",) if self.arch_specific else ()))
        span = f"{need} up to (excluding) {arch_name(self.max_cc)}" if self.max_cc else f"{need} or newer"
        return f"{span}, PTX ISA {self.min_ptx[0]}.{self.min_ptx[1]}"

    def supported_on(self, cc) -> bool:
        base = tuple(cc[:2])
        if base < self.min_cc or (self.max_cc and base >= self.max_cc):
            return False
        return not self.arch_specific or (len(cc) > 2 and cc[2] in ("a", "f"))

    def __or__(self, other: "Requirement | None") -> "Requirement":
        """The requirement of using both (the stricter of each part)."""
        if other is None:
            return self
        maxes = [m for m in (self.max_cc, other.max_cc) if m]
        return Requirement(max(self.min_cc, other.min_cc), max(self.min_ptx, other.min_ptx),
                           self.arch_specific or other.arch_specific, min(maxes) if maxes else None)


def check_arch(name: str, need: Requirement, cc=None) -> None:
    """Raise :class:`ArchError` if the compilation target (``cc``; by default numba-cuda's current
    one) or the toolkit lacks ``need``; nothing is checked with no target (nothing is being
    compiled: the CUDA simulator's twins, which run an op's other rules, have neither)."""
    cc = current_cc() if cc is None else cc
    if cc is None:
        return
    if not need.supported_on(cc):
        raise ArchError(f"numba_tma: {name} needs {need}, but the kernel is being compiled for {arch_name(cc)}")
    have = toolkit_ptx_isa()
    if have < need.min_ptx:
        raise ArchError(
            f"numba_tma: {name} needs PTX ISA {need.min_ptx[0]}.{need.min_ptx[1]}, but the installed "
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


class LateReject(Exception):
    """Raised by :meth:`Operand.lower` for a constant only visible while lowering: ``(argument,
    rule, value)``; the op turns it into its :class:`OpArgumentError`."""


class Operand(_Operand):
    """One Python argument of an op and how it lowers to inline-asm operands (the NVIDIA binding's
    operand kinds; checks and docs come from :class:`numba_tma.declarations.Operand`)."""

    def lower(self, host, ty, val) -> list[tuple[object, str]]:
        """Return ``[(value, constraint letter), ...]``: the argument ``val`` (of Numba type ``ty``)
        lowered through ``host`` (:class:`.host.Host`, every host compiler)."""
        raise NotImplementedError

    def keys(self, slot: str, ty) -> dict:
        """The template keys this operand fills: ``{name: "$n"}`` (``slot``); operands that also
        add PTX qualifiers override."""
        return {self.name: slot}

    def debug_check(self, d, op_name: str, ty, val) -> None:
        """Debug mode only: run-time checks of the argument through the host's emitter ``d``
        (:class:`.debug.Emitter`)."""


_CONSTRAINT = {16: "h", 32: "r", 64: "l"}


class Int(Operand):
    """An integer cast to ``bits`` bits (``r`` for 32, ``l`` for 64, ``h`` for 16).

    A constant argument must lie in ``[lo, hi]`` (default: what ``bits`` can hold); ``rule`` says
    so in the op's own terms.
    """

    annotation = "int"

    def __init__(self, name: str, bits: int = 32, signed: bool = False, lo: int | None = None,
                 hi: int | None = None, rule: str | None = None):
        super().__init__(name)
        self.bits, self.signed, self.rule = bits, signed, rule
        self.lo = lo if lo is not None else (-(1 << (bits - 1)) if signed else 0)
        self.hi = hi if hi is not None else ((1 << (bits - 1)) - 1 if signed else (1 << bits) - 1)

    def check(self, op_name, ty):
        if not isinstance(ty, (types.Integer, types.IntegerLiteral, types.Boolean)):
            raise reject(op_name, self.name, "must be an integer", ty)
        _check_literal(op_name, self.name, ty, self.lo, self.hi, self.rule)

    def lower(self, host, ty, val):
        target = getattr(types, f"{'int' if self.signed else 'uint'}{self.bits}")
        return [(host.convert(val, ty, target), _CONSTRAINT[self.bits])]


class Float(Operand):
    """A float32 operand (``f``) in ``(lo, hi]``, checked when constant; optional with ``default``."""

    annotation = "float"

    def __init__(self, name: str, lo: float, hi: float, default=REQUIRED):
        super().__init__(name)
        self.lo, self.hi, self.default = lo, hi, default

    def check(self, op_name, ty):
        if not isinstance(ty, (types.Float, types.Integer, types.IntegerLiteral, types.Omitted)):
            raise reject(op_name, self.name, "must be a number", ty)
        value = literal(ty)
        if isinstance(value, (int, float)) and not self.lo < value <= self.hi:
            raise reject(op_name, self.name, f"must be in ({self.lo}, {self.hi}]", value)

    def lower(self, host, ty, val):
        if isinstance(ty, types.Omitted):
            return [(host.float32_constant(float(ty.value)), "f")]
        value = host.constant(val)
        if value is not None and not self.lo < float(value) <= self.hi:
            # Numba types float constants without a literal type: this is where they are known
            raise LateReject(self.name, f"must be in ({self.lo}, {self.hi}]", value)
        return [(host.convert(val, ty, types.float32), "f")]


class Const(Operand):
    """A compile-time integer in ``[lo, hi]`` written into the PTX text (an immediate)."""

    annotation = "int"

    def __init__(self, name: str, lo: int, hi: int, rule: str | None = None):
        super().__init__(name)
        self.lo, self.hi, self.rule = lo, hi, rule

    def check(self, op_name, ty):
        if not isinstance(literal(ty), int) or isinstance(literal(ty), bool):
            raise reject(op_name, self.name, "must be a compile-time integer constant (the PTX takes an immediate)", ty)
        _check_literal(op_name, self.name, ty, self.lo, self.hi, self.rule)

    def lower(self, host, ty, val):
        return []


class Fragment(Operand):
    """A tuple of registers the instruction both reads and writes (an MMA accumulator): a
    ``UniTuple`` of ``float32`` (``f`` registers) or ``int32`` (``r``) of one of ``lengths``.
    ``{name}`` is its registers, ``$0, $1, ...``: the op's outputs, each tied to the input of the
    same register, so the op returns the new tuple (:attr:`PtxOp.tied` names this operand)."""

    annotation = "tuple"

    def __init__(self, name: str, lengths: Sequence[int], dtypes: Sequence[str] = ("float32", "int32"),
                 what: str = "an accumulator fragment (wgmma.zeros(n))"):
        super().__init__(name)
        self.lengths, self.dtypes, self.what = tuple(lengths), tuple(dtypes), what

    def check(self, op_name, ty):
        if not (isinstance(ty, types.UniTuple) and str(ty.dtype) in self.dtypes and ty.count in self.lengths):
            counts = f"{self.lengths[0]} to {self.lengths[-1]}" if len(self.lengths) > 3 else \
                ", ".join(map(str, self.lengths))
            raise reject(op_name, self.name, f"must be {self.what}: a tuple of {' or '.join(self.dtypes)} of "
                         f"{counts} registers", ty)

    def lower(self, host, ty, val):
        letter = "f" if str(ty.dtype) == "float32" else "r"
        return [(host.convert(v, t, ty.dtype), letter) for v, t in host.items(val, ty)]

    def placeholder(self, ty):
        return f"{{{self.name}}}"

    def doc_keys(self):
        return {self.name: "d0, d1, ..."}


class GlobalArray(Operand):
    """A device array in global memory (or a slice of one, e.g. a row of a pitched 2-D array);
    the op uses element 0's 64-bit address (``l``).  Whether the array really lives in global
    memory is not visible in its Numba type and is not checked."""

    annotation = "DeviceArray"

    def __init__(self, name: str, what: str = "a device array in global memory", dtypes: Sequence = ()):
        super().__init__(name)
        self.what, self.dtypes = what, tuple(dtypes)

    def check(self, op_name, ty):
        if isinstance(ty, TensorMapType) and ty.in_global:
            raise reject(op_name, self.name, f"must be {self.what}, not a map typed by its layout "
                         "(TensorMap.to_device(), numba_tma.mlir.map_in_global): that array is read-only, the "
                         "layout its type says must hold through the kernel — tensormap.copy the map into a uint8 "
                         "buffer of your own to edit it", ty)
        if not isinstance(ty, types.Array) or (self.dtypes and ty.dtype not in self.dtypes):
            raise reject(op_name, self.name, f"must be {self.what}", ty)

    def lower(self, host, ty, val):
        return [(host.generic_address(val, ty), "l")]


class SharedRefFacts:
    """What the type of ``numba_tma.at(array, i)`` says, on every host (each host's type class adds
    its own base): ``dtype``, the element type; ``contiguous``, whether what it names is
    C-contiguous (an element, or a sub-array of a C-contiguous array)."""

    def __init__(self, dtype, contiguous):
        self.dtype, self.contiguous = dtype, contiguous
        super().__init__(name=f"SharedRef[{dtype}{'' if contiguous else ', strided'}]")

    @property
    def key(self):
        return self.dtype, self.contiguous


class SharedRef(SharedRefFacts, types.Type):
    """The shared address of one element (or sub-array) of a shared array: ``numba_tma.at(array, i)``."""


@register_model(SharedRef)
class SharedRefModel(PrimitiveModel):
    """A 32-bit shared-window address."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, I32)


class SharedArray(Operand):
    """A ``cuda.shared.array`` (or a slice of one); the op uses element 0's shared address.

    ``dtypes`` restricts the element type (e.g. mbarriers are ``uint64``); ``contiguous`` demands
    a C-contiguous view, for operands the hardware fills densely from element 0.  Whether the
    array really lives in shared memory is not visible in its Numba type and is not checked.
    """

    annotation = "SharedArray"

    def __init__(self, name: str, dtypes: Sequence = (), what: str = "a shared array",
                 contiguous: bool = False, align: int = 1, why: str = ""):
        super().__init__(name)
        self.dtypes, self.what, self.contiguous = tuple(dtypes), what, contiguous
        self.align, self.why = align, why   # debug mode checks the address against ``align``

    def check(self, op_name, ty):
        if not isinstance(ty, (types.Array, SharedRef)):
            raise reject(op_name, self.name, f"must be {self.what} (or at(array, i))", ty)
        if self.dtypes and ty.dtype not in self.dtypes:
            allowed = " or ".join(str(d) for d in self.dtypes)
            raise reject(op_name, self.name, f"must be {self.what} of {allowed}", ty)
        contiguous = ty.contiguous if isinstance(ty, SharedRef) else ty.layout == "C"
        if self.contiguous and not contiguous:
            raise reject(op_name, self.name, f"must be a C-contiguous view ({self.what} is written densely "
                         "from element 0)", ty)

    def lower(self, host, ty, val):
        return [(host.shared_address(val, ty), "r")]   # at(array, i): already the shared address

    def debug_check(self, d, op_name, ty, val):
        if isinstance(ty, SharedRef):
            address = val
        else:
            address = d.generic_address(val, ty)
            debug.check_shared(d, op_name, self.name, address)
        if self.align > 1:
            debug.check_aligned(d, op_name, self.name, address, self.align, self.why)


class IntTuple(Operand):
    """A tuple of integers, each cast to a ``bits``-bit int (``r`` for 32, ``h`` for 16);
    ``lengths`` lists the tuple lengths allowed."""

    annotation = "tuple[int, ...]"

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
            lo, hi = min(self.lengths), max(self.lengths)
            raise reject(op_name, self.name, f"must have {lo if lo == hi else f'{lo} to {hi}'} entries", len(ty))
        lo, hi = self.range
        for i, t in enumerate(ty):
            _check_literal(op_name, f"{self.name}[{i}]", t, lo, hi)

    def lower(self, host, ty, val):
        target = getattr(types, f"int{self.bits}")
        return [(host.convert(v, t, target), _CONSTRAINT[self.bits]) for v, t in host.items(val, ty)]

    def placeholder(self, ty):
        n = len(ty) if ty is not None else 2
        return ", ".join(f"{self.name[0]}{i}" for i in range(n))


class Value(Operand):
    """The value a store writes to the shared array ``like`` (a peer operand): a number, or a
    tuple of 2 or 4 numbers (a PTX vector ``{a, b}``), each converted to the array's element type
    (32 or 64 bits, integer or float; floats travel as their bits), at most ``max_bits`` in all.
    Adds the template keys ``{vec}`` (``""``, ``.v2``, ``.v4``) and ``{bits}`` (``.b32``, ``.b64``).
    """

    annotation = "int | float | tuple[int | float, ...]"

    def __init__(self, name: str, like: str, lengths: Sequence[int] = (1, 2, 4), max_bits: int = 128):
        super().__init__(name)
        self.peers, self.lengths, self.max_bits = (like,), tuple(lengths), max_bits

    @staticmethod
    def _count(ty):
        return len(ty) if isinstance(ty, types.BaseTuple) else 1

    def check(self, op_name, ty, like):
        dtype = like.dtype
        if not isinstance(dtype, (types.Integer, types.Float)) or dtype.bitwidth not in (32, 64):
            raise reject(op_name, self.peers[0], "must be a shared array of 32- or 64-bit numbers", like)
        elements = list(ty) if isinstance(ty, types.BaseTuple) else [ty]
        if not all(isinstance(t, (types.Number, types.IntegerLiteral, types.BooleanLiteral)) for t in elements):
            raise reject(op_name, self.name, "must be a number or a tuple of numbers", ty)
        n = len(elements)
        if n not in self.lengths:
            allowed = " or ".join(str(k) for k in self.lengths if k > 1)
            raise reject(op_name, self.name, f"must be one number{f' or a tuple of {allowed}' if allowed else ''}", n)
        if n * dtype.bitwidth > self.max_bits:
            raise reject(op_name, self.name, f"must hold at most {self.max_bits} bits: {n} x {dtype} is "
                         f"{n * dtype.bitwidth}", ty)

    def lower(self, host, ty, val, like):
        dtype = like.dtype
        elements = host.items(val, ty) if isinstance(ty, types.BaseTuple) else [(val, ty)]
        lowered = []
        for v, t in elements:
            v = host.convert(v, t, dtype)
            lowered.append((host.as_bits(v) if isinstance(dtype, types.Float) else v, _CONSTRAINT[dtype.bitwidth]))
        return lowered

    def keys(self, slot, ty, like=None):
        n = self._count(ty)
        bits = like.dtype.bitwidth if like is not None else 32
        return {self.name: slot if n == 1 else "{" + slot + "}", "vec": "" if n == 1 else f".v{n}",
                "bits": f".b{bits}"}

    def doc_keys(self):
        return {self.name: "value", "vec": "[.v2|.v4]", "bits": ".b32"}


class CacheHint(Operand):
    """``cache_hint=None``: a 64-bit L2 policy (``numba_tma.cache.policy``) adds
    ``.L2::cache_hint`` to the instruction (template key ``{cache_hint}``) and the policy operand
    (``{policy}``, with its leading comma)."""

    annotation = "int | None"

    default = None

    def __init__(self, name: str = "cache_hint"):
        super().__init__(name)

    def check(self, op_name, ty):
        if not _omitted(ty) and not isinstance(ty, (types.Integer, types.IntegerLiteral)):
            raise reject(op_name, self.name, "must be None or a 64-bit L2 policy from numba_tma.cache.policy(...)", ty)

    def lower(self, host, ty, val):
        return [] if _omitted(ty) else [(host.convert(val, ty, types.uint64), "l")]

    def keys(self, slot, ty):
        given = not _omitted(ty)
        return {self.name: ".L2::cache_hint" if given else "", "policy": f", {slot}" if given else ""}

    def placeholder(self, ty):
        return ""

    def doc_keys(self):
        return {self.name: "[.L2::cache_hint]", "policy": "[, policy]"}


class Multicast(Operand):
    """``multicast=None``: a 16-bit mask of the cluster's CTAs (bit ``r`` for rank ``r``) that also
    receive the data; given, it adds ``.multicast::cluster`` (template key ``{multicast}``) and the
    mask operand (``{mask}``, with its leading comma)."""

    annotation = "int | None"

    default = None

    def __init__(self, name: str = "multicast"):
        super().__init__(name)

    def check(self, op_name, ty):
        if _omitted(ty):
            return
        if not isinstance(ty, (types.Integer, types.IntegerLiteral)):
            raise reject(op_name, self.name, "must be None or a 16-bit mask of the cluster's CTAs", ty)
        _check_literal(op_name, self.name, ty, 1, (1 << 16) - 1)

    def lower(self, host, ty, val):
        return [] if _omitted(ty) else [(host.convert(val, ty, types.uint16), "h")]

    def keys(self, slot, ty):
        given = not _omitted(ty)
        return {self.name: ".multicast::cluster" if given else "", "mask": f", {slot}" if given else ""}

    def placeholder(self, ty):
        return ""

    def doc_keys(self):
        return {self.name: "[.multicast::cluster]", "mask": "[, cta_mask]"}


class Optional(Operand):
    """An operand the PTX form may leave out: omitted (its ``default``), nothing is emitted; given,
    it is ``inner`` with a leading comma (template key ``{name}``) and needs ``need`` beyond the op
    (e.g. ``mbarrier.arrive``'s count, sm_90)."""

    def __init__(self, inner: Operand, default, need: "Requirement | None" = None):
        super().__init__(inner.name)
        self.inner, self.default, self.need = inner, default, need
        self.annotation = inner.annotation if inner.annotation.endswith("| None") else f"{inner.annotation} | None"

    def check(self, op_name, ty):
        if not _omitted(ty):
            self.inner.check(op_name, ty)

    def lower(self, host, ty, val):
        return [] if _omitted(ty) else self.inner.lower(host, ty, val)

    def keys(self, slot, ty):
        return {self.name: "" if _omitted(ty) else f", {slot}"}

    def doc_keys(self):
        return {self.name: f"[, {self.name}]"}


# --------------------------------------------------------------------------------------------
# The assembly test's expected PTX
# --------------------------------------------------------------------------------------------


# The placeholders of a sample's hand-written PTX (``Sample.ptx``): each stands for what NVVM wrote
# in its place.  A register operand of the inline asm is a virtual register of its class, whatever
# its number; ``%n`` is a decimal number (a label's per-instance suffix).  Everything else is
# literal: immediates, the asm block's own registers (``p``, ``remote_dst``), special registers
# (``%cluster_ctarank``), the sink ``_``.
PTX_PLACEHOLDERS = {
    "%rd": r"%rd\d+",   # 64-bit (``l`` constraint: global and generic addresses, tokens, policies)
    "%rs": r"%rs\d+",   # 16-bit (``h``: multicast masks, byte masks, im2col offsets)
    "%r": r"%r\d+",     # 32-bit (``r``: shared-window addresses, counts, coordinates, results)
    "%fd": r"%(?:fd|rd)\d+",   # float64 (``d``; NVVM for sm_100 keeps floats in untyped %rd / %r registers)
    "%f": r"%(?:f|r)\d+",      # float32 (``f``)
    "%p": r"%p\d+",     # predicate
    "%n": r"\d+",       # a number NVVM chose (``${:uid}`` labels)
}
_PLACEHOLDER = re.compile("(" + "|".join(sorted(PTX_PLACEHOLDERS, key=len, reverse=True)) + r")(?![\w%])")


def _squash(line: str) -> str:
    """A PTX line with the spacing that does not change its meaning made canonical: one space
    between words, none before ``, ; ] } |`` or after ``[ { |``."""
    line = re.sub(r"\s+", " ", line.strip())
    line = re.sub(r"\s+([,;\]}|])", r"\1", line)
    return re.sub(r"([\[{|])\s+", r"\1", line)


def ptx_line_pattern(line: str) -> re.Pattern:
    """The regular expression a PTX line matches, in full, when it is the hand-written ``line``
    (its placeholders, :data:`PTX_PLACEHOLDERS`, standing for registers of their class)."""
    parts = _PLACEHOLDER.split(_squash(line))
    return re.compile("".join(PTX_PLACEHOLDERS[p] if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def ptx_missing(lines: Sequence[str], ptx: str) -> list[str]:
    """The hand-written ``lines`` not found, in that order, as whole lines of the kernel ``ptx``
    (each one after the line the previous one matched); ``[]`` when all are there."""
    return missing_in_order(lines, [_squash(line) for line in ptx.splitlines()], ptx_line_pattern)


@dataclass(frozen=True)
class Sample:
    """One row of the assembly test: a call compiled in a test kernel (names ``bar``, ``smem``,
    ``desc``, ``out``, ``cuda``, ``numba``, ``types`` are provided there), the SASS opcode it must
    become (or ``{arch: opcode}``, ``""`` for every other arch), and template ``fields`` for the
    expected PTX where they depend on the call (e.g. the rank).

    ``ptx``: the instruction lines the call as written (every qualifier at its default, or the one
    ``only`` admits) must put into the kernel's PTX, written by hand from the PTX ISA's syntax for
    the instruction — not from the op's template, so a template that strays from the ISA fails
    its row.  Registers are placeholders of their class (``%r``, ``%rd``, ``%rs``, ``%f``, ``%p``;
    ``%n`` a number, :data:`PTX_PLACEHOLDERS`), everything else literal, e.g.
    ``"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r], [%rd], %r, [%r];"``.
    Lines are matched whole and in order (other lines may come between); ``.reg`` declarations
    and the braces of an asm block are not written.  ``isa``: the PTX ISA 9.1 section(s) the lines
    were written from (``"9.7.9.25.4.1 cp.async.bulk"``; several joined by ``"; "``).  ``options``:
    numba-cuda compile options of the test kernel (``launch_bounds``, which ``setmaxnreg`` needs).
    """

    call: str
    sass: str | Mapping
    fields: Mapping = field(default_factory=dict)
    only: Mapping = field(default_factory=dict)   # qualifier -> the value (or tuple of values) this row is for
    desc: tuple = ()   # (dtype, box, swizzle): ``desc`` is a by-value map of that type, not global bytes
    ptx: tuple = ()    # the hand-written PTX lines (a str is one line)
    isa: str = ""      # the PTX ISA section(s) they come from
    options: Mapping = field(default_factory=dict)   # numba-cuda compile options of the test kernel

    def __post_init__(self):
        if isinstance(self.ptx, str):
            object.__setattr__(self, "ptx", (self.ptx,))

    def ptx_missing_from(self, ptx: str) -> list[str]:
        """The lines of :attr:`ptx` that the kernel ``ptx`` lacks (:func:`ptx_missing`)."""
        return ptx_missing(self.ptx, ptx)

    def opcode(self, arch: str) -> str:
        return self.sass if isinstance(self.sass, str) else self.sass.get(arch, self.sass[""])

    def found_in(self, opcodes, arch: str) -> bool:
        """Whether the expected opcode is among ``opcodes``, or starts one of them at a ``.``
        (``UBLKRED.G.S.ADD`` covers ``UBLKRED.G.S.ADD.F16.RN``)."""
        want = self.opcode(arch)
        return any(o == want or o.startswith(want + ".") for o in opcodes)


@dataclass(frozen=True)
class PtxOp(Declaration):
    """One device op, declared once.

    ``name``: ``"family.op"`` (the family is the public module, ``numba_tma.<family>``).
    ``ptx``: the template (see the module docstring).  ``operands``: the arguments (optional ones,
    with a ``default``, last); ``qualifiers``: compile-time options, documented as keywords.  ``need``: what the op needs with every
    qualifier at its weakest.  ``returns``: ``types.void``, ``types.boolean`` (the asm writes 0/1 to
    ``{out}``) or an integer type of 16, 32 or 64 bits.  ``check(**types)`` adds op-specific typing
    rules; ``fields(cc=..., **types_and_qualifier_values)`` adds template keys computed at lowering.
    ``doc``: summary, details and an example (the PTX block and requirement lines are generated).
    ``tlx``: the TLX / CuTe DSL / ``cuda::ptx`` names it answers to; ``samples``: its rows in the
    assembly test (:class:`Sample`; each is compiled with every qualifier combination it admits);
    ``refusals``: calls it refuses, with the message (:class:`Refusal`; checked compiled and simulated).
    ``memory``: async and barrier ops clobber memory; pure reads do not.  ``order``: the Python
    parameter order when it is not operands then qualifiers.  ``spell(**qualifier_values)`` adds
    template keys that depend on several qualifiers at once.
    """

    name: str
    ptx: str
    operands: tuple = ()
    qualifiers: tuple = ()
    need: Requirement = Requirement()
    returns: object = types.void
    check: Callable | None = None
    fields: Callable | None = None
    doc: str = ""
    doc_fields: Mapping = field(default_factory=dict)
    order: tuple = ()
    spell: Callable | None = None
    tlx: tuple = ()
    samples: tuple = ()
    refusals: tuple = ()
    memory: bool = True
    debug: Callable | None = None       # debug mode: debug(emitter, tys, args) adds run-time checks (.debug)
    debug_wait: str | None = None       # debug mode: a bounded form of the template; {out} = 1 on time-out
    tied: str | None = None             # a Fragment operand read and written: the op returns its new tuple
    returns_regs: Callable | None = None   # (**qualifier values) -> n: the op returns n uint32 registers, {out}

    # -- what a given call needs and emits ---------------------------------------------------
    def requirement(self, chosen: Mapping = {}, given: tuple = ()) -> Requirement:
        """What the op needs with qualifiers ``chosen`` and the optional operands ``given``."""
        need = self.need
        for q in self.qualifiers:
            need = need | q.fragment(chosen.get(q.name, q.example)).need
        for o in self.operands:
            if o.name in given:
                need = need | getattr(o, "need", None)
        return need

    def render(self, values: Mapping, chosen: Mapping, extra: Mapping, uid: str = "${:uid}",
               bounded: bool = False) -> str:
        """The template (``self.ptx``; with ``bounded``, debug mode's :attr:`debug_wait` and its
        time limit) with operands, qualifier fragments and fields filled in."""
        keys = dict(values, uid=uid) | ({"timeout": debug.timeout_ns()} if bounded else {})
        keys.update({q.name: q.fragment(chosen[q.name]).ptx for q in self.qualifiers})
        if self.spell:
            keys.update(self.spell(**chosen))
        keys.update({k: str(v).format(**keys) for k, v in extra.items()})  # fields may name operands
        return (self.debug_wait if bounded else self.ptx).format(**keys)

    def instances(self):
        """Every qualifier combination: ``[{name: value}, ...]``."""
        names = [q.name for q in self.qualifiers]
        return [dict(zip(names, combo)) for combo in itertools.product(*(q.choices for q in self.qualifiers))]

    def ptx_text(self, chosen: Mapping | None = None, tys: Mapping | None = None) -> str:
        """The PTX with operand names in place of registers (docs, catalogue)."""
        chosen = {q.name: q.example for q in self.qualifiers} | dict(chosen or {})
        tys = tys or {}
        values = {"out": "out"}
        for o in self.operands:
            values.update(o.doc_keys() if hasattr(o, "doc_keys") else {o.name: o.placeholder(tys.get(o.name))})
        return self.render(values, chosen, self.doc_fields, uid="N")

    # -- typing a call (every host) --------------------------------------------------------------
    def type_call(self, args, kwargs) -> tuple[dict, dict, tuple]:
        """``(tys, chosen, given)`` for a call ``op(*args, **kwargs)`` of Numba types: every
        parameter's type in order (``types.Omitted`` for a default left out), the qualifier values
        chosen (the op's rules checked, :meth:`check_types`) and the optional operands given."""
        tys = self.argument_types(args, kwargs)
        chosen = self.check_types(tys)
        given = tuple(o.name for o in self.operands if o.default is not REQUIRED and not _omitted(tys[o.name]))
        return tys, chosen, given

    def check_call_arch(self, chosen: Mapping, given: tuple, cc=None) -> None:
        """:class:`ArchError` unless the target (``cc``; by default numba-cuda's current one) has
        what the call needs, naming the operands and qualifier values that raised the need."""
        named = self.name + "".join(f" with '{name}'" for name in given if getattr(
            next(o for o in self.operands if o.name == name), "need", None))
        named += "".join(f" with {q.name}={chosen[q.name]!r}" for q in self.qualifiers   # what raised the need
                         if self.need | q.fragment(chosen[q.name]).need != self.need)
        check_arch(named, self.requirement(chosen, given), cc)

    # -- debug mode (every host: ``d`` is its :class:`.debug.Emitter`) ---------------------------
    def bounded(self) -> bool:
        """Debug mode is on and the op has a bounded form (:attr:`debug_wait`: ``{out}`` is 1 on time-out)."""
        return debug.STATE.on and self.debug_wait is not None

    def emit_debug_checks(self, d, tys: Mapping, args: Mapping) -> None:
        """Debug mode: each operand's run-time checks, then the op's :attr:`debug` hook, on the
        arguments as the kernel passed them (``args``: by name), before the op."""
        if debug.STATE.on:
            for o in self.operands:
                o.debug_check(d, self.name, tys[o.name], args.get(o.name))
            if self.debug is not None:
                self.debug(d, tys, args)

    def report_time_out(self, d, flag, lowered: Mapping) -> None:
        """After the bounded wait: trap, naming the barrier and the phase, if ``flag`` says it
        timed out (``lowered``: each operand's lowered ``[(value, constraint)]``, by name)."""
        debug.report_time_out(d, self.name, flag, lowered["bar"][0][0], lowered["phase"][0][0])

    # -- emission (every host: ``host`` is its :class:`.host.Host`) -----------------------------
    def outputs(self, tys: Mapping, chosen: Mapping) -> list[str]:
        """The output constraints of a call: a tied fragment's registers, ``returns_regs``'s, the
        one result, none for a void op; debug mode's bounded wait has its time-out flag."""
        if self.bounded():
            return ["=r"]
        if self.tied:
            tied = tys[self.tied]
            return ["=f" if str(tied.dtype) == "float32" else "=r"] * tied.count
        if self.returns_regs:
            return ["=r"] * self.returns_regs(**chosen)
        if self.returns == types.void:
            return []
        return ["=r" if self.returns == types.boolean else _RESULT[self.returns.bitwidth]]

    def result_type(self, tys: Mapping, chosen: Mapping):
        """The Numba type of a call's result."""
        if self.tied:
            return tys[self.tied]
        if self.returns_regs:
            return types.UniTuple(types.uint32, self.returns_regs(**chosen))
        return self.returns

    def emit(self, host, tys: Mapping, chosen: Mapping, given: tuple, args: Mapping, cc):
        """The call lowered through ``host`` for the target ``cc``: the checks that only lowering
        can make (the target's architecture, the host's own refusals, the op's ``check`` again —
        typing is cached across targets — and each operand's constants known only here,
        :class:`LateReject`), debug mode's checks, each operand lowered by its class and numbered
        into the template's slots (outputs first, a tied fragment's inputs tied to them), the
        template rendered, one inline asm, and its result (``None`` for none).  ``tys``,
        ``chosen``, ``given``: the call's typing (:meth:`type_call`); ``args``: the kernel's values
        by parameter name."""
        self.check_call_arch(chosen, given, cc)
        host.refuse(self.name, tys.values(), cc)
        operand_tys = {o.name: tys[o.name] for o in self.operands}
        if self.check is not None:
            self.check(**operand_tys, **chosen)
        self.emit_debug_checks(host, tys, args)
        outputs = self.outputs(tys, chosen)
        values, slots, lowered_by_name, n = [], {}, {}, len(outputs)
        for o in self.operands:
            ty, peers = tys[o.name], [tys[p] for p in o.peers]
            if isinstance(o, Multicast) and isinstance(literal(ty), int):
                host.mark_multicast(self.name, literal(ty))
            try:
                lowered = o.lower(host, ty, args.get(o.name), *peers)
            except LateReject as late:
                raise reject(self.name, *late.args) from None
            if o.name == self.tied:   # outputs $0..$k-1; these inputs are tied to them
                slots[o.name] = ", ".join(f"${i}" for i in range(len(lowered)))
                lowered = [(v, str(i)) for i, (v, _) in enumerate(lowered)]
            else:
                slots.update(o.keys(str(literal(ty)) if isinstance(o, Const) else
                                    ", ".join(f"${n + i}" for i in range(len(lowered))), ty, *peers))
            n += len(lowered)
            values.extend(lowered)
            lowered_by_name[o.name] = lowered
        extra = self.fields(cc=cc, **operand_tys, **chosen) if self.fields else {}
        regs = self.returns_regs and not self.bounded()
        out_slot = ", ".join(f"${i}" for i in range(len(outputs))) if regs else "$0"
        text = self.render(slots | {"out": out_slot}, chosen, extra, bounded=self.bounded())
        if self.bounded():
            self.report_time_out(host, host.instruction(text, values, "=r", self.memory), lowered_by_name)
            return None
        if self.tied or self.returns_regs:
            return host.instruction_registers(text, values, outputs, self.memory, self.result_type(tys, chosen))
        if not outputs:
            host.instruction(text, values, None, self.memory)
            return None
        out = host.instruction(text, values, outputs[0], self.memory)
        return host.nonzero(out) if self.returns == types.boolean else out

    # -- the Numba intrinsic -------------------------------------------------------------------
    vendor, twin = "nvidia", True   # every NVIDIA op has a simulator twin (numba_tma.simulator)

    def code_block(self):
        return "PTX", self.ptx_text()

    def words(self):
        texts = super().words() + [self.ptx_text(chosen) for chosen in self.instances()]
        for sample in self.samples:
            texts += [sample.sass] if isinstance(sample.sass, str) else list(sample.sass.values())
        return texts

    def result_annotation(self):
        if self.tied or self.returns_regs:
            return "tuple"
        return "None" if self.returns == types.void else "bool" if self.returns == types.boolean else "int"

    def intrinsic(self):
        """The Numba intrinsic for this op, registered in :data:`OPS` (the public ops)."""
        self.register()
        return build_intrinsic(self)
