"""Blackwell's fifth-generation tensor cores (``tcgen05``, sm_100a): an MMA issued by one thread
that multiplies shared-memory tiles (named by matrix descriptors) into an accumulator held in
**tensor memory** (TMEM: 128 lanes x 512 columns of 32-bit cells per CTA), which warps then read
into registers.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used

def alloc(dst: SharedArray, ncols: int, cta_group: Literal[1, 2] = 1) -> None:
    """Allocate ``ncols`` columns of tensor memory (a power of 2 from 32 to 512, all 128 lanes)
    and write their 32-bit tensor-memory address into ``dst[0]`` (shared memory).  A whole warp
    calls it (``.sync.aligned``); it waits until the columns are free.  ``cta_group=2``: the
    columns are allocated in this CTA and its peer (the CTA pair of a cluster).  Free them with
    :func:`dealloc` before the kernel exits.

    Example::

        if warp == 0:
            tcgen05.alloc(tmem, 128)

    PTX::

        tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], ncols;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``tlx.local_alloc(..., tlx.storage_kind.tmem)``, ``cute.arch.alloc_tmem``, ``cuda::ptx::tcgen05_alloc``.
    """


def commit(bar: SharedArray, multicast: int | None = None, cta_group: Literal[1, 2] = 1) -> None:
    """Make the mbarrier ``bar`` track this thread's earlier asynchronous tcgen05 operations
    (MMAs, ``cp``): one arrival on it once they are complete.  ``multicast`` (a 16-bit mask of
    the cluster's CTAs): the arrival is on the barrier at the same offset in each of those CTAs.
    Call it from the thread that issued them.

    Example::

        tcgen05.commit(done)                      # then mbarrier.wait(done, phase)
        tcgen05.commit(empty, cluster.mask_all(cluster.nctarank()))   # every block of the cluster

    PTX::

        tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster[.multicast::cluster].b64 [bar][, cta_mask];

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``tlx.tcgen05_commit``, ``gluon blackwell.tcgen05_commit``, ``cute.nvgpu.tcgen05.commit``, ``cuda::ptx::tcgen05_commit``, ``umma_arrive``.
    """


def cp(taddr: int, sdesc: int, shape: Literal['128x256b', '128x128b', '4x256b', '64x128b.warpx2::02_13', '64x128b.warpx2::01_23', '32x128b.warpx4'] = '128x256b', cta_group: Literal[1, 2] = 1) -> None:
    """Copy a matrix from shared memory (named by the descriptor ``sdesc``, :func:`descriptor`)
    into tensor memory at ``taddr``, asynchronously, issued by one thread: ``shape`` (lanes x bits
    per lane) ``128x256b``, ``128x128b``, ``4x256b``, or the multicast forms ``64x128b.warpx2::02_13``
    / ``64x128b.warpx2::01_23`` (to the warp pairs 0-2 and 1-3, or 0-1 and 2-3, half each) and
    ``32x128b.warpx4`` (to all four warps' lanes).  Complete when the mbarrier of a later
    :func:`commit` completes its phase (and ordered before later MMAs of the same thread).

    Example::

        tcgen05.cp(tmem[0] + 256, tcgen05.descriptor(at(scales, s), desc_s, 0, 0))

    PTX::

        tcgen05.cp.cta_group::1.128x256b [taddr], sdesc;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cute.nvgpu.tcgen05.Cp128x256bOp``, ``cuda::ptx::tcgen05_cp_128x256b``, ``SM100_UTCCP_128dp256bit_1cta``.
    """


def dealloc(taddr: int, ncols: int, cta_group: Literal[1, 2] = 1) -> None:
    """Free the ``ncols`` tensor-memory columns from ``taddr`` (what :func:`alloc` returned).
    A whole warp calls it, with the ``cta_group`` of the allocation; every ``tcgen05.ld`` / ``st``
    / MMA on the columns must be complete (``wait_ld``, ``wait_st``, the MMA's commit waited for).

    Example::

        tcgen05.dealloc(tmem[0], 128)

    PTX::

        tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cute.arch.dealloc_tmem``, ``cuda::ptx::tcgen05_dealloc``.
    """


def descriptor(tile: SharedArray, desc: TensorMap, k: int, row: int) -> int:
    """The 64-bit sm_100 shared-memory matrix descriptor of a K-major ``tcgen05.mma`` (or
    ``tcgen05.cp``) operand: the tile ``tile`` (``at(ring, s)``) filled by the map ``desc``, from
    its ``row``-th row (a multiple of 8), at K step ``k`` (32 bytes: 16 bf16, 8 tf32 or 32 8-bit
    elements, inside the swizzle span).  As ``wgmma.descriptor`` (the same start address, leading
    offset 1 and 8-row stride, from the map's swizzle and box), with sm_100's fields: bits 46-48
    the fixed ``0b001``, base offset 0 and the swizzle mode of bits 61-63 (2: 128B, 4: 64B, 6: 32B).
    The map's box rows must be one swizzle span (bf16 with ``"128B"``: box ``(rows, 64)``), the
    tile aligned to its 8-row atom (1024 bytes for ``"128B"``).

    Example::

        a = tcgen05.descriptor(at(tiles_a, s), desc_a, k, 0)

    PTX::

        {
        .reg .b32 a, lo, hi;
        mad.lo.u32 a, row, ROW_BYTES, tile;
        mad.lo.u32 a, k, 32, a;
        shr.u32 a, a, 4;
        and.b32 a, a, 0x3fff;
        or.b32 lo, a, 0x10000;
        mov.b32 hi, SBO>>4 | 1<<14 | SWIZZLE<<29;
        mov.b64 out, {lo, hi};
        }

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cute.nvgpu.tcgen05.make_umma_smem_desc``, ``cute::UMMA::SmemDescriptor``.
    """


def fence_after_thread_sync() -> None:
    """Order the thread synchronisation before it (``cuda.syncthreads()``, an mbarrier wait)
    before this thread's later asynchronous tcgen05 operations: e.g. the MMA that reads what
    another thread's ``st`` wrote, or the ``ld`` of an accumulator whose commit was waited for.

    Example::

        mbarrier.wait(done, phase)
        tcgen05.fence_after_thread_sync()

    PTX::

        tcgen05.fence::after_thread_sync;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cuda::ptx::tcgen05_fence_after_thread_sync``.
    """


def fence_before_thread_sync() -> None:
    """Order this thread's earlier asynchronous tcgen05 operations before the thread
    synchronisation that follows (``cuda.syncthreads()``, an mbarrier arrive): what another
    thread does after that synchronisation sees them issued.

    Example::

        tcgen05.fence_before_thread_sync()
        cuda.syncthreads()

    PTX::

        tcgen05.fence::before_thread_sync;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cuda::ptx::tcgen05_fence_before_thread_sync``.
    """


def idesc(m: int, n: int, dtype: Literal['f16', 'bf16', 'tf32', 'e4m3', 'e5m2', 'e4m3.e5m2', 'e5m2.e4m3', 'e2m3', 'e3m2', 'e2m1', 'u8', 's8', 'u8.s8', 's8.u8'] = 'bf16', trans_a: Literal[False, True] = False, trans_b: Literal[False, True] = False, negate_a: Literal[False, True] = False, negate_b: Literal[False, True] = False, cta_group: Literal[1, 2] = 1) -> int:
    """The 32-bit instruction descriptor of a dense ``tcgen05.mma`` (PTX ISA Table 42) of an
    ``m`` x ``n`` accumulator (compile-time constants: ``m`` 64 or 128, ``n`` 8 to 256 in steps of
    8, with ``cta_group=1``; ``m`` 128 or 256, ``n`` in steps of 16 with ``cta_group=2``; the
    integer shapes of the ISA's Table 39) and ``dtype`` (A.B: ``f16``, ``bf16`` (kind ``f16``),
    ``tf32``, ``e4m3``, ``e5m2``, ``e4m3.e5m2``, ``e5m2.e4m3``, ``e2m3``, ``e3m2``, ``e2m1``
    (kind ``f8f6f4``), ``u8``, ``s8``, ``u8.s8``, ``s8.u8`` (kind ``i8``)); the accumulator is
    float32 (int32 for the integer types).  ``trans_a`` / ``trans_b``: A / B MN-major;
    ``negate_a`` / ``negate_b``: negated (float types).  ``cta_group`` only selects the shape
    rules: pass the MMA's.  The MMA's ``kind`` must be the dtype's.

    Example::

        tcgen05.mma(tmem[0], a, b, tcgen05.idesc(128, 256, dtype="bf16"), 1)

    PTX::

        mov.b32 out, IDESC;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cute::UMMA::make_instr_desc``, ``cute::UMMA::InstrDescriptor``.
    """


def ld(taddr: int, num: Literal[1, 2, 4, 8, 16, 32, 64, 128], shape: Literal['32x32b', '16x64b', '16x128b', '16x256b'] = '32x32b') -> tuple:
    """Load from tensor memory at ``taddr`` into registers, collectively for the warp
    (``.sync.aligned``): ``shape`` (lanes x bits: ``32x32b``, ``16x64b``, ``16x128b``,
    ``16x256b``) repeated ``num`` times along the columns (a constant 1 to 128); returns the
    thread's ``num`` x (1, 1, 2 or 4) 32-bit registers as a tuple of uint32 (float32 bits:
    ``cuda.libdevice.int_as_float``).  With ``32x32b``, thread ``l`` of the warp gets lane
    ``l`` of the warp's 32 (``taddr``'s lane), columns ``col`` to ``col + num - 1``.  The
    registers are valid after :func:`wait_ld`.

    Example::

        acc = tcgen05.ld(tmem[0] + ((32 * (warp % 4)) << 16), 32)   # 32 columns of this warp's lanes
        tcgen05.wait_ld()

    PTX::

        tcgen05.ld.sync.aligned.32x32b.x1.b32 {out}, [taddr];

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``tlx.local_load``, ``cute.nvgpu.tcgen05.Ld32x32bOp``, ``cuda::ptx::tcgen05_ld_32x32b``, ``SM100_TMEM_LOAD_32dp32b1x``.
    """


def mma(d_tmem: int, a_desc: int, b_desc: int, idesc: int, enable_input_d: int, kind: Literal['f16', 'tf32', 'f8f6f4', 'i8'] = 'f16', cta_group: Literal[1, 2] = 1) -> None:
    """``D = A @ B + D`` (``D = A @ B`` where ``enable_input_d`` is 0, a run-time value),
    issued asynchronously by **one thread**: D is the M x N accumulator in tensor memory at
    ``d_tmem``, A (M x K, K-major) the shared-memory tile named by the descriptor ``a_desc``, B (K x N, K-major) the shared-memory tile named by ``b_desc``
    (:func:`descriptor`), ``idesc`` the instruction descriptor (:func:`idesc`: M, N, the types,
    transposes) of the ``kind`` (``f16`` for f16 / bf16, ``tf32``, ``f8f6f4`` for the 8-, 6- and
    4-bit float types, ``i8``).  K is 32 bytes of each row.  The MMA is complete when the
    mbarrier of a later :func:`commit` completes its phase; ``cta_group=2``: the MMA of a CTA
    pair (M split between the pair's tensor memories).

    Example::

        tcgen05.mma(tmem[0], a, b, tcgen05.idesc(128, 256), k)     # bf16 x bf16 -> f32

    PTX::

        {
        .reg .pred p;
        setp.ne.b32 p, enable_input_d, 0;
        tcgen05.mma.cta_group::1.kind::f16 [d_tmem], a_desc, b_desc, idesc, p;
        }

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.
    With ``kind='i8'``: sm_100a up to (excluding) sm_103, PTX ISA 8.6.

    Also known as: ``tlx.async_dot``, ``gluon blackwell.tcgen05_mma``, ``cute.nvgpu.tcgen05.MmaF16BF16Op``, ``cuda::ptx::tcgen05_mma``, ``SM100_MMA_F16BF16_SS``.
    """


def mma_tmem_a(d_tmem: int, a_tmem: int, b_desc: int, idesc: int, enable_input_d: int, kind: Literal['f16', 'tf32', 'f8f6f4', 'i8'] = 'f16', cta_group: Literal[1, 2] = 1) -> None:
    """``D = A @ B + D`` (``D = A @ B`` where ``enable_input_d`` is 0, a run-time value),
    issued asynchronously by **one thread**: D is the M x N accumulator in tensor memory at
    ``d_tmem``, A (M x K) in tensor memory at ``a_tmem`` (written by :func:`st` or :func:`cp`), B (K x N, K-major) the shared-memory tile named by ``b_desc``
    (:func:`descriptor`), ``idesc`` the instruction descriptor (:func:`idesc`: M, N, the types,
    transposes) of the ``kind`` (``f16`` for f16 / bf16, ``tf32``, ``f8f6f4`` for the 8-, 6- and
    4-bit float types, ``i8``).  K is 32 bytes of each row.  The MMA is complete when the
    mbarrier of a later :func:`commit` completes its phase; ``cta_group=2``: the MMA of a CTA
    pair (M split between the pair's tensor memories).

    Example::

        tcgen05.mma_tmem_a(tmem[0], tmem[0] + 256, b, tcgen05.idesc(128, 256), 1)

    PTX::

        {
        .reg .pred p;
        setp.ne.b32 p, enable_input_d, 0;
        tcgen05.mma.cta_group::1.kind::f16 [d_tmem], [a_tmem], b_desc, idesc, p;
        }

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.
    With ``kind='i8'``: sm_100a up to (excluding) sm_103, PTX ISA 8.6.

    Also known as: ``tlx.async_dot``, ``cuda::ptx::tcgen05_mma``, ``SM100_MMA_F16BF16_TS``.
    """


def relinquish_alloc_permit(cta_group: Literal[1, 2] = 1) -> None:
    """Give up this CTA's right to allocate tensor memory (after its last :func:`alloc`), so a
    CTA waiting to be scheduled on the SM may allocate as soon as the columns are freed.  A whole
    warp calls it.

    Example::

        tcgen05.relinquish_alloc_permit()

    PTX::

        tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cute.arch.relinquish_tmem_alloc_permit``, ``cuda::ptx::tcgen05_relinquish_alloc_permit``.
    """


def st(taddr: int, values: tuple[int | float, ...], shape: Literal['32x32b', '16x64b', '16x128b', '16x256b'] = '32x32b') -> None:
    """Store the thread's registers ``values`` (a tuple of 1, 2, 4, ... 128 numbers: integers as
    their low 32 bits, floats as float32 bits) into tensor memory at ``taddr``, collectively for the
    warp: the layout of
    :func:`ld` with the same ``shape``, repeated ``len(values) / (1, 1, 2 or 4)`` times.  The
    tensor memory holds them after :func:`wait_st`.

    Example::

        tcgen05.st(tmem[0] + ((32 * (warp % 4)) << 16), (a0, a1, a2, a3))
        tcgen05.wait_st()

    PTX::

        tcgen05.st.sync.aligned.32x32b.xN.b32 [taddr], {r0, r1, ...};

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``tlx.local_store``, ``cute.nvgpu.tcgen05.St32x32bOp``, ``cuda::ptx::tcgen05_st_32x32b``.
    """


def wait_ld() -> None:
    """Wait until the warp's earlier :func:`ld` are complete (their registers valid).

    Example::

        tcgen05.wait_ld()

    PTX::

        tcgen05.wait::ld.sync.aligned;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cute.arch.fence_view_async_tmem_load``, ``cuda::ptx::tcgen05_wait_ld``.
    """


def wait_st() -> None:
    """Wait until the warp's earlier :func:`st` are complete (the tensor memory written).

    Example::

        tcgen05.wait_st()

    PTX::

        tcgen05.wait::st.sync.aligned;

    Requires sm_100a up to (excluding) sm_120, PTX ISA 8.6.

    Also known as: ``cute.arch.fence_view_async_tmem_store``, ``cuda::ptx::tcgen05_wait_st``.
    """
