"""The places where numba_tma reaches into numba-cuda 0.30 internals, and nowhere else.

numba-cuda has no extension point for any of them; each hook here wraps one internal name,
says what it replaces, and is checked by ``tests/test_numba_cuda_hooks.py``, which fails with a
clear message when a numba-cuda release moves the name or changes the behaviour the hook assumes.

1. **Kernel parameters passed by value** (``__grid_constant__``).  A by-value TensorMap must be a
   ``byval`` pointer parameter listed in the kernel's ``grid_constant`` annotation; a device function
   taking the same type must receive a plain pointer (``byval`` there is a local copy).  Lowering
   cannot tell the two apart, so the data model only *records* the argument
   (:func:`request_grid_constant`) and the marking happens in ``nvvm.set_cuda_kernel``, which
   numba-cuda's ``kernel_fixup`` calls for kernel entry points only.
2. **Launching a by-value argument.**  numba-cuda's launcher (``_Kernel._prepare_args``) knows no
   128-byte by-value argument; the hook lets a registered Numba type supply the object cuda.core's
   parameter packer passes by value (:func:`register_by_value`), given the argument's position
   among the launch's kernel parameters.
3. **The compilation target of kernels and device functions.**  numba-cuda compiles a JIT kernel
   for ``get_current_device().compute_capability`` (``(9, 0)``) while its code generator later
   targets ``sm_90a``, and compiles device functions for the current device even inside a kernel
   compiled for another target (or with no GPU at all).  The hook makes that lookup return the
   target actually used: the enclosing compilation's when a kernel is being compiled, else the
   device's with the ``a`` suffix numba-cuda's code generator adds from compute capability 9.0.
4. **Everything a kernel links, with no GPU** (for :mod:`numba_tma.inspect`).  numba-cuda's public
   ``compile_all`` compiles the CUDA C++ sources a kernel links (its fp16/bf16 shims) through
   cuda.core's ``Program``, which needs the driver library.  :func:`kernel_codes` takes the same
   code library and compiles those sources with NVRTC directly, with numba-cuda's include paths.
5. **Launching with options numba's launch syntax lacks** (clusters, more than 48 KB of dynamic
   shared memory): :func:`prepared_launch` picks the overload (compiling it if new), and prepares
   arguments, exactly as numba-cuda's own launch does (its C dispatcher's ``_cuda_call``, which
   types arguments from a cache of type fingerprints; ``_Kernel._prepare_args``, write-backs), and
   hands back the ``CUkernel``;
   :func:`argument_types` and :func:`prepared_args` are its two halves, for a CUDA graph's node
   re-pointed at new arguments of the types it was captured with (:mod:`numba_tma.graphs`).
6. **The op declarations under numba-cuda's CUDA simulator** (``NUMBA_ENABLE_CUDASIM=1``), which
   puts its own ``dispatcher``, ``compiler`` and ``cudadrv`` in place of numba-cuda's: nothing
   compiles there, so hooks 1-5, 7, 9 and 10 are not installed (:data:`SIMULATED`).  The declarations
   (``numba_tma.intrinsics``: the catalogue, the docstrings) import numba-cuda's typing modules,
   which read device stubs (``cuda.shared``...) the simulator's ``numba.cuda`` lacks;
   :func:`import_declarations` lends them numba-cuda's own stubs for that import.
7. **A kernel's constant multicast masks, and numba's own launch** (``_Kernel.launch``).  Each
   multicast op given a constant mask (and each ``cluster.mask_*`` helper with constant
   arguments) leaves a comment in the LLVM IR it lowers to (``intrinsics._core.
   mark_constant_multicast``); :func:`constant_multicast_masks` reads them from the code library's
   IR strings (``CUDACodeLibrary.llvm_strs``: the kernel's module and every device function's it
   links, kept by numba-cuda's disk cache too), once per compiled kernel.  ``_Kernel.launch``
   (numba's ``kernel[grid, block, stream, shared_mem]``) is wrapped to refuse a kernel whose masks
   need a cluster (numba's launch has none: one dictionary lookup per launch) and, when the
   driver refuses a launch, to say which limit it broke (:mod:`numba_tma.launch_limits`; nothing
   runs on a launch that works).
8. **Kernels calling ``setmaxnreg`` linked whole-program** (``CUDACodeLibrary.get_cubin``).
   numba-cuda links PTX with nvJitLink, which runs ptxas on it as relocatable code, and ptxas then
   drops ``setmaxnreg`` ("C7504 ... ignored to maintain compatibility across compilation units").
   numba-cuda's own LTO link (its ``lto=True``: the kernel and every CUDA source it links as LTO-IR,
   nvJitLink ``-lto``) compiles the whole program at once, and there ptxas keeps it when it knows
   the register count at entry (the kernel's ``launch_bounds=(threads, min_blocks)``, or
   ``max_registers`` without launch bounds).  The hook links each kernel whose code
   (:func:`uses_setmaxnreg`) has the instruction that way, and refuses the cubin where ptxas still
   dropped it (:func:`refuse_ignored_setmaxnreg`); :func:`kernel_codes` gives such a kernel's codes as
   LTO-IR for :mod:`numba_tma.inspect`.  Other kernels link as before.
9. **A numba-cuda device array's interface, cheaply** (:func:`device_array_view`).  ``DeviceNDArray.
   __cuda_array_interface__`` builds a dictionary and tests contiguity on every call (~1 us on the
   GPU host); ``TensorMap.tiled`` / ``with_array`` on an array seen before read the same facts from
   the attributes that property reads (``dtype``, ``shape``, ``strides``, ``gpu_data``).
10. **A device array of a Numba type of numba_tma's choosing** (:func:`typed_device_array`):
   ``TensorMap.to_device()``'s array is typed by the map's layout.  numba-cuda types a device
   array from its ``_numba_type_`` (``typeof`` and the C dispatcher's fallback, which computes no
   fingerprint for a device array) and launches any argument typed ``types.Array`` as the array it
   is (``_Kernel._prepare_args``); a ``DeviceNDArray`` subclass over the same memory
   (``gpu_data``) answers ``_numba_type_`` with the type given, its views (slices, reshapes: made
   as ``type(self)(...)``) with numba-cuda's own.
"""

