"""The numba-cuda host: a :class:`PtxOp` as a numba-cuda ``@intrinsic`` (:func:`build_intrinsic`),
emitted through :class:`LlvmHost` (llvmlite), and the inline-asm calls the hand-lowered helpers
use (:func:`emit_asm`, :func:`emit_tied_asm`, :func:`mark_constant_multicast`).

The op does the emission (:meth:`numba_tma.intrinsics._core.PtxOp.emit`); this module holds only
what is llvmlite's: values cast by numba-cuda's lowering context, the ``InlineAsm`` call, a
register tuple built with ``make_tuple``, the constant-multicast mark the launch reads, and the
target read from numba-cuda's configuration stack."""

from __future__ import annotations

import inspect
from typing import Sequence

from llvmlite import ir
from numba.core import cgutils

from ...numba_cuda.internals import ConfigStack, _intrinsic
from .host import Host
from .llvm_emitter import LlvmEmitter
from ..tensor_map_type import as_map, map_value

I16, I32, I64, F32 = ir.IntType(16), ir.IntType(32), ir.IntType(64), ir.FloatType()


def current_cc():
    """The target numba-cuda is compiling for, or ``None`` when it is not known yet."""
    cfg = ConfigStack.top_or_none()
    return getattr(cfg, "compute_capability", None) if cfg is not None else None


def emit_asm(builder, template: str, operands: Sequence[tuple[ir.Value, str]],
             result: str | None = None, memory: bool = True) -> ir.Value | None:
    """Emit one inline-asm call.

    ``operands`` are ``(value, constraint)`` pairs in ``$n`` order after the result (if any);
    ``result`` is the output constraint (``"=r"``, ``"=f"``...).  With ``memory`` (every async, barrier and
    fence op) the asm declares side effects and the ``~{memory}`` clobber, so NVVM never drops,
    hoists or reorders it; pure computations (special registers, ``pending_count``,
    ``swizzled_index``) leave both off so they can be combined.
    """
    constraints = ([result] if result else []) + [c for _, c in operands]
    if memory:
        constraints.append("~{memory}")
    ret_ty = {None: ir.VoidType(), "=r": I32, "=l": I64, "=h": I16, "=f": ir.FloatType()}[result]
    fnty = ir.FunctionType(ret_ty, [v.type for v, _ in operands])
    asm = ir.InlineAsm(fnty, template, ",".join(constraints), side_effect=memory)
    # a pure computation reads no memory: LLVM may then combine two identical ones
    return builder.call(asm, [v for v, _ in operands], attrs=() if memory else ("readnone", "nounwind"))


def emit_tied_asm(builder, template: str, operands: Sequence[tuple[ir.Value, str]], outputs: Sequence[str],
                  memory: bool = True) -> ir.Value:
    """One inline-asm call with ``outputs`` (``"=f"``, ``"=r"``...) as a literal struct; inputs whose
    constraint is a number are tied to that output (NVVM rejects ``+f``: LLVM IR spells a
    read-write register as an output and an input tied to it)."""
    letters = {"=f": ir.FloatType(), "=r": I32, "=l": I64}
    struct = ir.LiteralStructType([letters[o] for o in outputs])
    constraints = list(outputs) + [c for _, c in operands] + (["~{memory}"] if memory else [])
    single = len(outputs) == 1   # LLVM returns a lone output as its value, not as a struct of one
    fnty = ir.FunctionType(struct.elements[0] if single else struct, [v.type for v, _ in operands])
    asm = ir.InlineAsm(fnty, template, ",".join(constraints), side_effect=memory)
    out = builder.call(asm, [v for v, _ in operands])
    return builder.insert_value(ir.Constant(struct, ir.Undefined), out, 0) if single else out


MULTICAST_MARK = "numba_tma.multicast"   # see mark_constant_multicast


def mark_constant_multicast(builder, where: str, mask: int) -> None:
    """Record in the kernel's code that ``where`` (an op, or a mask helper with constant
    arguments) multicasts with the constant ``mask``: a comment ``// numba_tma.multicast <where>
    <mask>`` in an inline asm without effects, which the LLVM IR keeps (the launch reads it there:
    ``numba_cuda.launching.constant_multicast_masks``, for the kernel and every device function it
    links) and NVVM drops (the PTX does not change)."""
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), f"// {MULTICAST_MARK} {where} {mask:#x}", "",
                       side_effect=False)
    builder.call(asm, [], attrs=("readnone", "nounwind"))


