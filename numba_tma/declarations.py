"""The vendor-neutral declaration core: what an op *is*, apart from how any compiler emits it.

An op of either vendor is one declaration (:class:`Declaration`): its Python name, operands
(:class:`Operand`, each checked on the Numba type of its argument), compile-time qualifiers
(:class:`Qualifier` / :class:`Choice`), its requirement, documentation, TLX names, assembly rows
(``samples``) and refused calls (:class:`Refusal`).  From it come the op's Python signature,
argument binding and typing checks (shared with the simulator's twin, for the ops that have one),
its docstring, its entry in :data:`OPS` — read by ``numba_tma.catalog``, ``numba_tma.docgen``
(``docs/ops.md``, ``docs/ops/*.md``, the ``.pyi`` stubs) and the assembly and refusal tests.

Bindings turn a declaration into something a compiler can call, on two axes:

* **the vendor**: ``numba_tma.intrinsics._core`` (:class:`PtxOp`: NVIDIA, PTX inline asm; its
  ops have a simulator twin) and ``numba_tma.amd._core`` (``AmdOp``: AMD, LLVM ``amdgcn``
  intrinsics through the emitters of ``numba_tma.amd``, with ``numba_tma.amd.vmcnt`` behind the
  DMA waits; numba-cuda's simulator is CUDA-only, so these ops declare no twin);
* **the host compiler**: each binding lowers through Numba's llvmlite (numba-cuda's ``cuda``
  target for NVIDIA, the library's ``amdgcn`` Numba target for AMD).  Everything llvmlite-specific
  — operand lowering, asm / intrinsic emission, the ``@intrinsic`` — lives in the binding modules,
  never here.  A second host (numba-cuda-mlir, issue 25) adds binding modules that read the same
  declarations: its types translated to Numba's for :meth:`Declaration.check_types`, its own
  operand lowering and emission, keyed on the declaration's vendor.

A *requirement* is per vendor (NVIDIA: compute capability and PTX ISA; AMD: gfx archs and the
LLVM version) behind one protocol: ``str(need)`` for the docs, ``need | other`` for the stricter
of two, ``need.supported_on(arch)`` for the tests.

Nothing here imports llvmlite or a vendor's compiler: only Numba's type system, which both hosts
type with.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Mapping

from numba.core import types

from .errors import OpArgumentError

REQUIRED = inspect.Parameter.empty

OPS: dict[str, "Declaration"] = {}   # every declared op of every vendor, by its Python name ("tma.load")


def reject(op_name: str, arg: str, rule: str, got) -> OpArgumentError:
    """The error for argument ``arg`` of ``op_name`` breaking ``rule``."""
    return OpArgumentError(f"numba_tma: {op_name}: argument '{arg}' {rule}; got {got}")


def literal(ty):
    """The compile-time value of a literal (or omitted) argument type, else ``None``."""
    if isinstance(ty, types.Omitted):
        return ty.value
    return getattr(ty, "literal_value", None)


def omitted(ty) -> bool:
    """An optional argument left out (or given as ``None``)."""
    return isinstance(ty, (types.Omitted, types.NoneType))


def check_range(op_name, name, ty, lo, hi, rule=None):
    """A compile-time constant outside [lo, hi] is refused, never truncated (``rule``: the message
    where the range alone does not say it)."""
    value = literal(ty)
    if isinstance(value, int) and not lo <= value <= hi:
        raise reject(op_name, name, rule or f"must be in [{lo}, {hi}]", value)


class Operand:
    """One Python argument of an op, checked on its Numba type.  An operand with a ``default`` is
    optional (it follows the required ones).  ``annotation``: its kind in the type stubs.  A
    binding's operand kinds add how the argument lowers."""

    default = REQUIRED
    peers: tuple = ()   # names of other operands whose types this one's checks and lowering read
    annotation: str | None = None   # every operand kind says it (docgen refuses one that does not)

    def __init__(self, name: str):
        self.name = name

    def check(self, op_name: str, ty) -> None:
        """Raise :class:`OpArgumentError` naming the argument if ``ty`` is not acceptable."""

    def placeholder(self, ty) -> str:
        """How the operand is named in a docstring's code block."""
        return self.name


