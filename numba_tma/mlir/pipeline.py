"""``numba_tma.pipeline`` in numba-cuda-mlir kernels: the same configurations (``TmaPipeline``,
``AsyncPipeline``, ``TmaStorePipeline``), methods and steps as under numba-cuda.

The methods are :func:`numba_tma.pipeline.compiled.define`'s, bound here to this host's types
(a configuration holds nothing, a ring is its barrier array's memref, a state a struct of two
``uint32``), its intrinsics and its steps' :class:`~numba_tma.pipeline.steps.Host` (the families of
``numba_tma.mlir``).  Their typers see numba-cuda types (this host's are translated first), so the
checks and messages are numba-cuda's.  Every method and step is inlined into its caller."""

from __future__ import annotations

import functools

from ..intrinsics.hosts.mlir_adapter import (cuda, device_function, intrinsic, ir, mlir_types, overload_attribute,
                                       overload_method, refresh, register_empty, register_like, register_struct,
                                       register_typeof, struct_value)
from ..intrinsics.hosts.mlir_host import integer, to_numba
from ..pipeline import compiled, numba_types
from ..pipeline.config import AsyncPipeline, TmaPipeline, TmaStorePipeline
from ..pipeline.state import advance_of
from ..pipeline.steps import Host
from .refs import at

__all__ = ["bind"]


# -- the types --------------------------------------------------------------------------------

@register_empty
class PipelineType(numba_types.PipelineTypeBase, mlir_types.Type):
    """A pipeline configuration used as a constant (numba-cuda's ``PipelineType``'s twin)."""


class RingType(numba_types.RingTypeBase, mlir_types.Type):
    """A pipeline bound to its barrier array: held as that array."""


class StateType(numba_types.StateTypeBase, mlir_types.Type):
    """``PipelineState[stages]``: ``(index, phase)``, two ``uint32``."""


register_like(RingType, "bars")
register_struct(StateType, [("index", mlir_types.uint32), ("phase", mlir_types.uint32)], ("index", "phase"))
pipeline_type = functools.lru_cache(maxsize=None)(PipelineType)
ring_type = functools.lru_cache(maxsize=None)(RingType)
state_type = functools.lru_cache(maxsize=None)(StateType)
for _config_class in (TmaPipeline, AsyncPipeline, TmaStorePipeline):
    register_typeof(_config_class, pipeline_type)


def _to_numba(ty):
    """numba-cuda's type of a numba-cuda-mlir argument type, these three included."""
    if isinstance(ty, PipelineType):
        return numba_types.pipeline_type(ty.config)
    if isinstance(ty, RingType):
        return numba_types.ring_type(ty.config, to_numba(ty.bars))
    if isinstance(ty, StateType):
        return numba_types.state_type(ty.stages)
    return to_numba(ty)


# -- the intrinsics ---------------------------------------------------------------------------

def _state_codegen(builder, target, args, sig_args):
    i32 = ir.IntegerType.get_signless(32)
    fields = [integer(builder.load_var(v), to_numba(t), 32) for v, t in zip(args[1:], sig_args)]
    builder.store_var(target, struct_value(fields, (i32, i32)))


def _new_state(typingctx, owner, index, phase):
    """The state ``(index, phase)`` of ``owner``'s pipeline (a ring, or a store pipeline)."""
    def codegen(builder, target, args, kwargs):
        _state_codegen(builder, target, args, (index, phase))
    return state_type(owner.config.stages)(owner, index, phase), codegen


def _state_like(typingctx, state, index, phase):
    """A state of ``state``'s ring with ``index`` and ``phase``."""
    def codegen(builder, target, args, kwargs):
        _state_codegen(builder, target, args, (index, phase))
    return state(state, index, phase), codegen


def _new_ring(typingctx, pipe, bars):
    """The pipeline ``pipe`` bound to the barrier array ``bars`` (held as ``bars``)."""
    def codegen(builder, target, args, kwargs):
        builder.store_var(target, builder.load_var(args[1]))
    return ring_type(pipe.config, bars)(pipe, bars), codegen


def _ring_bars(typingctx, ring):
    """The barrier array of ``ring``."""
    def codegen(builder, target, args, kwargs):
        builder.store_var(target, builder.load_var(args[0]))
    return ring.bars(ring), codegen


new_state, state_like = intrinsic(_new_state, "new_state"), intrinsic(_state_like, "state_like")
new_ring, ring_bars = intrinsic(_new_ring, "new_ring"), intrinsic(_ring_bars, "ring_bars")


@overload_attribute(RingType, "bars")
def _bars(ring):
    return lambda ring: ring_bars(ring)


# -- the block's threads, the host, the methods -----------------------------------------------

@device_function
def first_thread():
    return cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0


@device_function
def syncthreads():
    cuda.syncthreads()


@device_function
def syncwarp():
    cuda.syncwarp()


@device_function
def laneid():
    return cuda.laneid


def bind(cluster, cp_async, fence, mbarrier, sync, tma) -> Host:
    """Define the pipeline's methods on this host, its steps written with these families (the
    ``numba_tma.mlir`` modules, which import this one); returns the steps' host."""
    host = Host("numba-cuda-mlir", (first_thread, syncthreads, syncwarp, laneid), at, cluster, cp_async, fence,
                mbarrier, sync, tma, device_function, mlir_types.uint32,
                advance_of(mlir_types.uint32, state_like, device_function))
    compiled.define(compiled.Binding(host, PipelineType, RingType, StateType, _on_numba_types(_method),
                                     _on_numba_types(overload_attribute), new_ring, new_state))
    refresh()
    return host


def _method(type_class, name):
    return overload_method(type_class, name, inline=type_class is PipelineType)


def _on_numba_types(decorator):
    """``decorator(type_class, name)`` of a typer given numba-cuda types (this host's translated)."""
    def bind_typer(type_class, name):
        def decorate(typer):
            @functools.wraps(typer)
            def translated(*args, **kwargs):
                return typer(*map(_to_numba, args), **{k: _to_numba(v) for k, v in kwargs.items()})
            decorator(type_class, name)(translated)
            return typer
        return decorate
    return bind_typer
