"""The Numba types of a pipeline in a kernel: its configuration (a constant, carrying every
compile-time fact), the ring bound to its barriers, and the ``(index, phase)`` state.

Only numba-cuda's public extension API (``numba.cuda.extending``) is used: the configuration is
typed through the ``_numba_type_`` protocol and lowered as a constant with no data; a ring is a
struct holding its barrier array; a state is a struct of two ``uint32``.
"""

from __future__ import annotations

import functools

from llvmlite import ir
from numba.core import cgutils
from numba.cuda import types
from numba.cuda.extending import intrinsic, make_attribute_wrapper, models, register_model

from ..numba_cuda.internals import lower_constant


class PipelineTypeBase:
    """``Pipeline[TmaPipeline(stages=4, consumers=warps(4), ...)]``: a pipeline configuration used
    as a constant in a kernel (its key is the configuration); each host's type class mixes it with
    that host's ``Type``."""

    def __init__(self, config):
        self.config = config
        super().__init__(name=f"Pipeline[{config!r}]")

    @property
    def key(self):
        return self.config


class RingTypeBase:
    """A pipeline bound to its barrier array in shared memory (``config.create(bars)``)."""

    def __init__(self, config, bars):
        self.config, self.bars = config, bars
        super().__init__(name=f"Ring[{config!r}, {bars}]")

    @property
    def key(self):
        return self.config, self.bars


class StateTypeBase:
    """``PipelineState[stages]``: ``(index, phase)``, two ``uint32``."""

    def __init__(self, stages):
        self.stages = stages
        super().__init__(name=f"PipelineState[{stages}]")

    @property
    def key(self):
        return self.stages


class PipelineType(PipelineTypeBase, types.Type):
    """numba-cuda's pipeline configuration type."""


class RingType(RingTypeBase, types.Type):
    """numba-cuda's ring type."""


class StateType(StateTypeBase, types.Type):
    """numba-cuda's state type."""


pipeline_type = functools.lru_cache(maxsize=None)(PipelineType)
state_type = functools.lru_cache(maxsize=None)(StateType)
ring_type = functools.lru_cache(maxsize=None)(RingType)

@register_model(PipelineType)
class PipelineModel(models.PrimitiveModel):
    """One byte that holds nothing: the configuration is all in the type."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntType(8))


@register_model(RingType)
class RingModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("bars", fe_type.bars)])


@register_model(StateType)
class StateModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("index", types.uint32), ("phase", types.uint32)])


make_attribute_wrapper(RingType, "bars", "bars")
make_attribute_wrapper(StateType, "index", "index")
make_attribute_wrapper(StateType, "phase", "phase")


@lower_constant(PipelineType)
def _lower_config(context, builder, ty, pyval):
    """The configuration is all in the type: its value holds nothing."""
    return ir.Constant(ir.IntType(8), 0)


def _state(context, builder, sig, index, phase, itypes):
    state = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    state.index = context.cast(builder, index, itypes[0], types.uint32)
    state.phase = context.cast(builder, phase, itypes[1], types.uint32)
    return state._getvalue()


@intrinsic
def state_like(typingctx, state, index, phase):
    """A state of ``state``'s ring with ``index`` and ``phase``."""
    def codegen(context, builder, sig, args):
        return _state(context, builder, sig, args[1], args[2], sig.args[1:])
    return state(state, index, phase), codegen


@intrinsic
def new_state(typingctx, ring, index, phase):
    """The state ``(index, phase)`` of ``ring``'s pipeline."""
    def codegen(context, builder, sig, args):
        return _state(context, builder, sig, args[1], args[2], sig.args[1:])
    return state_type(ring.config.stages)(ring, index, phase), codegen


@intrinsic
def new_ring(typingctx, pipe, bars):
    """The pipeline ``pipe`` bound to the barrier array ``bars``."""
    def codegen(context, builder, sig, args):
        ring = cgutils.create_struct_proxy(sig.return_type)(context, builder)
        ring.bars = args[1]
        return ring._getvalue()
    return ring_type(pipe.config, bars)(pipe, bars), codegen
