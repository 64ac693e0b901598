"""The numba-cuda internals numba_tma hooks into: each test fails with a clear message when a
numba-cuda release moves the name or changes the behaviour the hook relies on."""

import ast
import inspect as pyinspect
from importlib.metadata import version

import numba
import pytest
import numba.cuda.compiler as numba_compiler
import numba.cuda.dispatcher as dispatcher
from numba import cuda
from numba.cuda.codegen import CUDACodeLibrary
from numba.cuda.cudadrv import nvvm

from numba_tma import TensorMap, inspect, numba_cuda, tma
from numba_tma.numba_cuda import compiler, device_arrays, launching

CHANGED = "numba-cuda changed: re-verify numba_tma/numba_cuda/ against it"


def test_numba_cuda_is_the_verified_minor():
    assert version("numba-cuda").startswith(numba_cuda.SUPPORTED + "."), CHANGED


def test_kernel_fixup_marks_kernels_through_set_cuda_kernel_after_dropping_the_return_slot():
    """Hook 1 marks grid-constant parameters when ``kernel_fixup`` calls ``nvvm.set_cuda_kernel``,
    which must happen for kernels only and after the return-value argument was removed (the
    parameter numbering NVVM sees)."""
    source = pyinspect.getsource(numba_compiler.kernel_fixup)
    assert "kernel.args = kernel.args[1:]" in source and "nvvm.set_cuda_kernel(kernel)" in source, CHANGED
    assert source.index("kernel.args = kernel.args[1:]") < source.index("nvvm.set_cuda_kernel(kernel)"), CHANGED
    assert nvvm.set_cuda_kernel is compiler._set_cuda_kernel_with_grid_constants, "hook 1 not installed"


def test_launcher_prepares_arguments_one_by_one():
    """Hook 2 wraps ``_Kernel._prepare_args(ty, val, stream, retr, kernelargs)``."""
    params = list(pyinspect.signature(launching._prepare_args).parameters)
    assert params == ["self", "ty", "val", "stream", "retr", "kernelargs"], CHANGED
    assert "self._prepare_args(" in pyinspect.getsource(launching._kernel_launch), CHANGED
    assert dispatcher._Kernel._prepare_args is launching.prepare_args_by_value, "hook 2 not installed"


def test_the_dispatcher_asks_get_current_device_for_the_target():
    """Hook 3 replaces the name the dispatcher calls when compiling kernels and device functions,
    and mirrors the code generator's own choice of the 'a' target."""
    for method in (dispatcher._Kernel.__init__, dispatcher.CUDADispatcher.compile_device):
        assert "get_current_device().compute_capability" in pyinspect.getsource(method), CHANGED
    assert '"a" if cc >= (9, 0)' in pyinspect.getsource(CUDACodeLibrary._ensure_cc), CHANGED
    assert dispatcher.get_current_device is compiler.current_target_device, "hook 3 not installed"
    assert compiler.jit_target((9, 0)) == (9, 0, "a") and compiler.jit_target((8, 6)) == (8, 6)


@cuda.jit(device=True)
def _issue(desc, tile, bars):
    tma.load(desc, tile, (0, 0), bars)


def _kernel(desc, out):
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array((32, 64), numba.float32, alignment=128)
    _issue(desc, tile, bars)
    out[0] = tile[0, 0]


def test_a_device_function_is_compiled_for_the_kernel_target_without_a_gpu():
    sig = (TensorMap.numba_type("float32", (32, 64)), numba.float32[::1])
    for arch in ("sm_90a", "sm_100a"):
        out = inspect.compile(_kernel, sig, arch)
        assert f".target {arch}" in out.ptx and "_param_0[128]" in out.ptx and "st.local" not in out.ptx
        assert "UTMALDG.2D" in out.opcodes()


