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

import sys
import types

from .. import intrinsics   # the families: their declarations enter OPS
from ..intrinsics._core import OPS
from ..intrinsics.mlir_adapter import refresh
from ..intrinsics.mlir_host import build_mlir_intrinsic
from ..ops import FAMILIES
from . import cluster_helpers, fragments, pipeline, tiles, tlx
from .refs import at
from .shared import carver
from .tensor_map import map_in_global, map_in_global_type, map_type


# -- one module per family ------------------------------------------------------------------------

MISSING = {}   # op name -> why this host does not lower it


def _family_module(family):
    module = types.ModuleType(f"{__name__}.{family}", f"numba_tma.{family}'s ops for numba-cuda-mlir kernels.")
    for name, op in sorted(OPS.items()):
        if op.vendor != "nvidia" or op.family != family:
            continue
        try:
            setattr(module, op.short_name, build_mlir_intrinsic(op))
        except NotImplementedError as exc:
            MISSING[name] = str(exc)
    helpers = fragments.HELPERS.get(family, {}) | (tiles.HELPERS if family == "wgmma" else {}) | \
        (cluster_helpers.HELPERS if family == "cluster" else {})
    for name in getattr(getattr(intrinsics, family), "HELPERS", ()):
        if name in helpers:
            setattr(module, name, helpers[name])
        else:
            MISSING[f"{family}.{name}"] = (f"numba_tma: {family}.{name}: a helper written in llvmlite (not a PtxOp "
                                           "declaration) with no numba-cuda-mlir lowering yet (docs/second_host.md)")
    module.__all__ = sorted(n for n in vars(module) if not n.startswith("_"))
    return module


for _family in FAMILIES:
    globals()[_family] = sys.modules[f"{__name__}.{_family}"] = _family_module(_family)
for _family in FAMILIES:   # another family's ops a family also exports (tma's bulk async-groups), not in __all__
    for _name in getattr(getattr(intrinsics, _family), "ALIASES", ()):
        _op, = (op for op in OPS.values() if op.short_name == _name and op.family != _family
                and getattr(getattr(intrinsics, op.family), _name, None) is getattr(getattr(intrinsics, _family), _name))
        setattr(globals()[_family], _name, getattr(globals()[_op.family], _name))
refresh()


__all__ = ["FAMILIES", "MISSING", "at", "carver", "map_in_global", "map_in_global_type", "map_type", *FAMILIES]

# numba_tma.pipeline's configurations and rings in these kernels (:mod:`.pipeline`)
PIPELINE_HOST = pipeline.bind(cluster, cp_async, fence, mbarrier, sync, tma)  # noqa: F821 - set through globals()

# numba_tma.tlx's names in these kernels, over the families above (:mod:`.tlx`)
TLX_BODIES = tlx.register(globals())
