"""What runs kernels in this process, chosen once (:data:`numba_tma.ops.BACKEND`): numba-cuda's
compiler and a GPU (:class:`numba_tma.gpu.GpuBackend`), or numba-cuda's CUDA simulator, which runs
kernels as Python (:class:`numba_tma.simulator.backend.SimulatorBackend`).  The user-level modules
(``launch``, ``graphs``, ``shared_memory``, ``tlx``, ``pipeline``, ``inspect``, ``testing``) call
the chosen backend and none branches on which one it is (the pytest plugin reads its :attr:`name`:
which way this process runs a ``both_ways`` test).  :class:`Backend` is what both provide."""

from __future__ import annotations

import abc


class Backend(abc.ABC):
    """A backend: its launches and launch graphs, and how the code a kernel calls is made."""

    name: str
    """``"gpu"`` or ``"simulator"`` (``numba_tma.testing.WAY``'s values)."""
    no_gpu: str | None
    """Why there is no GPU to test on whatever the machine has (the simulator's), or None."""
    compiler_missing: str | None
    """Why nothing can be compiled to PTX in this process (the simulator's), or None."""

    @staticmethod
    @abc.abstractmethod
    def install() -> None:
        """Put the backend in place, once (:mod:`numba_tma.ops`): its hooks, and what the host-side
        descriptors read arrays and put maps through."""

    # -- launches and graphs ------------------------------------------------------------------------
    @staticmethod
    @abc.abstractmethod
    def launch(kernel, shapes, shared_mem, stream, args) -> None:
        """Launch ``kernel`` on ``args`` with ``shapes`` (:func:`numba_tma.launch`'s checked geometry:
        grid in clusters, block, cluster, blocks per cluster) and ``shared_mem`` bytes, on ``stream``."""

    @staticmethod
    @abc.abstractmethod
    def prepare(kernel, shapes, shared_mem, stream, args, varying):
        """:meth:`launch`'s work done once: an object whose ``launch(*values)`` launches ``kernel``
        on ``args`` with the arguments at positions ``varying`` replaced by ``values``
        (:func:`numba_tma.prepare_launch`)."""

    @staticmethod
    @abc.abstractmethod
    def argument_types(kernel, args) -> tuple:
        """The Numba types ``kernel``'s launch gives ``args`` (``ValueError`` for one it cannot type)."""

    @staticmethod
    @abc.abstractmethod
    def record(node):
        """Check (and compile) a launch graph's node when it is recorded; what the node keeps for its capture."""

    @staticmethod
    @abc.abstractmethod
    def capture(nodes, stream):
        """The recorded ``nodes`` as one graph: ``.replay(stream)``, ``.repoint(node, args, where)``, ``.close()``."""

    # -- code in kernels ---------------------------------------------------------------------------
    @staticmethod
    @abc.abstractmethod
    def define_for_compiler(define) -> None:
        """Run ``define()`` (it registers typing and lowering with numba-cuda) where kernels are
        compiled; nothing where they run as Python."""

    @staticmethod
    @abc.abstractmethod
    def twin(python_body, compiled):
        """A helper kernels call: ``compiled()`` (an intrinsic) where kernels are compiled, else the Python body."""

    @staticmethod
    @abc.abstractmethod
    def device_function(fn):
        """``fn`` as a device function kernels call (inlined where compiled)."""

    @staticmethod
    @abc.abstractmethod
    def compile_options(options: dict) -> dict:
        """``cuda.jit`` options of a kernel this backend takes: all of them where kernels are
        compiled, none of the compiler's (``launch_bounds``, ...) where they run as Python."""

    @staticmethod
    @abc.abstractmethod
    def is_device_function(fn) -> bool:
        """Whether ``fn`` is a ``cuda.jit(device=True)`` function of this backend."""

    @staticmethod
    @abc.abstractmethod
    def carver(pieces, align, fields, nbytes, compiled):
        """A :class:`numba_tma.SharedMemoryPlan`'s carver: ``compiled()`` where kernels are compiled."""

    @staticmethod
    @abc.abstractmethod
    def barriers(count, arrive_count):
        """``tlx.alloc_barriers`` called as Python (kernels compiled inline its overload instead)."""

    @staticmethod
    @abc.abstractmethod
    def kernel_codes(fn, sig, cc, **options) -> tuple:
        """``(ptx, codes)``: a kernel's PTX and every code it links, without a GPU (:mod:`numba_tma.inspect`)."""