def test_kernel_code_library_and_nvrtc_options_are_numbas():
    """Hook 4 compiles the kernel's code library as ``compile_all`` does and its linked CUDA sources
    with the options numba-cuda's own NVRTC call uses."""
    from numba.cuda.cudadrv import nvrtc

    source = pyinspect.getsource(numba_compiler.compile_all)
    assert "_compile_pyfunc_with_fixup(" in source and "lib._linking_files" in source, CHANGED
    nvrtc_source = pyinspect.getsource(nvrtc.compile)
    for piece in ("'include'", '"memory_management"', 'locate_nvidia_header_directory("cccl")',
                  "relocatable_device_code=True", 'get_cuda_paths()["include_dir"]'):
        assert piece in nvrtc_source, CHANGED


def test_kernel_links_numbas_reshape_helpers():
    """``_Kernel`` links ``reshape_funcs.cu`` when the PTX calls its helpers; inspect does too."""
    source = pyinspect.getsource(dispatcher._Kernel.__init__)
    assert 'link_to_library_functions(reshape_funcs, "reshape_funcs.cu")' in source, CHANGED
    assert "self.maybe_link_nrt(link, tgt_ctx, asm)" in source, CHANGED

    def k(out):
        tile = cuda.shared.array(64, numba.float32)
        grid = tile.reshape((8, 8))
        grid[cuda.threadIdx.x % 8, 0] = 1.0
        out[0] = tile[0]

    assert inspect.compile(k, (numba.float32[::1],), "sm_90a").cubin[:4] == b"\x7fELF"


def test_numbas_launch_is_wrapped_and_the_ir_strings_hold_every_linked_module():
    """Hook 7 wraps ``_Kernel.launch(args, griddim, blockdim, stream, sharedmem)`` (numba's own
    launch syntax calls it) and reads a kernel's constant multicast masks from its code library's
    ``llvm_strs``: the kernel's module and those of the device functions it links (``modules``),
    kept by the disk cache (``_reduce_states``); a loaded function's ``attrs`` give its static
    shared memory and most threads per block."""
    from numba.cuda.cudadrv.driver import CudaPythonFunction

    params = list(pyinspect.signature(launching._kernel_launch).parameters)
    assert params == ["self", "args", "griddim", "blockdim", "stream", "sharedmem"], CHANGED
    assert "kernel.launch(args, griddim, blockdim, stream, sharedmem)" in pyinspect.getsource(
        dispatcher.CUDADispatcher.call), CHANGED
    assert dispatcher._Kernel.launch is launching.launch_checked, "hook 7 not installed"
    assert "str(mod) for mod in self.modules" in pyinspect.getsource(CUDACodeLibrary.llvm_strs.fget), CHANGED
    assert "for mod in lib.modules" in pyinspect.getsource(CUDACodeLibrary.modules.fget), CHANGED
    assert "llvm_strs=self.llvm_strs" in pyinspect.getsource(CUDACodeLibrary._reduce_states), CHANGED
    init = pyinspect.getsource(CudaPythonFunction.__init__)
    assert "shared=attrs.shared_size_bytes" in init and "maxthreads=attrs.max_threads_per_block" in init, CHANGED


