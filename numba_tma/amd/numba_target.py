"""A minimal Numba target, ``amdgcn``, whose lowering produces AMDGPU LLVM IR.

Numba ships no AMD target and numba-hip needs ROCm, so this is the smallest piece
that lets a kernel be written in Python: Numba's own typing and lowering, with
:class:`AMDTargetContext` supplying the AMDGPU module layout, the minimal (GPU)
calling convention and the ops declared on :mod:`._core`.  Nothing here runs code: the
library only collects LLVM IR for :func:`numba_tma.amd.compile`.
"""
from functools import cached_property

from numba.core import callconv, sigutils, typing
from numba.core.base import BaseContext
from numba.core.codegen import CodeLibrary
from numba.core.descriptors import TargetDescriptor
from numba.core.dispatcher import Dispatcher
from numba.core.cpu import _options_mixin
from numba.core.options import TargetOptions
from numba.core.target_extension import (GPU, dispatcher_registry, jit_registry,
                                         target_registry)

from . import codegen, power, targets, vmcnt
from .dma import AsyncGroups
from .errors import UnsupportedArchError

TARGET_NAME = "amdgcn"
#: each arch's DMA wait counter, which compile() counts in the assembly (see vmcnt.py):
#: every vector-memory instruction on gfx9 (vmcnt), the async LDS copies on gfx1250
WAIT_COUNTERS = {targets.CDNA3: vmcnt.VMCNT, targets.CDNA4: vmcnt.VMCNT, targets.GFX1250: vmcnt.ASYNCCNT}


class AMDGCN(GPU):
    """Numba's hardware token for the AMDGPU target."""


target_registry[TARGET_NAME] = AMDGCN


class AMDCodeLibrary(CodeLibrary):
    """Collects the llvmlite ``ir.Module`` objects that lowering produces."""

    def __init__(self, codegen_, name):
        super().__init__(codegen_, name)
        self.ir_modules = []
        self.linked = []

    def add_linking_library(self, library):
        if library is not self and library not in self.linked:
            self.linked.append(library)

    def add_ir_module(self, ir_module):
        self.ir_modules.append(ir_module)

    def finalize(self):
        self._finalized = True

    def all_ir_modules(self, _seen=None):
        """This library's modules followed by those of every library it links, each
        library once (a device function called from two places is linked twice)."""
        seen = set() if _seen is None else _seen
        if id(self) in seen:
            return
        seen.add(id(self))
        yield from self.ir_modules
        for library in self.linked:
            yield from library.all_ir_modules(seen)

    def get_function(self, name):
        for module in self.all_ir_modules():
            if name in module.globals:
                return module.globals[name]
        raise KeyError(name)

    def get_llvm_str(self):
        return "\n".join(str(m) for m in self.all_ir_modules())

    def get_asm_str(self):
        raise NotImplementedError("use numba_tma.amd.compile() for assembly")


class AMDCodegen:
    """The codegen object Numba asks for modules and libraries."""

    def __init__(self, arch):
        self.arch = arch
        self.target_data = codegen.target_machine(arch).target_data

    def _create_empty_module(self, name):
        return codegen.new_module(name, self.arch)

    def create_library(self, name, **kwargs):
        return AMDCodeLibrary(self, name)


class AMDTargetContext(BaseContext):
    """Lowering context for one AMD architecture (``self.arch``)."""

    implement_powi_as_math_call = True
    strict_alignment = True

    def __init__(self, typingctx, arch):
        self.arch = arch
        super().__init__(typingctx, TARGET_NAME)

    def init(self):
        self._internal_codegen = AMDCodegen(self.arch)
        self.reset_async_groups()

    def reset_async_groups(self, one_wave=False, max_workgroup_size=None):
        """Start a new compile: one commit-group record shared by all its functions;
        *one_wave*: its workgroups are one wave (see ``numba_tma.amd.s_barrier``);
        *max_workgroup_size*: the compile's promise, or None (see ``numba_tma.amd.wave_id``)."""
        self.one_wave = one_wave
        self.max_workgroup_size = max_workgroup_size
        self.async_record = AsyncGroups(marked=self.arch in WAIT_COUNTERS)
        self.async_groups_by_function = {}

    def load_additional_registries(self):
        from numba.core import optional  # noqa: F401
        from numba.cpython import (builtins, enumimpl, iterators, numbers,  # noqa: F401
                                   rangeobj, slicing, tupleobj)
        from numba.misc import literal  # noqa: F401
        from numba.np import arrayobj  # noqa: F401

        from numba.cpython import mathimpl
        self.install_registry(mathimpl.registry)  # fabs, sqrt, ... (abs of floats)

    def refresh(self):
        super().refresh()
        # after Numba's builtin registry, whose float-power lowerings these replace
        # (for equal signatures the one installed last is used)
        self.install_registry(power.registry)

    def codegen(self):
        return self._internal_codegen

    @property
    def target_data(self):
        return self._internal_codegen.target_data

    @cached_property
    def call_conv(self):
        return callconv.MinimalCallConv(self)

    def create_module(self, name):
        return self._internal_codegen._create_empty_module(name)

    def async_groups(self, function):
        """The commit-group record of the compile, noting that *function* uses it.

        One record for all functions of a compile, so that a wait also counts the
        groups committed in other functions (conservatively, see ``AsyncGroups``)."""
        return self.async_groups_by_function.setdefault(function.name, self.async_record)


