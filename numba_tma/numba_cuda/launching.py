"""numba-cuda 0.30's launcher, as numba_tma launches through it (hooks 2, 5 and 7 of
:mod:`numba_tma.numba_cuda`; :func:`.compiler.install` puts the wrappers in place).  Imported by
the GPU backend only (:mod:`numba_tma.gpu`)."""

from __future__ import annotations

import re

import numba.cuda.dispatcher as _dispatcher

from .kernel_arguments import BY_VALUE, launched_again

# -- 2. by-value launch arguments (registered by kernel_arguments.register_by_value) ----------------

_prepare_args = _dispatcher._Kernel._prepare_args


def prepare_args_by_value(self, ty, val, stream, retr, kernelargs):
    to_argument = BY_VALUE.get(type(ty))
    if to_argument is None:
        return _prepare_args(self, ty, val, stream, retr, kernelargs)
    kernelargs.append(to_argument(val, len(kernelargs)))


# -- 5. numba-cuda's launch preparation, for launches it cannot express --------------------------------

_cuda_call = _dispatcher._dispatcher.Dispatcher._cuda_call


def prepared_launch(dispatcher, args, stream):
    """``(overload, cufunc, kernel arguments, write-backs)`` for launching ``dispatcher`` (a
    ``@cuda.jit`` kernel) on ``args``: the overload as numba-cuda's ``CUDADispatcher.call`` picks it
    (a specialized kernel's one, else ``_cuda_call``'s: typed in C, compiled if new), the arguments
    as its ``_Kernel.launch`` prepares them."""
    kernel = next(iter(dispatcher.overloads.values())) if dispatcher.specialized else _cuda_call(dispatcher, *args)
    kernelargs, retr = prepared_args(kernel, args, stream)
    return kernel, kernel._codelibrary.get_cufunc(), kernelargs, retr


def argument_types(dispatcher, args) -> tuple:
    """The Numba types ``dispatcher`` (a ``@cuda.jit`` kernel) gives ``args`` when launched on them
    (the key of its compiled overload; nothing is compiled)."""
    return tuple(dispatcher.typeof_pyval(a) for a in args)


def prepared_args(overload, args, stream) -> tuple:
    """``(kernel arguments, write-backs)``: ``args`` prepared for an already compiled ``overload``
    (``prepared_launch``'s first answer), as numba-cuda's ``_Kernel.launch`` prepares them."""
    kernelargs, retr, _ = prepared_pieces(overload, args, stream)
    return kernelargs, retr


def prepared_pieces(overload, args, stream) -> tuple:
    """``(kernel arguments, write-backs, starts)``: :func:`prepared_args`' answer and where each
    argument's kernel parameters start among them."""
    retr, kernelargs, starts = [], [], []
    for ty, value in zip(overload.argument_types, args):
        starts.append(len(kernelargs))
        overload._prepare_args(ty, value, stream, retr, kernelargs)
    return kernelargs, retr, starts


#: where an array argument's data address lies among the kernel parameters numba-cuda's
#: ``_prepare_args`` makes of it: (meminfo, parent, nitems, itemsize, data, shape..., strides...)
ARRAY_DATA = 4


def is_array(numba_type) -> bool:
    """Whether numba-cuda's launch passes an argument of ``numba_type`` as an array."""
    from numba.core import types

    return isinstance(numba_type, types.Array)


def array_data_parameter(overload, position, start, kernelargs, address) -> int:
    """The index among ``kernelargs`` of the data address of array argument ``position`` (its
    parameters from ``start``), checked to hold ``address`` (a ``LaunchError`` if numba-cuda
    flattens arrays otherwise)."""
    index = start + ARRAY_DATA
    if index >= len(kernelargs) or kernelargs[index] != address:
        from ..errors import LaunchError

        raise LaunchError(f"argument {position}: an array's data address is not where numba-cuda's launch puts it "
                          f"(parameter {ARRAY_DATA} of the array's): {overload.argument_types[position]}")
    return index


def loaded_device(cufunc):
    """The device a loaded kernel (``get_cufunc()``'s, for the current context) belongs to: its
    module's context's (no second context lookup)."""
    return cufunc.module.context.device


_CORE_STREAMS: dict = {}     # a stream's handle -> its cuda.core Stream (numba-cuda's driver._to_core_stream)


def core_stream(stream):
    """``stream`` (0, a numba ``Stream``, or a cuda.core one) as the cuda.core Stream a launch
    takes, as numba-cuda's ``driver._to_core_stream`` makes it — made once per stream handle (the
    wrapper holds nothing but the handle)."""
    if not stream:
        found = _CORE_STREAMS.get(0)
        if found is not None:
            return found
    from numba.cuda.cudadrv import driver as numba_driver

    handle = 0 if not stream else getattr(stream, "handle", None) if isinstance(stream, numba_driver.Stream) else None
    if handle is None:
        return numba_driver._to_core_stream(stream)
    key = int(handle or 0)
    found = _CORE_STREAMS.get(key)
    if found is None:
        found = _CORE_STREAMS[key] = numba_driver._to_core_stream(stream)
    return found


