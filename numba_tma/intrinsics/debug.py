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
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils
from numba.cuda import nvvmutils

from ..debugging import STATE, timeout_ns  # noqa: F401  (the core reads both here)

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)


def _asm(builder, text, args, constraints, ret=I32):
    fnty = ir.FunctionType(ret, [a.type for a in args])
    return builder.call(ir.InlineAsm(fnty, text, constraints, side_effect=True), args)


def fail_if(builder, failed, op_name: str, what: str, values=()):
    """If ``failed`` (an i1), print ``numba_tma debug: <op_name>: <what>`` (a printf format over
    ``values``, 64-bit integers) with the block and thread, then trap."""
    with builder.if_then(failed, likely=False):
        module = builder.module
        regs = [nvvmutils.call_sreg(builder, f"{k}.{a}") for k in ("ctaid", "tid") for a in "xyz"]
        args = [builder.zext(v, I64) if v.type.width < 64 else v for v in values] + [builder.zext(r, I64) for r in regs]
        fmt = f"numba_tma debug: {op_name}: {what}, block (%lld, %lld, %lld) thread (%lld, %lld, %lld)\n"
        packed = cgutils.alloca_once_value(builder, cgutils.pack_struct(builder, args))
        vprintf = nvvmutils.declare_vprint(module)
        builder.call(vprintf, [nvvmutils.declare_string(builder, fmt), builder.bitcast(packed, vprintf.args[1].type)])
        _asm(builder, "trap;", [], "", ir.VoidType())


def check_shared(builder, op_name: str, arg: str, generic: ir.Value):
    """``generic`` (a 64-bit generic address) lies in this block's shared memory."""
    inside = _asm(builder, "{\n .reg .pred p;\n isspacep.shared p, $1;\n selp.u32 $0, 1, 0, p;\n}", [generic], "=r,l")
    fail_if(builder, builder.icmp_unsigned("==", inside, ir.Constant(I32, 0)), op_name,
            f"argument '{arg}' is not in shared memory (generic address 0x%llx)", [generic])


def check_aligned(builder, op_name: str, arg: str, address: ir.Value, align: int, why: str):
    """``address`` (any integer width) is a multiple of ``align``."""
    low = builder.and_(address, ir.Constant(address.type, align - 1))
    fail_if(builder, builder.icmp_unsigned("!=", low, ir.Constant(address.type, 0)), op_name,
            f"argument '{arg}' at 0x%llx is not {align}-byte aligned ({why})", [address])


def check_at_least(builder, op_name: str, arg: str, nbytes: ir.Value, need: int, why: str):
    fail_if(builder, builder.icmp_unsigned("<", nbytes, ir.Constant(nbytes.type, need)), op_name,
            f"argument '{arg}' holds %lld bytes, fewer than {need} ({why})", [nbytes])


def array_bytes(context, builder, ty, val) -> ir.Value:
    """The byte size of a Numba array value (itemsize times its extents), at run time."""
    ary = context.make_array(ty)(context, builder, val)
    nbytes = ary.itemsize
    for extent in cgutils.unpack_tuple(builder, ary.shape):
        nbytes = builder.mul(nbytes, extent)
    return nbytes


def check_holds(builder, op_name: str, arg: str, size: ir.Value, nbytes: ir.Value):
    """An array of ``size`` bytes holds the ``nbytes`` (run-time) an op copies into or out of it."""
    fail_if(builder, builder.icmp_signed("<", size, nbytes), op_name,
            f"argument '{arg}' holds %lld bytes, fewer than nbytes = %lld (the copy would run past the array)",
            [size, nbytes])


def check_range(builder, op_name: str, arg: str, value: ir.Value, lo: int, hi: int, why: str):
    """``lo <= value <= hi`` (a 64-bit ``value``; bounds at the ends of its range are not checked)."""
    tests = ([builder.icmp_signed("<", value, ir.Constant(value.type, lo))] if lo > 0 else []) + \
        ([builder.icmp_signed(">", value, ir.Constant(value.type, hi))] if hi < (1 << 63) else [])
    if tests:
        fail_if(builder, builder.or_(*tests) if len(tests) == 2 else tests[0], op_name,
                f"{arg} = %lld: must be {lo} to {hi} ({why})", [value])


def check_multiple(builder, op_name: str, arg: str, value: ir.Value, scale: int, multiple: int, why: str):
    """``value * scale`` is a multiple of ``multiple``."""
    scaled = builder.mul(value, ir.Constant(value.type, scale))
    low = builder.and_(scaled, ir.Constant(value.type, multiple - 1))
    fail_if(builder, builder.icmp_unsigned("!=", low, ir.Constant(value.type, 0)), op_name,
            f"{arg} = %lld: times {scale} bytes it must be a multiple of {multiple} ({why})",
            [builder.sext(value, I64) if value.type.width < 64 else value])


def load_u32(builder, address: ir.Value, offset: int) -> ir.Value:
    """The 32-bit word at byte ``offset`` of the generic 64-bit ``address`` (a descriptor's field)."""
    return _asm(builder, f"ld.u32 $0, [$1+{offset}];", [address], "=r,l")


def check_inside(builder, op_name: str, desc_address: ir.Value, coords):
    """Each ``coords[i]`` is at most the tensor's last index along dimension ``i`` (read from the
    map: bytes 32 + 4 i hold ``global_dim[i] - 1``): a box that starts past the end is all
    out-of-bounds fill, which is what (row, col) coordinates give for an innermost-first map."""
    for i, coord in enumerate(coords):
        last = load_u32(builder, desc_address, 32 + 4 * i)
        past = builder.icmp_signed(">", coord, builder.zext(last, I64))
        fail_if(builder, past, op_name, f"coords[{i}] = %lld is past the tensor's last index %lld along dimension {i} "
                "(the whole box is out of bounds): coordinates are innermost-first, (col, row) for a[row, col]",
                [coord, builder.zext(last, I64)])

