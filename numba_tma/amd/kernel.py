"""``compile``: a Python kernel -> AMDGPU assembly and object for one architecture."""
import inspect
import re
import reprlib
from dataclasses import dataclass

from llvmlite import ir
from numba.core import compiler, sigutils, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.target_extension import target_override

from . import codegen, dma, vmcnt
from .errors import AMDArgumentError
from .numba_target import TARGET_NAME, WAIT_COUNTERS, amd_target, set_device_flags
from .targets import get_arch


@dataclass(frozen=True)
class CompiledKernel:
    """A compiled kernel: its name, argument layout and the :class:`CompiledModule`."""
    name: str
    arch: str
    params: tuple  # LLVM parameter types of the kernel, in order
    module: codegen.CompiledModule

    @property
    def asm(self):
        return self.module.asm

    @property
    def llvm_ir(self):
        return self.module.llvm_ir

    @property
    def object(self):
        return self.module.object

    def hsaco(self):
        return self.module.hsaco()


def _flags():
    return set_device_flags(compiler.Flags())


def _mark_local_reads(library, context):
    """Give the loads of every function that issued LDS DMA the ``noalias`` scopes."""
    for module in library.all_ir_modules():
        for fn in module.functions:
            if fn.name not in context.async_groups_by_function:
                continue
            for block in fn.blocks:
                for instr in block.instructions:
                    if isinstance(instr, ir.LoadInstr):
                        dma.mark_local_read(instr)


def _kernel_wrapper(context, fndesc, name):
    """An ``amdgpu_kernel`` taking each argument's flattened fields (as numba-cuda does)
    and calling the lowered function."""
    module = context.create_module(name)
    arginfo = context.get_arg_packer(fndesc.argtypes)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), arginfo.argument_types), name)
    fn.calling_convention = "amdgpu_kernel"
    builder = ir.IRBuilder(fn.append_basic_block())
    callee = ir.Function(module, context.call_conv.get_function_type(
        fndesc.restype, fndesc.argtypes), fndesc.llvm_func_name)
    args = arginfo.from_arguments(builder, fn.args)
    context.call_conv.call_function(builder, callee, fndesc.restype, fndesc.argtypes, args)
    builder.ret_void()
    return module, tuple(arginfo.argument_types)


def _argument_types(pyfunc, signature):
    """The argument types of *signature*: void, one type per parameter of *pyfunc*."""
    try:
        args, return_type = sigutils.normalize_signature(signature)
    except Exception as err:  # a str signature is evaluated, so any error can come out
        raise AMDArgumentError(
            "compile: signature must be a Numba signature such as "
            f"'void(float32[::1], int32)' or a tuple of Numba types; got {signature!r} ({err})"
        ) from None
    if return_type not in (None, types.none):
        raise AMDArgumentError(
            f"compile: signature must return void (kernels return nothing); got {return_type}")
    params = len(inspect.signature(pyfunc).parameters)
    if len(args) != params:
        raise AMDArgumentError(f"compile: signature must give one type per parameter of "
                               f"{pyfunc.__name__} ({params}); got {len(args)}")
    return args


#: the largest workgroup LLVM's AMDGPU back end accepts (``amdgpu-flat-work-group-size``)
MAX_WORKGROUP_SIZE = 1024


def _check_max_workgroup_size(value):
    if isinstance(value, bool) or not isinstance(value, int) or not (
            1 <= value <= MAX_WORKGROUP_SIZE):
        raise AMDArgumentError(
            f"compile: max_workgroup_size must be None or an int in [1, {MAX_WORKGROUP_SIZE}], "
            f"got {reprlib.repr(value)}")
    return value


_KERNEL_DEFINE = re.compile(r"^(define amdgpu_kernel [^\n]*?)(\s*\{?)$", re.MULTILINE)


def _with_flat_work_group_size(wrapper_text, size):
    """The wrapper's ``define`` line with ``"amdgpu-flat-work-group-size"="1,<size>"``
    (llvmlite's function attributes take no key-value string attributes)."""
    text, count = _KERNEL_DEFINE.subn(
        lambda m: f'{m[1]} "amdgpu-flat-work-group-size"="1,{size}"{m[2]}', wrapper_text,
        count=1)
    assert count == 1, "no amdgpu_kernel definition in the wrapper"
    return text


