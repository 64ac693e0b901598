"""Debug mode's code: run-time checks of what Numba's types cannot carry, and waits that never hang.

Turn it on with ``NUMBA_TMA_DEBUG=1`` in the environment, or ``numba_tma.debug()`` (a switch and a
context manager) before the kernels compile; it changes the code of kernels compiled while it is
on.  Off (the default), none of it is emitted: the release PTX is unchanged.

On, every op checks before it runs, in the thread that issues it:

* each shared-memory operand (tile, barrier) lies in shared memory (``isspacep.shared``) and is
  aligned (8 bytes for an mbarrier; a TMA tile 128 bytes, 256/512/1024 with 32B/64B/128B swizzle);
* a TMA destination or source array holds at least the map's box bytes; ``coords[0]`` times the
  element size is a multiple of 16 bytes (the H200 faults otherwise); a map in global memory is
  64-byte aligned;
* a ``wgmma.descriptor`` tile is aligned to its 8-row swizzle atom, a run-time ``k`` lies inside
  the swizzle span and a run-time ``row`` is a multiple of 8 inside the tile; the staging tile of
  ``wgmma.store_shared_bf16`` holds the boxes it writes;
* ``mbarrier.wait`` gives up after a time limit (``%globaltimer``; ``NUMBA_TMA_DEBUG_TIMEOUT_MS``,
  default 2000, or ``debug(timeout_ms=...)``) instead of hanging.

A failed check prints one line — ``numba_tma debug: <op>: <what>, block (x, y, z) thread (x, y, z)``
— and traps: the launch fails with ``CUDA_ERROR_LAUNCH_FAILED`` (or ``ILLEGAL_INSTRUCTION``)
instead of hanging or writing out of bounds.

The checks are written once, here, against :class:`Emitter`: the few primitives they need (integer
arithmetic and compares, inline asm, a special register, ``if``, ``printf``), with one implementation
per host — numba-cuda's llvmlite builder (:mod:`.llvm_emitter`) and numba-cuda-mlir's arith/scf/gpu
dialects (:mod:`.mlir_emitter`).  The ops' ``debug`` hooks and their operands' ``debug_check`` take an
emitter too, so both hosts emit the same checks with the same messages.
"""

from __future__ import annotations

import abc
import contextlib

from ..debugging import STATE, timeout_ns  # noqa: F401  (the hosts read both here)


class Emitter(abc.ABC):
    """What the checks emit through, for one host (values are the host's own: llvmlite or MLIR
    integers).  The arithmetic mirrors llvmlite's ``IRBuilder``; a Python ``int`` as the second
    operand is a constant of the first one's width.  The argument accessors take a kernel value
    and its Numba type (``numba.cuda.types``)."""

    # -- integers
    @abc.abstractmethod
    def const(self, value: int, bits: int): """An integer constant of ``bits`` bits."""
    @abc.abstractmethod
    def bits(self, value) -> int: """The width of an integer value."""
    @abc.abstractmethod
    def add(self, a, b): """``a + b``."""
    @abc.abstractmethod
    def mul(self, a, b): """``a * b``."""
    @abc.abstractmethod
    def and_(self, a, b): """``a & b``."""
    @abc.abstractmethod
    def or_(self, a, b): """``a | b``."""
    @abc.abstractmethod
    def lshr(self, a, b): """``a >> b``, logical."""
    @abc.abstractmethod
    def udiv(self, a, b): """``a / b``, unsigned."""
    @abc.abstractmethod
    def urem(self, a, b): """``a % b``, unsigned."""
    @abc.abstractmethod
    def icmp_unsigned(self, op: str, a, b): """``a op b`` (``"=="``, ``"!="``, ``"<"``, ``">="``...), unsigned: an i1."""
    @abc.abstractmethod
    def icmp_signed(self, op: str, a, b): """``a op b``, signed: an i1."""
    @abc.abstractmethod
    def zext(self, value, bits: int): """``value`` zero-extended to ``bits``."""
    @abc.abstractmethod
    def sext(self, value, bits: int): """``value`` sign-extended to ``bits``."""
    @abc.abstractmethod
    def select(self, cond, a, b): """``a if cond else b``."""

    # -- the machine
    @abc.abstractmethod
    def asm(self, text: str, args, constraints: str, bits: int | None = 32):
        """An inline asm with side effects returning a ``bits``-bit register (``None``: nothing)."""
    @abc.abstractmethod
    def special_register(self, name: str): """The 32-bit PTX special register ``%name`` (``"tid.x"``)."""
    @abc.abstractmethod
    def if_then(self, cond) -> contextlib.AbstractContextManager: """The body runs only if ``cond`` (unlikely)."""
    @abc.abstractmethod
    def printf(self, fmt: str, values): """``printf(fmt, *values)`` on the device (64-bit ``values``)."""

    # -- kernel arguments (a value and its Numba type)
    @abc.abstractmethod
    def int64(self, value, ty): """An integer argument as 64 bits, extended by its type's sign."""
    @abc.abstractmethod
    def items(self, value, ty) -> list: """A tuple argument's ``[(item, item type), ...]``."""
    @abc.abstractmethod
    def shared_address(self, value, ty): """A shared array's (or ``at()``'s) 32-bit shared-window address."""
    @abc.abstractmethod
    def generic_address(self, value, ty): """An array's element 0, or a by-value map, as a 64-bit generic address."""
    @abc.abstractmethod
    def array_bytes(self, value, ty): """An array's byte size (its itemsize times its extents), 64 bits."""


