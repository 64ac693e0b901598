"""Hopper warpgroup MMA (``wgmma``, sm_90a): a warpgroup (4 consecutive warps, 128 threads)
multiplies a 64 x K tile of A by a K x N tile of B, both read from shared memory through matrix
descriptors, into a 64 x N accumulator held as a register fragment: ``N / 2`` float32 (or int32)
per thread, a tuple the ops take and return.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used

def commit_group() -> None:
    """Close the warpgroup's wgmma issued since the last commit into one group (waited for by
    ``wait_group``).

    Example::

        wgmma.commit_group()

    PTX::

        wgmma.commit_group.sync.aligned;

    Requires sm_90a up to (excluding) sm_100, PTX ISA 8.0.

    Also known as: ``cute.nvgpu.warpgroup.commit_group``, ``warpgroup_commit_batch``, ``cuda::ptx::wgmma_commit_group``.
    """


def descriptor(tile: SharedArray, desc: TensorMap, k: int, row: int) -> int:
    """The 64-bit shared-memory matrix descriptor of a K-major wgmma operand: the tile ``tile``
    (``at(ring, s)``) filled by the map ``desc``, from its ``row``-th row (a multiple of 8), at K
    step ``k`` (32 bytes each: 16 bf16, 8 tf32 or 32 fp8 elements, inside the swizzle
    span).  Its fields come from the map: the swizzle, the stride of 8 rows (8 x the row bytes),
    the start address, in 32-bit arithmetic.  The map's box rows must be one swizzle span (bf16
    with ``"128B"``: box ``(rows, 64)``), and the tile aligned to its 8-row atom (1024 bytes for
    ``"128B"``: ``SharedMemoryPlan.array(..., swizzle="128B")``).  Debug mode traps a misaligned
    tile, a run-time ``k`` outside the span and a run-time ``row`` not a multiple of 8 or past the
    tile; ``numba_tma.viz.wgmma_reads`` lists what an MMA reads through the descriptor.

    Example::

        a = wgmma.descriptor(at(tiles_a, s), desc_a, 2, 64 * warpgroup)

    PTX::

        {
        .reg .b32 a, lo, hi;
        mad.lo.u32 a, row, ROW_BYTES, tile;
        mad.lo.u32 a, k, 32, a;
        shr.u32 a, a, 4;
        and.b32 a, a, 0x3fff;
        or.b32 lo, a, 0x10000;
        mov.b32 hi, SBO>>4 | SWIZZLE<<30;
        mov.b64 out, {lo, hi};
        }

    Requires sm_90a up to (excluding) sm_100, PTX ISA 8.0.
    """


def descriptor_mn(tile: SharedArray, desc: TensorMap, k: int, col: int) -> int:
    """The 64-bit shared-memory matrix descriptor of an MN-major 16-bit wgmma operand (``B``
    given K x N row-major, or ``A`` given K x M: ``mma_async(..., trans_b=True)`` /
    ``trans_a=True``): the tile ``tile`` filled by the map ``desc`` with boxes of (K rows, W) — W
    elements of MN one swizzle span wide (64 bf16 for ``"128B"``), box after box along MN — from
    MN element ``col`` (a multiple of W), at K step ``k`` (16 rows of the box each).  Its fields
    come from the map: the leading byte offset (one box's bytes: from W elements of MN to the
    next), the stride byte offset (8 rows: 8 x the span), the swizzle, the start address, in 32-bit
    arithmetic.  The tile aligned to its 8-row atom (1024 bytes for ``"128B"``).  Debug mode traps a
    misaligned tile, a run-time ``k`` past the box's rows and a run-time ``col`` not a multiple
    of W.

    Example::

        b = wgmma.descriptor_mn(at(tiles_b, s), desc_b, kk, 0)      # B tile: (64 K rows, 256 N) in 4 boxes
        acc = wgmma.mma_async(acc, a, b, 1, trans_b=True)

    PTX::

        {
        .reg .b32 a, lo, hi;
        mad.lo.u32 a, col, BOX_BYTES/W, tile;
        mad.lo.u32 a, k, 16*SPAN, a;
        shr.u32 a, a, 4;
        and.b32 a, a, 0x3fff;
        or.b32 lo, a, LBO>>4<<16;
        mov.b32 hi, SBO>>4 | SWIZZLE<<30;
        mov.b64 out, {lo, hi};
        }

    Requires sm_90a up to (excluding) sm_100, PTX ISA 8.0.

    Also known as: ``cute make_gmma_desc<Major::MN>``, ``cute.nvgpu.warpgroup (OperandMajorMode.MN)``.
    """


def fence(acc: tuple) -> tuple:
    """Order the warpgroup's register and shared-memory writes before the wgmma that read them
    (before the first ``mma_async`` of a tile, and after the accumulator was touched by other
    instructions).  Takes and returns the accumulator, so the compiler keeps it in place.

    Example::

        acc = wgmma.fence(acc)

    PTX::

        wgmma.fence.sync.aligned;

    Requires sm_90a up to (excluding) sm_100, PTX ISA 8.0.

    Also known as: ``cute.nvgpu.warpgroup.fence``, ``warpgroup_arrive``, ``cuda::ptx::wgmma_fence``.
    """


def mma_async(acc: tuple, a: int, b: int, scale_d: int, dtype: Literal['f16', 'bf16', 'tf32', 'e4m3', 'e5m2', 'e4m3.e5m2', 'e5m2.e4m3', 's8', 'u8', 's8.u8', 'u8.s8'] = 'bf16', trans_a: Literal[False, True] = False, trans_b: Literal[False, True] = False, negate_a: Literal[False, True] = False, negate_b: Literal[False, True] = False) -> tuple:
    """``acc + A @ B`` (``acc`` ignored where ``scale_d`` is 0) for one warpgroup, issued
    asynchronously: A is 64 x K, B is K x N, in shared memory, named by descriptors
    (:func:`descriptor` for K-major tiles, :func:`descriptor_mn` for MN-major ones); N is
    ``2 * len(acc)``: 8 to 256 in steps of 8, and for s8/u8 8, 16, 24, then 32 to 256 in steps of
    16; K 16 (f16, bf16), 8 (tf32) or 32 (e4m3/e5m2, s8/u8).  ``dtype``: the A.B element types;
    ``trans_a`` / ``trans_b``: the tile is MN-major, for the 16-bit types only (f16, bf16);
    ``negate_a`` / ``negate_b``: the immediate scale -1, for the float types only (not s8/u8).
    An integer accumulator (``wgmma.zeros(n, numba.int32)``) leaves through its registers: see
    :func:`store` (float32 only) for the layout.
    The result is valid after ``commit_group()`` and ``wait_group(n, acc)``.  All 128 threads of
    the warpgroup call it together; ``fence(acc)`` before the first MMA that reads registers
    written otherwise.

    Example::

        acc = wgmma.mma_async(acc, a, b, 1)             # bf16 x bf16 -> f32, N = 2 * len(acc)

    PTX::

        {
        .reg .pred p;
        setp.ne.b32 p, scale_d, 0;
        wgmma.mma_async.sync.aligned.m64nNkK.f32.bf16.bf16 {d0, d1, ...}, a, b, p, 1, 1, 0, 0;
        }

    Requires sm_90a up to (excluding) sm_100, PTX ISA 8.0.

    Also known as: ``tlx.async_dot``, ``gluon warpgroup_mma``, ``cute.nvgpu.warpgroup.MmaF16BF16Op``, ``SM90_64x128x16_F32BF16BF16_SS``.
    """


def mma_async_rs(acc: tuple, a: tuple[int, ...], b: int, scale_d: int, dtype: Literal['f16', 'bf16', 'tf32', 'e4m3', 'e5m2', 'e4m3.e5m2', 'e5m2.e4m3', 's8', 'u8', 's8.u8', 'u8.s8'] = 'bf16', trans_b: Literal[False, True] = False, negate_a: Literal[False, True] = False, negate_b: Literal[False, True] = False) -> tuple:
    """``acc + A @ B`` for one warpgroup with A from registers (the RS form): as
    :func:`mma_async`, but ``a`` is this thread's four 32-bit registers of the 64 x K A tile —
    :func:`a_fragment` makes them from an accumulator, so that a product (attention's P) feeds
    the next MMA without a trip through shared memory.  Warp ``w`` holds rows ``16 w`` to
    ``16 w + 15``; lane ``l`` register ``i`` holds row ``16 w + l // 4 + 8 (i % 2)``, K elements
    from ``(K / 8) (l % 4) + (K / 2) (i // 2)``, ``4 / size`` of them, the lowest K in the low
    bits (mma.sync's A layout).  ``b`` is a descriptor (:func:`descriptor`, or
    :func:`descriptor_mn` with ``trans_b``: 16-bit types only); ``dtype``, ``negate_a``,
    ``negate_b``, ``scale_d`` as for :func:`mma_async`.  ``fence(acc)`` orders the registers' writes
    before the MMA reads them; the result is valid after ``commit_group()`` and ``wait_group``.

    Example::

        p = wgmma.a_fragment(acc, 1)                    # columns 16-31 of a float32 fragment, as bf16
        acc = wgmma.mma_async_rs(acc, p, b, 1)          # acc + P @ B, P from registers

    PTX::

        {
        .reg .pred p;
        setp.ne.b32 p, scale_d, 0;
        wgmma.mma_async.sync.aligned.m64nNkK.f32.bf16.bf16 {d0, d1, ...}, {a0, a1}, b, p, 1, 1, 0;
        }

    Requires sm_90a up to (excluding) sm_100, PTX ISA 8.0.

    Also known as: ``SM90_64x128x16_F32BF16BF16_RS``, ``cute.nvgpu.warpgroup OperandSource.RMEM``, ``gluon warpgroup_mma (register a)``, ``tlx.async_dot (register a)``.
    """


def setmaxnreg(n: int, action: Literal['dec', 'inc']) -> None:
    """Set the warpgroup's registers per thread to ``n`` (a constant multiple of 8 in [24, 256]):
    ``action="dec"`` gives registers back to the block's pool (a producer warpgroup that only
    issues TMA), ``"inc"`` waits until the pool has them and takes them (the MMA warpgroups; the
    new registers' contents are undefined).  All 128 threads of the warpgroup call it together,
    with the same ``n``, and meet before another ``setmaxnreg``.

    ptxas keeps it only in a kernel compiled whole-program with a known register count at entry:
    numba_tma links a kernel that calls it with numba-cuda's LTO (its own ``inspect`` too), and the
    kernel must declare ``launch_bounds=(threads, min_blocks)`` (or ``max_registers`` without launch
    bounds); otherwise linking it raises :class:`numba_tma.errors.RegisterCountError` naming the
    rule (never a kernel without it).  The block's registers bound the sum: with
    ``launch_bounds=(384, 1)`` (168 per thread) a producer at 40 leaves two consumers 232.

    Example::

        @cuda.jit(launch_bounds=(384, 1))
        def kernel(desc_a, desc_b, out):
            if cuda.threadIdx.x // 128 == 0:
                wgmma.setmaxnreg(40, "dec")      # the producer
            else:
                wgmma.setmaxnreg(232, "inc")     # the two consumers

    PTX::

        setmaxnreg.dec.sync.aligned.u32 n;

    Requires sm_90a up to (excluding) sm_100, PTX ISA 8.0.

    Also known as: ``cute.arch.warpgroup_reg_alloc``, ``cute.arch.warpgroup_reg_dealloc``, ``cutlass::arch::warpgroup_reg_alloc``, ``cuda::ptx::setmaxnreg_inc``, ``cuda::ptx::setmaxnreg_dec``.
    """


def wait_group(n: int, acc: tuple) -> tuple:
    """Wait until at most ``n`` of the warpgroup's committed wgmma groups are pending; returns
    the accumulator (its registers are only valid after the wait that covers the MMA writing them).

    Example::

        acc = wgmma.wait_group(0, acc)

    PTX::

        wgmma.wait_group.sync.aligned n;

    Requires sm_90a up to (excluding) sm_100, PTX ISA 8.0.

    Also known as: ``cute.nvgpu.warpgroup.wait_group``, ``warpgroup_wait``, ``cuda::ptx::wgmma_wait_group``.
    """


def zeros(count, dtype=float32):
    """A zero accumulator fragment of ``count`` registers (``N / 2`` for a 64 x N tile) of float32
    (or ``numba.int32``, for integer MMA): no instruction (ptxas folds zeros into the first MMA).
    ``count`` is the fragment's length, part of its type, so a compile-time constant: a literal or
    a module-level integer (``ACC = BN // 2`` outside the kernel); an expression Numba does not
    fold (``BN // 2`` inside it, anything from an argument) is refused.

    Example::

        acc = wgmma.zeros(128)          # 64 x 256 float32

    PTX::

        (none: ``count`` zero registers, which ptxas folds into the first mma_async's RZ input)

    Requires sm_90a, PTX ISA 8.0 (the wgmma it feeds).
    """


def scale(acc, factor):
    """``acc`` with every register multiplied by ``factor`` (a float; an fp8 GEMM's per-tensor
    ``scale_a * scale_b``), unrolled.

    Example::

        acc = wgmma.scale(acc, scale_a * scale_b)

    PTX::

        mul.f32 d(i), d(i), factor;          // per register, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment it scales).
    """


def add(acc, other):
    """``acc + other``, register by register (``add.rn.f32``, unrolled): two fragments of one shape.
    An fp8 GEMM's promotion: Hopper adds fp8 products into its accumulator with about 14 mantissa
    bits, so a kernel accumulates a few K steps into a fresh fragment (``scale_d`` 0 on its first
    MMA), waits for them and adds that fragment into a float32 total it never hands to wgmma.

    Example::

        part = wgmma.wait_group(0, part)
        total = wgmma.add(total, part)

    PTX::

        add.rn.f32 d(i), a(i), b(i);          // per register, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragments it adds).
    """


def map(acc, fn, row, col, *args):
    """``acc`` with every float32 register ``v`` replaced by ``fn(v, r, c, *args)`` (converted to
    float32), where (``r``, ``c``) is the element's place, ``(row, col)`` plus its place in the 64 x
    N tile: ``(row + 16 w + l // 4 + 8 (h // 2), col + 8 j + 2 (l % 4) + h % 2)`` for register
    ``4j + h`` of thread ``t = threadIdx.x % 128`` (``w = t // 32``, ``l = t % 32``), the element
    :func:`store` writes it to (``r``, ``c``: int32) — a GEMM's fused epilogue (bias, activation,
    residual, a mask) in registers, before a store.  ``fn`` is a ``numba.cuda.jit(device=True)``
    function (a Python function or a kernel is refused); ``args``: anything Numba passes (arrays,
    scalars, tuples), the same for every register.  Unrolled, one call per register, each inlined:
    ``fn`` is compiled with ``forceinline=True`` (a twin of it if it was not), so the kernel has no
    ``CALL`` (which would make ptxas serialise every wgmma of the kernel).  Like :func:`store`,
    it reads no memory of its own: indexing ``args`` with (``r``, ``c``) past their ends is
    ``fn``'s to guard.  numba-cuda only (numba-cuda-mlir refuses it).

    Example::

        @cuda.jit(device=True)                            # map inlines it (forceinline)
        def bias_relu(v, r, c, bias, scale):              # bias: a 1 x N row, scale: a float
            return max(v + bias[0, c], 0.0) * scale

        @cuda.jit
        def epilogue(out, bias):
            acc = wgmma.load(out, 0, 0, 64)               # (the MMAs' 64 x 128 accumulator)
            acc = wgmma.map(acc, bias_relu, 0, 0, bias, 2.0)
            wgmma.store(acc, out, 0, 0)

    PTX::

        mov.u32 t, %tid.x;                       // the thread's place, once
        (fn's body, inlined: per register, unrolled, with its r and c)

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """


def store(acc, out, row, col):
    """Store a 64 x N float32 accumulator fragment into ``out`` (a 2-D float32 array or view) at
    (``row``, ``col``), unrolled (one store per element pair), skipping elements outside ``out``:
    ragged edges are never written.  All 128 threads of the warpgroup call it (1-D blocks: the
    thread's place comes from ``threadIdx.x % 128``).  Register ``4j + h`` of thread ``t`` (warp
    ``w = t // 32``, lane ``l = t % 32``) is element ``(16 w + l // 4 + 8 (h // 2), 8 j + 2 (l % 4)
    + h % 2)`` of the 64 x N tile.  An int32 fragment (s8/u8 MMAs) is refused: store it register by
    register in that layout (the second example; ``len(acc)`` is a constant, the loops unroll).

    Example::

        wgmma.store(acc, out, row0 + 64 * warpgroup, col0)

    Example::

        t = cuda.threadIdx.x % 128                  # acc_i32 = wgmma.zeros(64, numba.int32), then s8 MMAs
        w, l = t // 32, t % 32
        for j in range(len(acc_i32) // 4):
            for h in range(4):
                out_i32[row0 + 16 * w + l // 4 + 8 * (h // 2), col0 + 8 * j + 2 * (l % 4) + h % 2] = acc_i32[4 * j + h]

    PTX::

        mov.u32 t, %tid.x;
        @inside st.global.f32 [out + (row * pitch + col * 4)], d(4j+2h);      // per element, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """


def store_bf16(acc, out, row, col):
    """As :func:`store`, converting each pair to bfloat16 (``cvt.rn.bf16x2.f32``)
    into ``out``, a 2-D uint16 (or int16: a torch bfloat16 tensor's ``view(torch.int16)``) array
    holding bfloat16 bits.

    Example::

        wgmma.store_bf16(acc, out_bf16, row0 + 64 * warpgroup, col0)     # out_bf16: a 2-D uint16 array

    PTX::

        cvt.rn.bf16x2.f32 pair, d(4j+2h+1), d(4j+2h);
        @inside st.global.b32 [out + (row * pitch + col * 2)], pair;         // per pair, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """


def store_f16(acc, out, row, col):
    """As :func:`store`, converting each pair to float16 (``cvt.rn.f16x2.f32``, round to
    nearest even; beyond the float16 range: infinity) into ``out``, a 2-D float16 array (or uint16 /
    int16: a torch float16 tensor's ``view(torch.int16)``, float16 bits).

    Example::

        wgmma.store_f16(acc, out_f16, row0 + 64 * warpgroup, col0)         # out_f16: a 2-D float16 array

    PTX::

        cvt.rn.f16x2.f32 pair, d(4j+2h+1), d(4j+2h);
        @inside st.global.b32 [out + (row * pitch + col * 2)], pair;         // per pair, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """


def store_shared_bf16(acc, tile, desc, first=omitted(default=0), count=omitted(default=None)):
    """Store a 64 x N float32 fragment as bfloat16 into shared memory laid out as the TMA map
    ``desc`` stores it from: ``N / box_cols`` consecutive boxes of ``desc``'s box (64 rows of one
    128-byte swizzle span: box ``(64, 64)`` bf16, ``swizzle="128B"``) from ``tile`` (``at(ring, i)``),
    each box in the map's swizzled layout, so that ``tma.store(desc, at(ring, i + b), ...)`` writes
    box ``b`` (columns ``64 b`` to ``64 b + 63``) — the epilogue of a GEMM: one ``st.shared.b32``
    per element pair (swizzled: no bank conflicts), unrolled; then ``fence.proxy_async()`` and a
    barrier of the warpgroup before the store.  ``first`` / ``count`` (constants): only the
    fragment's boxes ``first`` to ``first + count - 1``, into ``count`` boxes from ``tile`` (an
    epilogue in rounds, through less shared memory).  ``tile`` must be 1024-byte aligned and hold
    the ``count`` boxes: debug mode traps otherwise (an ``at()`` address: its alignment only).

    Example::

        wgmma.store_shared_bf16(acc, at(tiles_c, 4 * half), desc_c)
        wgmma.store_shared_bf16(acc, at(tiles_c, 2 * half), desc_c, 2, 2)     # columns 128-255

    PTX::

        cvt.rn.bf16x2.f32 pair, d(4j+2h+1), d(4j+2h);
        st.shared.b32 [tile + box * BOX_BYTES + swizzle(row * 128 + col * 2)], pair;   // unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """


def store_shared_f16(acc, tile, desc, first=omitted(default=0), count=omitted(default=None)):
    """As :func:`store_shared_bf16`, converting each pair to float16 (``cvt.rn.f16x2.f32``)
    for a float16 map ``desc`` (16-bit elements, box ``(64, 64)``, ``swizzle="128B"``): the epilogue
    of a GEMM whose C is float16, stored by ``tma.store(desc, at(ring, i + b), ...)``.  The same
    ``first`` / ``count`` rounds, the same alignment and debug checks.

    Example::

        wgmma.store_shared_f16(acc, at(tiles_c, 4 * half), desc_c16)     # desc_c16: a float16 map
        wgmma.store_shared_f16(acc, at(tiles_c, 2 * half), desc_c16, 2, 2)   # columns 128-255

    PTX::

        cvt.rn.f16x2.f32 pair, d(4j+2h+1), d(4j+2h);
        st.shared.b32 [tile + box * BOX_BYTES + swizzle(row * 128 + col * 2)], pair;   // unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """


def load(array, row, col, count):
    """A float32 fragment of ``count`` registers (a 64 x ``2 count`` tile) read from ``array`` (a
    2-D float32 array or view) at (``row``, ``col``): the reverse of :func:`store`, in the same
    layout (register ``4j + 2h + e`` of a thread is element ``(16 w + l // 4 + 8 h, 8 j +
    2 (l % 4) + e)``), unrolled; elements outside ``array`` read as 0.  All 128 threads of the
    warpgroup call it (1-D blocks: the place comes from ``threadIdx.x % 128``).  A bias or a
    mask tile, or a known tile to test the fragment ops with.

    Example::

        acc = wgmma.load(bias, row0 + 64 * warpgroup, col0, 64)      # 64 x 128 float32

    PTX::

        mov.u32 t, %tid.x;
        @inside ld.f32 d(4j+2h+e), [array + (row * pitch + col * 4)];   // else 0; per element, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """


def row_max(acc):
    """``(m0, m1)``: the float32 maxima of the two rows of the 64 x N fragment ``acc``
    this thread holds (``m0`` of row ``16 w + l // 4``, ``m1`` of the row 8 below), over all N
    columns: the maximum of the thread's own registers of each row (a tree, unrolled), then across
    the 4 lanes sharing the row (``shfl.sync.bfly`` with lane masks 1 and 2), so all 4 lanes hold
    the row's maximum — an online softmax's running maximum.  All 32 lanes of each warp call it (the
    shuffles are ``.sync`` with the full mask).  A NaN register is skipped (``max.f32``: the other
    operand; the simulator: ``np.fmax``).

    Example::

        m0, m1 = wgmma.row_max(scores)     # scores: the 64 x N scores of a Q @ K^T tile

    PTX::

        max.f32 m, d(4j), d(4j+1);                       // per register of the row, a tree, unrolled
        shfl.sync.bfly.b32 o, m, 1, 0x1f, 0xffffffff;   // then lane masks 1 and 2
        max.f32 m, m, o;

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout; ``shfl.sync``: sm_30, PTX ISA 6.0).
    """


def row_sum(acc):
    """``(s0, s1)``: the float32 sums of the two rows of the 64 x N fragment ``acc``
    this thread holds, as :func:`row_max` (the thread's registers of each row summed pairwise in a
    tree, then across the row's 4 lanes with ``shfl.sync.bfly`` 1 and 2: all 4 lanes hold the same
    bits) — an online softmax's running denominator.  ``add.rn`` is never fused with a multiply, so
    the simulator's sums, in the same order, are the same to the bit.  All 32 lanes of each warp
    call it.

    Example::

        s0, s1 = wgmma.row_sum(p)          # p = wgmma.exp2_rows(scores, scale, m0, m1)

    PTX::

        add.rn.f32 s, d(4j), d(4j+1);                    // per register of the row, a tree, unrolled
        shfl.sync.bfly.b32 o, s, 1, 0x1f, 0xffffffff;   // then lane masks 1 and 2
        add.rn.f32 s, s, o;

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout; ``shfl.sync``: sm_30, PTX ISA 6.0).
    """


def exp2_rows(acc, scale, m0, m1):
    """The fragment ``acc`` with every register ``x`` of row ``h`` (``m0``: the thread's row ``16 w
    + l // 4``, ``m1``: the row 8 below) replaced by ``exp2(x * scale - m_h)``: an ``fma.rn.f32``
    then ``ex2.approx.ftz.f32`` per register, unrolled — the online softmax's probabilities, with
    ``scale`` the softmax scale times ``log2(e)`` and ``m_h`` the row maximum times the same (from
    :func:`row_max`).  ``ex2.approx`` is within 2 ulp of the exact ``2^t`` (PTX ISA), and flushes
    subnormal results to 0 (``.ftz``).  The simulator computes ``x * scale - m_h`` in float64
    (where the product is exact) rounded to float32, as the fma rounds it, then ``np.exp2`` in
    float32 and the same flush: the GPU's results differ from it by up to 2 ulp, so compare
    them with a tolerance (``rtol=2**-21``).

    Example::

        p = wgmma.exp2_rows(scores, scale_log2e, m0 * scale_log2e, m1 * scale_log2e)

    PTX::

        neg.f32 n, m_h;                                   // per row
        fma.rn.f32 t, d(i), scale, n;                     // per register, unrolled
        ex2.approx.ftz.f32 d(i), t;

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """


def scale_rows(acc, f0, f1):
    """The fragment ``acc`` with the registers of row ``h`` multiplied by ``f_h`` (``f0``: the
    thread's row ``16 w + l // 4``, ``f1``: the row 8 below), unrolled: the online softmax's
    rescale of the output accumulator by ``exp2(m_old - m_new)`` of each row.  ``mul.rn`` is
    never fused into an ``fma``: the simulator's products are the same to the bit.

    Example::

        o = wgmma.scale_rows(o, alpha0, alpha1)

    PTX::

        mul.rn.f32 d(i), d(i), f_h;          // per register, unrolled

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment it scales).
    """


def a_fragment(acc, kk, dtype=None):
    """K step ``kk`` of a float32 accumulator (a 64 x N tile) as the A fragment of
    :func:`mma_async_rs`: four registers of this thread, rounded to nearest even.  ``dtype``
    ``"bf16"`` (the default) or ``"f16"``: columns ``16 kk`` to ``16 kk + 15``, two values a
    register, no data leaving the thread — the accumulator's layout, pairs of columns, is the
    register A layout of 16-bit types: register ``i`` is fragment elements ``8 kk + 2 i`` (low
    half) and ``8 kk + 2 i + 1``.  ``"e4m3"`` or ``"e5m2"`` (saturating to the largest finite
    value; NaN stays NaN): columns ``32 kk`` to ``32 kk + 31``, four values a register — lane ``l``
    register ``i`` holds row ``l // 4 + 8 (i % 2)`` of its warp's 16, columns ``32 kk + 4 (l % 4) +
    16 (i // 2)`` and the next three, lowest byte first, which the accumulator spreads over the
    lane's quad: each register is two 32-bit shuffles within the quad and a byte permute (eight
    ``shfl.sync.idx`` a K step; all 32 lanes of the warp must call it together).  ``kk`` is a
    constant.  Attention's P (``exp2_rows`` of S) feeds the P @ V MMA this way, K step by K step.
    Convert every K step before the ``fence`` of the MMAs that read them: registers written
    between the fence and an MMA make ptxas serialise every wgmma of the kernel.

    Example::

        p = wgmma.a_fragment(acc, 0)                    # columns 0-15 as bf16: the A of K step 0

    PTX::

        cvt.rn.bf16x2.f32 a(i), d(8 kk + 2 i + 1), d(8 kk + 2 i);   // i = 0..3
        // e4m3: the quad's pairs, packed two chunks a word, gathered and byte-permuted
        cvt.rn.satfinite.e4m3x2.f32 p, d(16 kk + 4 c + 2 h + 1), d(16 kk + 4 c + 2 h);
        shfl.sync.idx.b32 x0, w(i), s0, 0x1f, 0xffffffff;   // and x1 from s1
        prmt.b32 a(i), x0, x1, sel;

    Requires sm_90a, PTX ISA 8.0 (the wgmma it feeds).
    """


def mask(acc, row, col, cols, diagonal, value):
    """The fragment ``acc`` of the 64 x N tile whose element (0, 0) is (``row``, ``col``) of a
    whole matrix, with every element (R, C) where ``C >= cols`` or ``C - R > diagonal`` replaced
    by ``value``: attention's masks on the scores before the softmax — the keys past the sequence's
    end (``cols``: its length) and, causal, the keys after the query (``diagonal`` 0; ``seqlen_k -
    seqlen_q`` for the bottom-right alignment of unequal lengths; ``cols`` or more: no causal mask).
    Branch-free, unrolled: two integer adds, two compares and a select an element.

    Example::

        scores = wgmma.mask(scores, 16, 0, 100, 0, -math.inf)     # causal, keys 100 and on masked

    PTX::

        add.s32 t, c0, DC(i);  setp.ge.s32 p, t, cols;          // per register, unrolled
        add.s32 t, c0 - r0, DC(i) - DR(i);  setp.gt.or.s32 p, t, diagonal, p;
        selp.f32 d(i), value, d(i), p;

    Requires sm_90a, PTX ISA 8.0 (the wgmma fragment layout).
    """