def test_a_kernel_calling_setmaxnreg_links_with_numbas_own_lto():
    """Hook 8 wraps ``CUDACodeLibrary.get_cubin(cc)`` (what loading a kernel for a launch calls),
    which links through ``_link_all`` with the LTO-IR of ``get_ltoir`` when ``_lto`` is set and keeps
    the linker's info log (``get_linkerinfo``).  Through it, without a GPU (nvJitLink), a kernel calling
    setmaxnreg gets USETMAXREG and a control kernel links as before (no LTO)."""
    from numba.cuda.compiler import _compile_pyfunc_with_fixup

    from numba_tma import wgmma
    from numba_tma.errors import RegisterCountError

    source = pyinspect.getsource(compiler._get_cubin)
    assert "lto=self._lto" in source and "self._link_all(linker, cc" in source, CHANGED
    assert "self._linkerinfo_cache[cc] = linker.info_log" in source, CHANGED
    assert "if linker.lto:" in pyinspect.getsource(CUDACodeLibrary._link_all), CHANGED
    assert "cubin = self.get_cubin()" in pyinspect.getsource(CUDACodeLibrary.get_cufunc), CHANGED
    assert CUDACodeLibrary.get_cubin is compiler._get_cubin_whole_program, "hook 8 not installed"

    def ws(out):
        if cuda.threadIdx.x // 128 == 0:
            wgmma.setmaxnreg(40, "dec")
        else:
            wgmma.setmaxnreg(232, "inc")
        out[cuda.threadIdx.x] = 1

    def control(out):
        out[cuda.threadIdx.x] = 1

    def sass_of(fn, **options):
        lib, _ = _compile_pyfunc_with_fixup(fn, (numba.int32[::1],), device=False, abi="numba", cc=(9, 0, "a"),
                                            **options)
        return lib, inspect.sass(bytes(lib.get_cubin(cc=(9, 0, "a")).code))

    lib, sass = sass_of(ws, launch_bounds=(384, 1))
    assert lib._lto and "USETMAXREG.TRY_ALLOC.CTAPOOL" in sass and "USETMAXREG.DEALLOC.CTAPOOL" in sass
    lib, sass = sass_of(control, launch_bounds=(384, 1))
    assert not lib._lto and "USETMAXREG" not in sass
    try:
        sass_of(ws)
    except RegisterCountError as refusal:
        assert "(C7508)" in str(refusal) and "launch_bounds=(threads, min_blocks)" in str(refusal)
    else:
        raise AssertionError("a kernel whose setmaxnreg ptxas dropped was linked")


def test_launch_takes_the_device_from_the_loaded_kernel_and_reuses_core_streams():
    """Hook 5's fast path: ``get_cufunc()`` loads the kernel into the current context's module
    (so ``cufunc.module.context.device`` is the current device), and numba-cuda's own launch makes
    its cuda.core stream with ``driver._to_core_stream`` from 0 or a ``Stream``'s handle alone."""
    from numba.cuda import codegen
    from numba.cuda.cudadrv import driver

    source = pyinspect.getsource(codegen.CUDACodeLibrary.get_cufunc)
    assert "ctx = devices.get_context()" in source and "ctx.create_module_image(" in source, CHANGED
    assert "self.context = context" in pyinspect.getsource(driver.CudaPythonModule.__init__), CHANGED
    assert "self.module = module" in pyinspect.getsource(driver.CudaPythonFunction.__init__), CHANGED
    stream_source = pyinspect.getsource(driver._to_core_stream)
    assert "from_handle(0)" in stream_source and "from_handle(stream.handle or 0)" in stream_source, CHANGED
    assert "driver._to_core_stream(stream)" in pyinspect.getsource(dispatcher._LaunchConfiguration.__init__), CHANGED


def test_launch_picks_the_overload_as_numbas_own_launch_does():
    """Hook 5: numba-cuda's ``CUDADispatcher.call`` takes a specialized kernel's one overload, else
    the one its C dispatcher's ``_cuda_call`` resolves from the arguments' typecodes (which compiles
    a new one through ``_compile_for_args``); ``prepared_launch`` does the same."""
    source = pyinspect.getsource(dispatcher.CUDADispatcher.call)
    assert "kernel = next(iter(self.overloads.values()))" in source, CHANGED
    assert "_dispatcher.Dispatcher._cuda_call(" in source and "self, *args," in source, CHANGED

    @cuda.jit
    def typed(n, x):
        pass

    class Overload:   # what a compiled _Kernel is to the dispatcher (no GPU here to compile one)
        argument_types = (numba.int64, numba.float64)

        def _prepare_args(self, ty, value, stream, retr, kernelargs):
            kernelargs.append((ty, value))

    ints, floats = Overload(), Overload()
    typed.add_overload(ints, (numba.int64, numba.int64))
    typed.add_overload(floats, (numba.int64, numba.float64))
    assert launching._cuda_call(typed, 1, 2.0) is floats and launching._cuda_call(typed, 1, 2) is ints
    assert launching.prepared_args(floats, (1, 2.0), 0) == ([(numba.int64, 1), (numba.float64, 2.0)], [])
    typed.overloads.clear()   # the dispatcher's finalizer unregisters compiled overloads only


