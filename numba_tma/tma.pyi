"""TMA: tensor copies between global memory and shared memory (``cp.async.bulk.tensor``).
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

from numba_tma.bulk import commit_group as commit_group
from numba_tma.bulk import wait_group as wait_group
from numba_tma.bulk import wait_group_read as wait_group_read

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used
DeviceArray: TypeAlias = Any   # a device array in global memory (a kernel argument)

def gather4(desc: TensorMap | DeviceArray, dst: SharedArray, col: int, rows: tuple[int, ...], bar: SharedArray) -> None:
    """Load four rows of a 2-D tensor (one box-width each) into shared memory, one after the other.

    ``desc``: a tiled 2-D map whose box is one row, ``(1, columns)`` (``numba_tma.descriptors.
    check_gather4`` checks a descriptor on the host).  ``col``: the first column; ``rows``: four row
    indices (any order, any rows).

    Example::

        mbarrier.arrive_expect_tx(bars, 4 * desc.box_bytes)
        tma.gather4(desc, rows_tile, col0, (r0, r1, r2, r3), bars)

    PTX::

        cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes [dst], [desc, {col, r0, r1, r2, r3}], [bar];

    Requires sm_100a or newer, PTX ISA 8.6.

    Also known as: ``tl descriptor.gather``, ``cuda::ptx::cp_async_bulk_tensor_tile_gather4``.
    """


def load(desc: TensorMap | DeviceArray, dst: SharedArray, coords: tuple[int, ...], bar: SharedArray, cache_hint: int | None = None, multicast: int | None = None, dst_space: Literal['cluster', 'cta'] = 'cluster', cta_group: Literal[1, 2] = 1) -> None:
    """Copy one box of a tensor from global memory into shared memory with TMA (tile mode).

    ``desc``: a :class:`numba_tma.TensorMap` (by value) or the 128 bytes in a ``uint8`` device array
    (that form needs PTX ISA 8.3 for its ``fence.proxy.tensormap`` acquire, shown first below;
    ``desc.to_device()``'s is typed by the map's layout and checked as the by-value map).
    ``dst``: C-contiguous shared array receiving the box, of any dtype of the map's element width
    (its element 0 is the box's first element; TMA needs it 128-byte aligned:
    ``cuda.shared.array(shape, dtype, alignment=128)``, 1024 for 128B swizzle).  Its byte size is
    not checked: make it at least ``desc.box_bytes``.
    ``coords``: int32 element offsets, **innermost dimension first** (for a C-ordered 2-D array
    ``a[row, col]``: ``(col, row)``); its length is the tensor map's rank.  ``coords[0]`` times the
    element size must be a multiple of 16 bytes.
    ``bar``: the mbarrier (uint64 shared array, element 0) that receives the byte count.
    ``cache_hint``: an L2 policy from ``cache.policy(...)``.  ``multicast``: a 16-bit mask of the
    cluster's CTAs (bit ``r`` for rank ``r``) whose shared memory also receives the box, at the same
    offset, each signalling its own barrier at ``bar``'s offset (a constant mask outside 16 bits is
    refused; masks for the usual shapes: ``numba_tma.cluster.mask_*``).  ``dst_space="cta"`` names the
    destination in the CTA's own window (PTX ISA 8.6); ``cta_group=2`` (sm_100a) lets either CTA
    of a pair signal the barrier.
    Issue from one thread, after ``mbarrier.arrive_expect_tx(bar, desc.box_bytes)``.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (x0, y0), bars)
        mbarrier.wait(bars, 0)

    PTX::

        fence.proxy.tensormap::generic.acquire.sys [desc], 128;
        cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes[.multicast::cluster][.L2::cache_hint] [dst], [desc, {c0, c1}], [bar][, cta_mask][, policy];

    Requires sm_90 or newer, PTX ISA 8.0.
    With ``dst_space='cta'``: sm_90 or newer, PTX ISA 8.6.
    With ``cta_group=2``: sm_100a or newer, PTX ISA 8.6.

    Also known as: ``tlx.async_descriptor_load``, ``cute.nvgpu.cpasync.CopyBulkTensorTileG2SOp``, ``cuda::ptx::cp_async_bulk_tensor``.
    """


def load_im2col(desc: TensorMap | DeviceArray, dst: SharedArray, coords: tuple[int, ...], offsets: tuple[int, ...], bar: SharedArray, cache_hint: int | None = None, multicast: int | None = None) -> None:
    """Gather ``pixels_per_column`` pixels x ``channels_per_pixel`` channels of an N(D)(H)WC tensor
    into shared memory (im2col mode, for convolutions), from a :meth:`TensorMap.im2col` map.

    ``desc``, ``dst`` and ``bar`` as for :func:`load`.  ``coords`` (3-5 entries: C, W, (H, (D,)) N)
    give the first pixel; ``offsets`` (one per spatial dimension, W first) shift the filter tap
    inside the pixel box: each is 16 bits wide for a 3-D map, 8 bits for 4-D and 5 bits for 5-D
    (constants outside are refused at compile time).  The first pixel must lie inside the
    bounding box, ``lower corner <= coordinate <= size - 1 + upper corner`` in each spatial
    dimension: on the H200 a start outside it ends the kernel with an illegal instruction (the
    simulator reports it).

    Example::

        tma.load_im2col(desc, block, (c0, w0, h0, n0), (dw, dh), bars)

    PTX::

        cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes[.multicast::cluster][.L2::cache_hint] [dst], [desc, {c, w, h, n}], [bar], {ow, oh}[, cta_mask][, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.async_descriptor_load (im2col)``, ``cute.nvgpu.cpasync.CopyBulkTensorIm2ColG2SOp``, ``cuda::ptx::cp_async_bulk_tensor (im2col)``.
    """


def prefetch(desc: TensorMap | DeviceArray, coords: tuple[int, ...], cache_hint: int | None = None) -> None:
    """Prefetch the box at ``coords`` of a tiled map into L2 (no shared memory, no barrier).

    Example::

        tma.prefetch(desc, (x0 + 64, y0))       # the next tile

    PTX::

        cp.async.bulk.prefetch.tensor.2d.L2.global.tile[.L2::cache_hint] [desc, {c0, c1}][, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.async_descriptor_prefetch_tensor``, ``cute.prefetch``.
    """


def prefetch_descriptor(desc: TensorMap | DeviceArray) -> None:
    """Prefetch the descriptor itself (its 128 bytes) into the cache TMA reads it from; issue it
    early in the kernel, before the first copy.

    Example::

        if cuda.threadIdx.x == 0:
            tma.prefetch_descriptor(desc)

    PTX::

        prefetch.tensormap [desc];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tl.prefetch(..., tensormap=True)``, ``cute.nvgpu.cpasync.prefetch_descriptor``, ``cuda::ptx::prefetch_tensormap``.
    """


def prefetch_im2col(desc: TensorMap | DeviceArray, coords: tuple[int, ...], offsets: tuple[int, ...], cache_hint: int | None = None) -> None:
    """Prefetch the pixels an im2col load at ``coords`` / ``offsets`` would gather into L2.

    Example::

        tma.prefetch_im2col(desc, (c0, w0, h0, n0), (dw, dh))

    PTX::

        cp.async.bulk.prefetch.tensor.4d.L2.global.im2col[.L2::cache_hint] [desc, {c, w, h, n}], {ow, oh}[, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.async_descriptor_prefetch_tensor (im2col)``.
    """


def reduce(desc: TensorMap | DeviceArray, src: SharedArray, coords: tuple[int, ...], op: Literal['add', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor'], cache_hint: int | None = None, allow_overrun: Literal[False, True] = False) -> None:
    """Reduce one box of shared memory into a tensor in global memory with TMA: each element of
    the tensor becomes ``op(element, box element)``, atomically per element.  ``op``: ``add``,
    ``min``, ``max``, ``inc``, ``dec``, ``and``, ``or``, ``xor``; the map's data type must be one
    the op takes (PTX ISA: add on u32/s32/u64/f32/f16/bf16, min/max on u32/s32/u64/s64/f16/bf16,
    inc/dec on u32, and/or/xor on u32/s32/u64 — s64 kills the kernel on the H200), checked at
    compile time for a by-value map.

    ``desc``: a :class:`numba_tma.TensorMap` (by value; tiled or im2col, the mode is the map's) or
    the 128 bytes of a tiled map in a ``uint8`` device array (``desc.to_device()``: checked as the
    map; bytes of your own: checked on the device).  ``src``: the C-contiguous shared
    array holding the box (any dtype of the map's element width), written with ordinary stores and
    then made visible to TMA with ``fence.proxy_async()`` + ``cuda.syncthreads()``.  ``coords``:
    the box's first element, innermost first; parts of the box past the tensor's far edges are
    not written, but a box must not start *before* the tensor (negative coordinates kill the
    kernel on the H200 with ``CUDA_ERROR_ILLEGAL_INSTRUCTION``, measured for ranks 1-5; a constant
    negative ``coords[0]`` is refused at compile time).
    **The 16-byte edge**: along dimension 0 the write goes on past the tensor's end to the next
    16-byte boundary of each row it crosses (measured on the H200: a float32 tensor 59 wide gets
    element 59 written; 62 wide, 62 and 63).  A map whose rows are not whole 16-byte chunks
    (``desc.store_overrun > 0``), by value or ``desc.to_device()``, is refused at compile time unless
    it was built with ``allow_store_overrun=True`` or the call passes ``allow_overrun=True`` (the
    bytes are yours); descriptor bytes of your own in a plain ``uint8`` array are checked by debug
    mode and the simulator (``docs/troubleshooting.md``).
    Completes through the bulk async-groups: ``commit_group()``, then ``wait_group_read(n)`` before
    reusing ``src`` or ``wait_group(n)`` before reading the result.

    Example::

        tma.reduce(desc, partial, (x0, y0), "add")
        tma.commit_group()

    PTX::

        cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group[.L2::cache_hint] [desc, {c0, c1}], [src][, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.async_descriptor_store(store_reduce=...)``, ``cute.nvgpu.cpasync.CopyReduceBulkTensorTileS2GOp``, ``cuda::ptx::cp_reduce_async_bulk_tensor``.
    """


def scatter4(desc: TensorMap | DeviceArray, src: SharedArray, col: int, rows: tuple[int, ...], allow_overrun: Literal[False, True] = False) -> None:
    """Store four rows of shared memory to four rows of a 2-D tensor; completes through the bulk
    async-groups.  The 16-byte edge and its opt-in (``allow_overrun``) are as for :func:`store`
    (assumed: the H200 has no scatter4 to measure it on).

    ``desc``: a tiled 2-D map whose box is one row, ``(1, columns)`` (``numba_tma.descriptors.
    check_gather4`` checks a descriptor on the host).  ``col``: the first column; ``rows``: four row
    indices (any order, any rows).

    Example::

        tma.scatter4(desc, rows_tile, col0, (r0, r1, r2, r3))
        tma.commit_group()

    PTX::

        cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [desc, {col, r0, r1, r2, r3}], [src];

    Requires sm_100a or newer, PTX ISA 8.6.

    Also known as: ``tl descriptor.scatter``, ``cuda::ptx::cp_async_bulk_tensor_tile_scatter4``.
    """


def store(desc: TensorMap | DeviceArray, src: SharedArray, coords: tuple[int, ...], cache_hint: int | None = None, allow_overrun: Literal[False, True] = False) -> None:
    """Copy one box from shared memory to a tensor in global memory with TMA.

    ``desc``: a :class:`numba_tma.TensorMap` (by value; tiled or im2col, the mode is the map's) or
    the 128 bytes of a tiled map in a ``uint8`` device array (``desc.to_device()``: checked as the
    map; bytes of your own: checked on the device).  ``src``: the C-contiguous shared
    array holding the box (any dtype of the map's element width), written with ordinary stores and
    then made visible to TMA with ``fence.proxy_async()`` + ``cuda.syncthreads()``.  ``coords``:
    the box's first element, innermost first; parts of the box past the tensor's far edges are
    not written, but a box must not start *before* the tensor (negative coordinates kill the
    kernel on the H200 with ``CUDA_ERROR_ILLEGAL_INSTRUCTION``, measured for ranks 1-5; a constant
    negative ``coords[0]`` is refused at compile time).
    **The 16-byte edge**: along dimension 0 the write goes on past the tensor's end to the next
    16-byte boundary of each row it crosses (measured on the H200: a float32 tensor 59 wide gets
    element 59 written; 62 wide, 62 and 63).  A map whose rows are not whole 16-byte chunks
    (``desc.store_overrun > 0``), by value or ``desc.to_device()``, is refused at compile time unless
    it was built with ``allow_store_overrun=True`` or the call passes ``allow_overrun=True`` (the
    bytes are yours); descriptor bytes of your own in a plain ``uint8`` array are checked by debug
    mode and the simulator (``docs/troubleshooting.md``).
    Completes through the bulk async-groups: ``commit_group()``, then ``wait_group_read(n)`` before
    reusing ``src`` or ``wait_group(n)`` before reading the result.

    Example::

        tile[ty, tx] = value
        fence.proxy_async()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            tma.store(desc, tile, (x0, y0))
            tma.commit_group()
            tma.wait_group(0)

    PTX::

        cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group[.L2::cache_hint] [desc, {c0, c1}], [src][, policy];

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``tlx.async_descriptor_store``, ``cute.nvgpu.cpasync.CopyBulkTensorTileS2GOp``, ``cuda::ptx::cp_async_bulk_tensor (global <- shared::cta)``.
    """


def swizzled_index(desc: TensorMap | DeviceArray, r: int, c: int) -> int:
    """Where element ``(r, c)`` of a box lands in the shared-memory tile TMA fills (or reads, for a
    store) with the map's swizzle: the flat element index into the tile.  ``c`` is the innermost
    index (0 to ``box[-1] - 1``), ``r`` the outer indices flattened (``r = i0`` for a 2-D box; for
    3-D ``r = i0 * box[1] + i1``).  With a swizzle, rows lie the swizzle span apart (32, 64 or 128
    bytes, even when the box row is narrower: measured on the H200) and the 16-byte chunk of each
    byte offset is XORed with bits 7-9 of that offset (32B: one bit, 64B: two, 128B: three; 128B
    swizzle tiles must be 1024-byte aligned, 64B 512, 32B 256); without swizzle it is
    ``r * box[-1] + c``.  Compiles to integer
    arithmetic that ptxas folds for constant indices.

    Example::

        tile = cuda.shared.array(64 * 64, numba.uint16, alignment=1024)    # bf16, 128B swizzle
        v = tile[tma.swizzled_index(desc, r, c)]

    PTX::

        {
        .reg .b32 o, t;
        mad.lo.u32 o, r, span / element bytes (box[-1] without swizzle), c;
        shl.b32 o, o, log2(element bytes);
        shr.u32 t, o, 7;
        and.b32 t, t, 0|1|3|7;
        shl.b32 t, t, 4;
        xor.b32 o, o, t;
        shr.u32 out, o, log2(element bytes);
        }

    Requires sm_80 or newer, PTX ISA 7.0.

    Also known as: ``cute.make_swizzle / Swizzle<B, 4, 3>``.
    """
