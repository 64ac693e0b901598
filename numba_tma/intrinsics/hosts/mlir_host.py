"""The numba-cuda-mlir host: each :class:`PtxOp` as a numba-cuda-mlir intrinsic, from the same
declaration as on numba-cuda (``llvm_host``).  The op does the emission (:meth:`PtxOp.emit`:
checks, the operands' own lowering, slot numbering, render, result); this module holds only what
is this host's own:

* :func:`to_numba` / :func:`to_mlir`: numba-cuda-mlir's vendored type classes are distinct from
  numba-cuda's (``uint64 != uint64``), so argument types are translated to ``numba.cuda.types``
  for the checks, and the result type back;
* :class:`MlirHost`, the op's :class:`.host.Host` here: values converted with
  ``lowering_utilities``, a shared array's data pointer ``addrspacecast`` to the shared window,
  a map in global memory acquired once at the kernel's start, the refusals of what numba-cuda-mlir
  0.6 cannot compile (:func:`check_by_value_maps`, :func:`check_whole_program`), one
  ``llvm.inline_asm`` (side effects and ``~{memory}`` for every op that has ``memory``; several
  outputs as a literal struct whose fields become the Python tuple numba-cuda-mlir holds a tuple
  as), the target read while lowering (``mlir_adapter.target_chip``).  Constant multicast masks are
  not marked: the launch reads them from numba-cuda's LLVM IR only.
"""

from __future__ import annotations

import functools
import inspect

from numba.cuda import types

from ...descriptors.tile_layout import kernel_type
from ...errors import ArchError, RegisterCountError
from .mlir_adapter import (Conversion, arith, by_value_attributes, by_value_type, intrinsic, ir, llvm, lowering_utilities,
                           mlir_types, nvvm, register_address_type, register_array_model, register_integer_type,
                           target_chip)
from .._core import PtxOp, SharedRefFacts, parse_arch
from .._core import SharedRef as NumbaSharedRef
from .host import Host
from .mlir_emitter import MlirEmitter, acquired_map_address, global_address, integer, shared_address  # noqa: F401
from ..tensor_map_type import GlobalTensorMapType, TensorMapType

__all__ = ["FencedGlobalTensorMapType", "MapInGlobal", "MlirHost", "OwnInteger", "SharedRef", "TensorMap", "build_mlir_intrinsic",
           "check_by_value_maps", "check_whole_program", "emit_asm", "helper_codegen", "to_mlir", "to_numba"]


# --------------------------------------------------------------------------------------------
# Types: numba-cuda-mlir's to numba-cuda's (for the declarations' checks) and back
# --------------------------------------------------------------------------------------------


@register_address_type
class SharedRef(SharedRefFacts, mlir_types.Type):
    """numba-cuda-mlir's twin of the type of ``numba_tma.at(array, i)`` (:class:`._core.SharedRef`):
    the shared-window address of one element or sub-array, a 32-bit integer."""


@register_integer_type
class OwnInteger(mlir_types.Integer):
    """numba-cuda-mlir's twin of an integer type of an op's own (``mbarrier.StateToken``): an
    unsigned integer of its width to numba-cuda-mlir, the op's type again to the checks (so a
    parity wait refuses a token on this host too)."""

    def __init__(self, numba_type):   # named as its integer: numba-cuda-mlir unifies numbers by their numpy dtype
        self.numba_type = numba_type
        super().__init__(f"uint{numba_type.bitwidth}", numba_type.bitwidth, signed=False)

    @property
    def key(self):
        return self.numba_type

    def can_convert_to(self, typingctx, other):
        """To an integer of its width where one is asked for (``out[i] = token``), as under numba-cuda."""
        if isinstance(other, mlir_types.Integer) and other.bitwidth == self.bitwidth:
            return Conversion.unsafe
        return None


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
    if isinstance(ty, OwnInteger):
        return ty.numba_type
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
    return OwnInteger(ty)   # mbarrier.StateToken


# --------------------------------------------------------------------------------------------
# The host: what an op's emission (PtxOp.emit) needs of MLIR
# --------------------------------------------------------------------------------------------

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


