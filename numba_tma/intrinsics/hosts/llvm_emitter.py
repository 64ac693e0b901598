"""llvmlite code over a kernel's arrays, shared by the op core (``_core``) and debug mode: the
addresses an array operand lowers to, and :class:`LlvmEmitter`, debug mode's
:class:`.debug.Emitter` on numba-cuda (the checks of :mod:`.debug` as LLVM IR, ``vprintf`` through
numba-cuda's ``nvvmutils``)."""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils
from numba.cuda import types

from ...numba_cuda.internals import nvvm, nvvmutils
from ..debug import Emitter

I32, I64 = ir.IntType(32), ir.IntType(64)


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


class LlvmEmitter(Emitter):
    """The checks into ``builder``, in the lowering ``context`` of numba-cuda."""

    def __init__(self, context, builder):
        self.context, self.builder = context, builder

    def _int(self, like, b):
        return ir.Constant(like.type, b) if isinstance(b, int) else b

    def const(self, value, bits):
        return ir.Constant(ir.IntType(bits), value)

    def bits(self, value):
        return value.type.width

    def add(self, a, b):
        return self.builder.add(a, self._int(a, b))

    def mul(self, a, b):
        return self.builder.mul(a, self._int(a, b))

    def and_(self, a, b):
        return self.builder.and_(a, self._int(a, b))

    def or_(self, a, b):
        return self.builder.or_(a, self._int(a, b))

    def lshr(self, a, b):
        return self.builder.lshr(a, self._int(a, b))

    def udiv(self, a, b):
        return self.builder.udiv(a, self._int(a, b))

    def urem(self, a, b):
        return self.builder.urem(a, self._int(a, b))

    def icmp_unsigned(self, op, a, b):
        return self.builder.icmp_unsigned(op, a, self._int(a, b))

    def icmp_signed(self, op, a, b):
        return self.builder.icmp_signed(op, a, self._int(a, b))

    def zext(self, value, bits):
        return self.builder.zext(value, ir.IntType(bits))

    def sext(self, value, bits):
        return self.builder.sext(value, ir.IntType(bits))

    def select(self, cond, a, b):
        return self.builder.select(cond, a, b)

    def asm(self, text, args, constraints, bits=32):
        ret = ir.VoidType() if bits is None else ir.IntType(bits)
        fnty = ir.FunctionType(ret, [a.type for a in args])
        return self.builder.call(ir.InlineAsm(fnty, text, constraints, side_effect=True), args)

    def special_register(self, name):
        return nvvmutils.call_sreg(self.builder, name)

    def if_then(self, cond):
        return self.builder.if_then(cond, likely=False)

    def printf(self, fmt, values):
        builder = self.builder
        packed = cgutils.alloca_once_value(builder, cgutils.pack_struct(builder, values))
        vprintf = nvvmutils.declare_vprint(builder.module)
        builder.call(vprintf, [nvvmutils.declare_string(builder, fmt), builder.bitcast(packed, vprintf.args[1].type)])

    def int64(self, value, ty):
        return self.context.cast(self.builder, value, ty, types.int64)

    def items(self, value, ty):
        return [(self.builder.extract_value(value, i), t) for i, t in enumerate(ty)]

    def shared_address(self, value, ty):
        if not isinstance(ty, types.Array):   # at(array, i): already the address
            return value
        return shared_address(self.context, self.builder, ty, value)

    def generic_address(self, value, ty):
        if not isinstance(ty, types.Array):   # a by-value map: its parameter's address
            return self.builder.ptrtoint(value, I64)
        return global_address(self.context, self.builder, ty, value)

    def array_bytes(self, value, ty):
        ary = self.context.make_array(ty)(self.context, self.builder, value)
        nbytes = ary.itemsize
        for extent in cgutils.unpack_tuple(self.builder, ary.shape):
            nbytes = self.builder.mul(nbytes, extent)
        return nbytes