def kernel_figures(cufunc) -> tuple:
    """``(static shared bytes, most threads per block)`` of a loaded kernel (the driver's function
    attributes, as numba-cuda's ``CudaPythonFunction.attrs`` reads them once per loaded function)."""
    return cufunc.attrs.shared, cufunc.attrs.maxthreads


# -- 7. a kernel's constant multicast masks; numba's own launch -------------------------------------

_MARK = re.compile(r'// numba_tma\.multicast (.+?) (0x[0-9a-f]+)"')   # in an LLVM IR asm string
_MASKS = "_numba_tma_multicast_masks"   # on a compiled kernel (numba-cuda's _Kernel): its masks
_SOLO = "_numba_tma_solo"               # on it too: None, or why numba's own launch (no cluster) is refused


def constant_multicast_masks(overload) -> tuple:
    """``((op or helper, mask), ...)``: the constant multicast masks of a compiled kernel
    (``dispatcher.overloads[...]``) and of every device function it calls, read once per kernel."""
    masks = overload.__dict__.get(_MASKS)
    if masks is None:
        found = {(where, int(mask, 16)) for text in overload._codelibrary.llvm_strs for where, mask in
                 _MARK.findall(text)}
        # the widest first, an op before a helper (a refusal names the op where it can)
        masks = overload.__dict__[_MASKS] = tuple(sorted(found, key=lambda m: (-m[1].bit_length(),
                                                                               m[0].startswith("cluster."), m)))
    return masks


_kernel_launch = _dispatcher._Kernel.launch
_UNSEEN = object()


def _solo_refusal(overload):
    """Why numba's own launch (clusters of one block) cannot run ``overload``, or ``None``."""
    from .. import launch_limits

    try:
        launch_limits.check_multicast(constant_multicast_masks(overload), (1, 1, 1),
                                      launch="numba's own launch (no clusters)")
    except launch_limits.LaunchError as refusal:
        return f"{refusal} (numba_tma.launch(..., cluster=...) or a numba_tma.cluster_kernel)"
    return None


def _limit_refusal(overload, griddim, blockdim, sharedmem):
    """Which limit a launch the driver refused broke (a ``LaunchError``), or ``None``."""
    from numba.cuda.cudadrv.devices import get_context

    from .. import launch_limits

    try:
        device = get_context().device
        cufunc = overload._codelibrary.get_cufunc()
        static, most_threads = kernel_figures(cufunc)
        limits = launch_limits.of_device(device)
    except Exception:   # noqa: BLE001 - then the driver's own error is the one to see
        return None
    allowed = _dynamic_allowed(cufunc, device.id)
    try:
        launch_limits.check(tuple(griddim), tuple(blockdim), sharedmem, limits, static=static,
                            kernel_threads=most_threads, opted_in=allowed < 0 or sharedmem <= allowed)
    except launch_limits.LaunchError as refusal:
        return refusal
    return None


def _dynamic_allowed(cufunc, device_id) -> int:
    """The kernel's dynamic shared-memory limit on the device (raised by ``numba_tma.launch``'s
    opt-in, else the default), -1 where the driver does not say (then no refusal blames it)."""
    try:
        from cuda.bindings import driver

        err, allowed = driver.cuKernelGetAttribute(
            driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cufunc.handle, device_id)
    except Exception:   # noqa: BLE001
        return -1
    return allowed if err == driver.CUresult.CUDA_SUCCESS else -1


def launch_checked(self, args, griddim, blockdim, stream=0, sharedmem=0):
    """numba-cuda's ``_Kernel.launch``, refusing a kernel whose constant multicast masks need a
    cluster, and naming the limit a launch the driver refuses broke."""
    refusal = self.__dict__.get(_SOLO, _UNSEEN)
    if refusal is not None:
        if refusal is _UNSEEN:
            refusal = self.__dict__[_SOLO] = _solo_refusal(self)
        if refusal is not None:
            from ..errors import LaunchError

            raise LaunchError(refusal)
    try:
        try:
            return _kernel_launch(self, args, griddim, blockdim, stream, sharedmem)
        except RuntimeError as error:   # a by-value object kept from another device's launches
            return launched_again(error, lambda: _kernel_launch(self, args, griddim, blockdim, stream, sharedmem))
    except Exception as error:
        limit = _limit_refusal(self, griddim, blockdim, sharedmem)
        if limit is None:
            raise
        raise limit from error


