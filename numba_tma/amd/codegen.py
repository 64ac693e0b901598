"""LLVM IR -> AMDGPU assembly, relocatable object and (with ld.lld) a code object."""
import functools
import os
import re
import reprlib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from .errors import reject
from .targets import get_arch

TRIPLE = "amdgcn-amd-amdhsa"
#: ld.lld names tried in order; Debian's lld-22 package installs ld.lld-22
LD_LLD_NAMES = ("ld.lld", "ld.lld-22", "/usr/lib/llvm-22/bin/ld.lld")


@functools.cache
def _init_llvm():
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@functools.cache
def target_machine(arch):
    """An llvmlite TargetMachine for *arch* (verbose asm, so sched markers show)."""
    get_arch(arch)
    _init_llvm()
    tm = llvm.Target.from_triple(TRIPLE).create_target_machine(
        cpu=arch, opt=3, reloc="pic", codemodel="default")
    tm.set_asm_verbosity(True)
    return tm


def new_module(name, arch):
    """An empty ``llvmlite.ir.Module`` with the AMDGPU triple and data layout."""
    module = ir.Module(name)
    module.triple = TRIPLE
    module.data_layout = str(target_machine(arch).target_data)
    return module


@dataclass(frozen=True)
class CompiledModule:
    """The result of :func:`compile_ir`: optimized LLVM IR, assembly and an ELF object."""
    arch: str
    llvm_ir: str
    asm: str
    object: bytes

    def hsaco(self):
        """Link the object into a loadable code object with ld.lld (bytes)."""
        return link_hsaco(self.object)


def _parse(module):
    """*module* (an ``llvmlite.ir.Module`` or LLVM IR text) parsed by LLVM."""
    if not isinstance(module, (ir.Module, str)):
        raise reject("compile_ir", "module", "must be an llvmlite.ir.Module or LLVM IR text",
                     reprlib.repr(module))
    try:
        return llvm.parse_assembly(str(module))
    except RuntimeError as err:
        raise reject("compile_ir", "module", "must be valid LLVM IR", f"{err}") from None


def compile_ir(module, arch, keep=()):
    """Verify, optimize (O3) and compile *module* (llvmlite.ir.Module or IR text).

    Every defined function not named in *keep* (a tuple of function names) becomes
    internal, so it is inlined into the kernels in *keep* and dropped.
    """
    return compile_optimized(optimize(module, arch, keep), arch)


def compile_optimized(optimized, arch):
    """Code generation only: :func:`optimize`'s IR text -> a :class:`CompiledModule`."""
    tm = target_machine(arch)
    # Code generation rewrites the module in place (control-flow intrinsics), so the
    # object is made from a fresh parse of the optimized IR.
    asm = tm.emit_assembly(llvm.parse_assembly(optimized))
    return CompiledModule(arch, optimized, asm, tm.emit_object(llvm.parse_assembly(optimized)))


def assembly_of(optimized, arch):
    """Code generation of :func:`optimize`'s IR text to assembly only."""
    return target_machine(arch).emit_assembly(llvm.parse_assembly(optimized))


def optimize(module, arch, keep=()):
    """Verify and optimize (O3) *module*; the optimized IR text (see :func:`compile_ir`)."""
    get_arch(arch, "compile_ir")  # before target_machine's cache would hash an unhashable arch
    if not isinstance(keep, (tuple, list, set, frozenset)) or not all(
            isinstance(name, str) for name in keep):
        raise reject("compile_ir", "keep", "must be a tuple of function names", reprlib.repr(keep))
    tm = target_machine(arch)
    mod = _parse(module)
    mod.triple = TRIPLE
    mod.data_layout = str(tm.target_data)
    for fn in mod.functions:
        if not fn.is_declaration and fn.name not in keep:
            fn.linkage = llvm.Linkage.internal
    mod.verify()
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    pb.getModulePassManager().run(mod, pb)
    check_lds_size(mod, arch)
    return str(mod)


_ALIGN = re.compile(r", align (\d+)")


def lds_bytes(mod, arch):
    """Bytes of LDS (``addrspace(3)`` globals, each aligned) that *mod* allocates, and
    the globals as ``[(name, bytes)]``.  Sums every LDS global of the module."""
    td = target_machine(arch).target_data
    total, parts = 0, []
    for gv in mod.global_variables:
        if "addrspace(3)" not in str(gv.type):
            continue
        size = td.get_abi_size(gv.global_value_type)
        match = _ALIGN.search(str(gv))
        align = int(match[1]) if match else 16
        total = -(-total // align) * align + size
        parts.append((gv.name, size))
    return total, parts


def check_lds_size(mod, arch, op="compile_ir", arg="module"):
    """Raise unless the module's LDS fits *arch*; LLVM would otherwise report
    "local memory exceeds limit" and end the process."""
    limit = get_arch(arch).lds_bytes
    total, parts = lds_bytes(mod, arch)
    if total > limit:
        listed = ", ".join(f"@{name} {size}" for name, size in parts)
        raise reject(op, arg, f"must use at most {arch}'s {limit} bytes of LDS per workgroup",
                     f"{total} bytes ({listed})")


def find_ld_lld():
    """Path of an ld.lld that can link AMDGPU objects, or None."""
    for name in LD_LLD_NAMES:
        path = shutil.which(name) or (name if os.path.isfile(name) else None)
        if path:
            return path
    return None


EM_AMDGPU = 224  # ELF e_machine of AMDGPU objects


def _is_amdgpu_elf(obj):
    return (isinstance(obj, (bytes, bytearray)) and obj[:4] == b"\x7fELF"
            and int.from_bytes(obj[18:20], "little") == EM_AMDGPU)


def link_hsaco(obj):
    """``ld.lld -shared`` the relocatable *obj* into an HSA code object (bytes)."""
    if not _is_amdgpu_elf(obj):
        raise reject("link_hsaco", "obj", "must be the bytes of an AMDGPU ELF object (CompiledModule.object)",
                     reprlib.repr(obj))
    lld = find_ld_lld()
    if lld is None:
        raise FileNotFoundError(
            "ld.lld not found (tried " + ", ".join(LD_LLD_NAMES) + "); on Debian "
            "install it with: apt-get install lld-22")
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "kernel.o"), os.path.join(tmp, "kernel.hsaco")
        with open(src, "wb") as f:
            f.write(obj)
        subprocess.run([lld, "-shared", src, "-o", dst], check=True, capture_output=True)
        with open(dst, "rb") as f:
            return f.read()
