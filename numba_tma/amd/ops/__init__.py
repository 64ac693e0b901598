"""The AMD ops, declared once each (:class:`~numba_tma.amd._core.AmdOp`) in the module of its
family; all of them are public as ``numba_tma.amd.<op>``, and each family has its page
(``docs/ops/amd/<family>.md``).

Each op is a Numba ``@intrinsic`` whose lowering calls one emitter (:mod:`numba_tma.amd`'s
``buffer``, ``global_load``, ``dma``, ``sync``, ``tdm``, ``lanes``); the emitter checks the
architecture first (see :mod:`numba_tma.amd.targets`).  Per-lane model: a kernel body runs once
per lane, as in numba-cuda; "this lane" and "this wave" refer to it.  Compile kernels with
:func:`numba_tma.amd.compile`.
"""
from ...declarations import OPS
from . import async_loads, lanes, scheduling, tensor_descriptors, workgroup

FAMILIES = {module.__name__.rsplit(".", 1)[1]: module
            for module in (workgroup, async_loads, scheduling, tensor_descriptors, lanes)}   # in the docs' order


def declared_in(module) -> list[str]:
    """The names of the AMD ops ``module`` declares (those of its public names that are ops)."""
    return sorted(name for name in vars(module) if not name.startswith("_") and f"amd.{name}" in OPS
                  and OPS[f"amd.{name}"].vendor == "amd")


def family_of(name: str) -> str:
    """The family of the AMD op ``name`` (``"lds_array"`` -> ``"workgroup"``)."""
    return next(family for family, module in FAMILIES.items() if name in declared_in(module))
