"""Warp and block synchronisation beyond ``cuda.syncthreads()``: named barriers (producer and
consumer warp groups meet without stopping the whole block) and electing one lane of a warp.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap


def elect_one() -> bool:
    """``True`` in exactly one active lane of the warp (the lowest, as the hardware elects it),
    ``False`` in the others: the lane that issues a TMA or barrier operation for its warp.  The
    active lanes are those executing it together (``activemask``), so it also works under a
    partial mask.

    Example::

        if sync.elect_one():
            tma.load(desc, tile, coords, bars)

    PTX::

        {
        .reg .b32 m;
        .reg .pred p;
        activemask.b32 m;
        elect.sync _|p, m;
        selp.u32 out, 1, 0, p;
        }

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.arch.elect_one``, ``cuda::ptx::elect_sync``.
    """


def named_barrier_arrive(barrier_id: int, nthreads: int) -> None:
    """Arrive at named barrier ``barrier_id`` without waiting (a producer signalling consumers
    that wait with :func:`named_barrier_sync` on the same id and count).

    ``barrier_id``: 0-15 (0 is the one ``cuda.syncthreads()`` uses: pick others).  ``nthreads``:
    how many threads take part, a multiple of 32 (both checked when constant); every warp taking
    part must call it with all its threads.

    Example::

        sync.named_barrier_arrive(1, 256)

    PTX::

        bar.arrive barrier_id, nthreads;

    Requires sm_70 or newer, PTX ISA 6.0.

    Also known as: ``tlx.named_barrier_arrive``, ``cute.arch.barrier_arrive``, ``cuda::ptx::barrier_arrive``.
    """


def named_barrier_sync(barrier_id: int, nthreads: int) -> None:
    """Wait at named barrier ``barrier_id`` until ``nthreads`` threads have arrived (this thread
    counts).

    ``barrier_id``: 0-15 (0 is the one ``cuda.syncthreads()`` uses: pick others).  ``nthreads``:
    how many threads take part, a multiple of 32 (both checked when constant); every warp taking
    part must call it with all its threads.

    Example::

        sync.named_barrier_sync(1, 256)       # the two consumer warp groups meet

    PTX::

        bar.sync barrier_id, nthreads;

    Requires sm_70 or newer, PTX ISA 6.0.

    Also known as: ``tlx.named_barrier_wait``, ``cute.arch.barrier``, ``cuda::ptx::barrier_sync``.
    """