from __future__ import annotations

import re
import weakref

import numba.cuda.dispatcher as _dispatcher
from numba.cuda import cgutils
from numba.cuda.core import config as _config
from numba.cuda.core.targetconfig import ConfigStack
from numba.cuda.cudadrv import nvvm as _nvvm
from llvmlite import ir

SUPPORTED = "0.30"   # the numba-cuda minor these hooks were verified against
SIMULATED = bool(_config.ENABLE_CUDASIM)   # the simulator's modules stand in for the compiler's (item 6)

# -- 1. grid-constant kernel parameters -----------------------------------------------------------

_PENDING = weakref.WeakKeyDictionary()   # ir.Argument -> the byval attributes to give it in a kernel


def request_grid_constant(argument: ir.Argument, attributes) -> None:
    """Mark ``argument`` ``byval`` (with ``attributes``) and ``grid_constant`` if its function
    turns out to be a kernel entry point; a device function keeps a plain pointer."""
    _PENDING[argument] = attributes


def _mark_grid_constants(function) -> None:
    indices = []
    for position, argument in enumerate(function.args):
        attributes = _PENDING.pop(argument, None)
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


# -- 2. by-value launch arguments -----------------------------------------------------------------

_BY_VALUE = {}   # Numba type class -> function(python value, position) -> object cuda.core passes by value
_BY_VALUE_RESETS = []   # what drops a thread's by-value objects made in another CUDA context
# cuda.core's refusals, at a launch, of a TensorMapDescriptor made in another context or on another device
OTHER_CONTEXT = ("was created in a different CUDA context", "but current device is")


def register_by_value(type_class, to_argument, reset=None) -> None:
    """Launch arguments typed as ``type_class`` are passed as ``to_argument(value, position)``,
    ``position`` the index of the kernel parameter it becomes (the launch's parameters so far).
    ``reset()`` drops what ``to_argument`` keeps for this thread, when cuda.core refuses a kept
    object made in another CUDA context (another device): the launch is then made again, once."""
    _BY_VALUE[type_class] = to_argument
    if reset is not None:
        _BY_VALUE_RESETS.append(reset)


def launched_again(error, launch):
    """``launch()`` made again if ``error`` is cuda.core's refusal of a by-value object kept from
    another CUDA context (after the registered resets); else ``error`` raised."""
    if not (isinstance(error, RuntimeError) and any(words in str(error) for words in OTHER_CONTEXT) and
            _BY_VALUE_RESETS):
        raise error
    for reset in _BY_VALUE_RESETS:
        reset()
    return launch()


