"""Pipelines: a ring of S shared-memory stages and its mbarriers as one checked object.

A producer fills stage ``index`` of the ring and a consumer drains it; two barriers per stage
order them: ``full[index]`` completes when the stage's data landed (the producer's arrivals and,
for TMA, its bytes), ``empty[index]`` when every consumer released it.  A :class:`PipelineState`
``(index, phase)`` says which stage and which round: it advances ``index`` and flips ``phase``
when ``index`` wraps, and runs on unbroken across persistent tiles.  Producers start at phase 1
(the phase "before" a fresh barrier, which counts as complete, so the first S acquires do not
wait); consumers at phase 0.  The anchors: CuTe DSL's ``PipelineTmaAsync`` / ``PipelineAsync`` /
``PipelineTmaStore`` with ``producer_acquire`` / ``producer_commit`` / ``consumer_wait`` /
``consumer_release`` / ``producer_tail``; TLX's and Gluon's hand-written (buffer, phase) counters.

Example::

    # fragment: a sketch: producer_thread, n and coords(k) are the kernel's (docs/pipelines.md runs three whole ones)
    LOADS = pipeline.TmaPipeline(stages=4, consumers=pipeline.warps(4))
    plan = SharedMemoryPlan().array("ring", (4, 16, 32), numba.float32).pipeline("loads", LOADS)
    carve = plan.carver()

    @cuda.jit
    def kernel(src, out):
        smem = carve()
        ring = LOADS.create(smem.loads)       # every thread: init, fence, block (or cluster) barrier
        if producer_thread:
            p = ring.producer_state()
            for k in range(n):
                ring.acquire(p, src)          # wait empty[p.index]; expect src.box_bytes on full
                tma.load(src, at(smem.ring, p.index), coords(k), ring.full(p))
                p = p.advance()
        else:
            c = ring.consumer_state()
            for k in range(n):
                ring.wait(c)                  # wait full[c.index] at c.phase
                ...                           # read at(smem.ring, c.index)
                ring.release(c)               # this warp is done with the stage
                c = c.advance()

The configuration (stages, who produces, who consumes, whether the ring spans a cluster) is a
Python object made once, outside the kernel, and used in it as a constant: its Numba type carries
it, so the barrier counts, the byte counts and the elected threads are compile-time facts, and the
ops each step emits are the ones a hand-written ring has (``tests/test_pipeline.py`` compares the
SASS).  Under the CUDA simulator the same step functions run on the simulator's ops, and misuse of
the object (a release without its wait, a stage acquired twice, more releases than the declared
consumers) is reported in the pipeline's terms: stage, round, participant.
"""

from __future__ import annotations

from ..ops import BACKEND
from .config import (AsyncPipeline, Participants, TmaPipeline, TmaStorePipeline, same_thread, threads, warpgroups,
                     warps)
from .state import PipelineState

__all__ = ["ANCHOR_NAMES", "AsyncPipeline", "Participants", "PipelineState", "TmaPipeline", "TmaStorePipeline", "same_thread",
           "threads", "warps", "warpgroups"]

#: What the anchors call this module's objects and steps (``numba_tma.catalog.find`` reads it):
#: ``{our name: (the anchors' names, what it is)}``.
ANCHOR_NAMES = {
    "pipeline.TmaPipeline": (("PipelineTmaAsync", "cutlass.pipeline", "PipelineTmaMultiConsumersAsync",
                              "tlx.alloc_barriers ring"), "a ring filled by TMA loads (full/empty barriers per stage)"),
    "pipeline.AsyncPipeline": (("PipelineAsync", "PipelineCpAsync"), "a ring filled by threads (stores or cp.async)"),
    "pipeline.TmaStorePipeline": (("PipelineTmaStore", "tma_store_wait", "tlx.async_descriptor_store_wait"),
                                  "a ring of output tiles drained by TMA stores"),
    "pipeline.PipelineState": (("PipelineState", "make_pipeline_state", "get_bufidx_phase", "gluon Counter"),
                               "(index, phase) of a ring, advance()"),
    "pipeline.threads / warps / warpgroups": (("CooperativeGroup", "Agent.Thread", "Agent.Warp"),
                                              "who takes part in one side"),
    "ring = pipeline.create(bars)": (("PipelineTmaAsync.create", "pipeline_init_arrive", "pipeline_init_wait",
                                      "make_participants"), "barriers initialised, fenced, published"),
    "ring.acquire": (("producer_acquire", "acquire_and_advance", "barrier_expect_bytes"),
                     "wait empty, expect the stage's bytes"),
    "ring.full": (("producer_get_barrier",), "the barrier a stage's TMA load completes"),
    "ring.commit": (("producer_commit",), "thread producers arrive on full"),
    "ring.wait": (("consumer_wait", "wait_and_advance", "tlx.barrier_wait"), "wait for a stage's data"),
    "ring.release": (("consumer_release", "tlx.barrier_arrive"), "hand the stage back (every source block)"),
    "ring.tail": (("producer_tail",), "drain before exit"),
}


def _define_methods():
    from . import compiled   # noqa: F401 - registers the Numba types' methods (kernels compiled by numba-cuda)


BACKEND.define_for_compiler(_define_methods)
