"""A pipeline's methods in kernels: ``overload_method``s of its types whose bodies call the steps
(:mod:`.steps`) with the configuration's facts as constants, after the arguments were checked at
typing time (naming the argument and the rule).  :func:`define` writes them once for a
:class:`Binding` (a compiler's types, decorators and intrinsics): numba-cuda's here, numba-cuda-mlir's
in ``numba_tma.mlir.pipeline``, whose decorators give the typers numba-cuda types, so the checks
and their messages are these on both."""

from __future__ import annotations

from typing import Any, NamedTuple

from numba.cuda import types
from numba.cuda.extending import overload_attribute, overload_method

from ..intrinsics.tensor_map_type import TensorMapType, as_map
from .config import TmaStorePipeline
from .numba_types import PipelineType, RingType, StateType, new_ring, new_state
from .rules import refuse, stage_bytes
from .steps import NUMBA_CUDA, Host, steps


class Binding(NamedTuple):
    """One compiler's pipeline: the host its steps are written with, its three type classes,
    ``method(type_class, name)`` and ``attribute(type_class, name)`` (its ``overload_method`` and
    ``overload_attribute``, the typers seeing numba-cuda types), and its ``new_ring(pipe, bars)``
    and ``new_state(ring, index, phase)`` intrinsics."""
    host: Host
    pipeline_type: Any
    ring_type: Any
    state_type: Any
    method: Any
    attribute: Any
    new_ring: Any
    new_state: Any


def _where(config, step):
    return f"{type(config).__name__}.{step}"


def _state(config, step, state):
    if not isinstance(state, StateType) or state.stages != config.stages:
        raise refuse(_where(config, step), "state", f"must be a PipelineState of this ring ({config.stages} stages: "
                     "ring.producer_state() or ring.consumer_state())", state)


def _only(config, step, kinds):
    if config.kind not in kinds:
        raise refuse(_where(config, step), "self", f"is a {type(config).__name__}: {step}() is a step of "
                     + " and ".join({"tma": "TmaPipeline", "async": "AsyncPipeline"}[k] for k in kinds), config)


def _constant_bytes(config, expect, step="acquire"):
    """``expect``'s bytes when its type says them (maps, a tuple of maps, a constant), else None
    (a run-time count)."""
    where = _where(config, step)
    if isinstance(as_map(expect), TensorMapType):       # by value, or TensorMap.to_device()'s
        return stage_bytes(where, expect, (as_map(expect).layout,))
    maps = tuple(map(as_map, expect)) if isinstance(expect, types.BaseTuple) else ()
    if maps and all(isinstance(e, TensorMapType) for e in maps):
        return stage_bytes(where, expect, tuple(e.layout for e in maps))
    if isinstance(expect, types.IntegerLiteral):
        return stage_bytes(where, expect, (), expect.literal_value)
    if isinstance(expect, types.Integer):
        return None
    raise refuse(where, "expect", "must be a TensorMap, a tuple of them, or a byte count", expect)


