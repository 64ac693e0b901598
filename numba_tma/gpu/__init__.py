"""The GPU backend: kernels compiled by numba-cuda and launched through cuda.core
(:class:`GpuBackend`; :mod:`numba_tma.ops` chooses it unless numba-cuda's CUDA simulator is on).
Installing it (:meth:`GpuBackend.install`, once, by :mod:`numba_tma.ops`) puts numba_tma's hooks
into numba-cuda's compiler and launcher in place (:func:`numba_tma.numba_cuda.compiler.install`)
and gives the host-side descriptors numba-cuda's device arrays
(:mod:`numba_tma.descriptors.device_layer`, ``TensorMap.to_device()``).

* :mod:`.launching` — a launch: the device's and the kernel's checks, opt-ins, cuda.core's launch;
* :mod:`.graphs` — a :class:`numba_tma.LaunchGraph` recorded, captured, replayed and re-pointed.
"""

from __future__ import annotations

from ..backend import Backend
from ..descriptors import device_layer
from ..descriptors.tile_layout import register_device_map
from ..intrinsics.tensor_map_type import global_map_type
from ..numba_cuda import compiler, device_arrays, linked_codes
from ..numba_cuda.launching import argument_types
from . import graphs, launching

__all__ = ["GpuBackend"]


def _no_host_array(array):
    return None   # the GPU's memory is not host memory


def _device_map(data, layout):
    """``TensorMap.to_device()`` on the GPU: the map's bytes in a numba-cuda device array typed by its layout."""
    from numba import cuda

    return device_arrays.typed_device_array(cuda.to_device(data), global_map_type(layout))


class GpuBackend(Backend):
    """Kernels compiled by numba-cuda, launched through cuda.core (:class:`numba_tma.backend.Backend`)."""

    name = "gpu"
    no_gpu = None              # nothing stands in for the GPU here (numba_tma.testing asks the device itself)
    compiler_missing = None    # numba-cuda's compiler is in place

    @staticmethod
    def install() -> None:
        compiler.install()
        register_device_map(_device_map)
        device_layer.register(_no_host_array, device_arrays.device_array_view)

    # -- launches and graphs ------------------------------------------------------------------------
    @staticmethod
    def launch(kernel, shapes, shared_mem, stream, args) -> None:
        launching.launch(kernel, shapes, shared_mem, stream, args)

    @staticmethod
    def prepare(kernel, shapes, shared_mem, stream, args, varying):
        return launching.Prepared(kernel, shapes, shared_mem, stream, args, varying)

    @staticmethod
    def argument_types(kernel, args) -> tuple:
        return argument_types(kernel, args)

    @staticmethod
    def record(node):
        return graphs.record(node)

    @staticmethod
    def capture(nodes, stream):
        return graphs.CapturedGraph(nodes, stream)

    # -- code in kernels ---------------------------------------------------------------------------
    @staticmethod
    def define_for_compiler(define) -> None:
        define()

    @staticmethod
    def twin(python_body, compiled):
        return compiled()

    @staticmethod
    def device_function(fn):
        from numba import cuda

        return cuda.jit(device=True, forceinline=True)(fn)

    @staticmethod
    def compile_options(options):
        return dict(options)

    @staticmethod
    def is_device_function(fn):
        return bool(getattr(fn, "targetoptions", {}).get("device")) and hasattr(fn, "py_func")

    @staticmethod
    def carver(pieces, align, fields, nbytes, compiled):
        return compiled()

    @staticmethod
    def barriers(count, arrive_count):
        raise RuntimeError("numba_tma.tlx.alloc_barriers runs inside @cuda.jit kernels")

    @staticmethod
    def kernel_codes(fn, sig, cc, **options) -> tuple:
        return linked_codes.kernel_codes(fn, sig, cc, **options)

