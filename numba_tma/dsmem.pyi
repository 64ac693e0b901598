"""Distributed shared memory (sm_90): asynchronous stores, reductions and bulk copies into the
shared memory of another block of the cluster, each completing on an mbarrier *in that block*.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used

def copy_async(dst: SharedArray, src: SharedArray, nbytes: int, bar: SharedArray, cta_rank: int) -> None:
    """Copy ``nbytes`` (a multiple of 16; both addresses 16-byte aligned) from this block's
    ``src`` into block ``cta_rank``'s copy of ``dst``, completing on that block's barrier at
    ``bar``'s offset.  ``src`` written with ordinary stores needs ``fence.proxy_async()`` first.

    Example::

        fence.proxy_async()
        dsmem.copy_async(at(ring, slot), tile, 8192, at(full, slot), (rank + 1) % n)

    PTX::

        {
        .reg .b32 remote_dst, remote_bar;
        mapa.shared::cluster.u32 remote_dst, dst, cta_rank;
        mapa.shared::cluster.u32 remote_bar, bar, cta_rank;
        cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [remote_dst], [src], nbytes, [remote_bar];
        }

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.async_remote_shmem_copy``, ``cute.nvgpu.cpasync.CopyBulkS2SOp``, ``cuda::ptx::cp_async_bulk (shared::cluster.shared::cta)``.
    """


def reduce_async(dst: SharedArray, value: int | float | tuple[int | float, ...], bar: SharedArray, cta_rank: int, op: Literal['add', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor']) -> None:
    """Reduce ``value`` into block ``cta_rank``'s copy of ``dst`` with ``op`` (``add``, ``min``,
    ``max``, ``inc``, ``dec``, ``and``, ``or``, ``xor``; relaxed, cluster scope) and signal that
    block's barrier at ``bar``'s offset with the element's bytes.  The element type is ``dst``'s,
    checked against the op (PTX ISA: add on uint32/int32/uint64 (int64 adds as uint64), min/max on
    uint32/int32, inc/dec on uint32, and/or/xor on 32-bit integers).

    Example::

        dsmem.reduce_async(at(counts, bucket), 1, bars, owner, op="add")

    PTX::

        {
        .reg .b32 remote_dst, remote_bar;
        mapa.shared::cluster.u32 remote_dst, dst, cta_rank;
        mapa.shared::cluster.u32 remote_bar, bar, cta_rank;
        red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [remote_dst], value, [remote_bar];
        }

    Requires sm_90 or newer, PTX ISA 8.1.

    Also known as: ``cuda::ptx::red_async``.
    """


def reduce_copy_async(dst: SharedArray, src: SharedArray, nbytes: int, bar: SharedArray, cta_rank: int, op: Literal['add', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor']) -> None:
    """Reduce ``nbytes`` of this block's ``src`` element-wise into block ``cta_rank``'s copy of
    ``dst`` with ``op``, completing on that block's barrier at ``bar``'s offset.  The element type
    is ``src``'s (``dst`` must hold the same), checked against the op (add on uint32/int32/uint64,
    min/max on uint32/int32, inc/dec on uint32, and/or/xor on 32-bit integers).

    Example::

        dsmem.reduce_copy_async(totals, partial, 4096, bars, 0, op="add")   # into block 0

    PTX::

        {
        .reg .b32 remote_dst, remote_bar;
        mapa.shared::cluster.u32 remote_dst, dst, cta_rank;
        mapa.shared::cluster.u32 remote_bar, bar, cta_rank;
        cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [remote_dst], [src], nbytes, [remote_bar];
        }

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cuda::ptx::cp_reduce_async_bulk (shared::cluster.shared::cta)``.
    """


def store_async(dst: SharedArray, value: int | float | tuple[int | float, ...], bar: SharedArray, cta_rank: int) -> None:
    """Store ``value`` into block ``cta_rank``'s copy of ``dst`` (the same offset in its shared
    memory) and signal that block's barrier at ``bar``'s offset with the bytes stored.  ``value``
    is a number or a tuple of 2 or 4, converted to ``dst``'s element type (32 or 64 bits; at most
    128 bits in all: a 4-tuple needs 32-bit elements).  The address must be aligned to the bytes
    stored (16 for a 4 x 32-bit tuple).

    Example::

        # every block sends its partial sums to block 0's inbox, slot = its rank
        dsmem.store_async(at(inbox, 4 * rank), (s0, s1, s2, s3), at(bars, 0), 0)

    PTX::

        {
        .reg .b32 remote_dst, remote_bar;
        mapa.shared::cluster.u32 remote_dst, dst, cta_rank;
        mapa.shared::cluster.u32 remote_bar, bar, cta_rank;
        st.async.shared::cluster.mbarrier::complete_tx::bytes[.v2|.v4].b32 [remote_dst], value, [remote_bar];
        }

    Requires sm_90 or newer, PTX ISA 8.1.

    Also known as: ``tlx.async_remote_shmem_store``, ``cute.arch.store_async_dsmem``, ``cute.nvgpu.CopyDsmemStoreOp``, ``cuda::ptx::st_async``.
    """