@dataclass(frozen=True)
class Choice:
    """One value of a qualifier: the text it adds to the instruction and what it needs beyond
    the op."""

    ptx: str
    need: object = None


@dataclass(frozen=True)
class Qualifier:
    """A keyword option chosen at compile time (``sem="relaxed"``, ``op="add"``...); each value
    selects a fragment of the instruction and may raise the requirement."""

    name: str
    choices: Mapping
    default: object

    def choice(self, op_name, ty) -> object:
        value = None if isinstance(ty, types.NoneType) else literal(ty)
        given = value is not None or None in self.choices and isinstance(ty, (types.NoneType, types.Omitted))
        flags = all(isinstance(c, bool) for c in self.choices)
        if not given or isinstance(value, bool) != flags or value not in self.choices:
            allowed = ", ".join(repr(v) for v in self.choices)
            raise reject(op_name, self.name, f"must be a constant, one of {allowed}", value if value is not None else ty)
        return value

    @property
    def example(self):
        """The value docs show: the default, else the first choice."""
        return next(iter(self.choices)) if self.default is REQUIRED else self.default

    def fragment(self, value) -> Choice:
        c = self.choices[value]
        return c if isinstance(c, Choice) else Choice(c)


IMMEDIATE = ("the PTX takes an immediate; under the simulator a numpy integer (an array's element, a numpy "
             "argument) is refused alike, while a Python int (cuda.threadIdx.x, a loop index) is a constant there "
             "and passes")   # Refusal.constant_only


@dataclass(frozen=True)
class Refusal:
    """A call the op refuses: ``call`` (in the assembly test's kernel of its vendor; ``desc`` as in
    the NVIDIA ``Sample``) raises :class:`OpArgumentError` whose text contains ``message``.  NVIDIA
    ops are checked compiled and under the simulator (``tests/test_refusals.py``), AMD ops compiled
    (``tests/amd/test_amd_declarations.py``).  ``constant_only``: the rule is about the value being
    a compile-time constant (the PTX takes an immediate), which the simulator, running with the
    values themselves, sees broken only by a value of a numpy type (``call`` passes one, so it is
    refused alike there) — the reason, shown in the docs."""

    call: str
    message: str
    desc: tuple = ()
    constant_only: str = ""


