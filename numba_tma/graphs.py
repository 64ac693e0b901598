"""CUDA graphs of numba-tma launches: a sequence of kernels (maps by value, clusters, dynamic
shared memory above 48 KB) captured once and replayed, each node re-pointed at new arguments
between replays by updating the executable graph's kernel parameters.

Example::

    # fragment: the kernels and arrays are the caller's (docs/graphs.md)
    g = numba_tma.LaunchGraph()                       # replays on the default stream (or stream=s)
    load = g.launch(tile_copy, (4, 2), 128, desc, out)
    mc = g.launch(multicast, 8, 64, desc2, out2, cluster=(2, 1, 1), shared_mem=100_000)
    for a, b in batches:
        g.set_args(load, desc.retarget(a), b)         # the node's parameters: no capture, no compile
        g.replay()
    cuda.synchronize()

:meth:`LaunchGraph.launch` takes what :func:`numba_tma.launch` takes and checks it the same way
(the geometry against the device, the compiled kernel against the geometry, opt-ins set), but
records instead of launching.  The first :meth:`~LaunchGraph.replay` (or
:meth:`~LaunchGraph.build`) captures the recorded launches, in order, through cuda.core's stream
capture (``Stream.create_graph_builder``) on a private non-blocking stream, and instantiates the
graph; a replay is one ``cuGraphLaunch`` on the graph's stream.  A launch's arguments are read when
the graph is built (a map retargeted in place before then is captured at its new address).

:meth:`LaunchGraph.set_args` re-points one node: the arguments must have the Numba types the node
was captured with (same array dtypes and ranks, maps of the same layout: the compiled kernel is
the node's), else a ``LaunchError`` names the argument; they are prepared as numba prepares a
launch's and written into the executable graph (``cuGraphExecKernelNodeSetParams``; the grid,
block, cluster and shared memory are the node's).  Replays already enqueued keep the arguments
they were given.  The node keeps its arguments alive until they are replaced.

Arguments must live on the device (numba, CuPy or PyTorch arrays, scalars, maps): a replay runs
device work only, so a host (numpy) array, which numba's launch would copy over and back, is
refused.

Under numba-cuda's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) nothing is captured: a replay
runs the recorded launches one after another as :func:`numba_tma.launch` runs them, with the arguments
last given (so a map retargeted in place is seen at its new address there, where on the GPU only
``set_args`` re-points a built graph); the checks are the same, against the H200's limits.
"""

from __future__ import annotations

import weakref

from .errors import LaunchError
from .launch import ClusterKernel, geometry
from .ops import BACKEND

__all__ = ["LaunchGraph", "LaunchNode"]

_DEFAULT_CLUSTER = (1, 1, 1)


def _parameter_names(py_func, count):
    import inspect

    try:
        names = list(inspect.signature(py_func).parameters)
    except (TypeError, ValueError):
        names = []
    return tuple(names[i] if i < len(names) else f"#{i}" for i in range(count))


def _argument_types(kernel, args, names, where):
    """The Numba types of ``args`` as ``kernel``'s launch types them (a ``LaunchError`` naming an
    argument numba cannot type)."""
    try:
        return BACKEND.argument_types(kernel, args)
    except ValueError:
        for i, a in enumerate(args):
            try:
                BACKEND.argument_types(kernel, (a,))
            except ValueError as exc:
                raise LaunchError(f"{where}: argument {names[i]!r} (#{i}) is a {type(a).__name__}, which numba "
                                  f"cannot pass to a kernel ({str(exc).strip()})") from None
        raise