_prepare_args = None if SIMULATED else _dispatcher._Kernel._prepare_args


def _prepare_args_by_value(self, ty, val, stream, retr, kernelargs):
    to_argument = _BY_VALUE.get(type(ty))
    if to_argument is None:
        return _prepare_args(self, ty, val, stream, retr, kernelargs)
    kernelargs.append(to_argument(val, len(kernelargs)))


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


_get_current_device = None if SIMULATED else _dispatcher.get_current_device


def current_target_device():
    """``get_current_device()`` for the dispatcher: inside a compilation (a device function typed
    while its kernel compiles) the kernel's target, otherwise the device with its JIT target."""
    cfg = ConfigStack.top_or_none()
    cc = getattr(cfg, "compute_capability", None)
    if cc is not None:
        return _Target(None, tuple(cc))
    device = _get_current_device()
    return _Target(device, jit_target(device.compute_capability))


# -- 4. a kernel's code and linked sources, without the driver -------------------------------------

def _nvrtc_includes():
    """numba-cuda's NVRTC include path (``cudadrv/nvrtc.py:compile``): its own headers for the
    toolkit's major version, the toolkit's, CCCL's and its memory-management headers."""
    import os

    from cuda import pathfinder
    from numba.cuda.cuda_paths import get_cuda_paths
    from numba.cuda.cudadrv import nvrtc

    root = os.path.dirname(os.path.dirname(os.path.abspath(nvrtc.__file__)))
    includes = [os.path.join(root, "include", str(nvrtc._get_nvrtc_version()[0])),
                get_cuda_paths()["include_dir"].info]
    cccl = pathfinder.locate_nvidia_header_directory("cccl")
    if cccl is not None:
        includes.append(cccl.abs_path)
    return includes + [os.path.join(root, "memory_management")]


def _nvrtc_code(source: bytes, name: str, cc, lto: bool):
    """The CUDA source as PTX (bytes), or with ``lto`` as LTO-IR (a ``LinkableCode``), as
    numba-cuda's ``nvrtc.compile`` makes it."""
    from cuda.bindings import nvrtc
    from numba.cuda.cudadrv.linkable_code import LTOIR

    def check(result, *values):
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC failed on {name}: {result}")
        return values[0] if values else None

    program = check(*nvrtc.nvrtcCreateProgram(source, name.encode(), 0, [], []))
    try:
        arch = f"sm_{cc[0]}{cc[1]}{cc[2] if len(cc) > 2 else ''}"
        options = [f"-arch={arch}".encode(), b"-rdc=true"] + [b"-dlto"] * lto + \
            [f"-I{d}".encode() for d in _nvrtc_includes()]
        result, = nvrtc.nvrtcCompileProgram(program, len(options), options)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = check(*nvrtc.nvrtcGetProgramLogSize(program))
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(program, log)
            raise RuntimeError(f"NVRTC could not compile {name}: {log.decode(errors='replace')}")
        if lto:
            code = b" " * check(*nvrtc.nvrtcGetLTOIRSize(program))
            check(*nvrtc.nvrtcGetLTOIR(program, code))
            return LTOIR(code, name=name)
        ptx = b" " * check(*nvrtc.nvrtcGetPTXSize(program))
        check(*nvrtc.nvrtcGetPTX(program, ptx))
        return ptx
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def _kernel_link_files(asm: str) -> list:
    """What numba-cuda's ``_Kernel`` adds to a kernel's link for this PTX: its reshape helpers
    (``reshape_funcs.cu``) when called, and the NRT library (its own ``maybe_link_nrt``)."""
    import os

    from numba.cuda.descriptor import cuda_target

    link = []
    if any(name in asm for name in _dispatcher.reshape_funcs):
        link.append(os.path.join(os.path.dirname(os.path.abspath(_dispatcher.__file__)), "reshape_funcs.cu"))
    _dispatcher._Kernel.maybe_link_nrt(_dispatcher._Kernel, link, cuda_target.target_context, asm)
    return link