def test_a_graph_node_is_re_pointed_with_the_launchers_own_two_halves():
    """Hook 5's halves (``numba_tma.graphs`` re-points a node with them): the dispatcher types each
    argument with ``typeof_pyval`` (its overloads' key) and a compiled ``_Kernel`` prepares each
    with ``_prepare_args`` over its ``argument_types``; nothing compiles to type."""
    source = pyinspect.getsource(dispatcher.CUDADispatcher._compile_for_args)
    assert "[self.typeof_pyval(a) for a in args]" in source and "self.compile(tuple(argtypes))" in source, CHANGED

    @cuda.jit
    def typed(n, x):
        pass

    assert launching.argument_types(typed, (1, 2.0)) == (numba.int64, numba.float64) and not typed.overloads
    assert "zip(self.argument_types, args)" in pyinspect.getsource(launching._kernel_launch), CHANGED


def test_a_device_arrays_view_says_what_its_interface_says():
    """Hook 9 reads a ``DeviceNDArray``'s ``dtype``, ``shape``, ``strides`` and ``gpu_data`` instead of
    building its ``__cuda_array_interface__``: for contiguous and strided arrays both must say the
    same typestr, shape, strides (the interface's None: C-contiguous) and data pointer."""
    import numpy as np
    from numba.cuda.cudadrv import driver
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    memory = driver.MemoryPointer(context=None, pointer=driver.binding.CUdeviceptr(0x7F0000001000), size=1 << 16)
    for shape, strides, dtype in [((16, 16), (64, 4), np.float32), ((16, 8), (64, 8), np.float32),
                                  ((4, 8, 32), (512, 64, 2), np.float16)]:
        array = DeviceNDArray(shape, strides, dtype, gpu_data=memory)
        cai = array.__cuda_array_interface__
        typestr, own_shape, own_strides, address = device_arrays.device_array_view(array)
        c_strides = tuple(int(np.prod(shape[i + 1:])) * np.dtype(dtype).itemsize for i in range(len(shape)))
        assert (typestr, own_shape, address) == (cai["typestr"], cai["shape"], cai["data"][0]), CHANGED
        assert own_strides == (cai["strides"] or c_strides), CHANGED
    assert device_arrays.device_array_view(np.zeros(4)) is None


def test_a_launch_refused_for_a_twin_of_another_context_is_made_again_with_new_twins(monkeypatch):
    """A by-value map's twin belongs to the CUDA context it was made in; cuda.core refuses it in
    another (``TensorMapDescriptor was created in a different CUDA context``, or ``... belongs to
    device 0, but current device is 1``: ``OTHER_CONTEXT``). numba's launch (hook 7) then drops the
    thread's twins and launches once more; any other error is the launch's own.  (One GPU here:
    the refusal itself is not reached on the GPU CI.)"""
    from numba_tma.descriptors import by_value

    calls = []

    def fake_launch(self, args, griddim, blockdim, stream, sharedmem):
        calls.append(list(getattr(by_value._SLOTS, "twins", [])))
        if len(calls) == 1:
            raise RuntimeError("TensorMapDescriptor was created in a different CUDA context")
        return "launched"

    class Overload:
        pass

    overload = Overload()
    overload.__dict__[launching._SOLO] = None          # no multicast masks to refuse
    monkeypatch.setattr(launching, "_kernel_launch", fake_launch)
    monkeypatch.setattr(by_value._SLOTS, "twins", ["a twin of device 0"], raising=False)
    assert launching.launch_checked(overload, (), (1, 1, 1), (32, 1, 1)) == "launched"
    assert calls == [["a twin of device 0"], []]
    monkeypatch.setattr(launching, "_kernel_launch", lambda *a: (_ for _ in ()).throw(RuntimeError("other")))
    with pytest.raises(RuntimeError, match="^other$"):
        launching.launch_checked(overload, (), (1, 1, 1), (32, 1, 1))


