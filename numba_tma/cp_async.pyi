"""``cp.async`` (sm_80): per-thread asynchronous copies of 4, 8 or 16 bytes from global to shared
memory, completing through cp.async groups or an mbarrier — the pre-TMA way to stream tiles, and
what numba/numba#6673 asks for.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used
DeviceArray: TypeAlias = Any   # a device array in global memory (a kernel argument)

def commit_group() -> None:
    """Close the group of this thread's ``cp_async.load`` copies issued since the last commit.

    Example::

        cp_async.commit_group()

    PTX::

        cp.async.commit_group;

    Requires sm_80 or newer, PTX ISA 7.0.

    Also known as: ``cute.arch.cp_async_commit_group``.
    """


def load(dst: SharedArray, src: DeviceArray, nbytes: int, src_nbytes: int | None = None, cache: Literal['ca', 'cg'] = 'ca') -> None:
    """Copy ``nbytes`` (a constant: 4, 8 or 16) from global memory ``src`` to shared memory
    ``dst`` (both element 0, aligned to ``nbytes``) asynchronously.  ``src_nbytes`` (at most
    ``nbytes``) reads only that many bytes and fills the rest of ``dst`` with zeros — for masked
    edges.  ``cache="ca"`` caches in L1 and L2, ``"cg"`` only in L2 (16-byte copies only).
    Complete with :func:`commit_group` + :func:`wait_group`, or :func:`mbarrier_arrive`.

    Example::

        cp_async.load(tile[ty:], a[row, col:], 16, src_nbytes=16 if col < n else 0)
        cp_async.commit_group()
        cp_async.wait_all()
        cuda.syncthreads()

    PTX::

        cp.async.ca.shared.global [dst], [src], nbytes[, src_nbytes];

    Requires sm_80 or newer, PTX ISA 7.0.

    Also known as: ``tlx.async_load``, ``cute.nvgpu.cpasync.CopyG2SOp``, ``cuda::memcpy_async (per-thread)``.
    """


def mbarrier_arrive(bar: SharedArray, noinc: Literal[False, True] = False) -> None:
    """Make the barrier track this thread's cp.async copies issued so far: it receives an
    arrival when they complete.  Without ``noinc`` the arrival is added to the count the phase
    expects (so :func:`mbarrier.init`'s count need not include it); with ``noinc=True`` it counts
    toward the initialised count.

    Example::

        cp_async.load(tile[i:], a[i:], 16)
        cp_async.mbarrier_arrive(bars, noinc=True)
        mbarrier.wait(bars, 0)

    PTX::

        cp.async.mbarrier.arrive.shared::cta.b64 [bar];

    Requires sm_80 or newer, PTX ISA 7.8.

    Also known as: ``cuda::ptx::cp_async_mbarrier_arrive``.
    """


def wait_all() -> None:
    """Wait for all of this thread's cp.async copies (committed or not).

    Example::

        cp_async.wait_all()
        cuda.syncthreads()

    PTX::

        cp.async.wait_all;

    Requires sm_80 or newer, PTX ISA 7.0.

    Also known as: ``cuda::pipeline (wait all)``.
    """


def wait_group(n: int) -> None:
    """Wait until at most ``n`` (a constant, 0-7) of this thread's cp.async groups are pending.
    Other threads' copies need a ``cuda.syncthreads()`` too before they are read.

    Example::

        cp_async.wait_group(1)        # all but the newest group have landed

    PTX::

        cp.async.wait_group n;

    Requires sm_80 or newer, PTX ISA 7.0.

    Also known as: ``tlx.async_load_wait_group``, ``cute.arch.cp_async_wait_group``.
    """
