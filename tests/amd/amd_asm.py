"""Helpers for the AMD tests: build a one-kernel llvmlite module and compile it."""
import importlib.util
import pathlib
import re

from llvmlite import ir

from numba_tma.amd import codegen
from numba_tma.amd.llvm_ir import GLOBAL, I32, LDS, VOID, call_intrinsic, ptr

ARCHS = ("gfx942", "gfx950", "gfx1250")
GFX9 = ("gfx942", "gfx950")


class KernelBuilder:
    """An ``amdgpu_kernel void @k(ptr addrspace(1) %src, ptr addrspace(1) %dst, i32 %n)``
    with a 16 KiB LDS array, handed to a test's body function."""

    def __init__(self, arch):
        self.arch = arch
        self.module = codegen.new_module("t", arch)
        fnty = ir.FunctionType(VOID, [ptr(GLOBAL), ptr(GLOBAL), I32])
        self.fn = ir.Function(self.module, fnty, "k")
        self.fn.calling_convention = "amdgpu_kernel"
        self.src, self.dst, self.n = self.fn.args
        lds_ty = ir.ArrayType(I32, 4096)
        self.lds = ir.GlobalVariable(self.module, lds_ty, "lds", addrspace=LDS)
        self.lds.linkage = "internal"
        self.lds.initializer = ir.Constant(lds_ty, ir.Undefined)
        self.lds.align = 16
        self.builder = ir.IRBuilder(self.fn.append_basic_block())

    def lds_at(self, dword):
        return self.builder.gep(self.lds, [ir.Constant(I32, 0), ir.Constant(I32, dword)])

    def tid(self):
        return call_intrinsic(self.builder, "llvm.amdgcn.workitem.id.x", I32, [])

    def compile(self):
        self.builder.ret_void()
        return codegen.compile_ir(self.module, self.arch, keep=("k",))


def instructions(asm):
    """Assembly lines without comments-only lines or directives, stripped."""
    return [line.strip() for line in asm.splitlines()
            if line.strip() and not line.strip().startswith((".", ";"))]


def find(asm, pattern):
    """Every instruction line matching the regex *pattern*."""
    return [line for line in instructions(asm) if re.search(pattern, line)]


EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "amd_pipelined_copy.py"


def load_example():
    """``examples/amd_pipelined_copy.py`` as a module."""
    spec = importlib.util.spec_from_file_location("amd_pipelined_copy", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