class LlvmHost(LlvmEmitter, Host):
    """An op's emission into ``builder``, in numba-cuda's lowering ``context``."""

    def convert(self, value, ty, to):
        return self.context.cast(self.builder, value, ty, to)

    def as_bits(self, value):
        return self.builder.bitcast(value, ir.IntType(64 if isinstance(value.type, ir.DoubleType) else 32))

    def float32_constant(self, number):
        return ir.Constant(ir.FloatType(), number)

    def constant(self, value):
        return value.constant if isinstance(value, ir.Constant) else None

    def map_address(self, value, ty):
        return self.generic_address(value, ty)   # a map is its 128 bytes' address (map_value)

    def refuse(self, op_name, tys, cc):
        pass   # numba-cuda compiles every call the declarations admit

    def mark_multicast(self, where, mask):
        mark_constant_multicast(self.builder, where, mask)

    def instruction(self, text, operands, result, memory):
        return emit_asm(self.builder, text, operands, result=result, memory=memory)

    def instruction_registers(self, text, operands, outputs, memory, result_type):
        out = emit_tied_asm(self.builder, text, operands, outputs, memory=memory)
        return self.pack(result_type, [self.builder.extract_value(out, i) for i in range(len(outputs))])

    def nonzero(self, flag):
        return self.builder.icmp_unsigned("!=", flag, ir.Constant(I32, 0))

    def fmul(self, a, b):
        return self.builder.fmul(a, b)

    def float_asm(self, text, *values):
        fnty = ir.FunctionType(F32, [F32] * len(values))
        return self.builder.call(ir.InlineAsm(fnty, text, ",".join(["=f"] + ["f"] * len(values))), list(values))

    def _shuffle(self, mode, value, lane):
        # through the NVVM intrinsic numba's cuda.shfl_*_sync use (convergent: never moved into a branch)
        fnty = ir.FunctionType(ir.LiteralStructType((I32, ir.IntType(1))), [I32] * 5)
        shfl = cgutils.get_or_insert_function(self.builder.module, fnty, "llvm.nvvm.shfl.sync.i32")
        got = self.builder.call(shfl, [ir.Constant(I32, -1), ir.Constant(I32, mode), value, lane,
                                       ir.Constant(I32, 0x1F)])
        return self.builder.extract_value(got, 0)

    def shuffle_xor(self, value, lane_mask):
        got = self._shuffle(3, self.builder.bitcast(value, I32), ir.Constant(I32, lane_mask))   # mode 3: bfly
        return self.builder.bitcast(got, F32)

    def shuffle_idx(self, value, lane):
        return self._shuffle(0, value, lane)                                                    # mode 0: idx

    def pack(self, tuple_type, values):
        return self.context.make_tuple(self.builder, tuple_type, values)


def helper_codegen(lower):
    """The numba-cuda codegen of a helper whose body is ``lower(host, argument types, values)``
    (written once against :class:`.host.Host`; numba-cuda-mlir's: ``mlir_host.helper_codegen``)."""
    def codegen(context, builder, sig, args):
        return lower(LlvmHost(context, builder), sig.args, args)
    return codegen


def build_intrinsic(op):
    """The numba-cuda intrinsic for ``op`` (a :class:`PtxOp`) without registering it (test-only ops)."""
    params = list(op.signature.parameters.values())
    names = [p.name for p in params]

    def typer(typingctx, *args, **kwargs):
        # the op checks and lowers TensorMap.to_device()'s array as its map (as_map, map_value)
        argtys = list(op.argument_types(args, kwargs).values())
        tys, chosen, given = op.type_call(tuple(map(as_map, args)), {k: as_map(v) for k, v in kwargs.items()})
        op.check_call_arch(chosen, given)

        def codegen(context, builder, sig, llargs):
            by_name = {n: map_value(context, builder, t, v) for n, t, v in zip(names, sig.args, llargs)}
            out = op.emit(LlvmHost(context, builder), tys, chosen, given, by_name, current_cc())
            return context.get_dummy_value() if out is None else out

        return op.result_type(tys, chosen)(*argtys), codegen

    typer.__signature__ = inspect.Signature(
        [inspect.Parameter("typingctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + params)
    typer.__name__ = typer.__qualname__ = op.short_name
    typer.__doc__ = op.docstring()
    typer.__module__ = f"numba_tma.{op.family}"
    # what help() and IDEs show: the Python parameters, without the typing context numba passes
    return op.public(_intrinsic(target="cuda", prefer_literal=True)(typer), typer.__module__)
