"""A minimal Numba target, ``amdgcn``, whose lowering produces AMDGPU LLVM IR.

Numba ships no AMD target and numba-hip needs ROCm, so this is the smallest piece
that lets a kernel be written in Python: Numba's own typing and lowering, with
:class:`AMDTargetContext` supplying the AMDGPU module layout, the minimal (GPU)
calling convention and the intrinsics of :mod:`.api`.  Nothing here runs code: the
library only collects LLVM IR for :func:`numba_tma.amd.compile`.
"""
from functools import cached_property

from numba.core import callconv, typing
from numba.core.base import BaseContext
from numba.core.codegen import CodeLibrary
from numba.core.descriptors import TargetDescriptor
from numba.core.dispatcher import Dispatcher
from numba.core.target_extension import GPU, dispatcher_registry, target_registry

from . import codegen
from .dma import AsyncGroups

TARGET_NAME = "amdgcn"


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
        self.linked.append(library)

    def add_ir_module(self, ir_module):
        self.ir_modules.append(ir_module)

    def finalize(self):
        self._finalized = True

    def all_ir_modules(self):
        """This library's modules followed by those of every library it links."""
        yield from self.ir_modules
        for library in self.linked:
            yield from library.all_ir_modules()

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

    def reset_async_groups(self):
        """Start a new compile: one commit-group record shared by all its functions."""
        self.async_record = AsyncGroups()
        self.async_groups_by_function = {}

    def load_additional_registries(self):
        from numba.core import optional  # noqa: F401
        from numba.cpython import (builtins, enumimpl, iterators, numbers,  # noqa: F401
                                   rangeobj, slicing, tupleobj)
        from numba.misc import literal  # noqa: F401
        from numba.np import arrayobj  # noqa: F401

        from . import api  # noqa: F401  (registers the AMD intrinsics)

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


class AMDTarget(TargetDescriptor):
    """Typing context shared by all archs; one target context per arch."""

    options = None

    @cached_property
    def typing_context(self):
        return typing.Context()

    def target_context_for(self, arch):
        contexts = self.__dict__.setdefault("_contexts", {})
        if arch not in contexts:
            contexts[arch] = AMDTargetContext(self.typing_context, arch)
        return contexts[arch]

    @property
    def target_context(self):
        # Numba asks the registered dispatcher for *a* target context when it
        # registers intrinsic lowering; every arch shares the same registries.
        return self.target_context_for(_REGISTRY_ARCH)


_REGISTRY_ARCH = "gfx942"


amd_target = AMDTarget(TARGET_NAME)


class AMDDispatcher(Dispatcher):
    """Registered so Numba's extension machinery can find the target; kernels are
    compiled with :func:`numba_tma.amd.compile`, not dispatched."""

    targetdescr = amd_target


dispatcher_registry[target_registry[TARGET_NAME]] = AMDDispatcher