class MlirHost(MlirEmitter, Host):
    """An op's emission at the current MLIR insertion point (a numba-cuda-mlir intrinsic's codegen)."""

    def convert(self, value, ty, to):
        if isinstance(to, types.Float):   # an integer by its sign
            width = ir.F32Type.get() if to.bitwidth == 32 else ir.F64Type.get()
            return lowering_utilities.convert(value, width, signed=bool(getattr(ty, "signed", False)))
        return integer(value, ty, to.bitwidth)

    def as_bits(self, value):
        return llvm.bitcast(ir.IntegerType.get_signless(64 if value.type.typeid == ir.F64Type.static_typeid else 32), value)

    def float32_constant(self, number):
        return lowering_utilities.constant(number, ir.F32Type.get())

    def constant(self, value):
        owner = getattr(value, "owner", None)
        if getattr(owner, "name", None) != "arith.constant":
            return None
        attribute = owner.attributes["value"]
        return (ir.FloatAttr if attribute.typeid == ir.FloatAttr.static_typeid else ir.IntegerAttr)(attribute).value

    def map_address(self, value, ty):
        if isinstance(ty, TensorMapType) and ty.fenced_once:   # map_in_global's: fenced at the kernel's start
            return acquired_map_address(value)
        return self.generic_address(value, ty)

    def refuse(self, op_name, tys, cc):
        check_by_value_maps(op_name, tys, cc)
        check_whole_program(op_name)

    def mark_multicast(self, where, mask):
        pass   # the launch reads the marks from numba-cuda's LLVM IR only (docs/second_host.md)

    def instruction(self, text, operands, result, memory):
        return emit_asm(text, operands, [result] if result else [], memory)

    def instruction_registers(self, text, operands, outputs, memory, result_type):
        out = emit_asm(text, operands, outputs, memory)
        return tuple(out) if len(outputs) > 1 else (out,)   # numba-cuda-mlir holds a tuple as a Python tuple

    def nonzero(self, flag):
        return lowering_utilities.convert(flag, ir.IntegerType.get_signless(1))

    def fmul(self, a, b):
        return arith.mulf(a, b)

    def float_asm(self, text, *values):
        return emit_asm(text, [(v, "f") for v in values], ["=f"], memory=False)

    def shuffle_xor(self, value, lane_mask):
        i32 = ir.IntegerType.get_signless(32)
        mask, offset, clamp = (lowering_utilities.constant(c, i32) for c in (-1, lane_mask, 0x1F))
        return nvvm.shfl_sync(mask, value, offset, clamp, nvvm.ShflKind.bfly)   # as numba-cuda's

    def shuffle_idx(self, value, lane):
        i32 = ir.IntegerType.get_signless(32)
        mask, clamp = (lowering_utilities.constant(c, i32) for c in (-1, 0x1F))
        return nvvm.shfl_sync(mask, value, lane, clamp, nvvm.ShflKind.idx)

    def pack(self, tuple_type, values):
        return tuple(values)   # numba-cuda-mlir holds a tuple as a Python tuple


def helper_codegen(lower, tys):
    """This host's codegen of a helper whose body is ``lower(host, argument types, values)``
    (written once against :class:`.host.Host`), for the call's argument types ``tys`` (numba-cuda's)."""
    def codegen(builder, target, args, kwargs):
        builder.store_var(target, lower(MlirHost(), tys, [builder.load_var(v) for v in args]))
    return codegen


def _bound_vars(op: PtxOp, args, kwargs) -> dict:
    """``{parameter: the IR variable passed}`` for the variables of a call (positional, then
    ``(name, variable)`` keywords); parameters left out have none."""
    return dict(zip(op.signature.parameters, args)) | dict(kwargs)


def build_mlir_intrinsic(op: PtxOp):
    """``op`` as a numba-cuda-mlir intrinsic (typed by the declaration's rules, emitted by the op
    through :class:`MlirHost`)."""
    if op.vendor != "nvidia":
        raise NotImplementedError(f"numba_tma: {op.name}: the numba-cuda-mlir host lowers NVIDIA ops only")

    def typer(typingctx, *args, **kwargs):
        tys, chosen, given = op.type_call([to_numba(t) for t in args], {k: to_numba(t) for k, t in kwargs.items()})

        def codegen(builder, target, args, kwargs):
            by_name = {name: builder.load_var(v) for name, v in _bound_vars(op, args, kwargs).items()}
            out = op.emit(MlirHost(), tys, chosen, given, by_name, parse_arch(target_chip(builder)))
            if out is not None:
                builder.store_var(target, out)

        passed = op.bind(args, kwargs)
        argtys = [passed.get(n, mlir_types.Omitted(p.default)) for n, p in op.signature.parameters.items()]
        return to_mlir(op.result_type(tys, chosen))(*argtys), codegen

    typer.__signature__ = inspect.Signature(
        [inspect.Parameter("typingctx", inspect.Parameter.POSITIONAL_OR_KEYWORD), *op.signature.parameters.values()])
    return op.public(intrinsic(typer, op.short_name), f"numba_tma.mlir.{op.family}")
