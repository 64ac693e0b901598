"""A stand-in GPU for the CPU suite: the driver and cuda.core pieces numba-tma's launch paths call,
so the code that otherwise runs only on a GPU — by-value twins, numba's argument preparation with
numba-tma's hook, ``numba_tma.launch``, ``LaunchGraph`` capture, replay and ``set_args``, and the
GPU suite's own echo of every by-value map — runs on every CI run.

What stands in, and what it does as the real one does:

* the driver making a by-value map's twin (``by_value.MAKER``): a :class:`FakeTwin` holding, inside
  the object, the 128 bytes ``cuTensorMapEncode*`` makes from the arguments cuda.core would get
  (encoded by ``numba_tma.descriptors``' pure-Python encoders, byte-identical to driver 13.0 on
  21,435 captured maps), at an offset numba-tma has to find;
* a compiled kernel (:class:`FakeOverload`, registered on a real dispatcher so numba's own overload
  resolution picks it) whose arguments are prepared by numba-cuda's real ``_Kernel._prepare_args``
  (with numba-tma's hook installed on it);
* cuda.core's launch, ``LaunchConfig``, streams and stream capture, and the driver's graph-node
  calls (:class:`FakeGpu`): a launch or a captured node copies its parameters when it is made
  (the driver does), so a twin reused by a later launch cannot change an earlier one's bytes.
"""

from __future__ import annotations

import ctypes
import itertools
from types import SimpleNamespace

import numpy as np

from numba_tma.descriptors import encode_im2col, encode_tiled

PAD = 40   # bytes of the stand-in descriptor object before its map (cuda.core's sit after its header)


class FakeTwin(bytes):
    """cuda.core's ``TensorMapDescriptor`` as the stand-in driver makes it: ``PAD`` bytes, the map's
    128, 16 more, all inside the object's own memory (where ``by_value`` searches for them)."""

    @property
    def param(self) -> bytes:
        """The 128 bytes a launch passes (read from the object's memory now: numba-tma writes them
        in place)."""
        return ctypes.string_at(id(self) + bytes.__basicsize__ - 1 + PAD, 128)


class FakeDriver:
    """``by_value.MAKER``'s stand-in: the twins it made, in order."""

    def __init__(self):
        self.made = []

    def _twin(self, encoded):
        twin = FakeTwin(b"\xa5" * PAD + encoded + b"\x5a" * 16)
        self.made.append(twin)
        return twin

    @staticmethod
    def _array(pointer):
        cai = pointer.__cuda_array_interface__
        return cai["data"][0], cai["shape"][::-1], cai["strides"][-2::-1]   # driver order, strides past dim 0

    def tiled(self, pointer, box, element_strides, options):
        address, dims, strides = self._array(pointer)
        return self._twin(encode_tiled(options["data_type"], address, dims, strides, box[::-1],
                                       element_strides and element_strides[::-1], options["interleave"],
                                       options["swizzle"], options["l2_promotion"], options["oob_fill"]))

    def im2col(self, pointer, lower, upper, channels, pixels, element_strides, options):
        address, dims, strides = self._array(pointer)
        return self._twin(encode_im2col(options["data_type"], address, dims, strides, lower[::-1], upper[::-1],
                                        channels, pixels, element_strides and element_strides[::-1],
                                        options["interleave"], options["swizzle"], options["l2_promotion"],
                                        options["oob_fill"]))


def params(kernelargs) -> list:
    """What the driver copies when a launch is made: each by-value twin's 128 bytes, each ctypes
    scalar's value, anything else as it is."""
    return [a.param if isinstance(a, FakeTwin) else a.value if isinstance(a, ctypes._SimpleCData) else a
            for a in kernelargs]


class FakeDevice:
    """A numba ``Device`` with an H100's limits (what ``launch_limits.of_device`` reads)."""

    _ids = itertools.count(5000)

    def __init__(self, cc=(9, 0), optin=232448, name="stand-in H100"):
        self.id, self.compute_capability, self.name = next(self._ids), cc, name
        self.MAX_THREADS_PER_BLOCK, self.MAX_BLOCK_DIM_X, self.MAX_BLOCK_DIM_Y, self.MAX_BLOCK_DIM_Z = 1024, 1024, 1024, 64
        self.MAX_GRID_DIM_X, self.MAX_GRID_DIM_Y, self.MAX_GRID_DIM_Z = 2**31 - 1, 65535, 65535
        self.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, self.MAX_SHARED_MEMORY_PER_BLOCK = optin, 49152


class FakeFunction(SimpleNamespace):
    """A loaded kernel (numba's ``CudaPythonFunction``), hashed by identity as it is."""

    __hash__ = object.__hash__


