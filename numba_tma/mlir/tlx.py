"""``numba_tma.tlx``'s TLX names in numba-cuda-mlir kernels: every wrapper is ``numba_tma.tlx``'s own
Python function, compiled by numba-cuda-mlir with this host's families (``numba_tma.mlir.tma``...)
in place of numba-cuda's.  A kernel calls ``tlx.async_descriptor_load(...)`` as under numba-cuda
(``from numba_tma import tlx``); each function is registered here as a numba-cuda-mlir overload of
that same function object, typed by the same variant pickers and checks.

Each wrapper's body is a copy of the function (its code, defaults and closure) whose globals are
``numba_tma.tlx``'s with the families, ``at``, ``cuda`` and ``types`` of this host (the copies
call one another).  Each is inlined into its caller's Numba IR; a wrapper's body branches on no option
(``numba_tma.tlx`` picks a body per option at compile time, so numba-cuda-mlir 0.6, which types
both sides of an ``if option is None`` when inlining, sees only the one taken), and a string option
(``eviction_policy``, ``store_reduce``, ``fence``'s scope) is a constant there, never a device
function's parameter (which numba-cuda-mlir 0.6 cannot pass: docs/numba_cuda_mlir_defects.md,
item 10).  ``alloc_barriers`` is not here (:data:`UNAVAILABLE` says why)."""

import inspect
import types as pytypes

from .. import tlx as _tlx
from ..intrinsics.mlir_adapter import cuda, mlir_types, overload
from ..intrinsics.mlir_host import to_numba

__all__ = ["UNAVAILABLE", "register"]

_FAMILIES = ("tma", "mbarrier", "bulk", "cache", "cluster", "cp_async", "dsmem", "sync")


def _copies(host: dict) -> dict:
    """Every function of ``numba_tma.tlx`` (the wrappers and their variants) copied with this host's
    globals (``host``: its families, ``at``); the copies' globals hold the copies."""
    rebound = dict(vars(_tlx), **{f: host[f] for f in _FAMILIES}, _fence=host["fence"], at=host["at"], cuda=cuda,
                   _types=mlir_types)
    copies = {}
    for name, value in vars(_tlx).items():
        if isinstance(value, pytypes.FunctionType) and value.__module__ == _tlx.__name__:
            copies[name] = pytypes.FunctionType(value.__code__, rebound, name, value.__defaults__, value.__closure__)
            copies[name].__kwdefaults__ = value.__kwdefaults__
    rebound.update(copies)
    return copies


def _numba_types(arguments: dict) -> dict:
    """A call's argument types as numba-cuda's, for the variant pickers written against them."""
    return {name: to_numba(ty) for name, ty in arguments.items()}


def _register(wrapper, variants, copies):
    """``wrapper`` inlined into its caller's Numba IR, its body the copy its variant picker chooses
    for the call's types (as under numba-cuda)."""
    signature = inspect.signature(wrapper)
    body = copies[wrapper.__name__]

    def typer(*args, **kwargs):
        if variants is None:
            return body
        return copies[variants(**_numba_types(signature.bind(*args, **kwargs).arguments)).__name__]

    typer.__signature__ = signature
    overload(wrapper, inline=True)(typer)


# alloc_barriers returns a new shared array, which a numba-cuda-mlir 0.6 function cannot (its result
# type drops the address space: docs/numba_cuda_mlir_defects.md, item 9)
UNAVAILABLE = {"alloc_barriers": (
    "numba_tma: tlx.alloc_barriers: it returns a new shared array, and numba-cuda-mlir 0.6 cannot return one from "
    "a function (its result type drops the shared address space: 'type of return operand 0 (memref<1xi64, "
    "#gpu.address_space<workgroup>>) doesn't match function result type', docs/numba_cuda_mlir_defects.md, item 9); "
    "allocate the barriers in the kernel (cuda.shared.array(n, types.uint64), mbarrier.init, fence.mbarrier_init)")}

def register(host: dict) -> dict:
    """Register every wrapper but :data:`UNAVAILABLE`'s for numba-cuda-mlir kernels over ``host``
    (``numba_tma.mlir``'s namespace: its families and ``at``); returns the bodies registered, by
    name."""
    copies = _copies(host)
    for wrapper in _tlx._WRAPPERS:
        if wrapper.__name__ not in UNAVAILABLE:
            _register(wrapper, _tlx.VARIANTS.get(wrapper.__name__), copies)
    return copies
