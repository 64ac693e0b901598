"""A pipeline's ring under the CUDA simulator: the same steps (:mod:`.steps`) on the simulator's
ops, and the checks of the object's use, reported in its terms (stage, round, participant):

* a consumer releasing a stage it did not wait for (or releasing it twice);
* a producer acquiring a stage again in the same round (its state was not advanced);
* more releases of a stage in one round than the consumers the pipeline declares;
* a stage used after release: a consumer reading a stage's tile (the bytes the copies that filled
  it wrote) after it released the stage and before it waits for the stage's next round;
* a state of another ring's stage count, a barrier array too small for the ring;
* a consumer's wait on the wrong phase (one that returns at once for a round it already consumed,
  or for the round before the first), named with the phase expected.

Raw-barrier mistakes (a wrong parity, a missing fence) stay the simulator checker's.
"""

from __future__ import annotations

from ..descriptors.tensor_map import TensorMap
from ..simulator import memory, scheduler
from ..simulator.scheduler import SimulatorError
from ..simulator.state import async_reads, enter
from .rules import refuse, stage_bytes
from .state import PipelineState


def expected_bytes(where, expect):
    """The bytes ``expect`` stands for: a ``TensorMap`` (its ``box_bytes``), a tuple of them, or an
    integer (:func:`~.rules.stage_bytes`)."""
    if isinstance(expect, TensorMap):
        return stage_bytes(where, expect, (expect.layout,))
    if isinstance(expect, tuple) and expect and all(isinstance(e, TensorMap) for e in expect):
        return stage_bytes(where, expect, tuple(e.layout for e in expect))
    if isinstance(expect, int) and not isinstance(expect, bool):
        return stage_bytes(where, expect, (), int(expect))
    raise refuse(where, "expect", "must be a TensorMap, a tuple of them, or a byte count", expect)


class _Book:
    """One block's record of one ring: releases counted per stage and phase of its round."""

    def __init__(self):
        self.releases: dict = {}


def _problem(config, text):
    thread = scheduler.current()
    return SimulatorError(f"numba_tma simulator: {scheduler.where(thread)}: {config!r}: {text}")


