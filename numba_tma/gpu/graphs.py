"""A :class:`numba_tma.LaunchGraph` on the GPU: each recorded launch compiled, checked and opted in
when recorded (:func:`record`), the launches captured as one CUDA graph through cuda.core's
stream capture on a private non-blocking stream and instantiated (:class:`CapturedGraph`), a node
re-pointed by writing its kernel parameters into the executable graph."""

from __future__ import annotations

import weakref

from ..errors import LaunchError
from ..numba_cuda.cuda_core import packed_parameters
from ..numba_cuda.launching import prepared_args
from . import launching


def record(node) -> tuple:
    """Compile ``node``'s kernel for its arguments, check it against the device and the launch and
    set its opt-ins (as ``numba_tma.launch`` does), without launching: ``(overload, cufunc, cuda.core
    configuration)``."""
    _, prepared_launch, loaded_device, _ = launching.gpu()
    overload, cufunc, _, retr = prepared_launch(node.kernel, node.args, 0)
    if retr:   # graphs refuse what numba copies; anything else it copies is refused here
        raise LaunchError(f"LaunchGraph.launch({node.name}): an argument would be copied to the device and "
                          "back by numba's launch (a host array or record); a graph replays device work only: "
                          "pass device arrays")
    device = loaded_device(cufunc)
    plan = launching.plan(node._shapes, node.shared_mem, device)
    if cufunc not in plan.ready:
        launching.ready(plan, overload, cufunc, device)
    return overload, cufunc, plan.config


class CapturedGraph:
    """The recorded launches of ``nodes`` captured, in order, as one instantiated CUDA graph
    uploaded to ``stream``; each node's arguments are prepared right before its launch (a by-value
    map's twin is reused after it)."""

    def __init__(self, nodes, stream):
        from cuda.bindings import driver
        from cuda.core import Stream
        from numba import cuda

        core_launch, _, _, core_stream = launching.gpu()
        cuda.current_context()                 # numba's context, current
        err, handle = driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING.value)
        _check_driver(err, "cuStreamCreate")
        self._finalizer = weakref.finalize(self, driver.cuStreamDestroy, handle)
        builder = Stream.from_handle(int(handle)).create_graph_builder()
        builder.begin_building("relaxed")
        try:
            for node in nodes:
                overload, cufunc, config = node._recorded
                core_launch(builder, config, cufunc.kernel, *prepared_args(overload, node.args, 0)[0])
        finally:
            builder.end_building()
        self._definition = builder.graph_definition
        self.graph = builder.complete()
        self._builder, self._kernels = builder, {}   # node index -> (its handle, its parameters)
        for node, captured in zip(nodes, _chain(self._definition, len(nodes))):
            err, params = driver.cuGraphKernelNodeGetParams(captured.handle)
            _check_driver(err, "cuGraphKernelNodeGetParams")
            self._kernels[node.index] = captured.handle, params
        self._core_stream = core_stream
        self.graph.upload(core_stream(stream))

    def replay(self, stream) -> None:
        """One ``cuGraphLaunch`` on ``stream``."""
        self.graph.launch(self._core_stream(stream))

    def repoint(self, node, args, where) -> None:
        """Write ``args`` (of the node's recorded types) into the executable graph as ``node``'s
        kernel parameters."""
        from cuda.bindings import driver

        handle, params = self._kernels[node.index]
        holder = packed_parameters(prepared_args(node._recorded[0], args, 0)[0])
        params.kernelParams = holder.ptr
        err, = driver.cuGraphExecKernelNodeSetParams(self.graph.handle, handle, params)
        _check_driver(err, f"{where}: cuGraphExecKernelNodeSetParams")
        del holder                            # the driver copied the parameters

    def close(self) -> None:
        """Free the executable graph and the capture stream."""
        self.graph.close()
        self._builder.close()
        self._finalizer()


def _check_driver(err, what):
    from cuda.bindings import driver

    if err != driver.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"{what} failed: {err.name}")


def _chain(definition, count):
    """The kernel nodes of a captured linear sequence of ``count`` launches, in launch order."""
    from cuda.core.graph import KernelNode

    nodes = definition.nodes
    nodes = list(nodes() if callable(nodes) else nodes)
    entries = [n for n in nodes if len(list(n.pred)) == 0]
    if len(nodes) != count or len(entries) != 1 or not all(isinstance(n, KernelNode) for n in nodes):
        raise RuntimeError(f"the capture of {count} launches made {len(nodes)} nodes "
                           f"({sorted(type(n).__name__ for n in nodes)}, {len(entries)} without a predecessor), not "
                           "a chain of kernel nodes: cuda.core's capture changed; re-verify numba_tma/gpu/graphs.py")
    found = [entries[0]]
    while len(found) < count:
        succ = list(found[-1].succ)
        if len(succ) != 1:
            raise RuntimeError(f"captured node {len(found) - 1} has {len(succ)} successors, not 1: re-verify "
                               "numba_tma/gpu/graphs.py against cuda.core")
        found.append(succ[0])
    return found