def compile(pyfunc, signature, arch, *, name=None, max_workgroup_size=None):
    """Compile the Python kernel *pyfunc* for *arch* (``gfx942``, ``gfx950``, ``gfx1250``).

    *signature* gives the argument types (e.g. ``"void(float32[::1], float32[::1])"`` or
    a tuple of Numba types); kernels return nothing.  Returns a :class:`CompiledKernel`
    with ``.asm``, ``.object`` (relocatable ELF) and ``.hsaco()`` (needs ld.lld).
    Ops that *arch* lacks raise :class:`UnsupportedArchError` here, before LLVM runs, and
    so does an unknown arch name; wrong arguments (of ``compile`` or of an op) raise
    :class:`AMDArgumentError`.

    *max_workgroup_size* (an int 1..1024, or None for LLVM's default of 1..1024) promises
    the launch never uses more lanes per workgroup: the kernel gets
    ``"amdgpu-flat-work-group-size"="1,N"``.  LLVM uses it for register budgets.  With N
    at most the wave size (64 on gfx942/gfx950, 32 on gfx1250) a workgroup is one wave:
    :func:`s_barrier` emits only its LDS wait (LLVM would drop the barrier anyway, and
    the convergent barrier would keep it from unrolling loops).  Launching more lanes
    than N is undefined.

    On gfx942/gfx950 the ``vmcnt`` of each ``async_load_wait_group`` is counted in the
    assembly, the kernel's other vector-memory instructions included, per unrolled copy
    (see :mod:`numba_tma.amd.vmcnt`); this takes two code generations.
    """
    get_arch(arch)
    if not inspect.isfunction(pyfunc):
        raise AMDArgumentError(
            f"compile: pyfunc must be a Python function, got {reprlib.repr(pyfunc)}")
    args = _argument_types(pyfunc, signature)
    if name is not None and not (isinstance(name, str) and name):
        raise AMDArgumentError(
            f"compile: name must be a non-empty str or None, got {reprlib.repr(name)}")
    if max_workgroup_size is not None:
        _check_max_workgroup_size(max_workgroup_size)
    name = name or pyfunc.__name__
    with global_compiler_lock, target_override(TARGET_NAME):
        context = amd_target.target_context_for(arch)
        context.reset_async_groups(one_wave=max_workgroup_size is not None and
                                   max_workgroup_size <= get_arch(arch).wave_size,
                                   max_workgroup_size=max_workgroup_size)
        record = context.async_record
        cres = compiler.compile_extra(amd_target.typing_context, context, pyfunc, args,
                                      types.none, _flags(), {})
        _mark_local_reads(cres.library, context)
        wrapper, params = _kernel_wrapper(context, cres.fndesc, name)
        wrapper_text = str(wrapper)
        if max_workgroup_size is not None:
            wrapper_text = _with_flat_work_group_size(wrapper_text, max_workgroup_size)

        source = _link("\n".join([wrapper_text] +
                                  [str(m) for m in cres.library.all_ir_modules()]), arch)
    optimized = codegen.optimize(source, arch, keep=(name,))
    if record.marked:
        return CompiledKernel(name, arch, params, _with_counted_waits(optimized, record, arch,
                                                                      name))
    return CompiledKernel(name, arch, params, codegen.compile_optimized(optimized, arch))


def _with_counted_waits(optimized, record, arch, name):
    """Code generation with the count of every wait (vmcnt; asynccnt on gfx1250) counted in
    the assembly (see :mod:`.vmcnt`), or with the IR-level counts when that assembly cannot
    be read or the final code issues its memory instructions in another order."""
    counter = WAIT_COUNTERS[arch]
    instances = vmcnt.wait_instances(optimized)
    ir_counts = [count for _site, count in instances]

    def with_ir_counts():
        return codegen.compile_optimized(vmcnt.with_markers(optimized, ir_counts, False, counter), arch)

    if not instances:
        return with_ir_counts()
    marked = codegen.assembly_of(vmcnt.with_markers(optimized, ir_counts, counter=counter), arch)
    counts = vmcnt.wait_counts(marked, name, [record.wait_pendings[s] for s, _ in instances], counter)
    if counts is None:
        return with_ir_counts()
    counted = codegen.compile_optimized(vmcnt.with_markers(  # unseen instances: IR count
        optimized, [k if c is None else max(c, k) for c, k in zip(counts, ir_counts)], False, counter),
        arch)
    if vmcnt.same_memory_order(marked, counted.asm, name, counter):
        return counted
    return with_ir_counts()


_ALLOCA = re.compile(r'^(\s+)%("?)([^" ]+)\2 = alloca (.*)$', re.MULTILINE)


def _allocas_to_private(text):
    """Numba allocates in address space 0; AMDGPU wants allocas in addrspace(5)
    (private), so each becomes a private alloca plus a cast to a flat pointer."""
    return _ALLOCA.sub(
        lambda m: (f'{m[1]}%"{m[3]}.private" = alloca {m[4]}, addrspace(5)\n'
                   f'{m[1]}%{m[2]}{m[3]}{m[2]} = addrspacecast ptr addrspace(5) '
                   f'%"{m[3]}.private" to ptr'),
        text)


def _link(source, arch):
    """Link the textual modules into one (they share triple and data layout)."""
    import llvmlite.binding as llvm
    codegen.target_machine(arch)  # initializes LLVM
    parts = _allocas_to_private(source).split("; ModuleID = ")
    linked = llvm.parse_assembly("; ModuleID = " + parts[1])
    for text in parts[2:]:
        linked.link_in(llvm.parse_assembly("; ModuleID = " + text))
    return str(linked)