class SimulatedRing:
    """``config.create(bars)`` under the simulator (one per thread; the block's record is shared)."""

    def __init__(self, config, bars, steps):
        self.config, self.bars, self._steps = config, bars, steps
        self._book = memory.per_block(("pipeline", memory.address(bars)), _Book)
        self._waited: set = set()          # this thread's (index, phase) waited for, not yet released
        self._acquired: dict = {}          # this thread's index -> phase of its last acquire

    def _check(self, step, state):
        if not isinstance(state, PipelineState) or state.stages != self.config.stages:
            raise refuse(f"{type(self.config).__name__}.{step}", "state",
                         f"must be a PipelineState of this ring ({self.config.stages} stages: ring.producer_state() or "
                         "ring.consumer_state())", state)
        return int(state.index), int(state.phase)

    def producer_state(self):
        return PipelineState(self.config.stages, 0, 1)

    def consumer_state(self):
        return PipelineState(self.config.stages, 0, 0)

    def full(self, state):
        index, _ = self._check("full", state)
        return self.bars[index:]

    def _acquired_once(self, step, index, phase):
        if self._acquired.get(index) == phase:
            raise _problem(self.config, f"{step}: stage {index} acquired again in the same round (phase {phase}): "
                           "the state was not advanced since the last acquire of this stage (state = state.advance() "
                           "after each stage)")
        self._acquired[index] = phase

    def acquire(self, state, expect=None):
        index, phase = self._check("acquire", state)
        where = f"{type(self.config).__name__}.acquire"
        self._acquired_once("acquire", index, phase)
        if self.config.kind == "tma":
            if expect is None:
                raise refuse(where, "expect", "is needed by a TmaPipeline: the bytes a stage receives (a TensorMap, "
                             "a tuple of them, or a count)", expect)
            self._steps["acquire"](self.bars, index, phase, expected_bytes(where, expect))
        else:
            if expect is not None:
                raise refuse(where, "expect", "must be left out: an AsyncPipeline's producers arrive, it counts no "
                             "bytes", expect)
            self._steps["wait_empty"](self.bars, index, phase)

    def prime(self, state, expect):
        index, phase = self._check("prime", state)
        where = f"{type(self.config).__name__}.prime"
        if self.config.kind != "tma":
            raise refuse(where, "self", f"is a {type(self.config).__name__}: prime() is a step of TmaPipeline",
                         self.config)
        if index in self._acquired or phase != 1:
            raise _problem(self.config, f"prime: stage {index} (phase {phase}) is not in the ring's first round: "
                           "prime() fills a fresh ring's stages without waiting; later rounds acquire()")
        self._acquired[index] = phase
        self._steps["prime"](self.bars, index, expected_bytes(where, expect))

    def load(self, state, desc, tile, coords, multicast=None):
        index, _ = self._check("load", state)
        self._steps["load"](self.bars, index, desc, tile, coords, multicast)

    def commit(self, state):
        index, _ = self._check("commit", state)
        self._steps["commit"](self.bars, index)

    def commit_cp_async(self, state):
        index, _ = self._check("commit_cp_async", state)
        self._steps["commit_cp_async"](self.bars, index)

    def _full(self, index):
        """The block's barrier ``full[index]`` (None before the ring's init)."""
        _, block_state = enter()
        return block_state.barriers.get(memory.address(self.bars[index:]))

    def _wait_phase(self, index, phase):
        """A consumer waits for the stage's next round: a parity wait that would return at once for a
        round this thread already consumed (or for the round before the first) is a wrong phase."""
        full = self._full(index)
        if full is None or (full.phase & 1) == (phase & 1):
            return                        # it waits for the round in progress (the raw wait reports the rest)
        target, seen = full.phase - 1, full.seen.get(scheduler.current())
        expected = 0 if seen is None else seen + 1
        if target >= expected:
            return
        if target < 0:
            why, fix = ("has completed no round yet (a parity wait counts the phase before a fresh barrier's first "
                        "as complete)", "consumers start at ring.consumer_state() (phase 0); ring.producer_state() "
                        "(phase 1) is the producer's, for acquire")
        else:
            why, fix = (f"this thread already waited for its round {target}",
                        "advance the state once after each stage (state = state.advance() after ring.release(state)), "
                        "and keep it across persistent tiles")
        raise _problem(self.config, f"wait: stage {index} waited at phase {phase}, which returns at once without the "
                       f"stage's data: full[{index}] is in round {full.phase} and {why}. The phase expected is "
                       f"{expected & 1} (round {expected} of stage {index}): {fix}")

    def wait(self, state):
        index, phase = self._check("wait", state)
        self._wait_phase(index, phase)
        self._steps["wait"](self.bars, index, phase)
        self._waited.add((index, phase))
        thread = scheduler.current()
        if thread.released:
            thread.released = [r for r in thread.released if r[3] != (self, index)]

    def _filled(self, index) -> dict:
        """The stage's bytes: the ranges (start -> end) the copies completing on ``full[index]`` wrote."""
        full = self._full(index)
        return {} if full is None else full.fills

    def _not_read_by_wgmma(self, filled, index, phase):
        """A stage may not be released while this thread's wgmma ops may still read its bytes."""
        for lo, hi in async_reads(scheduler.current()).pending():
            if any(lo < end and start < hi for start, end in filled.items()):
                raise _problem(self.config, f"release: stage {index} (phase {phase}) released while a wgmma.mma_async "
                               "of this thread may still read it: wgmma.commit_group() and wgmma.wait_group(n) "
                               "covering that MMA before ring.release(state)")

    def _give_back(self, filled, index, phase):
        """The releasing thread may not read the stage's bytes again before its next wait
        (``memory.check_released``)."""
        thread = scheduler.current()
        why = (f"{self.config!r}: stage {index} (phase {phase}) was released by this thread, and its producer may "
               f"refill it at any time: read a stage between ring.wait(state) and ring.release(state)")
        thread.released = thread.released + [(lo, hi, why, (self, index)) for lo, hi in filled.items()]

    def release(self, state):
        index, phase = self._check("release", state)
        if (index, phase) not in self._waited:
            raise _problem(self.config, f"release: stage {index} (phase {phase}) released without a wait for it by "
                           "this thread (ring.wait(state) first; or it was released twice)")
        self._waited.discard((index, phase))
        consumers = self.config.consumers
        counted = consumers.kind == "thread" or (consumers.kind != "same_thread"        # one count per warp
                                                 and scheduler.current().thread_id % 32 == 0)
        if counted:
            releases = self._book.releases
            releases[index, 1 - phase] = 0          # that round's releases all came before this one's wait
            count = releases.get((index, phase), 0) + 1
            if count > consumers.arrivals and not self.config.cluster:
                raise _problem(self.config, f"release: stage {index} (phase {phase}) released by {count} consumer "
                               f"participants in one round; the pipeline declares consumers={consumers} "
                               f"({consumers.arrivals} arrivals)")
            releases[index, phase] = count
        filled = self._filled(index)
        self._not_read_by_wgmma(filled, index, phase)
        self._steps["release"](self.bars, index)
        self._give_back(filled, index, phase)

    def tail(self, state):
        self._check("tail", state)
        self._steps["tail"](self.bars, state)


def bind_ring(config, bars, steps):
    """``config.create(bars)``: the ring's barriers initialised (by the block's first thread),
    fenced and published (block or cluster barrier), bound to ``bars``."""
    if not isinstance(bars, memory.SharedArray) or bars.dtype.itemsize != 8 or bars.ndim != 1:
        raise refuse(f"{type(config).__name__}.create", "bars",
                     f"must be a 1-D uint64 shared array of {config.barrier_count} mbarriers "
                     "(SharedMemoryPlan.pipeline(name, pipeline), or cuda.shared.array(n, numba.uint64))", bars)
    if bars.size < config.barrier_count:
        raise refuse(f"{type(config).__name__}.create", "bars",
                     f"must hold the ring's {config.barrier_count} mbarriers (full and empty for {config.stages} "
                     f"stages); it holds {bars.size}", memory.name(bars))
    steps["init"](bars)
    return SimulatedRing(config, bars, steps)