def kernel_codes(fn, sig, cc, **options) -> tuple:
    """``(ptx, codes)``: the kernel's PTX and what numba-cuda's ``compile_all(fn, sig, device=False,
    cc=cc, output=...)`` returns for it — with ``output="ptx"`` (the PTX, then every file its code
    library links: CUDA sources compiled to PTX, other code as ``LinkableCode``), or for a kernel
    linked whole-program (hook 8) ``output="ltoir"`` — without the driver.  A ``@cuda.jit`` kernel's
    own ``launch_bounds`` and ``fastmath`` apply unless ``options`` give them (the code its launch
    compiles)."""
    from numba.cuda.compiler import _compile_pyfunc_with_fixup
    from numba.cuda.cudadrv.linkable_code import LTOIR, LinkableCode

    own = getattr(fn, "targetoptions", {})
    options.setdefault("launch_bounds", own.get("launch_bounds"))
    if own.get("fastmath"):
        options.setdefault("fastmath", own["fastmath"])
    lib, _ = _compile_pyfunc_with_fixup(fn, sig, device=False, abi="numba", cc=cc, **options)
    ptxes = list(lib.get_asm_strs(cc=cc))
    lto = uses_setmaxnreg(lib)
    codes = [LTOIR(lib.get_ltoir(cc=cc), name=lib._entry_name)] if lto else list(ptxes)
    for path in _kernel_link_files("\n".join(ptxes)):
        lib.add_linking_file(path)
    for path_or_obj in lib._linking_files:
        obj = LinkableCode.from_path_or_obj(path_or_obj)
        if obj.kind == "cu":
            source = obj.data.encode() if isinstance(obj.data, str) else bytes(obj.data)
            codes.append(_nvrtc_code(source, obj.name, cc, lto))
        else:
            codes.append(obj)
    return ptxes[0], codes


# -- 5. numba-cuda's launch preparation, for launches it cannot express --------------------------------

_cuda_call = None if SIMULATED else _dispatcher._dispatcher.Dispatcher._cuda_call


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
    retr, kernelargs = [], []
    for ty, value in zip(overload.argument_types, args):
        overload._prepare_args(ty, value, stream, retr, kernelargs)
    return kernelargs, retr


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


# -- 6. the op declarations under the simulator ----------------------------------------------------

DEVICE_STUBS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "syncwarp", "shared", "local",
                "const", "atomic", "match_any_sync", "match_all_sync", "threadfence_block", "threadfence_system",
                "threadfence", "selp", "popc", "brev", "clz", "ffs", "fma", "cbrt", "activemask", "lanemask_lt",
                "nanosleep")
"""The names ``numba.cuda`` takes from ``numba.cuda.stubs`` off the simulator (its ``device_init``)."""


def import_declarations():
    """``numba_tma.intrinsics``, imported; under the simulator with :data:`DEVICE_STUBS` lent to
    the simulator's ``numba.cuda`` for the import (numba-cuda's typing modules key their
    templates on them) and taken back after, so kernels and host code see the simulator's."""
    import importlib

    if not SIMULATED:
        return importlib.import_module("numba_tma.intrinsics")
    import numba.cuda as cuda_module
    from numba.cuda import stubs

    lent = [name for name in DEVICE_STUBS if name not in vars(cuda_module)]
    for name in lent:
        setattr(cuda_module, name, getattr(stubs, name))
    try:
        return importlib.import_module("numba_tma.intrinsics")
    finally:
        for name in lent:
            delattr(cuda_module, name)


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


_kernel_launch = None if SIMULATED else _dispatcher._Kernel.launch
_UNSEEN = object()


def _solo_refusal(overload):
    """Why numba's own launch (clusters of one block) cannot run ``overload``, or ``None``."""
    from . import launch_limits

    try:
        launch_limits.check_multicast(constant_multicast_masks(overload), (1, 1, 1),
                                      launch="numba's own launch (no clusters)")
    except launch_limits.LaunchError as refusal:
        return f"{refusal} (numba_tma.launch(..., cluster=...) or a numba_tma.cluster_kernel)"
    return None


def _limit_refusal(overload, griddim, blockdim, sharedmem):
    """Which limit a launch the driver refused broke (a ``LaunchError``), or ``None``."""
    from numba.cuda.cudadrv.devices import get_context

    from . import launch_limits

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


def _launch_checked(self, args, griddim, blockdim, stream=0, sharedmem=0):
    """numba-cuda's ``_Kernel.launch``, refusing a kernel whose constant multicast masks need a
    cluster, and naming the limit a launch the driver refuses broke."""
    refusal = self.__dict__.get(_SOLO, _UNSEEN)
    if refusal is not None:
        if refusal is _UNSEEN:
            refusal = self.__dict__[_SOLO] = _solo_refusal(self)
        if refusal is not None:
            from .errors import LaunchError

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