def set_device_flags(flags):
    """The compiler flags of every function compiled for the device: no Python
    wrappers, no NRT, no Python exceptions (``error_model="numpy"``)."""
    flags.no_compile = True
    flags.no_cpython_wrapper = True
    flags.no_cfunc_wrapper = True
    flags.nrt = False
    flags.error_model = "numpy"
    return flags


class AMDTargetOptions(_options_mixin, TargetOptions):
    """Options of the functions Numba compiles for this target by itself: the
    implementations of ``@overload`` functions (``min``, ``abs``, ``range`` with a step,
    ...).  Numba's jit options are accepted (``_options_mixin``, as on the CPU target);
    the device flags then override them."""

    def finalize(self, flags, options):
        flags.enable_pyobject = False
        flags.enable_looplift = False
        flags.inherit_if_not_set("fastmath")
        flags.inherit_if_not_set("forceinline")
        set_device_flags(flags)


class AMDTypingContext(typing.Context):
    """Numba's typing context, which names an NVIDIA op of numba-tma used in an AMD
    kernel (Numba's own error is ``Unknown attribute 'init' of type Module(...)``)."""

    def resolve_value_type(self, val):
        try:
            return super().resolve_value_type(val)
        except ValueError:
            module = getattr(val, "__module__", None) or ""
            if module.split(".")[0] != "numba_tma" or module.startswith(__package__):
                raise
            name = f"{module}.{getattr(val, '__name__', type(val).__name__)}"
            # not a ValueError: Numba would take it for "no such attribute"
            raise UnsupportedArchError(
                f"{name} is an NVIDIA op (numba-tma's CUDA API): AMD kernels use the ops "
                f"of numba_tma.amd (lds_array, async_load, buffer_load_to_local, "
                f"async_amd_descriptor_load, s_barrier, ...)") from None


class AMDTarget(TargetDescriptor):
    """Typing context shared by all archs; one target context per arch."""

    options = AMDTargetOptions

    @cached_property
    def typing_context(self):
        return AMDTypingContext()

    def target_context_for(self, arch):
        contexts = self.__dict__.setdefault("_contexts", {})
        if arch not in contexts:
            contexts[arch] = context = AMDTargetContext(self.typing_context, arch)
            context.refresh()
            for entry in self.__dict__.get("_user_functions", ()):
                context.insert_user_function(entry[0], entry[1], [entry[2]])
        return contexts[arch]

    def insert_user_function(self, key, fndesc, library):
        """Make a compiled device function callable in every arch's context, also
        in those created later."""
        self.__dict__.setdefault("_user_functions", []).append((key, fndesc, library))
        for context in self.__dict__.get("_contexts", {}).values():
            context.insert_user_function(key, fndesc, [library])

    @property
    def target_context(self):
        # Numba asks the registered dispatcher for *a* target context when it
        # registers intrinsic lowering; every arch shares the same registries.
        return self.target_context_for(_REGISTRY_ARCH)


_REGISTRY_ARCH = "gfx942"


amd_target = AMDTarget(TARGET_NAME)


class _DeviceFunction:
    """Lowering key of one compiled device function (see ``AMDDispatcher``)."""

    def __init__(self, name, args):
        self.name, self.args = name, args

    def __repr__(self):
        return f"<amdgcn device function {self.name}{self.args}>"


class AMDDispatcher(Dispatcher):
    """Registered so Numba's extension machinery can find the target; kernels are
    compiled with :func:`numba_tma.amd.compile`, not dispatched."""

    targetdescr = amd_target

    def add_overload(self, cres):
        """Record *cres* and make it callable from kernels of every arch.

        Numba's CPU dispatcher inserts the C entry point and uses it as the key of the
        lowering; with ``no_compile`` it is None for every function, so calls would
        find no (or another function's) lowering.  Here each compiled function gets a
        key of its own, registered in every arch's target context."""
        args = tuple(cres.signature.args)
        self.overloads[args] = cres
        key = _DeviceFunction(cres.fndesc.qualname, args)
        self.__dict__.setdefault("_device_keys", {})[args] = key
        amd_target.insert_user_function(key, cres.fndesc, cres.library)

    def get_overload(self, sig):
        args, _ = sigutils.normalize_signature(sig)
        return self._device_keys[tuple(args)]


dispatcher_registry[target_registry[TARGET_NAME]] = AMDDispatcher


def _device_jit(*args, **options):
    """The ``jit`` Numba uses to compile an ``@overload`` implementation for this
    target (``jit_registry``); without it typing such a call raised a raw KeyError."""
    if args:
        raise TypeError("the amdgcn jit takes keyword options only")

    def wrapper(pyfunc):
        return AMDDispatcher(pyfunc, targetoptions=options)
    return wrapper


jit_registry[target_registry[TARGET_NAME]] = _device_jit
