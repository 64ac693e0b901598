"""What an op is emitted through: a :class:`Host`, one per host compiler (numba-cuda's llvmlite,
:class:`.llvm_host.LlvmHost`; numba-cuda-mlir's MLIR, :class:`.mlir_host.MlirHost`).

The emission itself is the op's (:meth:`numba_tma.intrinsics._core.PtxOp.emit`: checks, operand
lowering, slot numbering, rendering, result), and each operand class lowers itself once, against
this interface (``Operand.lower(host, ty, value)``).  A host supplies only what differs between the
compilers: converting a kernel value, the addresses an array or a map lowers to, a constant's
value, the inline-asm call, and how a result is returned.  It is also debug mode's
:class:`.debug.Emitter` on that host."""

from __future__ import annotations

import abc

from ..debug import Emitter


class Host(Emitter):
    """One host compiler's side of an op's emission (values are the host's own: llvmlite or MLIR).
    Types are ``numba.cuda.types``."""

    # -- kernel values, as an operand lowers them
    @abc.abstractmethod
    def convert(self, value, ty, to): """``value`` of Numba type ``ty`` as the number type ``to`` (an integer
    extended by ``ty``'s sign)."""
    @abc.abstractmethod
    def as_bits(self, value): """A float value as the integer of its bits (same width)."""
    @abc.abstractmethod
    def float32_constant(self, number: float): """The float32 constant ``number``."""
    @abc.abstractmethod
    def constant(self, value): """The Python number ``value`` is when it is a constant of the code, else ``None``."""
    @abc.abstractmethod
    def map_address(self, value, ty): """A map argument's (or a uint8 array's) 64-bit generic address."""

    # -- register fragments (the wgmma helpers' bodies, written once against these)
    @abc.abstractmethod
    def fmul(self, a, b): """``a * b`` of two float32 values."""
    @abc.abstractmethod
    def float_asm(self, text: str, *values): """One float32 result of pure inline PTX on float32 ``values`` (``$0``)."""
    @abc.abstractmethod
    def shuffle_xor(self, value, lane_mask: int): """A float32 of lane ``l ^ lane_mask`` (``shfl.sync.bfly``, all lanes)."""
    @abc.abstractmethod
    def shuffle_idx(self, value, lane): """A 32-bit integer of lane ``lane`` (a 32-bit value: ``shfl.sync.idx``, all
    lanes; convergent, as numba-cuda's shuffles: never moved into a branch)."""
    @abc.abstractmethod
    def pack(self, tuple_type, values): """``values`` as this host's value of the Numba tuple ``tuple_type``."""

    # -- the instruction
    @abc.abstractmethod
    def refuse(self, op_name: str, tys, cc) -> None:
        """Raise if this host cannot compile a call of argument types ``tys`` for ``cc``."""
    @abc.abstractmethod
    def mark_multicast(self, where: str, mask: int) -> None:
        """Record that ``where`` multicasts with the constant ``mask`` (for the launch's check)."""
    @abc.abstractmethod
    def instruction(self, text: str, operands, result: str | None, memory: bool):
        """One inline asm; ``operands`` are ``(value, constraint)`` pairs in ``$n`` order after the
        ``result`` (its constraint, ``"=r"``...; ``None``: none); with ``memory`` it has side
        effects and the ``~{memory}`` clobber.  Returns the result value or ``None``."""
    @abc.abstractmethod
    def instruction_registers(self, text: str, operands, outputs, memory: bool, result_type):
        """One inline asm with several register ``outputs`` (``"=f"``, ``"=r"``...; an input whose
        constraint is a number is tied to that output), returned as this host's value of the
        Numba tuple ``result_type``."""
    @abc.abstractmethod
    def nonzero(self, flag): """A 32-bit ``flag`` as a boolean value."""