class LaunchNode:
    """One recorded launch of a :class:`LaunchGraph` (what :meth:`LaunchGraph.launch` returns):
    ``index`` (its place in the sequence), ``kernel``, ``grid`` (in blocks), ``block``,
    ``cluster``, ``shared_mem``, ``args`` (the arguments last given) and ``argtypes``."""

    __slots__ = ("__weakref__", "_graph", "index", "kernel", "grid", "block", "cluster", "shared_mem", "args",
                 "argtypes", "names", "_shapes", "_recorded")

    def __init__(self, graph, index, kernel, grid, block, cluster, shared_mem, args, argtypes, names, shapes):
        self._graph = weakref.ref(graph)
        self.index, self.kernel, self.grid, self.block, self.cluster = index, kernel, grid, block, cluster
        self.shared_mem, self.args, self.argtypes, self.names, self._shapes = shared_mem, args, argtypes, names, shapes
        self._recorded = None   # what the backend keeps of the launch for its capture

    @property
    def name(self) -> str:
        return getattr(self.kernel, "__name__", "kernel")

    def __repr__(self):
        return (f"LaunchNode({self.index}: {self.name}, grid={self.grid}, block={self.block}, "
                f"cluster={self.cluster}, shared_mem={self.shared_mem})")


class LaunchGraph:
    """A sequence of launches recorded with :meth:`launch`, captured as one CUDA graph at the
    first :meth:`replay` (or :meth:`build`), replayed on ``stream`` (a numba stream, a cuda.core
    ``Stream``, or 0: the default stream, in order with numba's default-stream work)."""

    def __init__(self, stream=0):
        self.stream = stream
        self.nodes: list[LaunchNode] = []
        self._captured = None   # the backend's graph of the launches, once built
        self._built = self._closed = False

    def __len__(self):
        return len(self.nodes)

    def __repr__(self):
        state = "closed" if self._closed else "built" if self.built else "recording"
        return f"LaunchGraph({len(self.nodes)} launches, {state})"

    @property
    def built(self) -> bool:
        """Whether the graph is captured (recording has ended)."""
        return self._built

    # -- recording ---------------------------------------------------------------------------------
    def launch(self, kernel, grid, block, *args, cluster=None, shared_mem=0) -> LaunchNode:
        """Record a launch of ``kernel`` (a ``@cuda.jit`` kernel, or a ``cluster_kernel``: its
        clusters are the default) as :func:`numba_tma.launch` would make it, checked against the
        device now (and compiled now); return its node (for :meth:`set_args`).

        Example::

            # fragment: g a LaunchGraph; k, desc, out the caller's (docs/graphs.md)
            node = g.launch(k, (8, 4), 128, desc, out, cluster=(2, 1, 1), shared_mem=150_000)
        """
        self._check_open("launch")
        if self.built:
            raise LaunchError(f"LaunchGraph.launch({_name(kernel)}): the graph is built (replayed, or build() "
                              "called): record every launch before the first replay, or make another LaunchGraph")
        if isinstance(kernel, ClusterKernel):
            kernel, cluster = kernel.dispatcher, kernel.cluster if cluster is None else cluster
        if not (hasattr(kernel, "py_func") and hasattr(kernel, "overloads")):
            raise LaunchError(f"kernel={kernel!r}: must be a @cuda.jit kernel (a numba dispatcher) or a "
                              "numba_tma.cluster_kernel")
        cluster = _DEFAULT_CLUSTER if cluster is None else cluster
        shapes = geometry(grid, block, cluster, shared_mem)
        names = _parameter_names(kernel.py_func, len(args))
        self._check_count(kernel, args, f"LaunchGraph.launch({_name(kernel)})")
        _check_on_device(args, names, f"LaunchGraph.launch({_name(kernel)})")
        argtypes = _argument_types(kernel, args, names, f"LaunchGraph.launch({_name(kernel)})")
        node = LaunchNode(self, len(self.nodes), kernel, shapes_grid(shapes), shapes[1], shapes[2], shared_mem,
                          args, argtypes, names, shapes)
        node._recorded = BACKEND.record(node)
        self.nodes.append(node)
        return node

    # -- capture and replay ------------------------------------------------------------------------
    def build(self) -> "LaunchGraph":
        """Capture the recorded launches as one graph and instantiate it (the first
        :meth:`replay` does this itself); return the graph."""
        self._check_open("build")
        if self.built:
            return self
        if not self.nodes:
            raise LaunchError("LaunchGraph.build: no launches recorded (LaunchGraph.launch(kernel, grid, block, "
                              "*args, ...) first)")
        self._captured = BACKEND.capture(self.nodes, self.stream)
        self._built = True
        return self

    def replay(self, stream=None) -> None:
        """Launch the graph (every recorded launch, in order) on ``stream`` (default: the graph's);
        the first replay builds it.  Returns without waiting for the GPU."""
        self._check_open("replay")
        if not self.built:
            self.build()
        self._captured.replay(self.stream if stream is None else stream)

    # -- re-pointing -------------------------------------------------------------------------------
    def set_args(self, node, *args) -> None:
        """Give ``node`` (one of :attr:`nodes`, or its index) new arguments of the types it was
        recorded with, for the next replays: before the build, the arguments it will be captured
        with; after, its kernel parameters in the executable graph.

        Example::

            # fragment: g, load a LaunchGraph and its node (docs/graphs.md)
            g.set_args(load, desc.retarget(next_batch), out)
        """
        self._check_open("set_args")
        node = self._node(node)
        where = f"LaunchGraph.set_args(node {node.index}: {node.name})"
        self._check_count(node.kernel, args, where, expected=len(node.argtypes))
        _check_on_device(args, node.names, where)
        argtypes = _argument_types(node.kernel, args, node.names, where)
        if argtypes != node.argtypes:
            i = next(i for i, (new, old) in enumerate(zip(argtypes, node.argtypes)) if new != old)
            raise LaunchError(f"{where}: argument {node.names[i]!r} (#{i}) is {argtypes[i]}, but the node was "
                              f"recorded with {node.argtypes[i]}: a node keeps the kernel compiled for its "
                              "arguments' types; pass an argument of the same type (an array of the same dtype, "
                              "rank and layout, a map of the same layout), or record another launch")
        if self._captured is not None:
            self._captured.repoint(node, args, where)
        node.args = args

    def _node(self, node) -> LaunchNode:
        if isinstance(node, int) and not isinstance(node, bool):
            if not -len(self.nodes) <= node < len(self.nodes):
                raise LaunchError(f"node={node}: this LaunchGraph has {len(self.nodes)} launches (nodes 0 to "
                                  f"{len(self.nodes) - 1})")
            return self.nodes[node]
        if not isinstance(node, LaunchNode):
            raise LaunchError(f"node={node!r}: must be a LaunchNode (what LaunchGraph.launch returned) or its index")
        if node._graph() is not self:
            raise LaunchError(f"node={node!r}: a launch of another LaunchGraph")
        return node

    @staticmethod
    def _check_count(kernel, args, where, expected=None):
        import inspect

        if expected is None:
            try:
                params = inspect.signature(kernel.py_func).parameters.values()
            except (TypeError, ValueError):
                return
            if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
                return
            expected = len(params)
        if len(args) != expected:
            names = ", ".join(_parameter_names(kernel.py_func, expected))
            raise LaunchError(f"{where}: {len(args)} arguments given; the kernel takes {expected} ({names})")

    def _check_open(self, what):
        if self._closed:
            raise LaunchError(f"LaunchGraph.{what}: the graph is closed")

    def close(self) -> None:
        """Free the executable graph and its capture stream (a replay already enqueued still runs)."""
        if self._closed:
            return
        self._closed = True
        if self._captured is not None:
            self._captured.close()
        self._captured = None
        for node in self.nodes:
            node.args = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def shapes_grid(shapes):
    """The grid in blocks from ``launch._check_shapes``' answer (its grid is in clusters)."""
    clusters, _, cluster, _ = shapes
    return tuple(c * s for c, s in zip(clusters, cluster))


def _name(kernel) -> str:
    return getattr(kernel, "__name__", type(kernel).__name__)


def _check_on_device(args, names, where):
    """Refuse host arrays and records (numba's launch copies them over and back; a replay cannot)."""
    import numpy as np

    for i, a in enumerate(args):
        if isinstance(a, (np.ndarray, np.void)):
            kind = "a host (numpy) array" if isinstance(a, np.ndarray) else "a host (numpy) record"
            raise LaunchError(f"{where}: argument {names[i]!r} (#{i}) is {kind}: a graph replays device work only "
                              "(numba's launch would copy it over and back); pass a device array "
                              "(cuda.to_device(...))")
