"""``numba_tma.tlx``'s TLX names in numba-cuda-mlir kernels: every wrapper is ``numba_tma.tlx``'s own
Python function, compiled by numba-cuda-mlir (the families and ``at`` it calls are numba_tma's own,
typed on this host too).  A kernel calls ``tlx.async_descriptor_load(...)`` as under numba-cuda
(``from numba_tma import tlx``); each function is registered here as a numba-cuda-mlir overload of
that same function object, typed by the same variant pickers and checks.

Each wrapper's body is a copy of the function (its code, defaults and closure) whose globals are
``numba_tma.tlx``'s with this host's ``cuda`` and ``_barrier_array`` (the copies call one another).  Each is inlined into its caller's Numba IR; a wrapper's body branches on no option
(``numba_tma.tlx`` picks a body per option at compile time, so numba-cuda-mlir 0.6, which types
both sides of an ``if option is None`` when inlining, sees only the one taken), and a string option
(``eviction_policy``, ``store_reduce``, ``fence``'s scope) is a constant there, never a device
function's parameter (which numba-cuda-mlir 0.6 cannot pass: docs/numba_cuda_mlir_defects.md,
item 10).  ``alloc_barriers`` allocates its barriers through an intrinsic of this host
(``_barrier_array``: numba-cuda-mlir 0.6 cannot return a shared array from an overload's body,
docs/numba_cuda_mlir_defects.md item 9, so they are returned as a generic array)."""

import inspect
import types as pytypes

from .. import tlx as _tlx
from ..intrinsics.hosts.mlir_adapter import cuda, intrinsic, ir, mlir_types, overload, static_shared_array
from ..intrinsics.hosts.mlir_host import to_numba

__all__ = ["register"]

def _copies() -> dict:
    """Every function of ``numba_tma.tlx`` (the wrappers and their variants) copied with this host's
    ``cuda`` and ``_barrier_array``; the copies' globals hold the copies."""
    own = {"cuda": cuda, "_barrier_array": _barrier_array}
    rebound = dict(vars(_tlx), **own)
    copies = {}
    for name, value in vars(_tlx).items():
        if isinstance(value, pytypes.FunctionType) and value.__module__ == _tlx.__name__ and name not in own:
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


def _barrier_array_typer(typingctx, count):
    """numba-cuda-mlir's ``numba_tma.tlx._barrier_array``: the barriers in static shared memory, as
    a generic array (an overload's body cannot return the shared one: docs/numba_cuda_mlir_defects.md,
    item 9), which every op takes (a shared operand's address is cast back to the shared window).
    ``count`` is ``barriers_body``'s constant, which this host types ``int64`` and lowers as an
    ``arith.constant`` (read there, as numba-cuda-mlir reads ``cuda.shared.array``'s shape)."""
    result = mlir_types.Array(mlir_types.uint64, 1, "C")

    def codegen(builder, target, args, kwargs):
        n = _constant(builder.load_var(args[0]))
        builder.store_var(target, static_shared_array(builder, n, ir.IntegerType.get_signless(64), 8, result))

    return result(count), codegen


def _constant(value) -> int:
    """The integer an ``arith.constant`` gives (``alloc_barriers`` checked it is one at typing)."""
    return ir.IntegerAttr(value.owner.opview.value).value


_barrier_array = intrinsic(_barrier_array_typer, "_barrier_array")


def _register_alloc_barriers(copies):
    """``tlx.alloc_barriers``: ``numba_tma.tlx.barriers_body`` (copied with this host's globals, so
    its ``_barrier_array`` is :data:`_barrier_array`) for the call's constant count."""
    def typer(num_barriers, arrive_count=1):
        return copies["barriers_body"](_tlx.barrier_count(to_numba(num_barriers)))

    overload(_tlx.alloc_barriers, inline=True)(typer)


def register() -> dict:
    """Register every wrapper for numba-cuda-mlir kernels; returns the bodies registered, by name."""
    copies = _copies()
    for wrapper in _tlx._WRAPPERS:
        if wrapper is _tlx.alloc_barriers:
            _register_alloc_barriers(copies)
        else:
            _register(wrapper, _tlx.VARIANTS.get(wrapper.__name__), copies)
    return copies
