"""The numba-cuda-mlir host binding of the NVIDIA declarations (issue 25): each :class:`PtxOp` as a
numba-cuda-mlir intrinsic, from the same declaration as its llvmlite binding (``_core``).

What is shared with the llvmlite binding, unchanged: the op's signature and argument binding, its
typing checks and qualifier tables (:meth:`PtxOp.type_call`), its requirement and the
:class:`ArchError` text (:meth:`PtxOp.check_call_arch`), its template keys (``Operand.keys``,
``fields``, ``spell``) and :meth:`PtxOp.render`.  What is this host's own:

* :func:`to_numba` / :func:`to_mlir`: numba-cuda-mlir's vendored type classes are distinct from
  numba-cuda's (``uint64 != uint64``), so argument types are translated to ``numba.cuda.types``
  for the checks, and the result type back;
* the operand lowering, one function per Operand class (:data:`LOWERINGS`, :func:`lowers`; a
  family's own operand classes add theirs, ``numba_tma.mlir``) — a shared array becomes its data
  pointer, ``addrspacecast`` to the shared window, ``ptrtoint i32``; integers are converted to the
  width the instruction takes;
* the emission: one ``llvm.inline_asm`` (side effects and ``~{memory}`` for every op that has
  ``memory``), the target read while lowering (``mlir_adapter.target_chip``).  An op returning
  registers (a ``tied`` fragment, ``returns_regs``) has a literal struct of them as its result,
  each tied input naming its output's number (as the llvmlite binding's ``emit_tied_asm``); the
  struct's fields become the tuple numba-cuda-mlir holds a tuple value as (a Python tuple).

Debug mode: the same checks as under numba-cuda (the operands' ``debug_check``, the op's ``debug``
hook, the bounded ``debug_wait``), through this host's :class:`.mlir_emitter.MlirEmitter`.
"""

from __future__ import annotations

import functools
import inspect

from numba.cuda import types

from ..descriptors.tile_layout import kernel_type
from ..errors import ArchError, RegisterCountError
from .mlir_adapter import (by_value_attributes, by_value_type, intrinsic, ir, llvm, lowering_utilities, mlir_types,
                           register_address_type, register_array_model, target_chip)
from ._core import (CacheHint, Const, Float, Fragment, GlobalArray, Int, IntTuple, Multicast, Optional, PtxOp,
                    SharedArray, Value, literal, parse_arch)
from ._core import SharedRef as NumbaSharedRef
from ..declarations import omitted
from .mlir_emitter import MlirEmitter, global_address, integer, shared_address
from .tensor_map_type import GlobalTensorMapType, TensorMapType

__all__ = ["LOWERINGS", "FencedGlobalTensorMapType", "MapInGlobal", "SharedRef", "TensorMap", "build_mlir_intrinsic",
           "check_by_value_maps", "check_whole_program", "lowers", "to_mlir", "to_numba"]


# --------------------------------------------------------------------------------------------
# Types: numba-cuda-mlir's to numba-cuda's (for the declarations' checks) and back
# --------------------------------------------------------------------------------------------


@register_address_type
class SharedRef(mlir_types.Type):
    """numba-cuda-mlir's twin of the type of ``numba_tma.at(array, i)`` (:class:`._core.SharedRef`):
    the shared-window address of one element or sub-array, a 32-bit integer."""

    def __init__(self, dtype, contiguous):
        self.dtype, self.contiguous = dtype, contiguous
        super().__init__(name=f"SharedRef[{dtype}{'' if contiguous else ', strided'}]")

    @property
    def key(self):
        return self.dtype, self.contiguous


@by_value_type
class TensorMap(mlir_types.byval_ptr):
    """numba-cuda-mlir's twin of the type of a by-value ``numba_tma.TensorMap`` argument
    (:class:`.tensor_map_type.TensorMapType`): a ``__grid_constant__`` parameter, 128 bytes aligned
    to 64 (``.param .align 64 .b8 p[128]``), held as its address; its key is the map's
    :class:`~numba_tma.descriptors.tile_layout.TileLayout`.  numba-cuda-mlir 0.6 passes it only on
    sm_100 and newer (:func:`check_by_value_maps`)."""

    def __init__(self, layout):
        self.layout = layout
        super().__init__(mlir_types.CUTensorMapStorage)
        self.name = f"TensorMap[{layout}]"
        self.__numba_cuda_mlir_attributes__ = by_value_attributes(64)

    @property
    def key(self):
        return self.layout


class FencedGlobalTensorMapType(GlobalTensorMapType):
    """:class:`MapInGlobal` translated for the ops' checks: a map in global memory whose type says
    its layout, checked as a by-value map of that layout, its acquire fence once per thread at the
    kernel's start (``fenced_once``: :func:`.mlir_emitter.acquired_map_address`), not before each
    op."""

    fenced_once = True