class FakeOverload:
    """A compiled kernel (numba-cuda's ``_Kernel``) as its dispatcher and launch see it: argument
    types, numba-cuda's own ``_prepare_args`` (numba-tma's hook on it), a loaded function on
    ``device``, and the LLVM IR strings its multicast masks are read from."""

    extensions = ()

    def __init__(self, argument_types, device, static=0, maxthreads=1024):
        from numba.cuda.dispatcher import _Kernel

        self._prepare_args = _Kernel._prepare_args.__get__(self)
        self.argument_types = tuple(argument_types)
        self.cufunc = FakeFunction(attrs=SimpleNamespace(shared=static, maxthreads=maxthreads), handle=id(self),
                                   kernel=f"kernel {id(self):#x}",
                                   module=SimpleNamespace(context=SimpleNamespace(device=device)))
        self._codelibrary = SimpleNamespace(get_cufunc=lambda: self.cufunc, llvm_strs=[""])


def device_array(shape, dtype=np.float32, address=0x7F0000100000, host=None):
    """A numba device array at ``address``; its memory is ``host`` (a numpy array the stand-in
    kernels write and ``copy_to_host`` reads), or none."""
    from numba.cuda.cudadrv import driver
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    class StandInDeviceArray(DeviceNDArray):
        def copy_to_host(self, ary=None, stream=0):
            return host.copy()

    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    memory = driver.MemoryPointer(context=None, pointer=driver.binding.CUdeviceptr(address), size=size)
    strides = tuple(int(np.prod(shape[i + 1:])) * dtype.itemsize for i in range(len(shape)))
    return (DeviceNDArray if host is None else StandInDeviceArray)(shape, strides, dtype, gpu_data=memory)


class FakeKernel:
    """A ``@cuda.jit`` kernel's own launch syntax, ``kernel[grid, block](*args)``, on the stand-in
    GPU: the arguments typed by the real ``dispatcher`` and prepared by numba-cuda's
    ``_prepare_args`` (numba-tma's hook on it), as its ``_Kernel.launch`` does, then ``body(parameters,
    memory)`` does what the compiled kernel would (``memory``: device address -> host array)."""

    def __init__(self, gpu, dispatcher, body):
        self.gpu, self.dispatcher, self.body = gpu, dispatcher, body

    def __getitem__(self, config):
        from numba_tma.numba_cuda.launching import prepared_args

        def run(*args):
            overload = FakeOverload([self.dispatcher.typeof_pyval(a) for a in args], device=None)
            kernelargs, _ = prepared_args(overload, args, 0)
            self.body(params(kernelargs), self.gpu.memory)
        return run


class FakeNode:
    """A captured kernel node (cuda.core's ``KernelNode``): its parameters as the driver copied them."""

    def __init__(self, handle, config, kernel, parameters, pred):
        self.handle, self.config, self.kernel, self.parameters = handle, config, kernel, parameters
        self.pred, self.succ = pred, []


class FakeBuilder:
    """cuda.core's graph builder (stream capture): launches on it become a chain of nodes."""

    def __init__(self, gpu):
        self.gpu, self.nodes, self.state = gpu, [], "new"

    def begin_building(self, mode):
        assert self.state == "new" and mode == "relaxed"
        self.state = "building"

    def end_building(self):
        self.state = "built"

    def add(self, config, kernel, parameters):
        assert self.state == "building", "a launch captured outside begin_building / end_building"
        node = FakeNode(next(self.gpu.handles), config, kernel, parameters, self.nodes[-1:])
        for before in node.pred:
            before.succ.append(node)
        self.nodes.append(node)
        self.gpu.nodes[node.handle] = node

    @property
    def graph_definition(self):
        return SimpleNamespace(nodes=list(self.nodes))

    def complete(self):
        return FakeGraph(self.gpu, self.nodes)

    def close(self):
        self.state = "closed"


class FakeGraph:
    """An executable graph: a replay launches its nodes, in order, with their parameters now."""

    def __init__(self, gpu, nodes):
        self.gpu, self.nodes, self.handle, self.uploaded = gpu, nodes, next(gpu.handles), []

    def upload(self, stream):
        self.uploaded.append(stream)

    def close(self):
        self.gpu.closed.append(self.handle)

    def launch(self, stream):
        for node in self.nodes:
            self.gpu.launches.append((stream, node.config, node.kernel, list(node.parameters)))