def fail_if(d: Emitter, failed, op_name: str, what: str, values=()):
    """If ``failed`` (an i1), print ``numba_tma debug: <op_name>: <what>`` (a printf format over
    ``values``, 64-bit integers) with the block and thread, then trap."""
    with d.if_then(failed):
        regs = [d.special_register(f"{k}.{a}") for k in ("ctaid", "tid") for a in "xyz"]
        args = [d.zext(v, 64) if d.bits(v) < 64 else v for v in values] + [d.zext(r, 64) for r in regs]
        d.printf(f"numba_tma debug: {op_name}: {what}, block (%lld, %lld, %lld) thread (%lld, %lld, %lld)\n", args)
        d.asm("trap;", [], "", None)


def check_shared(d: Emitter, op_name: str, arg: str, generic):
    """``generic`` (a 64-bit generic address) lies in this block's shared memory."""
    inside = d.asm("{\n .reg .pred p;\n isspacep.shared p, $1;\n selp.u32 $0, 1, 0, p;\n}", [generic], "=r,l")
    fail_if(d, d.icmp_unsigned("==", inside, 0), op_name,
            f"argument '{arg}' is not in shared memory (generic address 0x%llx)", [generic])


def check_aligned(d: Emitter, op_name: str, arg: str, address, align: int, why: str):
    """``address`` (any integer width) is a multiple of ``align``."""
    low = d.and_(address, align - 1)
    fail_if(d, d.icmp_unsigned("!=", low, 0), op_name, f"argument '{arg}' at 0x%llx is not {align}-byte aligned ({why})",
            [address])


def check_at_least(d: Emitter, op_name: str, arg: str, nbytes, need: int, why: str):
    fail_if(d, d.icmp_unsigned("<", nbytes, need), op_name,
            f"argument '{arg}' holds %lld bytes, fewer than {need} ({why})", [nbytes])


def check_holds(d: Emitter, op_name: str, arg: str, size, nbytes):
    """An array of ``size`` bytes holds the ``nbytes`` (run-time) an op copies into or out of it."""
    fail_if(d, d.icmp_signed("<", size, nbytes), op_name,
            f"argument '{arg}' holds %lld bytes, fewer than nbytes = %lld (the copy would run past the array)",
            [size, nbytes])


def check_range(d: Emitter, op_name: str, arg: str, value, lo: int, hi: int, why: str):
    """``lo <= value <= hi`` (a 64-bit ``value``; bounds at the ends of its range are not checked)."""
    tests = ([d.icmp_signed("<", value, lo)] if lo > 0 else []) + ([d.icmp_signed(">", value, hi)] if hi < (1 << 63) else [])
    if tests:
        fail_if(d, d.or_(*tests) if len(tests) == 2 else tests[0], op_name,
                f"{arg} = %lld: must be {lo} to {hi} ({why})", [value])


def check_multiple(d: Emitter, op_name: str, arg: str, value, scale: int, multiple: int, why: str):
    """``value * scale`` is a multiple of ``multiple``."""
    low = d.and_(d.mul(value, scale), multiple - 1)
    fail_if(d, d.icmp_unsigned("!=", low, 0), op_name,
            f"{arg} = %lld: times {scale} bytes it must be a multiple of {multiple} ({why})",
            [d.sext(value, 64) if d.bits(value) < 64 else value])


def load_u32(d: Emitter, address, offset: int):
    """The 32-bit word at byte ``offset`` of the generic 64-bit ``address`` (a descriptor's field)."""
    return d.asm(f"ld.u32 $0, [$1+{offset}];", [address], "=r,l")


def check_inside(d: Emitter, op_name: str, desc_address, coords):
    """Each ``coords[i]`` is at most the tensor's last index along dimension ``i`` (read from the
    map: bytes 32 + 4 i hold ``global_dim[i] - 1``): a box that starts past the end is all
    out-of-bounds fill, which is what (row, col) coordinates give for an innermost-first map."""
    for i, coord in enumerate(coords):
        last = load_u32(d, desc_address, 32 + 4 * i)
        past = d.icmp_signed(">", coord, d.zext(last, 64))
        fail_if(d, past, op_name, f"coords[{i}] = %lld is past the tensor's last index %lld along dimension {i} "
                "(the whole box is out of bounds): coordinates are innermost-first, (col, row) for a[row, col]",
                [coord, d.zext(last, 64)])


def report_time_out(d: Emitter, op_name: str, flag, bar, phase):
    """After a bounded wait (an op's ``debug_wait``, whose ``flag`` is nonzero on time-out): report
    the barrier (its 32-bit shared address ``bar``) and the phase parity, and trap."""
    bar, parity = d.zext(bar, 64), d.and_(d.zext(phase, 64), 1)
    fail_if(d, d.icmp_unsigned("!=", flag, 0), op_name,
            f"timed out after {STATE.timeout_ms:g} ms waiting for phase parity %lld of the mbarrier at "
            "shared address 0x%llx (are the expected bytes and the arrival count right?)", [parity, bar])