def test_a_typed_device_array_is_typed_by_its_numba_type_and_launched_as_an_array():
    """Hook 10 (``TensorMap.to_device()``'s array, typed by the map's layout): a ``DeviceNDArray``
    subclass over the same ``gpu_data``; numba's ``typeof``, the dispatcher's ``typeof_pyval`` and
    its C ``_cuda_call`` (which computes no fingerprint for a device array, so asks
    ``_numba_type_`` at each call) give its type, a view (made as ``type(self)(...)``) numba-cuda's
    own; the launcher passes any ``types.Array`` argument as the device array it is."""
    import numpy as np
    from numba.cuda.cudadrv import devicearray, driver
    from numba.cuda.typing.typeof import typeof

    from numba_tma.descriptors.tile_layout import TileLayout
    from numba_tma.intrinsics.tensor_map_type import global_map_type

    assert "cls = type(self)" in pyinspect.getsource(devicearray.DeviceNDArray._do_getitem), CHANGED
    prepare = pyinspect.getsource(launching._prepare_args)
    assert "if isinstance(ty, types.Array):" in prepare and "wrap_arg(val).to_device(retr, stream)" in prepare, CHANGED

    memory = driver.MemoryPointer(context=None, pointer=driver.binding.CUdeviceptr(0x7F0000001000), size=128)
    plain = devicearray.DeviceNDArray((128,), (1,), np.uint8, gpu_data=memory)
    t = global_map_type(TileLayout.describe("float32", (8, 16)))
    typed = device_arrays.typed_device_array(plain, t)
    assert typed.gpu_data is memory and typed.shape == (128,) and driver.is_device_memory(typed)
    assert typeof(typed) == numba.typeof(typed) == t and typeof(plain) != t
    view = type(typed)((64,), (1,), np.uint8, gpu_data=memory)
    assert view._numba_type_ == numba.types.Array(numba.uint8, 1, "C")

    @cuda.jit
    def typed_kernel(desc):
        pass

    class Overload:   # what a compiled _Kernel is to the dispatcher (no GPU here to compile one)
        argument_types = ()

    on_map, on_bytes = Overload(), Overload()
    typed_kernel.add_overload(on_map, (t,))
    typed_kernel.add_overload(on_bytes, (numba.types.Array(numba.uint8, 1, "C"),))
    for _ in range(2):   # nothing cached by the device array's Python type
        assert launching._cuda_call(typed_kernel, typed) is on_map
        assert launching._cuda_call(typed_kernel, plain) is on_bytes
    assert launching.argument_types(typed_kernel, (typed,)) == (t,)
    typed_kernel.overloads.clear()


# -- the internal names numba_tma.numba_cuda re-exports (internals, cuda_core) -----------------------

def test_numba_cudas_internal_names_are_still_there_as_used():
    """Each name :mod:`numba_tma.numba_cuda.internals` re-exports, with what numba_tma uses of it."""
    from numba.cuda import extending
    from numba.cuda.typing.templates import AttributeTemplate

    from numba_tma.numba_cuda import config, internals

    # _intrinsic(target="cuda", prefer_literal=True): its options go to the _Intrinsic it makes
    assert "_Intrinsic(name, func, **kwargs)" in pyinspect.getsource(internals._intrinsic), CHANGED
    assert "prefer_literal" in pyinspect.signature(extending._Intrinsic.__init__).parameters, CHANGED
    assert "self._ctor_kwargs = kwargs" in pyinspect.getsource(extending._Intrinsic.__init__), CHANGED   # target=
    assert callable(internals.ConfigStack.top_or_none), CHANGED
    assert "compute_capability" in pyinspect.getsource(numba_compiler.compile_cuda), CHANGED   # what top_or_none holds
    assert callable(internals.register_attr) and issubclass(internals.AttributeTemplate, AttributeTemplate), CHANGED
    assert callable(internals.lower_attr) and callable(internals.lower_constant), CHANGED
    assert internals.Conversion.unsafe in internals.Conversion, CHANGED
    for name in ("ADDRSPACE_SHARED", "CompilationUnit", "set_cuda_kernel"):
        assert hasattr(internals.nvvm, name), f"{CHANGED}: numba.cuda.cudadrv.nvvm.{name}"
    for name in ("call_sreg", "declare_string", "declare_vprint"):
        assert callable(getattr(internals.nvvmutils, name, None)), f"{CHANGED}: numba.cuda.nvvmutils.{name}"
    assert isinstance(config.ENABLE_CUDASIM, int), f"{CHANGED}: numba.cuda.core.config.ENABLE_CUDASIM"