def define(b: Binding) -> None:
    """The methods and attributes of ``b``'s pipeline types."""
    at, uint32, advance = b.host.at, b.host.uint32, b.host.advance
    new_ring_, new_state_ = b.new_ring, b.new_state

    def steps_of(config):
        return steps(config, b.host)

    # -- the state -------------------------------------------------------------------------------

    @b.attribute(b.state_type, "stages")
    def _stages(state):
        stages = state.stages
        return lambda state: stages

    @b.method(b.state_type, "advance")
    def _advance(state):
        return lambda state: advance(state)

    # -- the configuration -----------------------------------------------------------------------

    @b.method(b.pipeline_type, "create")
    def _create(pipe, bars):
        config = pipe.config
        if isinstance(config, TmaStorePipeline):
            raise refuse(_where(config, "create"), "self", "has no barriers to create: call its acquire(), commit() "
                         "and tail() directly", config)
        if not (isinstance(bars, types.Array) and bars.ndim == 1 and bars.dtype in (types.uint64, types.int64)):
            raise refuse(_where(config, "create"), "bars", f"must be a 1-D uint64 shared array of "
                         f"{config.barrier_count} mbarriers (SharedMemoryPlan.pipeline(name, pipeline), or "
                         "cuda.shared.array(n, numba.uint64))", bars)
        init = steps_of(config)["init"]

        def impl(pipe, bars):
            init(bars)
            return new_ring_(pipe, bars)
        return impl

    def store_step(name):
        @b.method(b.pipeline_type, name)
        def typer(pipe):
            config = pipe.config
            if not isinstance(config, TmaStorePipeline):
                raise refuse(_where(config, name), "self", f"is a {type(config).__name__}: {name}() here is a step of "
                             f"its ring ({type(config).__name__}.create(bars).{name}(state))", config)
            step = steps_of(config)[f"store_{name}"]
            return lambda pipe: step()

    for name in ("acquire", "commit", "tail"):
        store_step(name)

    @b.method(b.pipeline_type, "state")
    def _store_state(pipe):
        return lambda pipe: new_state_(pipe, uint32(0), uint32(0))

    # -- the ring --------------------------------------------------------------------------------

    @b.method(b.ring_type, "producer_state")
    def _producer_state(ring):
        return lambda ring: new_state_(ring, uint32(0), uint32(1))

    @b.method(b.ring_type, "consumer_state")
    def _consumer_state(ring):
        return lambda ring: new_state_(ring, uint32(0), uint32(0))

    @b.method(b.ring_type, "full")
    def _full(ring, state):
        _state(ring.config, "full", state)
        return lambda ring, state: at(ring.bars, state.index)

    @b.method(b.ring_type, "acquire")
    def _acquire(ring, state, expect=None):
        config = ring.config
        _state(config, "acquire", state)
        given = not isinstance(expect, (types.NoneType, types.Omitted)) and expect is not None
        if config.kind == "tma":
            if not given:
                raise refuse(_where(config, "acquire"), "expect", "is needed by a TmaPipeline: the bytes a stage "
                             "receives (a TensorMap, a tuple of them, or a count)", None)
            step = steps_of(config)["acquire"]
            nbytes = _constant_bytes(config, expect)
            if nbytes is None:
                return lambda ring, state, expect=None: step(ring.bars, state.index, state.phase, expect)
            return lambda ring, state, expect=None: step(ring.bars, state.index, state.phase, nbytes)
        if given:
            raise refuse(_where(config, "acquire"), "expect", "must be left out: an AsyncPipeline's producers arrive, "
                         "it counts no bytes", expect)
        wait_empty = steps_of(config)["wait_empty"]
        return lambda ring, state, expect=None: wait_empty(ring.bars, state.index, state.phase)

    @b.method(b.ring_type, "prime")
    def _prime(ring, state, expect):
        config = ring.config
        _only(config, "prime", ("tma",))
        _state(config, "prime", state)
        step = steps_of(config)["prime"]
        nbytes = _constant_bytes(config, expect, "prime")
        if nbytes is None:
            return lambda ring, state, expect: step(ring.bars, state.index, expect)
        return lambda ring, state, expect: step(ring.bars, state.index, nbytes)

    @b.method(b.ring_type, "load")
    def _load(ring, state, desc, tile, coords, multicast=None):
        config = ring.config
        _only(config, "load", ("tma",))
        _state(config, "load", state)
        step = steps_of(config)["load"]
        return lambda ring, state, desc, tile, coords, multicast=None: step(ring.bars, state.index, desc, tile, coords,
                                                                            multicast)

    def indexed_step(name, kinds, takes):
        """``ring.name(state)``: the step given the state's index and phase, its index, or the state."""
        @b.method(b.ring_type, name)
        def typer(ring, state):
            config = ring.config
            _only(config, name, kinds)
            _state(config, name, state)
            step = steps_of(config)[name]
            if takes == "index, phase":
                return lambda ring, state: step(ring.bars, state.index, state.phase)
            if takes == "state":
                return lambda ring, state: step(ring.bars, state)
            return lambda ring, state: step(ring.bars, state.index)

    indexed_step("wait", ("tma", "async"), "index, phase")
    indexed_step("release", ("tma", "async"), "index")
    indexed_step("tail", ("tma", "async"), "state")
    indexed_step("commit", ("async",), "index")
    indexed_step("commit_cp_async", ("async",), "index")


define(Binding(NUMBA_CUDA, PipelineType, RingType, StateType,
               lambda type_, name: overload_method(type_, name, target="cuda", prefer_literal=True),
               lambda type_, name: overload_attribute(type_, name, target="cuda"), new_ring, new_state))
