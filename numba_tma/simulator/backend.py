"""The simulator backend: kernels run as Python by numba-cuda's CUDA simulator, on numba_tma's
scheduler (:class:`SimulatorBackend`; :mod:`numba_tma.ops` chooses it when ``NUMBA_ENABLE_CUDASIM=1``).
Installing it (:meth:`SimulatorBackend.install`, once, by :mod:`numba_tma.ops`) gives the
host-side descriptors the simulator's arrays, which are host memory
(:mod:`numba_tma.descriptors.device_layer`, ``TensorMap.to_device()``).

A launch is checked against an H200's limits (the simulator has no device), once per distinct
geometry; a launch graph captures nothing: a replay runs its launches one after another, with the
arguments last given.  Helpers a kernel calls run their Python bodies (nothing compiles)."""

from __future__ import annotations

import sys

import numba

from .. import launch_limits
from ..backend import Backend
from ..descriptors import device_layer
from ..descriptors.enums import SWIZZLE_BYTES
from ..descriptors.tile_layout import register_device_map
from ..errors import SharedMemoryPlanError
from . import FAMILIES, at, device_functions, memory, numba_sim, scheduler

__all__ = ["SimulatorBackend"]

_CHECKED: set = set()   # the (shapes, shared_mem) checked against the H200's limits


def _check(shapes, shared_mem):
    if (shapes, shared_mem) not in _CHECKED:
        launch_limits.check_shapes(shapes, shared_mem, launch_limits.H200)
        _CHECKED.add((shapes, shared_mem))


class _Sequence:
    """A launch graph under the simulator: a replay runs the recorded launches in order, with the
    arguments each node was last given."""

    def __init__(self, nodes):
        self._nodes = nodes

    def replay(self, stream) -> None:
        for node in self._nodes:
            SimulatorBackend.launch(node.kernel, node._shapes, node.shared_mem, stream, node.args)

    def repoint(self, node, args, where) -> None:
        pass    # a replay reads node.args

    def close(self) -> None:
        pass


class SimulatorBackend(Backend):
    """Kernels run as Python by numba-cuda's CUDA simulator (:class:`numba_tma.backend.Backend`)."""

    name = "simulator"
    no_gpu = "the CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1): no TMA hardware to test"
    compiler_missing = ("NUMBA_ENABLE_CUDASIM=1 replaced numba-cuda's compiler with the simulator's, which makes no "
                        "PTX, and numba reads the variable once, at import")

    @staticmethod
    def install() -> None:
        register_device_map(_device_map)
        device_layer.register(numba_sim.host_array_or_none, _no_device_array)

    # -- launches and graphs ------------------------------------------------------------------------
    @staticmethod
    def launch(kernel, shapes, shared_mem, stream, args) -> None:
        """numba-cuda's simulator's own launch; the blocks of a cluster run at once."""
        _check(shapes, shared_mem)
        # the kernel is opted in to this much dynamic shared memory, as on the GPU (numba's own launch
        # of it may then take as much: the simulator's launch check reads this)
        scheduler.opt_in(kernel.py_func, shared_mem)
        clusters, block, cluster, _ = shapes
        with scheduler.clusters_of(cluster):
            kernel[tuple(c * s for c, s in zip(clusters, cluster)), block, stream, shared_mem](*args)

    @staticmethod
    def prepare(kernel, shapes, shared_mem, stream, args, varying):
        """The simulator's launch with the ``varying`` arguments replaced each time (nothing to
        prepare: its launch runs the kernel as Python)."""
        return Prepared(kernel, shapes, shared_mem, stream, args, varying)

    @staticmethod
    def argument_types(kernel, args) -> tuple:
        return tuple(numba.typeof(a) for a in args)

    @staticmethod
    def record(node):
        _check(node._shapes, node.shared_mem)

    @staticmethod
    def capture(nodes, stream):
        return _Sequence(nodes)

    # -- code in kernels ---------------------------------------------------------------------------
    @staticmethod
    def define_for_compiler(define) -> None:
        pass    # nothing compiles: no typing or lowering to define

    @staticmethod
    def twin(python_body, compiled):
        return python_body

    @staticmethod
    def device_function(fn):
        from numba import cuda

        if device_functions.reads_cuda(fn):
            return cuda.jit(device=True)(fn)   # the simulator's device function sees the running thread's cuda.threadIdx
        return device_functions.DeviceFunction(fn)

    @staticmethod
    def compile_options(options):
        return {}

    @staticmethod
    def is_device_function(fn):
        return device_functions.is_device_function(fn)

    @staticmethod
    def carver(pieces, align, fields, nbytes, compiled):
        """A plan's pieces as numpy views of the block's dynamic buffer."""
        def carve():   # the same pieces for every thread of the block: made by its first
            return memory.per_block(carve, make)

        def make():
            raw = memory.shared_array(0, "uint8")
            if raw.size < nbytes:
                raise SharedMemoryPlanError(f"the launch gave {raw.size} bytes of dynamic shared memory; this plan "
                                            f"needs {nbytes} (launch with shared_mem=plan.nbytes)")
            pad = (-memory.address(raw)) % align
            views = []
            for piece_name, shape, dtype, offset, _ in pieces:
                size = dtype.bitwidth // 8
                for d in shape:
                    size *= d
                start = pad + offset
                view = raw[start:start + size].view(str(dtype)).reshape(shape)
                view.piece = (piece_name, memory.address(view), offset)    # messages name it as the plan does
                views.append(view)
            return fields(*views)

        return carve

    @staticmethod
    def barriers(count, arrive_count):
        """``count`` mbarriers in the block's shared memory, initialised to ``arrive_count`` by thread
        0, fenced and synchronised (``tlx.alloc_barriers``)."""
        bars = memory.shared_array(count, "uint64", frame=sys._getframe(0))   # the kernel's shared memory
        if scheduler.current().thread_id == 0:
            for i in range(count):
                FAMILIES["mbarrier"].init(at(bars, i), arrive_count)
            FAMILIES["fence"].mbarrier_init()
        scheduler.syncthreads()
        return bars

    @classmethod
    def kernel_codes(cls, fn, sig, cc, **options):
        raise RuntimeError(cls.compiler_missing)


def _no_device_array(array):
    return None   # the simulator's device arrays are host memory (numba_sim.host_array_or_none reads them)


def _device_map(data, layout):
    """``TensorMap.to_device()`` here: the bytes in a simulator device array of the compiled path's
    type (the map's layout, which the twins check as the compiled ops do), with its constants."""
    from ..intrinsics.tensor_map_type import global_map_type

    attributes = {"box_bytes": layout.box_bytes, "smem_bytes": layout.smem_bytes,
                  "swizzle": SWIZZLE_BYTES.get(layout.swizzle)}
    return numba_sim.typed_device_array(data, global_map_type(layout), attributes)


class Prepared:
    """:meth:`SimulatorBackend.prepare`'s launch: the arguments kept, those at ``varying`` replaced
    by each ``launch``'s values (arrays themselves here: the simulator has no addresses)."""

    def __init__(self, kernel, shapes, shared_mem, stream, args, varying):
        self.kernel, self.shapes, self.shared_mem, self.stream = kernel, shapes, shared_mem, stream
        self.args, self.varying = [None if i in varying else a for i, a in enumerate(args)], tuple(varying)

    def launch(self, *values) -> None:
        args = list(self.args)
        for position, value in zip(self.varying, values):
            args[position] = value
        SimulatorBackend.launch(self.kernel, self.shapes, self.shared_mem, self.stream, args)