global_kernel_type = functools.lru_cache(maxsize=None)(FencedGlobalTensorMapType)


@register_array_model
class MapInGlobal(mlir_types.Array):
    """numba-cuda-mlir's type of ``numba_tma.mlir.map_in_global(desc)``: the map's 128 bytes in a
    ``uint8`` device array (held and passed as that array), its key also the map's
    :class:`~numba_tma.descriptors.tile_layout.TileLayout` (``tile_layout``) — the compile-time facts of numba-cuda's
    by-value ``TensorMapType``, which numba-cuda-mlir 0.6 cannot pass below sm_100."""

    def __init__(self, tile_layout):
        self.tile_layout = tile_layout      # (``layout`` is the array's, "C")
        super().__init__(mlir_types.uint8, 1, "C", readonly=True, name=f"TensorMap[{tile_layout}] in global memory")

    @property
    def key(self):
        return super().key, self.tile_layout


def check_by_value_maps(op_name: str, tys, cc) -> None:
    """Refuse a by-value map among an op's argument types ``tys`` (Numba types) below sm_100: there
    numba-cuda-mlir 0.6 drops the parameter's ``byval``/``grid_constant`` (its LLVM 7 path)."""
    if tuple(cc[:2]) < (10, 0) and any(isinstance(t, TensorMapType) and not t.in_global for t in tys):
        raise ArchError(f"numba_tma: {op_name}: a by-value TensorMap argument needs sm_100 or newer on the "
                        "numba-cuda-mlir host: numba-cuda-mlir 0.6 compiles sm_90 through its LLVM 7 path, which "
                        "drops __grid_constant__ parameters (docs/numba_cuda_mlir_defects.md, item 3); on sm_90 pass "
                        "the map in global memory, numba_tma.mlir.map_in_global(desc) (a uint8 device array)")


NEEDS_WHOLE_PROGRAM = frozenset({"wgmma.setmaxnreg"})   # ops ptxas drops from a separately compiled kernel


def check_whole_program(op_name: str) -> None:
    """Refuse an op ptxas keeps only in a kernel compiled whole-program: numba-cuda-mlir 0.6 links
    a kernel's PTX with nvJitLink as a separate compilation unit, where ptxas drops ``setmaxnreg``
    (C7504), and has no whole-program link to ask for (numba-cuda's is its ``lto``: hook 8)."""
    if op_name in NEEDS_WHOLE_PROGRAM:
        raise RegisterCountError(f"numba_tma: {op_name}: the numba-cuda-mlir host links a kernel's PTX as a separate "
                                 "compilation unit, where ptxas ignores setmaxnreg (C7504: 'setmaxnreg' ignored to "
                                 "maintain compatibility across compilation units), and numba-cuda-mlir 0.6 has no "
                                 "whole-program link: compile this kernel with numba-cuda (docs/second_host.md)")


def to_numba(ty):
    """The ``numba.cuda.types`` type of a numba-cuda-mlir argument type (a type with no
    counterpart is returned as it is, and the op's check refuses it by name)."""
    if isinstance(ty, mlir_types.Omitted):
        return types.Omitted(ty.value)
    if isinstance(ty, mlir_types.Literal):
        return types.literal(ty.literal_value)
    if isinstance(ty, mlir_types.NoneType):
        return types.none
    if isinstance(ty, mlir_types.UniTuple):
        return types.UniTuple(to_numba(ty.dtype), ty.count)
    if isinstance(ty, mlir_types.BaseTuple):
        return types.Tuple([to_numba(t) for t in ty])
    if isinstance(ty, MapInGlobal):
        return global_kernel_type(ty.tile_layout)
    if isinstance(ty, mlir_types.Array):
        return types.Array(to_numba(ty.dtype), ty.ndim, ty.layout)
    if isinstance(ty, (mlir_types.Number, mlir_types.Boolean)):
        return getattr(types, ty.name)
    if isinstance(ty, mlir_types.NumberClass):
        return types.NumberClass(to_numba(ty.instance_type))
    if isinstance(ty, SharedRef):
        return NumbaSharedRef(to_numba(ty.dtype), ty.contiguous)
    if isinstance(ty, TensorMap):
        return kernel_type(ty.layout)
    return ty


def to_mlir(ty):
    """The numba-cuda-mlir type of an op's result type (a state token is its 64 bits)."""
    if ty == types.void:
        return mlir_types.void
    if isinstance(ty, types.UniTuple):
        return mlir_types.UniTuple(to_mlir(ty.dtype), ty.count)
    if isinstance(ty, (types.Integer, types.Boolean, types.Float)):
        return getattr(mlir_types, ty.name)
    if isinstance(ty, NumbaSharedRef):
        return SharedRef(to_mlir(ty.dtype), ty.contiguous)
    return mlir_types.uint64   # mbarrier.StateToken