class Declaration:
    """What every op declaration has, whatever its vendor: a binding's op class is a frozen
    dataclass with the fields ``name`` (``"family.op"``; the family is the public module,
    ``numba_tma.<family>``), ``operands``, ``qualifiers``, ``need``, ``check``, ``doc``, ``tlx``,
    ``samples``, ``refusals`` and ``order``, and says its ``vendor``, whether its ops have a
    simulator ``twin``, and its code block (:meth:`code_block`)."""

    vendor: str = ""
    twin: bool = False

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def short_name(self) -> str:
        return self.name.split(".", 1)[1]

    def register(self) -> None:
        """Enter the op in :data:`OPS` (the public ops)."""
        OPS[self.name] = self

    # -- the Python signature and the argument rules -----------------------------------------
    @functools.cached_property
    def signature(self) -> inspect.Signature:
        """The op's Python parameters: operands, then qualifiers (or ``order``)."""
        positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
        # qualifiers are documented as keywords; numba's argument folding mishandles keyword-only
        # parameters, so they are ordinary parameters with defaults after the operands
        params = [inspect.Parameter(o.name, positional, default=o.default) for o in self.operands]
        params += [inspect.Parameter(q.name, positional, default=q.default) for q in self.qualifiers]
        if self.order:
            params.sort(key=lambda p: self.order.index(p.name))
        return inspect.Signature(params)

    def bind(self, args, kwargs) -> dict:
        """``{parameter: the value given}`` for a call ``op(*args, **kwargs)`` (values are Numba
        types when typing, Python values under the simulator); a call the signature does not take
        raises :class:`OpArgumentError`."""
        try:
            return dict(self.signature.bind(*args, **kwargs).arguments)
        except TypeError as exc:
            raise OpArgumentError(f"numba_tma: {self.name} takes ({', '.join(self.signature.parameters)}): "
                                  f"{exc}") from None

    def argument_types(self, args, kwargs) -> dict:
        """Every parameter's Numba type for a call (``types.Omitted`` for a default left out)."""
        given = self.bind(args, kwargs)
        return {n: given.get(n, types.Omitted(p.default)) for n, p in self.signature.parameters.items()}

    def check_types(self, tys: Mapping) -> dict:
        """Check every argument (``tys``: a type per parameter; ``types.Omitted`` for defaults) by
        the op's rules, and return the qualifier values chosen.  Raises :class:`OpArgumentError`
        naming the argument and the rule.  The architecture is checked apart, by the binding."""
        for o in self.operands:
            o.check(self.name, tys[o.name], *(tys[p] for p in o.peers))
        chosen = {q.name: q.choice(self.name, tys[q.name]) for q in self.qualifiers}
        if self.check is not None:
            self.check(**{o.name: tys[o.name] for o in self.operands}, **chosen)
        return chosen

    # -- documentation and the catalogue ---------------------------------------------------------
    def code_block(self) -> tuple[str, str]:
        """``(title, text)``: what the op emits, as its docstring shows it (``"PTX"``, ...)."""
        raise NotImplementedError

    def words(self) -> list[str]:
        """Everything the op is found by (``numba_tma.catalog.find``): its name, its TLX / anchor
        names and what it emits (a binding adds its instruction names)."""
        return [self.name, *self.tlx]

    def result_annotation(self) -> str:
        """What the op returns, as the type stubs write it."""
        raise NotImplementedError

    def docstring(self) -> str:
        title, text = self.code_block()
        lines = [inspect.cleandoc(self.doc), "", f"{title}::", ""]
        lines += ["    " + line.strip() for line in text.splitlines()]
        lines += ["", f"Requires {self.need}."]
        for q in self.qualifiers:
            for value, c in q.choices.items():
                if isinstance(c, Choice) and c.need is not None:
                    lines.append(f"With ``{q.name}={value!r}``: {self.need | c.need}.")
        for o in self.operands:
            if getattr(o, "need", None) is not None:
                lines.append(f"With ``{o.name}``: {self.need | o.need}.")
        if self.tlx:
            lines += ["", "Also known as: " + ", ".join(f"``{t}``" for t in self.tlx) + "."]
        return "\n".join(lines)

    def public(self, intrinsic, module: str):
        """``intrinsic`` as users see it: named ``short_name`` in ``module``, with the Python
        signature (no typing context) and the generated docstring, for help() and IDEs."""
        intrinsic.__signature__ = self.signature
        intrinsic.__doc__ = f"{self.short_name}{self.signature}\n\n{self.docstring()}"
        intrinsic.__module__ = module
        return intrinsic


def exported(family: str) -> list[str]:
    """The public names of a family's ops (its module's ``__all__``)."""
    return sorted(op.short_name for op in OPS.values() if op.family == family)


def missing_in_order(lines, candidates, pattern_of) -> list:
    """The hand-written ``lines`` (a sample's expected PTX or ISA) not found, in that order, as
    whole lines among ``candidates`` (each after the candidate the previous line matched);
    ``pattern_of(line)`` is the regular expression a line stands for.  ``[]`` when all are there."""
    at, missing = 0, []
    for line in lines:
        pattern = pattern_of(line)
        hit = next((i for i in range(at, len(candidates)) if pattern.fullmatch(candidates[i])), None)
        if hit is None:
            missing.append(line)
        else:
            at = hit + 1
    return missing