class FakeGpu:
    """cuda.core's launch, ``LaunchConfig``, streams and graphs and the driver's graph calls, for
    ``numba_tma.launch`` and ``LaunchGraph`` (put in ``numba_tma.gpu.launching.GPU``): ``launches``
    lists ``(stream, config, kernel, parameters)``, the parameters copied when each launch was made."""

    def __init__(self):
        self.launches, self.nodes, self.holders, self.handles = [], {}, {}, itertools.count(0x1000)
        self.memory, self._addresses = {}, itertools.count(0x7F0000000000, 1 << 20)
        self.attributes = []   # (attribute, value) set on kernels
        self.streams, self.closed = {}, []   # streams made (handle -> destroyed?), graphs closed

    def set_attribute(self, attribute, value, handle, device_id):
        """The driver's ``cuKernelSetAttribute``."""
        from cuda.bindings import driver

        self.attributes.append((attribute, value))
        return (driver.CUresult.CUDA_SUCCESS,)

    def to_device(self, host):
        """``cuda.to_device``: a device array whose memory is a copy of ``host``."""
        address = next(self._addresses)
        self.memory[address] = memory = np.array(host)
        return device_array(memory.shape, memory.dtype, address, host=memory)

    def core_launch(self, stream, config, kernel, *kernelargs):
        if isinstance(stream, FakeBuilder):
            stream.add(config, kernel, params(kernelargs))
        else:
            self.launches.append((stream, config, kernel, params(kernelargs)))

    @staticmethod
    def core_stream(stream):
        return f"stream {stream}"

    # -- cuda.core / driver names graphs.py calls --------------------------------------------------

    def stream_create(self, flags):
        from cuda.bindings import driver

        assert flags == driver.CUstream_flags.CU_STREAM_NON_BLOCKING.value
        handle = next(self.handles)
        self.streams[handle] = False
        return driver.CUresult.CUDA_SUCCESS, handle

    def stream_destroy(self, handle):
        from cuda.bindings import driver

        assert self.streams[handle] is False, "a stream destroyed twice"
        self.streams[handle] = True
        return (driver.CUresult.CUDA_SUCCESS,)

    def stream_from_handle(self, handle):
        return SimpleNamespace(create_graph_builder=lambda: FakeBuilder(self))

    def node_params(self, handle):
        from cuda.bindings import driver

        return driver.CUresult.CUDA_SUCCESS, SimpleNamespace(kernelParams=None, node=handle)

    def param_holder(self, kernelargs):
        """cuda.core's ``ParamHolder``: ``ptr`` names the packed parameters (copied now)."""
        holder = SimpleNamespace(ptr=next(self.handles))
        self.holders[holder.ptr] = params(kernelargs)
        return holder

    def set_node_params(self, graph, handle, node_params):
        from cuda.bindings import driver

        assert node_params.node == handle, "another node's parameters"
        self.nodes[handle].parameters = self.holders.pop(node_params.kernelParams)
        return (driver.CUresult.CUDA_SUCCESS,)


def install(monkeypatch):
    """A :class:`FakeGpu` and :class:`FakeDriver` in place of the real ones for one test (by-value
    twins searched afresh and dropped after); returns ``(gpu, driver)``."""
    import cuda.core
    import cuda.core._kernel_arg_handler   # cuda.core's own packer, behind numba_tma.numba_cuda.cuda_core
    import cuda.core.graph
    from cuda.bindings import driver as cuda_driver
    from numba import cuda as numba_cuda

    from numba_tma.descriptors import by_value
    from numba_tma.gpu import launching
    from numba_tma.numba_cuda.launching import loaded_device, prepared_launch

    gpu, driver = FakeGpu(), FakeDriver()
    monkeypatch.setattr(by_value, "MAKER", driver)
    monkeypatch.setattr(by_value, "_offset", by_value._UNSEARCHED)
    monkeypatch.setattr(by_value._SLOTS, "twins", [], raising=False)
    monkeypatch.setattr(launching, "GPU", (gpu.core_launch, prepared_launch, loaded_device, gpu.core_stream))
    monkeypatch.setattr(cuda.core, "LaunchConfig", lambda **config: SimpleNamespace(**config))
    monkeypatch.setattr(cuda.core, "Stream", SimpleNamespace(from_handle=gpu.stream_from_handle))
    monkeypatch.setattr(cuda.core.graph, "KernelNode", FakeNode)
    monkeypatch.setattr(cuda.core._kernel_arg_handler, "ParamHolder", gpu.param_holder)
    monkeypatch.setattr(numba_cuda, "current_context", lambda: None)
    success = cuda_driver.CUresult.CUDA_SUCCESS
    monkeypatch.setattr(cuda_driver, "cuStreamCreate", gpu.stream_create)
    monkeypatch.setattr(cuda_driver, "cuStreamDestroy", gpu.stream_destroy)
    monkeypatch.setattr(cuda_driver, "cuGraphKernelNodeGetParams", gpu.node_params)
    monkeypatch.setattr(cuda_driver, "cuGraphExecKernelNodeSetParams", gpu.set_node_params)
    monkeypatch.setattr(cuda_driver, "cuKernelSetAttribute", gpu.set_attribute)
    return gpu, driver


def compiled(dispatcher, argument_types, device, **figures) -> FakeOverload:
    """A :class:`FakeOverload` registered on ``dispatcher`` for ``argument_types``: numba's own
    overload resolution (``_cuda_call``) picks it for arguments of those types, nothing compiles."""
    overload = FakeOverload(argument_types, device, **figures)
    dispatcher.add_overload(overload, tuple(argument_types))
    return overload