# --------------------------------------------------------------------------------------------
# Operands: each Operand class's MLIR lowering
# --------------------------------------------------------------------------------------------

LOWERINGS = {}   # Operand class -> lower(operand, ty, value, *peer types) -> [(MLIR value, constraint)]
_CONSTRAINT = {16: "h", 32: "r", 64: "l"}


def lowers(operand_class):
    """Register the decorated function as the MLIR lowering of ``operand_class`` (and of its
    subclasses that have none of their own)."""
    def register(lower):
        LOWERINGS[operand_class] = lower
        return lower
    return register


def lower_operand(operand, ty, value, *peers):
    for cls in type(operand).__mro__:
        if cls in LOWERINGS:
            return LOWERINGS[cls](operand, ty, value, *peers)
    raise NotImplementedError(f"numba_tma: the numba-cuda-mlir host has no lowering of {type(operand).__name__} "
                              f"operands ('{operand.name}')")


def float32(value):
    return lowering_utilities.convert(value, ir.F32Type.get())


def bits_of(value, ty, dtype):
    """``value`` converted to the element type ``dtype``; a float as its bits."""
    if isinstance(dtype, types.Float):
        width = ir.F32Type.get() if dtype.bitwidth == 32 else ir.F64Type.get()
        return llvm.bitcast(ir.IntegerType.get_signless(dtype.bitwidth), lowering_utilities.convert(value, width))
    return integer(value, ty, dtype.bitwidth)


def _elements(value, ty):
    """A tuple value's elements with their types (numba-cuda-mlir lowers a tuple to a Python tuple)."""
    return list(zip(value, ty)) if isinstance(ty, types.BaseTuple) else [(value, ty)]


@lowers(Int)
def _int(o, ty, value):
    return [(integer(value, ty, o.bits), _CONSTRAINT[o.bits])]


@lowers(Float)
def _float(o, ty, value):
    if isinstance(ty, types.Omitted):
        return [(lowering_utilities.constant(float(ty.value), ir.F32Type.get()), "f")]
    return [(float32(value), "f")]


@lowers(Const)
def _const(o, ty, value):
    return []


@lowers(GlobalArray)
def _global_array(o, ty, value):
    return [(global_address(value), "l")]


@lowers(SharedArray)
def _shared_array(o, ty, value):
    return [(value if isinstance(ty, NumbaSharedRef) else shared_address(value), "r")]   # at(): the address


@lowers(IntTuple)
def _int_tuple(o, ty, value):
    return [(integer(v, t, o.bits), _CONSTRAINT[o.bits]) for v, t in _elements(value, ty)]


@lowers(Value)
def _value(o, ty, value, like):
    return [(bits_of(v, t, like.dtype), _CONSTRAINT[like.dtype.bitwidth]) for v, t in _elements(value, ty)]


@lowers(Fragment)
def _fragment(o, ty, value):
    if str(ty.dtype) == "float32":
        return [(float32(v), "f") for v in value]
    return [(integer(v, ty.dtype, 32), "r") for v in value]


@lowers(CacheHint)
def _cache_hint(o, ty, value):
    return [] if omitted(ty) else [(integer(value, ty, 64), "l")]


@lowers(Multicast)
def _multicast(o, ty, value):
    return [] if omitted(ty) else [(integer(value, ty, 16), "h")]


@lowers(Optional)
def _optional(o, ty, value):
    return [] if omitted(ty) else lower_operand(o.inner, ty, value)


# --------------------------------------------------------------------------------------------
# Emission
# --------------------------------------------------------------------------------------------

_RESULT = {16: "=h", 32: "=r", 64: "=l"}
_REGISTER = {"=h": 16, "=r": 32, "=l": 64}


def _register_type(constraint: str):
    return ir.F32Type.get() if constraint == "=f" else ir.IntegerType.get_signless(_REGISTER[constraint])


def emit_asm(text: str, operands, outputs=(), memory: bool = True):
    """One ``llvm.inline_asm``; ``operands`` are ``(value, constraint)`` pairs in ``$n`` order after
    the ``outputs`` (their constraints, ``"=r"``...; an input whose constraint is a number is tied
    to that output); with ``memory`` it has side effects and the ``~{memory}`` clobber (as the
    llvmlite binding's ``emit_asm``).  Returns ``None``, the one output, or the outputs as a list."""
    constraints = list(outputs) + [c for _, c in operands] + (["~{memory}"] if memory else [])
    fields = [_register_type(o) for o in outputs]
    result_type = None if not fields else fields[0] if len(fields) == 1 else llvm.StructType.get_literal(fields)
    out = llvm.inline_asm(result_type, [v for v, _ in operands], text, ",".join(constraints),
                          has_side_effects=memory)
    if len(fields) > 1:
        return [llvm.extractvalue(field, out, [i]) for i, field in enumerate(fields)]
    return out if fields else None


