"""numba-tma on numba-cuda-mlir, the second host (docs/second_host.md): the same imports as under
numba-cuda.

Example::

    from numba_cuda_mlir import cuda
    from numba_tma import at, fence, mbarrier, tma

    @cuda.jit(chip="sm_90a")
    def kernel(desc, out): ...        # the same calls, the same objects, as under numba-cuda

Importing this package needs numba-cuda-mlir (the ``mlir`` extra); numba-cuda-mlir imports it
itself before its first compile (the ``numba_cuda_mlir_extensions`` entry point, :func:`init`).
It builds, from the same declarations as numba-cuda's, a numba-cuda-mlir intrinsic of every op
(:func:`~numba_tma.intrinsics.hosts.mlir_host.build_mlir_intrinsic`) and of every helper (the
register-fragment ones from :mod:`.fragments`, those that read or write memory from :mod:`.tiles`,
``cluster``'s from :mod:`.cluster_helpers`, ``at`` from :mod:`.refs`, a ``SharedMemoryPlan``'s
carve from :mod:`.shared`), and types numba_tma's own objects (``numba_tma.tma.load``...) in
numba-cuda-mlir kernels as those (:func:`~numba_tma.intrinsics.hosts.mlir_adapter.register_twin`).
``numba_tma.pipeline``'s configurations (:mod:`.pipeline`) and ``numba_tma.tlx`` (:mod:`.tlx`)
work in these kernels as under numba-cuda.  :data:`MISSING` names what it does not lower yet, with
why.  What exists for this host alone: :func:`map_in_global` (a map in global memory whose type says
its layout: numba-cuda-mlir 0.6 passes a by-value map from sm_100 only), :func:`map_type` (the
type of a by-value map argument, sm_100 and newer) and :func:`kernel_ptx`; the families and ``at``
here are numba_tma's (aliases).
"""

from .. import intrinsics   # the families: their declarations enter OPS
from ..intrinsics._core import OPS
from ..intrinsics.hosts.mlir_adapter import kernel_ptx, refresh, register_twin
from ..intrinsics.hosts.mlir_host import build_mlir_intrinsic
from ..ops import FAMILIES
from . import cluster_helpers, fragments, pipeline, refs, shared, tiles, tlx  # noqa: F401 (shared: plan.carver())
from .tensor_map import map_in_global, map_in_global_type, map_type


# -- numba_tma's own objects, typed in numba-cuda-mlir kernels as this host's intrinsics of them ---

MISSING = {}   # "family.name" -> why this host does not lower it


def _helpers(family) -> dict:
    """This host's intrinsics of ``family``'s helpers (not PTX declarations), by name."""
    return fragments.HELPERS.get(family, {}) | (tiles.HELPERS if family == "wgmma" else {}) | \
        (cluster_helpers.HELPERS if family == "cluster" else {})


def _register_family(family) -> None:
    """Every public object of ``numba_tma.<family>`` (numba-cuda's intrinsic of an op or a helper)
    typed in numba-cuda-mlir kernels as this host's intrinsic of it (the op's, built from its
    declaration, :func:`build_mlir_intrinsic`; a helper's, :data:`fragments.HELPERS`...)."""
    module = getattr(intrinsics, family)
    for name, op in sorted(OPS.items()):
        if op.vendor == "nvidia" and op.family == family:
            try:
                register_twin(getattr(module, op.short_name), build_mlir_intrinsic(op))
            except NotImplementedError as exc:
                MISSING[name] = str(exc)
    helpers = _helpers(family)
    for name in getattr(module, "HELPERS", ()):
        if name not in helpers:
            MISSING[f"{family}.{name}"] = (f"numba_tma: {family}.{name}: a helper written in llvmlite (not a PtxOp "
                                           "declaration) with no numba-cuda-mlir lowering yet (docs/second_host.md)")
        elif helpers[name] is not getattr(module, name):   # (the masks are registered as overloads of their own)
            register_twin(getattr(module, name), helpers[name])


for _family in FAMILIES:
    _register_family(_family)
    globals()[_family] = getattr(intrinsics, _family)   # the same modules: one import for both hosts
register_twin(intrinsics.at, refs.at)
refresh()
at = intrinsics.at


__all__ = ["FAMILIES", "MISSING", "at", "init", "kernel_ptx", "map_in_global", "map_in_global_type", "map_type", *FAMILIES]


def init() -> None:
    """numba-cuda-mlir's extension entry point (``numba_cuda_mlir_extensions``, ``init``): importing
    this package registered numba_tma's objects with numba-cuda-mlir; nothing is left to do."""

# numba_tma.pipeline's configurations and rings in these kernels (:mod:`.pipeline`)
PIPELINE_HOST = pipeline.bind(cluster, cp_async, fence, mbarrier, sync, tma)  # noqa: F821 - set through globals()

# numba_tma.tlx's names in these kernels (:mod:`.tlx`)
TLX_BODIES = tlx.register()
