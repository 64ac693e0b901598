"""Small llvmlite helpers shared by the emitters: types, intrinsic calls, lane ids."""
from llvmlite import ir

from .errors import reject

I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
VOID = ir.VoidType()
FLAT, GLOBAL, LDS, RSRC = 0, 1, 3, 8  # AMDGPU address spaces


def ptr(addrspace):
    return ir.PointerType(addrspace=addrspace)


def i32(value):
    return ir.Constant(I32, value)


def call_intrinsic(builder, name, ret_type, args):
    """Call ``name`` (declared on first use) with *args*; return the call instruction."""
    fnty = ir.FunctionType(ret_type, [a.type for a in args])
    fn = builder.module.globals.get(name)
    if fn is None:
        fn = ir.Function(builder.module, fnty, name)
    elif fn.function_type != fnty:
        raise TypeError(f"{name} already declared as {fn.function_type}, not {fnty}")
    return builder.call(fn, args)


def compiler_barrier(builder):
    """``fence syncscope("singlethread") seq_cst``: LLVM moves no memory access across
    it, merges none with one on the other side, and it emits no instruction on any arch.

    LLVM does not see the gfx1250 DMA ops and waits touch LDS (``tensor.load.to.lds``
    takes no pointer, ``s.wait.tensorcnt`` / ``s.wait.asynccnt`` touch only inaccessible
    memory), so the TDM ops are preceded and those waits followed by this.  The
    optimizer treats a fence as reading and writing all memory; in code generation it is
    a pseudo-instruction with side effects, which the schedulers do not move memory
    instructions across, until SIMemoryLegalizer deletes it (a single-thread fence needs
    no wait) after the last scheduler.
    """
    return builder.fence("seq_cst", "singlethread")


def as_addrspace(builder, op, name, value, addrspace):
    """*value* as a pointer in *addrspace*; a flat pointer is cast, others are rejected."""
    ty = value.type
    if not isinstance(ty, ir.PointerType) or ty.addrspace not in (addrspace, FLAT):
        raise reject(op, name, f"must be a pointer in address space {addrspace} (or flat)", ty)
    if ty.addrspace == addrspace:
        return value
    return builder.addrspacecast(value, ptr(addrspace))


def lane_id(builder, wave_size):
    """This lane's index within its wave (``v_mbcnt``)."""
    lo = call_intrinsic(builder, "llvm.amdgcn.mbcnt.lo", I32, [i32(-1), i32(0)])
    if wave_size == 32:
        return lo
    return call_intrinsic(builder, "llvm.amdgcn.mbcnt.hi", I32, [i32(-1), lo])


def wave_id(builder, wave_size):
    """Wave index within a 1-D workgroup, made wave-uniform (an SGPR)."""
    tid = call_intrinsic(builder, "llvm.amdgcn.workitem.id.x", I32, [])
    wid = builder.udiv(tid, i32(wave_size))
    return call_intrinsic(builder, "llvm.amdgcn.readfirstlane.i32", I32, [wid])