def _outputs(op: PtxOp, tys: dict, chosen: dict) -> list:
    """The output constraints of a call: a tied fragment's registers, ``returns_regs``'s, or the
    one result (none for a void op)."""
    if op.tied:
        tied = tys[op.tied]
        return ["=f" if str(tied.dtype) == "float32" else "=r"] * tied.count
    if op.returns_regs:
        return ["=r"] * op.returns_regs(**chosen)
    if op.returns == types.void:
        return []
    return ["=r" if op.returns == types.boolean else _RESULT[op.returns.bitwidth]]


def _result_type(op: PtxOp, tys: dict, chosen: dict):
    """The Numba type of a call's result (as the llvmlite binding's)."""
    if op.tied:
        return tys[op.tied]
    if op.returns_regs:
        return types.UniTuple(types.uint32, op.returns_regs(**chosen))
    return op.returns


def _bound_vars(op: PtxOp, args, kwargs) -> dict:
    """``{parameter: the IR variable passed}`` for the variables of a call (positional, then
    ``(name, variable)`` keywords); parameters left out have none."""
    return dict(zip(op.signature.parameters, args)) | dict(kwargs)


def build_mlir_intrinsic(op: PtxOp):
    """``op`` as a numba-cuda-mlir intrinsic (typed by the declaration's rules, lowered here)."""
    if op.vendor != "nvidia":
        raise NotImplementedError(f"numba_tma: {op.name}: the numba-cuda-mlir host lowers NVIDIA ops only")

    def typer(typingctx, *args, **kwargs):
        tys, chosen, given = op.type_call([to_numba(t) for t in args], {k: to_numba(t) for k, t in kwargs.items()})
        operand_tys = {o.name: tys[o.name] for o in op.operands}

        def codegen(builder, target, args, kwargs):
            cc = parse_arch(target_chip(builder))
            op.check_call_arch(chosen, given, cc)
            check_by_value_maps(op.name, tys.values(), cc)
            check_whole_program(op.name)
            bounded = op.bounded()   # debug mode's wait that reports a time-out: its flag is the one output
            outputs = ["=r"] if bounded else _outputs(op, tys, chosen)
            by_name = {name: builder.load_var(v) for name, v in _bound_vars(op, args, kwargs).items()}
            emitter = MlirEmitter()
            op.emit_debug_checks(emitter, tys, by_name)
            values, slots, lowered_by_name, n = [], {}, {}, len(outputs)
            for o in op.operands:
                ty = tys[o.name]
                lowered = lower_operand(o, ty, by_name.get(o.name), *(tys[p] for p in o.peers))
                if o.name == op.tied:   # outputs $0..$k-1; these inputs are tied to them
                    slots[o.name] = ", ".join(f"${i}" for i in range(len(lowered)))
                    lowered = [(v, str(i)) for i, (v, _) in enumerate(lowered)]
                else:
                    slots.update(o.keys(str(literal(ty)) if isinstance(o, Const) else
                                        ", ".join(f"${n + i}" for i in range(len(lowered))), ty,
                                        *(tys[p] for p in o.peers)))
                n += len(lowered)
                values.extend(lowered)
                lowered_by_name[o.name] = lowered
            extra = op.fields(cc=cc, **operand_tys, **chosen) if op.fields else {}
            out_slot = ", ".join(f"${i}" for i in range(len(outputs))) if op.returns_regs else "$0"
            out = emit_asm(op.render(slots | {"out": out_slot}, chosen, extra, bounded=bounded), values, outputs,
                           op.memory)
            if bounded:
                op.report_time_out(emitter, out, lowered_by_name)
            elif op.tied or op.returns_regs:
                builder.store_var(target, tuple(out) if len(outputs) > 1 else (out,))
            elif op.returns == types.boolean:
                builder.store_var(target, lowering_utilities.convert(out, ir.IntegerType.get_signless(1)))
            elif outputs:
                builder.store_var(target, out)

        passed = op.bind(args, kwargs)
        argtys = [passed.get(n, mlir_types.Omitted(p.default)) for n, p in op.signature.parameters.items()]
        return to_mlir(_result_type(op, tys, chosen))(*argtys), codegen

    typer.__signature__ = inspect.Signature(
        [inspect.Parameter("typingctx", inspect.Parameter.POSITIONAL_OR_KEYWORD), *op.signature.parameters.values()])
    return op.public(intrinsic(typer, op.short_name), f"numba_tma.mlir.{op.family}")
