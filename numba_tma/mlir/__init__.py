"""numba-tma's ops for numba-cuda-mlir kernels (the second host, issue 25; docs/second_host.md).

Example::

    from numba_cuda_mlir import cuda
    from numba_tma.mlir import at, fence, mbarrier, tma

    @cuda.jit(chip="sm_90a")
    def kernel(desc, out): ...        # the same calls as under numba-cuda

Importing this package needs numba-cuda-mlir (the ``mlir`` extra).  It builds, from the same
declarations as ``numba_tma.<family>``, a numba-cuda-mlir intrinsic of every op this host lowers
(:mod:`numba_tma.intrinsics.mlir_host`) and puts each family's in a module of its own,
``numba_tma.mlir.<family>`` (numba-cuda-mlir resolves ``family.op`` only through modules).
:data:`MISSING` names the ops it does not lower yet, with why.  The register-fragment helpers
(``wgmma.zeros``, ``scale``, ``add``, the row operations, ``mma.zeros``) come from :mod:`.fragments`,
those that read or write memory (``wgmma.store``, ``store_bf16``, ``load``, ``store_shared_bf16``)
from :mod:`.tiles`, ``at`` from :mod:`.refs`; :func:`map_type` is the type of a by-value map
argument on sm_100 and newer (:mod:`.tensor_map`; below sm_100 a map goes in global memory,
:func:`map_in_global`); :func:`carver` carves a ``SharedMemoryPlan`` (:mod:`.shared`); ``numba_tma.pipeline``'s
configurations work in these kernels as under numba-cuda (:mod:`.pipeline`).
"""

from .. import intrinsics   # the families: their declarations enter OPS
from ..intrinsics._core import OPS
from ..intrinsics.mlir_adapter import refresh, register_twin
from ..intrinsics.mlir_host import build_mlir_intrinsic
from ..ops import FAMILIES
from . import cluster_helpers, fragments, pipeline, refs, tiles, tlx
from .shared import carver
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


__all__ = ["FAMILIES", "MISSING", "at", "carver", "map_in_global", "map_in_global_type", "map_type", *FAMILIES]

# numba_tma.pipeline's configurations and rings in these kernels (:mod:`.pipeline`)
PIPELINE_HOST = pipeline.bind(cluster, cp_async, fence, mbarrier, sync, tma)  # noqa: F821 - set through globals()

# numba_tma.tlx's names in these kernels, over the families above (:mod:`.tlx`)
TLX_BODIES = tlx.register(globals())