def install() -> None:
    """Install hooks 1, 2, 3, 7 and 8 (idempotent); none under the simulator, where nothing compiles."""
    if SIMULATED:
        return
    CUDACodeLibrary.get_cubin = _get_cubin_whole_program
    _nvvm.set_cuda_kernel = _set_cuda_kernel_with_grid_constants
    _dispatcher._Kernel._prepare_args = _prepare_args_by_value
    _dispatcher.get_current_device = current_target_device
    _dispatcher._Kernel.launch = _launch_checked


# -- 8. kernels calling setmaxnreg linked whole-program ------------------------------------------

SETMAXNREG_RULE = (
    "a kernel calling wgmma.setmaxnreg must let ptxas compile it whole-program with a known register count: "
    "declare its launch bounds with the blocks per SM, @cuda.jit(launch_bounds=(threads, min_blocks)) (e.g. "
    "(384, 1)), or max_registers=N without launch bounds, and link no PTX, cubin or object files (link= only CUDA "
    "sources, which compile to LTO-IR)")


def uses_setmaxnreg(library) -> bool:
    """Whether a kernel's code library (its module or a device function's it links) has ``setmaxnreg``
    (the inline asm of ``wgmma.setmaxnreg``, in the LLVM IR)."""
    return any("setmaxnreg." in text for text in library.llvm_strs)


def refuse_ignored_setmaxnreg(log: str) -> None:
    """Raise :class:`~numba_tma.errors.RegisterCountError` where the linker's info ``log`` says
    ptxas dropped a ``setmaxnreg`` (a no-op kernel is never handed out)."""
    ignored = [line.strip() for line in log.splitlines() if "'setmaxnreg' ignored" in line]
    if ignored:
        from .errors import RegisterCountError

        raise RegisterCountError(f"numba_tma: wgmma.setmaxnreg: ptxas ignored it ({'; '.join(ignored)}): "
                                 f"{SETMAXNREG_RULE}")


if not SIMULATED:   # the simulator's numba.cuda cannot import numba-cuda's code generator
    from numba.cuda.codegen import CUDACodeLibrary

_get_cubin = None if SIMULATED else CUDACodeLibrary.get_cubin


def _get_cubin_whole_program(self, cc=None):
    """numba-cuda's ``get_cubin``; a kernel calling ``setmaxnreg`` linked with its LTO (whole program)."""
    if not uses_setmaxnreg(self):
        return _get_cubin(self, cc)
    self._lto = True
    cubin = _get_cubin(self, cc)
    refuse_ignored_setmaxnreg(self.get_linkerinfo(self._ensure_cc(cc)))
    return cubin


# -- 9. a numba-cuda device array's interface, read from its attributes ------------------------------

if not SIMULATED:
    from numba.cuda.cudadrv.devicearray import DeviceNDArray as _DeviceNDArray


def device_array_view(array):
    """``(typestr, shape, byte strides, data pointer)`` of a numba-cuda device array (exactly a
    ``DeviceNDArray``), what its ``__cuda_array_interface__`` says (strides given even where it says
    None), read from the attributes that property reads; None for any other object."""
    if SIMULATED or type(array) is not _DeviceNDArray:
        return None
    try:
        address = int(array.gpu_data.device_pointer)
    except AttributeError:   # as the property: no device memory behind it
        address = 0
    return array.dtype.str, array.shape, array.strides, address


# -- 10. a device array of a Numba type of numba_tma's choosing ------------------------------------

if not SIMULATED:
    class _TypedDeviceArray(_DeviceNDArray):
        """A numba-cuda device array whose Numba type is :attr:`_type` (its views: numba-cuda's)."""

        _type = None

        @property
        def _numba_type_(self):
            return self._type or super()._numba_type_


def typed_device_array(array, numba_type):
    """A device array over ``array``'s memory (a numba-cuda ``DeviceNDArray``, C-contiguous)
    typed ``numba_type`` (a ``types.Array`` subclass of ``array``'s dtype, ndim and layout) as a
    kernel argument; it keeps that memory alive."""
    typed = _TypedDeviceArray(array.shape, array.strides, array.dtype, stream=array.stream, gpu_data=array.gpu_data)
    typed._type = numba_type
    return typed
