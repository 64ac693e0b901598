"""MLIR code over a numba-cuda-mlir kernel's values, shared by the op binding (``mlir_host``) and
debug mode: integers at an instruction's width, the addresses an array operand lowers to, and
:class:`MlirEmitter`, debug mode's :class:`.debug.Emitter` on this host — the checks of
:mod:`.debug` in the ``arith``, ``scf`` and ``llvm`` dialects, their message through ``gpu.printf``
(what numba-cuda-mlir lowers ``print`` with: a ``vprintf`` call), the trap an inline ``trap;``, as
under numba-cuda."""

from __future__ import annotations

import contextlib

from numba.cuda import types

from ..debug import Emitter
from .mlir_adapter import arith, gpu, ir, llvm, lowering_utilities, memref, scf
from ..tensor_map_type import TensorMapType

SHARED_ADDRESS_SPACE = 3


def _signed(ty) -> bool:
    ty = getattr(ty, "literal_type", ty)
    return bool(getattr(ty, "signed", False))


def _int_type(bits: int):
    return ir.IntegerType.get_signless(bits)


def integer(value, ty, bits: int):
    """``value`` (of Numba type ``ty``) as a ``bits``-bit integer, extended by ``ty``'s sign."""
    return lowering_utilities.convert(value, _int_type(bits), signed=_signed(ty))


def shared_address(array):
    """32-bit shared-window address of element 0 of a shared array (a memref)."""
    pointer = llvm.addrspacecast(llvm.PointerType.get(SHARED_ADDRESS_SPACE),
                                 lowering_utilities.memref_data_pointer(array))
    return llvm.ptrtoint(_int_type(32), pointer)


def global_address(array):
    """64-bit generic address of element 0 of a device array (a memref)."""
    return llvm.ptrtoint(_int_type(64), lowering_utilities.memref_data_pointer(array))


# The acquire a map in global memory needs before TMA reads it (the host wrote it: system scope),
# once per thread (CUDA C++ Programming Guide, "Using TMA": "safe to use tensor_map after fence inside
# this thread"); the comment tells one kernel argument's fence from another's in the entry block.
_ACQUIRE_AT_START = "fence.proxy.tensormap::generic.acquire.sys [$0], 128; // numba_tma: argument {n}"
_ACQUIRE_HERE = "fence.proxy.tensormap::generic.acquire.sys [$0], 128;"


def _fence(address, text):
    llvm.inline_asm(None, [address], text, "l,~{memory}", has_side_effects=True)


def _entry_argument(value):
    """``(entry block, argument number)`` if ``value`` is an argument of its function's entry block
    (not a loop body's, whose arguments change), else None."""
    if not isinstance(value.owner, ir.Block):   # an operation's result
        return None
    argument = ir.BlockArgument(value)
    block = argument.owner
    entry = block.region.blocks[0] == block and block.owner.operation.name.endswith(".func")
    return (block, argument.arg_number) if entry else None


def _asm_named(block, text):
    """The ``llvm.inline_asm`` of ``block`` whose text is ``text``, or None."""
    return next((op for op in block.operations if op.operation.name == "llvm.inline_asm"
                 and ir.StringAttr(op.attributes["asm_string"]).value == text), None)


def acquired_map_address(value):
    """The generic address of a map in global memory (a ``uint8`` memref), acquired for the tensor
    proxy: a kernel argument at the start of the kernel, once per argument (each op then runs
    without the fence, which ptxas makes a ``UTMACCTL.IV`` after a wait for every scoreboard) and
    its address computed there once, for every op; any other value (a map chosen at run time)
    right here."""
    entry = _entry_argument(value)
    if entry is None:
        address = global_address(value)
        _fence(address, _ACQUIRE_HERE)
        return address
    block, n = entry
    text = _ACQUIRE_AT_START.format(n=n)
    if _asm_named(block, text) is None:
        with ir.InsertionPoint.at_block_begin(block):
            _fence(global_address(value), text)
    return _asm_named(block, text).operands[0]   # the fence's address: it dominates every op


_PREDICATES = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


class MlirEmitter(Emitter):
    """The checks at the current MLIR insertion point (a numba-cuda-mlir intrinsic's codegen)."""

    def _int(self, like, b):
        return self.const(b, self.bits(like)) if isinstance(b, int) else b

    def const(self, value, bits):
        return lowering_utilities.constant(value, _int_type(bits))

    def bits(self, value):
        return ir.IntegerType(value.type).width

    def add(self, a, b):
        return arith.addi(a, self._int(a, b))

    def mul(self, a, b):
        return arith.muli(a, self._int(a, b))

    def and_(self, a, b):
        return arith.andi(a, self._int(a, b))

    def or_(self, a, b):
        return arith.ori(a, self._int(a, b))

    def lshr(self, a, b):
        return arith.shrui(a, self._int(a, b))

    def udiv(self, a, b):
        return arith.divui(a, self._int(a, b))

    def urem(self, a, b):
        return arith.remui(a, self._int(a, b))

    def _cmp(self, sign, op, a, b):
        name = _PREDICATES[op] if op in ("==", "!=") else sign + _PREDICATES[op]
        return arith.cmpi(getattr(arith.CmpIPredicate, name), a, self._int(a, b))

    def icmp_unsigned(self, op, a, b):
        return self._cmp("u", op, a, b)

    def icmp_signed(self, op, a, b):
        return self._cmp("s", op, a, b)

    def zext(self, value, bits):
        return arith.extui(_int_type(bits), value)

    def sext(self, value, bits):
        return arith.extsi(_int_type(bits), value)

    def select(self, cond, a, b):
        return arith.select(cond, a, b)

    def asm(self, text, args, constraints, bits=32):
        return llvm.inline_asm(None if bits is None else _int_type(bits), list(args), text, constraints,
                               has_side_effects=True)

    def special_register(self, name):
        return llvm.inline_asm(_int_type(32), [], f"mov.u32 $0, %{name};", "=r", has_side_effects=False)

    @contextlib.contextmanager
    def if_then(self, cond):
        op = scf.IfOp(cond)
        with ir.InsertionPoint(op.then_block):
            yield
            scf.YieldOp([])

    def printf(self, fmt, values):
        gpu.printf(fmt, *values)

    def int64(self, value, ty):
        return integer(value, ty, 64)

    def items(self, value, ty):
        return list(zip(value, ty))

    def shared_address(self, value, ty):
        return shared_address(value) if isinstance(ty, types.Array) else value   # at(): already the address

    def generic_address(self, value, ty):
        if isinstance(ty, TensorMapType) and not ty.in_global:   # a by-value map: its parameter's address
            return llvm.ptrtoint(_int_type(64), value)
        return global_address(value)   # an array, or map_in_global's map (a uint8 array)

    def array_bytes(self, value, ty):
        shape = ir.MemRefType(value.type)
        nbytes = self.const(lowering_utilities.get_type_size_bytes(shape.element_type), 64)
        for d in range(shape.rank):
            nbytes = arith.muli(nbytes, arith.index_cast(_int_type(64), memref.dim(value, lowering_utilities.index_of(d))))
        return nbytes
