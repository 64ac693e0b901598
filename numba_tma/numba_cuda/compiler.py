"""numba-cuda 0.30's compiler, hooked where numba_tma needs what it cannot be asked for (hooks 1,
3 and 8 of :mod:`numba_tma.numba_cuda`); :func:`install` puts these and :mod:`.launching`'s in place.
Imported by the GPU backend only (:mod:`numba_tma.gpu`): numba-cuda's CUDA simulator replaces the
modules named here."""

from __future__ import annotations

import numba.cuda.dispatcher as _dispatcher
from llvmlite import ir
from numba.cuda import cgutils
from numba.cuda.codegen import CUDACodeLibrary
from numba.cuda.cudadrv import nvvm as _nvvm

from . import launching
from .internals import ConfigStack
from .kernel_arguments import PENDING
from .whole_program import refuse_ignored_setmaxnreg, uses_setmaxnreg

# -- 1. grid-constant kernel parameters (recorded by kernel_arguments.request_grid_constant) -------

def _mark_grid_constants(function) -> None:
    indices = []
    for position, argument in enumerate(function.args):
        attributes = PENDING.pop(argument, None)
        if attributes is not None:
            argument.attributes = attributes
            indices.append(position + 1)   # NVVM counts parameters from 1
    if indices:
        module = function.module
        node = module.add_metadata([function, ir.MetaDataString(module, "grid_constant"),
                                    module.add_metadata([ir.Constant(ir.IntType(32), i) for i in indices])])
        cgutils.get_or_insert_named_metadata(module, "nvvm.annotations").add(node)


_set_cuda_kernel = _nvvm.set_cuda_kernel


def _set_cuda_kernel_with_grid_constants(function):
    _mark_grid_constants(function)
    return _set_cuda_kernel(function)


_set_cuda_kernel = _nvvm.set_cuda_kernel


def _set_cuda_kernel_with_grid_constants(function):
    _mark_grid_constants(function)
    return _set_cuda_kernel(function)


# -- 3. the compilation target ---------------------------------------------------------------------

def jit_target(cc) -> tuple:
    """The target numba-cuda's code generator uses for a device of compute capability ``cc``
    (``codegen.CUDACodeLibrary._ensure_cc``): the ``a`` variant from 9.0 on."""
    return (cc[0], cc[1], "a") if tuple(cc[:2]) >= (9, 0) else tuple(cc[:2])


class _Target:
    """The current device as numba-cuda's dispatcher sees it, with the real compilation target."""

    def __init__(self, device, compute_capability):
        self._device, self.compute_capability = device, compute_capability

    def __getattr__(self, name):
        if self._device is None:
            raise AttributeError(f"{name}: no device (compiling for {self.compute_capability} without a GPU)")
        return getattr(self._device, name)


_get_current_device = _dispatcher.get_current_device


def current_target_device():
    """``get_current_device()`` for the dispatcher: inside a compilation (a device function typed
    while its kernel compiles) the kernel's target, otherwise the device with its JIT target."""
    cfg = ConfigStack.top_or_none()
    cc = getattr(cfg, "compute_capability", None)
    if cc is not None:
        return _Target(None, tuple(cc))
    device = _get_current_device()
    return _Target(device, jit_target(device.compute_capability))


# -- 8. kernels calling setmaxnreg linked whole-program (whole_program: the rule) -----------------

_get_cubin = CUDACodeLibrary.get_cubin


def _get_cubin_whole_program(self, cc=None):
    """numba-cuda's ``get_cubin``; a kernel calling ``setmaxnreg`` linked with its LTO (whole program)."""
    if not uses_setmaxnreg(self):
        return _get_cubin(self, cc)
    self._lto = True
    cubin = _get_cubin(self, cc)
    refuse_ignored_setmaxnreg(self.get_linkerinfo(self._ensure_cc(cc)))
    return cubin


def install() -> None:
    """Install hooks 1, 2, 3, 7 and 8 (idempotent)."""
    CUDACodeLibrary.get_cubin = _get_cubin_whole_program
    _nvvm.set_cuda_kernel = _set_cuda_kernel_with_grid_constants
    _dispatcher._Kernel._prepare_args = launching.prepare_args_by_value
    _dispatcher.get_current_device = current_target_device
    _dispatcher._Kernel.launch = launching.launch_checked
