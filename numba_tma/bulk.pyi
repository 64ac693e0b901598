"""Bulk copies (``cp.async.bulk``): contiguous byte ranges between global and shared memory,
shared-to-global reductions, L2 prefetch, and the bulk async-groups that TMA stores use too.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used
DeviceArray: TypeAlias = Any   # a device array in global memory (a kernel argument)

def commit_group() -> None:
    """Close the bulk async-group of the shared -> global copies (``bulk.store``, ``tma.store``,
    reductions) this thread issued since the last commit.

    Example::

        tma.store(desc, tile, (x, y))
        bulk.commit_group()
        bulk.wait_group_read(0)

    PTX::

        cp.async.bulk.commit_group;

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.arch.cp_async_bulk_commit_group``, ``cuda::ptx::cp_async_bulk_commit_group``.
    """


def load(dst: SharedArray, src: DeviceArray, nbytes: int, bar: SharedArray, cache_hint: int | None = None, multicast: int | None = None) -> None:
    """Copy ``nbytes`` bytes from global memory (``src``, element 0) to shared memory (``dst``),
    completing on the mbarrier ``bar`` (``arrive_expect_tx(bar, nbytes)`` first).  ``multicast``: a
    16-bit mask of the cluster's CTAs that also receive the bytes (as for ``tma.load``).

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, 4096)
            bulk.load(buf, a[row], 4096, bars)        # one row of a pitched 2-D array
        mbarrier.wait(bars, 0)

    PTX::

        cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes[.multicast::cluster][.L2::cache_hint] [dst], [src], nbytes, [bar][, cta_mask][, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.nvgpu.cpasync.CopyBulkG2SOp``, ``cuda::ptx::cp_async_bulk``.
    """


def prefetch(src: DeviceArray, nbytes: int, cache_hint: int | None = None) -> None:
    """Prefetch ``nbytes`` bytes of global memory starting at ``src`` into L2.

    Example::

        bulk.prefetch(a[row + 1], 4096)

    PTX::

        cp.async.bulk.prefetch.L2.global[.L2::cache_hint] [src], nbytes[, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cuda::ptx::cp_async_bulk_prefetch``.
    """


def reduce(dst: DeviceArray, src: SharedArray, nbytes: int, op: Literal['add', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor'], cache_hint: int | None = None) -> None:
    """Reduce ``nbytes`` bytes of shared memory (``src``) into global memory (``dst``) element-wise
    with ``op`` (``add``, ``min``, ``max``, ``inc``, ``dec``, ``and``, ``or``, ``xor``), atomically
    per element; the element type is ``src``'s, checked against the op at compile time (PTX ISA:
    add on u32/s32/u64/f32/f64/f16, min/max on u32/s32/u64/s64/f16, inc/dec on u32, and/or/xor on
    32- and 64-bit integers).  Completes through the bulk async-groups.

    Example::

        bulk.reduce(totals, partial, 4096, "add")
        bulk.commit_group()

    PTX::

        cp.reduce.async.bulk.global.shared::cta.bulk_group[.L2::cache_hint].add.u32 [dst], [src], nbytes[, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cuda::ptx::cp_reduce_async_bulk``.
    """


def store(dst: DeviceArray, src: SharedArray, nbytes: int, cache_hint: int | None = None) -> None:
    """Copy ``nbytes`` bytes from shared memory (``src``) to global memory (``dst``); completes
    through the bulk async-groups (:func:`commit_group`, :func:`wait_group`).  Write ``src`` with
    ordinary stores, then ``fence.proxy_async()`` before this op reads it.

    Example::

        fence.proxy_async()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            bulk.store(out[row], buf, 4096)
            bulk.commit_group()
            bulk.wait_group(0)

    PTX::

        cp.async.bulk.global.shared::cta.bulk_group[.L2::cache_hint] [dst], [src], nbytes[, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.async_store``, ``cute.nvgpu.cpasync.CopyBulkS2GOp``, ``cuda::ptx::cp_async_bulk``.
    """


def store_bytemask(dst: DeviceArray, src: SharedArray, nbytes: int, mask: int, cache_hint: int | None = None) -> None:
    """Like :func:`store`, writing only the bytes whose bit in the 16-bit ``mask`` is set, in
    every 16-byte chunk (bit ``i`` is byte ``i`` of the chunk).

    Example::

        bulk.store_bytemask(out[row], buf, 4096, 0x0F0F)

    PTX::

        cp.async.bulk.global.shared::cta.bulk_group[.L2::cache_hint].cp_mask [dst], [src], nbytes[, policy], mask;

    Requires sm_100 or newer, PTX ISA 8.6.

    Also known as: ``cute.nvgpu.cpasync.CopyBulkS2GByteMaskOp``, ``cuda::ptx::cp_async_bulk_cp_mask``.
    """


def wait_group(n: int) -> None:
    """Wait until at most ``n`` (a constant, 0-63) of this thread's bulk async-groups are pending:
    their writes are done and visible.

    Example::

        bulk.wait_group(0)

    PTX::

        cp.async.bulk.wait_group n;

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.async_descriptor_store_wait``, ``cuda::ptx::cp_async_bulk_wait_group``.
    """


def wait_group_read(n: int) -> None:
    """Wait until at most ``n`` (a constant, 0-63) of this thread's bulk async-groups still have
    to *read* their shared-memory sources: the source buffers of the others may be overwritten.

    Example::

        bulk.wait_group_read(0)      # the tile may be refilled now

    PTX::

        cp.async.bulk.wait_group.read n;

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.arch.cp_async_bulk_wait_group(read=True)``, ``cuda::ptx::cp_async_bulk_wait_group_read``.
    """