def test_cuda_cores_private_names_are_still_there_as_used():
    """cuda.core's ``_tensor_map`` (a by-value map's twin: its enums, ``_from_im2col``) and
    ``_kernel_arg_handler.ParamHolder`` (a graph node re-pointed), behind
    :mod:`numba_tma.numba_cuda.cuda_core`; an option cuda.core lacks goes to the maker's refusal."""
    from cuda.core import _tensor_map as core
    from cuda.core._kernel_arg_handler import ParamHolder
    from cuda.core.utils import StridedMemoryView

    from numba_tma.descriptors.enums import DataType, Interleave, L2Promotion, OOBFill, Swizzle
    from numba_tma.numba_cuda import cuda_core

    im2col = list(pyinspect.signature(core.TensorMapDescriptor._from_im2col).parameters)
    assert im2col[:5] == ["view", "pixel_box_lower_corner", "pixel_box_upper_corner", "channels_per_pixel",
                          "pixels_per_column"] and "element_strides" in im2col, CHANGED
    assert "element_strides" in pyinspect.signature(StridedMemoryView.as_tensor_map).parameters, CHANGED
    options = dict(data_type=DataType.FLOAT32, interleave=Interleave.NONE, swizzle=Swizzle.SWIZZLE_128B,
                   l2_promotion=L2Promotion.NONE, oob_fill=OOBFill.NONE)
    made = cuda_core.tensor_map_options(**options)
    assert made["data_type"] == core.TensorMapDataType(int(DataType.FLOAT32)), CHANGED
    assert made["swizzle"] == core.TensorMapSwizzle(int(Swizzle.SWIZZLE_128B)), CHANGED
    assert ParamHolder([1, 2]).ptr, CHANGED
    refused = []
    maker = cuda_core.TensorMapMaker(lambda options, error: refused.append((options["data_type"], str(error))))
    maker._options(dict(options, data_type=999))
    assert refused and refused[0][0] == 999


_PUBLIC = ("numba", "numba.cuda", "numba.cuda.types", "numba.cuda.extending", "numba.cuda.datamodel",
           "numba.cuda.datamodel.models", "numba.cuda.models", "numba.core.types", "numba.core.cgutils")


def test_numba_cudas_internals_are_named_in_one_package():
    """Outside ``numba_tma/numba_cuda/`` (and the simulator's adapter, ``simulator/numba_sim.py``)
    numba_tma imports only numba-cuda's public modules and no private cuda.core module; AMD's own
    Numba target (``amd/``) is a target of its own, numba-cuda-mlir's adapter another library's."""
    import pathlib

    import numba_tma

    root = pathlib.Path(numba_tma.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("numba_cuda/", "amd/")) or rel in ("simulator/numba_sim.py", "intrinsics/hosts/mlir_adapter.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{a.name}" for a in node.names]
                modules = [node.module]
            elif isinstance(node, ast.Import):
                names = modules = [a.name for a in node.names]
            else:
                continue
            for module, name in zip(modules * len(names), names):
                numba_internal = module.startswith("numba") and not module.startswith("numba_") and \
                    module not in _PUBLIC and name not in _PUBLIC
                private_core = module.startswith("cuda.core._") or name.startswith("cuda.core._")
                if numba_internal or private_core:
                    offenders.append(f"{rel}: {name}")
    assert offenders == [], f"numba-cuda internals named outside numba_tma/numba_cuda/: {offenders}"
