"""Blackwell's fifth-generation tensor cores (``tcgen05``, sm_100a): an MMA issued by one thread
that multiplies shared-memory tiles (named by matrix descriptors) into an accumulator held in
**tensor memory** (TMEM: 128 lanes x 512 columns of 32-bit cells per CTA), which warps then read
into registers.

Example::

    tmem = cuda.shared.array(1, numba.uint32)
    if warp == 0:
        tcgen05.alloc(tmem, 256)                        # 256 columns; their address lands in tmem[0]
    tcgen05.fence_before_thread_sync()
    cuda.syncthreads()
    tcgen05.fence_after_thread_sync()
    if cuda.threadIdx.x == 0:                           # one thread issues the MMAs
        for k in range(4):                              # the 4 K-steps of a 64-wide bf16 tile
            tcgen05.mma(tmem[0], tcgen05.descriptor(at(tiles_a, s), desc_a, k, 0),
                        tcgen05.descriptor(at(tiles_b, s), desc_b, k, 0), tcgen05.idesc(128, 256), k)
        tcgen05.commit(done)                            # done (an mbarrier) completes when they have
    mbarrier.wait(done, 0)
    tcgen05.fence_after_thread_sync()
    acc = tcgen05.ld(tmem[0] + ((32 * (warp % 4)) << 16), 32)   # this warp's 32 lanes, 32 columns
    tcgen05.wait_ld()

Tensor-memory addresses are 32 bits: the lane in bits 16-31, the column in bits 0-15.  A warp
reaches only its own 32 lanes (warp ``w % 4`` of a warpgroup: lanes ``32 (w % 4)`` to
``32 (w % 4) + 31``).  Only assembly is verified here (for sm_100a, with the SASS each op becomes):
no Blackwell GPU has run these ops, and the simulator, which models sm_90, refuses them.
"""

from numba.cuda import types

from ..declarations import literal, reject
from . import matrix_descriptor
from ._core import (REQUIRED, Choice, Const, Int, Multicast, Operand, PtxOp, Qualifier, Refusal, Requirement,
                    Sample, SharedArray, exported)
from .mbarrier import barrier

# sm_100a, sm_103a and sm_110a (the former sm_101a) have tcgen05; sm_120 (consumer Blackwell) has none
SM100A = Requirement((10, 0), (8, 6), arch_specific=True, max_cc=(12, 0))
_CTA_GROUP = Qualifier("cta_group", {1: ".cta_group::1", 2: ".cta_group::2"}, 1)


def _tmem_address(name):
    return Int(name, bits=32)


# -- tensor memory allocation ------------------------------------------------------------------------

_NCOLS = "must be a power of 2 from 32 to 512 (tensor-memory columns are allocated in such blocks)"


def _check_ncols(op_name):
    def check(ncols=None, **_):
        n = literal(ncols)
        if isinstance(n, int) and not (32 <= n <= 512 and n & (n - 1) == 0):
            raise reject(op_name, "ncols", _NCOLS, n)
    return check


alloc = PtxOp(
    "tcgen05.alloc", "tcgen05.alloc{cta_group}.sync.aligned.shared::cta.b32 [{dst}], {ncols};",
    (SharedArray("dst", dtypes=(types.uint32, types.int32), what="a uint32 shared array (the address is written to "
                 "element 0)"), Int("ncols", bits=32)),
    qualifiers=(_CTA_GROUP,), need=SM100A, check=_check_ncols("tcgen05.alloc"),
    tlx=("tlx.local_alloc(..., tlx.storage_kind.tmem)", "cute.arch.alloc_tmem", "cuda::ptx::tcgen05_alloc"),
    doc="""Allocate ``ncols`` columns of tensor memory (a power of 2 from 32 to 512, all 128 lanes)
    and write their 32-bit tensor-memory address into ``dst[0]`` (shared memory).  A whole warp
    calls it (``.sync.aligned``); it waits until the columns are free.  ``cta_group=2``: the
    columns are allocated in this CTA and its peer (the CTA pair of a cluster).  Free them with
    :func:`dealloc` before the kernel exits.

    Example::

        if warp == 0:
            tcgen05.alloc(tmem, 128)
    """,
    samples=(Sample("t = cuda.shared.array(1, numba.uint32)\ntcgen05.alloc(t, 64)", "UTCATOMSWS.FIND_AND_SET.ALIGN",
                    only={"cta_group": 1}, ptx="tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r], %r;",
                    isa="9.7.16.7.1 tcgen05.alloc"),
             Sample("t = cuda.shared.array(1, numba.uint32)\ntcgen05.alloc(t, 64)",
                    "UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN", only={"cta_group": 2},
                    ptx="tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r], %r;",
                    isa="9.7.16.7.1 tcgen05.alloc")),
    refusals=(Refusal("t = cuda.shared.array(1, numba.uint32)\ntcgen05.alloc(t, 48)",
                      f"tcgen05.alloc: argument 'ncols' {_NCOLS}"),
              Refusal("tcgen05.alloc(smem, 32)",
                      "tcgen05.alloc: argument 'dst' must be a uint32 shared array (the address is written to element "
                      "0) of uint32 or int32")),
).intrinsic()

dealloc = PtxOp(
    "tcgen05.dealloc", "tcgen05.dealloc{cta_group}.sync.aligned.b32 {taddr}, {ncols};",
    (_tmem_address("taddr"), Int("ncols", bits=32)),
    qualifiers=(_CTA_GROUP,), need=SM100A, check=_check_ncols("tcgen05.dealloc"),
    tlx=("cute.arch.dealloc_tmem", "cuda::ptx::tcgen05_dealloc"),
    doc="""Free the ``ncols`` tensor-memory columns from ``taddr`` (what :func:`alloc` returned).
    A whole warp calls it, with the ``cta_group`` of the allocation; every ``tcgen05.ld`` / ``st``
    / MMA on the columns must be complete (``wait_ld``, ``wait_st``, the MMA's commit waited for).

    Example::

        tcgen05.dealloc(tmem[0], 128)
    """,
    samples=(Sample("tcgen05.dealloc(numba.uint32(out[0]), 64)", "UTCATOMSWS.AND",   # cta_group=2 too
                    only={"cta_group": 1}, ptx="tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r, %r;",
                    isa="9.7.16.7.1 tcgen05.dealloc"),),
    refusals=(Refusal("tcgen05.dealloc(numba.uint32(out[0]), 1024)", f"tcgen05.dealloc: argument 'ncols' {_NCOLS}"),),
).intrinsic()

relinquish_alloc_permit = PtxOp(
    "tcgen05.relinquish_alloc_permit", "tcgen05.relinquish_alloc_permit{cta_group}.sync.aligned;",
    qualifiers=(_CTA_GROUP,), need=SM100A,
    tlx=("cute.arch.relinquish_tmem_alloc_permit", "cuda::ptx::tcgen05_relinquish_alloc_permit"),
    doc="""Give up this CTA's right to allocate tensor memory (after its last :func:`alloc`), so a
    CTA waiting to be scheduled on the SM may allocate as soon as the columns are freed.  A whole
    warp calls it.

    Example::

        tcgen05.relinquish_alloc_permit()
    """,
    samples=(Sample("tcgen05.relinquish_alloc_permit()", "UVIRTCOUNT.DEALLOC.SMPOOL",   # cta_group=2 too
                    only={"cta_group": 1}, ptx="tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;",
                    isa="9.7.16.7.1 tcgen05.relinquish_alloc_permit"),),
    refusals=(Refusal("tcgen05.relinquish_alloc_permit(cta_group=4)",
                      "tcgen05.relinquish_alloc_permit: argument 'cta_group' must be a constant, one of 1, 2"),),
).intrinsic()


# -- descriptors -------------------------------------------------------------------------------------

SM100_LAYOUT = {128: 2, 64: 4, 32: 6}   # the swizzle mode (bits 61-63): 0 none, 2 128B, 4 64B, 6 32B
VERSION = 1 << 14                       # bits 46-48 of the descriptor: the fixed 0b001 (bit 14 of the high word)


def descriptor_hi(swizzle, row_bytes):
    """The high 32 bits of an sm_100 shared-memory descriptor of a K-major, swizzled tile: the
    stride of 8 rows >> 4 (bits 32-45), the fixed ``0b001`` of bits 46-48, base offset 0 (bits
    49-51: the tile starts at its swizzle pattern, the map's alignment) and the swizzle mode."""
    return ((8 * row_bytes) >> 4) | VERSION | (SM100_LAYOUT[swizzle] << 29)


descriptor = PtxOp(
    "tcgen05.descriptor", matrix_descriptor.TEMPLATE, matrix_descriptor.operands(),
    need=SM100A, returns=types.uint64, memory=False, check=matrix_descriptor.check("tcgen05.descriptor"),
    fields=matrix_descriptor.fields("tcgen05.descriptor", descriptor_hi),
    doc_fields={"row_bytes": "ROW_BYTES", "hi": "SBO>>4 | 1<<14 | SWIZZLE<<29"},
    tlx=("cute.nvgpu.tcgen05.make_umma_smem_desc", "cute::UMMA::SmemDescriptor"),
    doc="""The 64-bit sm_100 shared-memory matrix descriptor of a K-major ``tcgen05.mma`` (or
    ``tcgen05.cp``) operand: the tile ``tile`` (``at(ring, s)``) filled by the map ``desc``, from
    its ``row``-th row (a multiple of 8), at K step ``k`` (32 bytes: 16 bf16, 8 tf32 or 32 8-bit
    elements, inside the swizzle span).  As ``wgmma.descriptor`` (the same start address, leading
    offset 1 and 8-row stride, from the map's swizzle and box), with sm_100's fields: bits 46-48
    the fixed ``0b001``, base offset 0 and the swizzle mode of bits 61-63 (2: 128B, 4: 64B, 6: 32B).
    The map's box rows must be one swizzle span (bf16 with ``"128B"``: box ``(rows, 64)``), the
    tile aligned to its 8-row atom (1024 bytes for ``"128B"``).

    Example::

        a = tcgen05.descriptor(at(tiles_a, s), desc_a, k, 0)
    """,
    samples=(Sample("out[0] = tcgen05.descriptor(smem, desc, 1, 64)", "MOV", desc=("uint16", (64, 64), "128B"),
                    # the asm block's own registers are a, lo, hi; 0x40004040 = SBO 1024 >> 4 | 1 << 14 | 2 << 29
                    ptx=("mad.lo.u32 a, %r, 128, %r;", "mad.lo.u32 a, %r, 32, a;", "shr.u32 a, a, 4;",
                         "and.b32 a, a, 0x3fff;", "or.b32 lo, a, 0x10000;", "mov.b32 hi, 0x40004040;",
                         "mov.b64 %rd, {lo, hi};"),
                    isa="9.7.16.4.1 Shared Memory Descriptor; 9.7.9.8 mov"),),
    refusals=(Refusal("out[0] = tcgen05.descriptor(smem, desc, 0, 0)",
                      "tcgen05.descriptor: argument 'desc' must be a tiled map with swizzle '32B', '64B' or '128B'",
                      desc=("float32", (8, 32), "none")),
              Refusal("out[0] = tcgen05.descriptor(smem, desc, 1, 0)",
                      "tcgen05.descriptor: argument 'k' must be in [0, 1): a K step of 32 bytes inside the 32-byte",
                      desc=("uint16", (64, 16), "32B"))),
).intrinsic()


# (A.B element types) -> (the MMA kind, A's and B's type codes in the instruction descriptor)
IDESC_TYPES = {
    "f16": ("f16", 0, 0), "bf16": ("f16", 1, 1), "tf32": ("tf32", 2, 2),
    "e4m3": ("f8f6f4", 0, 0), "e5m2": ("f8f6f4", 1, 1), "e4m3.e5m2": ("f8f6f4", 0, 1), "e5m2.e4m3": ("f8f6f4", 1, 0),
    "e2m3": ("f8f6f4", 3, 3), "e3m2": ("f8f6f4", 4, 4), "e2m1": ("f8f6f4", 5, 5),
    "u8": ("i8", 0, 0), "s8": ("i8", 1, 1), "u8.s8": ("i8", 0, 1), "s8.u8": ("i8", 1, 0),
}
_SUB_BYTE = ("e2m3", "e3m2", "e2m1")   # the 6- and 4-bit types: K-major only
_FLAG = {False: "", True: ""}


def _valid_n(m, kind, cta_group):
    """The N of the dense shapes of PTX ISA Table 39 for M ``m``: the message and the set."""
    if cta_group == 1:
        if kind == "i8":
            return "8, 16, 24, 32, then 48 to 256 in steps of 16", {8, 16, 24, *range(32, 257, 16)}
        return "8 to 256 in steps of 8", set(range(8, 257, 8))
    if kind == "i8":
        return "32 to 256 in steps of 32", set(range(32, 257, 32))
    return "16 to 256 in steps of 16", set(range(16, 257, 16))


def _check_idesc(m=None, n=None, dtype=None, trans_a=False, trans_b=False, negate_a=False, negate_b=False,
                 cta_group=1):
    kind = IDESC_TYPES[dtype][0]
    ms = (64, 128) if cta_group == 1 else (128, 256)
    if literal(m) not in ms:
        raise reject("tcgen05.idesc", "m", f"must be {ms[0]} or {ms[1]} (the M of a dense MMA with "
                     f"cta_group={cta_group})", literal(m))
    rule, ns = _valid_n(literal(m), kind, cta_group)
    if literal(n) not in ns:
        raise reject("tcgen05.idesc", "n", f"must be {rule} (the N of a dense kind::{kind} MMA with "
                     f"cta_group={cta_group})", literal(n))
    if (trans_a or trans_b) and dtype in _SUB_BYTE:
        raise reject("tcgen05.idesc", "trans_a" if trans_a else "trans_b", "must be False for the 6- and 4-bit types "
                     "(they are read K-major only)", True)
    if (negate_a or negate_b) and kind == "i8":
        raise reject("tcgen05.idesc", "negate_a" if negate_a else "negate_b", "must be False for integer types", True)


def instruction_descriptor(m, n, dtype, trans_a=False, trans_b=False, negate_a=False, negate_b=False):
    """The 32-bit instruction descriptor of a dense ``kind::f16/tf32/f8f6f4/i8`` MMA (PTX ISA
    Table 42): D's type in bits 4-5 (F32 = 1, S32 = 2), A's in 7-9, B's in 10-12, negate A / B
    in 13 / 14, transpose (MN-major) A / B in 15 / 16, N >> 3 in 17-22, M >> 4 in 24-28; sparsity,
    saturation and the .ws shift 0."""
    kind, a, b = IDESC_TYPES[dtype]
    d = 2 if kind == "i8" else 1
    return (d << 4 | a << 7 | b << 10 | negate_a << 13 | negate_b << 14 | trans_a << 15 | trans_b << 16
            | (n >> 3) << 17 | (m >> 4) << 24)


def _idesc_fields(cc=None, m=None, n=None, dtype=None, trans_a=False, trans_b=False, negate_a=False,
                  negate_b=False, cta_group=1):
    bits = instruction_descriptor(literal(m), literal(n), dtype, trans_a, trans_b, negate_a, negate_b)
    return {"bits": f"{bits:#x}"}


idesc = PtxOp(
    "tcgen05.idesc", "mov.b32 {out}, {bits};",
    (Const("m", 64, 256), Const("n", 8, 256)),
    qualifiers=(Qualifier("dtype", {d: "" for d in IDESC_TYPES}, "bf16"), Qualifier("trans_a", _FLAG, False),
                Qualifier("trans_b", _FLAG, False), Qualifier("negate_a", _FLAG, False),
                Qualifier("negate_b", _FLAG, False), _CTA_GROUP),
    need=SM100A, returns=types.uint32, memory=False, check=_check_idesc, fields=_idesc_fields,
    doc_fields={"bits": "IDESC"},
    tlx=("cute::UMMA::make_instr_desc", "cute::UMMA::InstrDescriptor"),
    doc="""The 32-bit instruction descriptor of a dense ``tcgen05.mma`` (PTX ISA Table 42) of an
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
    """,
    samples=(Sample("out[0] = tcgen05.idesc(128, 256)", "MOV",
                    # D F32 (1 << 4), A and B BF16 (1 << 7, 1 << 10), N 256 >> 3 << 17, M 128 >> 4 << 24
                    only={"dtype": "bf16", "trans_a": False, "trans_b": False, "negate_a": False, "negate_b": False,
                          "cta_group": 1},
                    ptx="mov.b32 %r, 0x8400490;", isa="9.7.16.4.2 Instruction Descriptor; 9.7.9.8 mov"),),
    refusals=(Refusal("out[0] = tcgen05.idesc(96, 128)",
                      "tcgen05.idesc: argument 'm' must be 64 or 128 (the M of a dense MMA with cta_group=1)"),
              Refusal("out[0] = tcgen05.idesc(128, 40, cta_group=2)",
                      "tcgen05.idesc: argument 'n' must be 16 to 256 in steps of 16"),
              Refusal("out[0] = tcgen05.idesc(128, 64, dtype='s8', negate_a=True)",
                      "tcgen05.idesc: argument 'negate_a' must be False for integer types"),
              Refusal("out[0] = tcgen05.idesc(128, 64, dtype='e2m1', trans_b=True)",
                      "tcgen05.idesc: argument 'trans_b' must be False for the 6- and 4-bit types")),
).intrinsic()


# -- the MMA and its completion ------------------------------------------------------------------------

# kind::i8: sm_100a and sm_101a (sm_110a), not sm_103a; the range admits sm_100a to sm_101a
_KIND = Qualifier("kind", {"f16": ".kind::f16", "tf32": ".kind::tf32", "f8f6f4": ".kind::f8f6f4",
                           "i8": Choice(".kind::i8", Requirement((10, 0), (8, 6), arch_specific=True,
                                                                 max_cc=(10, 3)))}, "f16")
_MMA_DOC = """``D = A @ B + D`` (``D = A @ B`` where ``enable_input_d`` is 0, a run-time value),
    issued asynchronously by **one thread**: D is the M x N accumulator in tensor memory at
    ``d_tmem``, {a_is}, B (K x N, K-major) the shared-memory tile named by ``b_desc``
    (:func:`descriptor`), ``idesc`` the instruction descriptor (:func:`idesc`: M, N, the types,
    transposes) of the ``kind`` (``f16`` for f16 / bf16, ``tf32``, ``f8f6f4`` for the 8-, 6- and
    4-bit float types, ``i8``).  K is 32 bytes of each row.  The MMA is complete when the
    mbarrier of a later :func:`commit` completes its phase; ``cta_group=2``: the MMA of a CTA
    pair (M split between the pair's tensor memories)."""

mma = PtxOp(
    "tcgen05.mma",
    """{{
    .reg .pred p;
    setp.ne.b32 p, {enable_input_d}, 0;
    tcgen05.mma{cta_group}{kind} [{d_tmem}], {a_desc}, {b_desc}, {idesc}, p;
    }}""",
    (_tmem_address("d_tmem"), Int("a_desc", bits=64), Int("b_desc", bits=64), Int("idesc", bits=32),
     Int("enable_input_d", bits=32)),
    qualifiers=(_KIND, _CTA_GROUP), need=SM100A,
    tlx=("tlx.async_dot", "gluon blackwell.tcgen05_mma", "cute.nvgpu.tcgen05.MmaF16BF16Op", "cuda::ptx::tcgen05_mma",
         "SM100_MMA_F16BF16_SS"),
    doc=_MMA_DOC.format(a_is="A (M x K, K-major) the shared-memory tile named by the descriptor ``a_desc``") + """

    Example::

        tcgen05.mma(tmem[0], a, b, tcgen05.idesc(128, 256), k)     # bf16 x bf16 -> f32
    """,
    samples=tuple(
        Sample("tcgen05.mma(numba.uint32(out[0]), out[1], out[2], numba.uint32(out[3]), numba.uint32(out[4]))",
               sass, only={"kind": kind, "cta_group": 1},
               ptx=("setp.ne.b32 p, %r, 0;",      # p: the asm block's own predicate
                    f"tcgen05.mma.cta_group::1.kind::{kind} [%r], %rd, %rd, %r, p;"),
               isa="9.7.16.10.9.1 tcgen05.mma")
        for kind, sass in (("f16", "UTCHMMA"), ("tf32", "UTCHMMA"), ("f8f6f4", "UTCQMMA"), ("i8", "UTCIMMA")))
    + (Sample("tcgen05.mma(numba.uint32(out[0]), out[1], out[2], numba.uint32(out[3]), numba.uint32(out[4]))",
              "UTCHMMA.2CTA", only={"kind": "f16", "cta_group": 2},
              ptx=("setp.ne.b32 p, %r, 0;", "tcgen05.mma.cta_group::2.kind::f16 [%r], %rd, %rd, %r, p;"),
              isa="9.7.16.10.9.1 tcgen05.mma"),),
    refusals=(Refusal("tcgen05.mma(0, 0, 0, 0, 1, kind='f4')",
                      "tcgen05.mma: argument 'kind' must be a constant, one of 'f16', 'tf32', 'f8f6f4', 'i8'"),
              Refusal("tcgen05.mma(0, smem, 0, 0, 1)", "tcgen05.mma: argument 'a_desc' must be an integer")),
).intrinsic()

mma_tmem_a = PtxOp(
    "tcgen05.mma_tmem_a",
    """{{
    .reg .pred p;
    setp.ne.b32 p, {enable_input_d}, 0;
    tcgen05.mma{cta_group}{kind} [{d_tmem}], [{a_tmem}], {b_desc}, {idesc}, p;
    }}""",
    (_tmem_address("d_tmem"), _tmem_address("a_tmem"), Int("b_desc", bits=64), Int("idesc", bits=32),
     Int("enable_input_d", bits=32)),
    qualifiers=(_KIND, _CTA_GROUP), need=SM100A,
    tlx=("tlx.async_dot", "cuda::ptx::tcgen05_mma", "SM100_MMA_F16BF16_TS"),
    doc=_MMA_DOC.format(a_is="A (M x K) in tensor memory at ``a_tmem`` (written by :func:`st` or :func:`cp`)") + """

    Example::

        tcgen05.mma_tmem_a(tmem[0], tmem[0] + 256, b, tcgen05.idesc(128, 256), 1)
    """,
    samples=(Sample("tcgen05.mma_tmem_a(numba.uint32(out[0]), numba.uint32(out[1]), out[2], numba.uint32(out[3]), "
                    "numba.uint32(out[4]))", "UTCHMMA", only={"kind": "f16", "cta_group": 1},
                    ptx=("setp.ne.b32 p, %r, 0;", "tcgen05.mma.cta_group::1.kind::f16 [%r], [%r], %rd, %r, p;"),
                    isa="9.7.16.10.9.1 tcgen05.mma"),),
    refusals=(Refusal("tcgen05.mma_tmem_a(0, 0, 0, 0, 1, cta_group=3)",
                      "tcgen05.mma_tmem_a: argument 'cta_group' must be a constant, one of 1, 2"),),
).intrinsic()

commit = PtxOp(
    "tcgen05.commit",
    "tcgen05.commit{cta_group}.mbarrier::arrive::one.shared::cluster{multicast}.b64 [{bar}]{mask};",
    (barrier(), Multicast()), qualifiers=(_CTA_GROUP,), need=SM100A,
    tlx=("tlx.tcgen05_commit", "gluon blackwell.tcgen05_commit", "cute.nvgpu.tcgen05.commit",
         "cuda::ptx::tcgen05_commit", "umma_arrive"),
    doc="""Make the mbarrier ``bar`` track this thread's earlier asynchronous tcgen05 operations
    (MMAs, ``cp``): one arrival on it once they are complete.  ``multicast`` (a 16-bit mask of
    the cluster's CTAs): the arrival is on the barrier at the same offset in each of those CTAs.
    Call it from the thread that issued them.

    Example::

        tcgen05.commit(done)                      # then mbarrier.wait(done, phase)
        tcgen05.commit(empty, cluster.mask_all(cluster.nctarank()))   # every block of the cluster
    """,
    samples=(Sample("tcgen05.commit(bar)", "UTCBAR",   # cta_group=2: UTCBAR.2CTA
                    ptx="tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r];",
                    isa="9.7.16.12.1 tcgen05.commit"),
             Sample("tcgen05.commit(bar, multicast=numba.uint16(out[0]))", "UTCBAR.MULTICAST", only={"cta_group": 1},
                    ptx="tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
                        "[%r], %rs;",
                    isa="9.7.16.12.1 tcgen05.commit")),
    refusals=(Refusal("tcgen05.commit(smem)", "tcgen05.commit: argument 'bar' must be a uint64 shared array"),
              Refusal("tcgen05.commit(bar, 0x10000)", "tcgen05.commit: argument 'multicast' must be in [1, 65535]")),
).intrinsic()


# -- tensor memory <-> registers -------------------------------------------------------------------------

# the data-movement shapes (lanes x bits): the 32-bit registers of one repetition (PTX ISA Table 49)
SHAPE_REGISTERS = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4}
_SHAPE = Qualifier("shape", {s: f".{s}" for s in SHAPE_REGISTERS}, "32x32b")
_REPEATS = (1, 2, 4, 8, 16, 32, 64, 128)


def _check_ld(taddr=None, num=None, shape=None):
    if num * SHAPE_REGISTERS[shape] > 128:
        raise reject("tcgen05.ld", "num", f"must be at most {128 // SHAPE_REGISTERS[shape]} for shape={shape!r} (at "
                     "most 128 registers)", num)


ld = PtxOp(
    "tcgen05.ld", "tcgen05.ld.sync.aligned{shape}{num}.b32 {{{out}}}, [{taddr}];",
    (_tmem_address("taddr"),),
    qualifiers=(Qualifier("num", {n: f".x{n}" for n in _REPEATS}, REQUIRED), _SHAPE), order=("taddr", "num", "shape"),
    need=SM100A, check=_check_ld, returns_regs=lambda num, shape: num * SHAPE_REGISTERS[shape],
    tlx=("tlx.local_load", "cute.nvgpu.tcgen05.Ld32x32bOp", "cuda::ptx::tcgen05_ld_32x32b",
         "SM100_TMEM_LOAD_32dp32b1x"),
    doc="""Load from tensor memory at ``taddr`` into registers, collectively for the warp
    (``.sync.aligned``): ``shape`` (lanes x bits: ``32x32b``, ``16x64b``, ``16x128b``,
    ``16x256b``) repeated ``num`` times along the columns (a constant 1 to 128); returns the
    thread's ``num`` x (1, 1, 2 or 4) 32-bit registers as a tuple of uint32 (float32 bits:
    ``cuda.libdevice.int_as_float``).  With ``32x32b``, thread ``l`` of the warp gets lane
    ``l`` of the warp's 32 (``taddr``'s lane), columns ``col`` to ``col + num - 1``.  The
    registers are valid after :func:`wait_ld`.

    Example::

        acc = tcgen05.ld(tmem[0] + ((32 * (warp % 4)) << 16), 32)   # 32 columns of this warp's lanes
        tcgen05.wait_ld()
    """,
    # a row passes its qualifiers (``only``: num= and shape=) as keywords to the call
    samples=(Sample("r = tcgen05.ld(numba.uint32(out[0]))\nout[1] = r[0] + r[3]", "LDTM.x4",
                    only={"num": 4, "shape": "32x32b"},
                    ptx="tcgen05.ld.sync.aligned.32x32b.x4.b32 {%r, %r, %r, %r}, [%r];",
                    isa="9.7.16.8.3 tcgen05.ld"),
             Sample("r = tcgen05.ld(numba.uint32(out[0]))\nout[1] = r[0] + r[7]", "LDTM.16",
                    only={"num": 2, "shape": "16x256b"},
                    ptx="tcgen05.ld.sync.aligned.16x256b.x2.b32 {%r, %r, %r, %r, %r, %r, %r, %r}, [%r];",
                    isa="9.7.16.8.3 tcgen05.ld")),
    refusals=(Refusal("r = tcgen05.ld(numba.uint32(out[0]), 64, shape='16x256b')",
                      "tcgen05.ld: argument 'num' must be at most 32 for shape='16x256b' (at most 128 registers)"),
              Refusal("r = tcgen05.ld(numba.uint32(out[0]), 3)",
                      "tcgen05.ld: argument 'num' must be a constant, one of 1, 2, 4, 8, 16, 32, 64, 128")),
).intrinsic()


class Registers(Operand):
    """A tuple of 1, 2, 4, ... 128 numbers, each a 32-bit register (``r``): an integer as its low 32
    bits, a float as the bits of its float32."""

    annotation = "tuple[int | float, ...]"

    def check(self, op_name, ty):
        if not (isinstance(ty, types.BaseTuple) and all(isinstance(t, (types.Integer, types.Float)) for t in ty)):
            raise reject(op_name, self.name, "must be a tuple of numbers (32-bit registers)", ty)
        if len(ty) not in _REPEATS:
            raise reject(op_name, self.name, "must hold 1, 2, 4, 8, 16, 32, 64 or 128 registers", len(ty))

    def lower(self, host, ty, val):
        return [(host.as_bits(host.convert(v, t, types.float32)) if isinstance(t, types.Float) else
                 host.convert(v, t, types.uint32), "r") for v, t in host.items(val, ty)]

    def doc_keys(self):
        return {self.name: "r0, r1, ..."}


def _check_st(taddr=None, values=None, shape=None):
    per = SHAPE_REGISTERS[shape]
    if len(values) < per:
        raise reject("tcgen05.st", "values", f"must hold a multiple of {per} registers for shape={shape!r}",
                     len(values))


st = PtxOp(
    "tcgen05.st", "tcgen05.st.sync.aligned{shape}.x{num}.b32 [{taddr}], {{{values}}};",
    (_tmem_address("taddr"), Registers("values")),
    qualifiers=(_SHAPE,), need=SM100A, check=_check_st,
    fields=lambda cc=None, values=None, shape=None, **_: {"num": len(values) // SHAPE_REGISTERS[shape]},
    doc_fields={"num": "N"},
    tlx=("tlx.local_store", "cute.nvgpu.tcgen05.St32x32bOp", "cuda::ptx::tcgen05_st_32x32b"),
    doc="""Store the thread's registers ``values`` (a tuple of 1, 2, 4, ... 128 numbers: integers as
    their low 32 bits, floats as float32 bits) into tensor memory at ``taddr``, collectively for the
    warp: the layout of
    :func:`ld` with the same ``shape``, repeated ``len(values) / (1, 1, 2 or 4)`` times.  The
    tensor memory holds them after :func:`wait_st`.

    Example::

        tcgen05.st(tmem[0] + ((32 * (warp % 4)) << 16), (a0, a1, a2, a3))
        tcgen05.wait_st()
    """,
    samples=(Sample("tcgen05.st(numba.uint32(out[0]), (numba.uint32(out[1]), numba.uint32(out[2])))", "STTM.x2",
                    only={"shape": "32x32b"}, ptx="tcgen05.st.sync.aligned.32x32b.x2.b32 [%r], {%r, %r};",
                    isa="9.7.16.8.4 tcgen05.st"),),
    refusals=(Refusal("tcgen05.st(numba.uint32(out[0]), (numba.uint32(1), numba.uint32(2)), shape='16x256b')",
                      "tcgen05.st: argument 'values' must hold a multiple of 4 registers for shape='16x256b'"),
              Refusal("tcgen05.st(numba.uint32(out[0]), (numba.uint32(1), numba.uint32(2), numba.uint32(3)))",
                      "tcgen05.st: argument 'values' must hold 1, 2, 4, 8, 16, 32, 64 or 128 registers")),
).intrinsic()

wait_ld = PtxOp(
    "tcgen05.wait_ld", "tcgen05.wait::ld.sync.aligned;", need=SM100A,
    tlx=("cute.arch.fence_view_async_tmem_load", "cuda::ptx::tcgen05_wait_ld"),
    doc="""Wait until the warp's earlier :func:`ld` are complete (their registers valid).

    Example::

        tcgen05.wait_ld()
    """,
    # no instruction of its own: alone, nothing; after an ld, ptxas waits on the LDTM's scoreboard
    # (the wait bits of a NOP before the registers' first use)
    samples=(Sample("tcgen05.wait_ld()", "", ptx="tcgen05.wait::ld.sync.aligned;", isa="9.7.16.8.5 tcgen05.wait"),),
    refusals=(Refusal("tcgen05.wait_ld(0)", "numba_tma: tcgen05.wait_ld takes (): too many positional"),),
).intrinsic()

wait_st = PtxOp(
    "tcgen05.wait_st", "tcgen05.wait::st.sync.aligned;", need=SM100A,
    tlx=("cute.arch.fence_view_async_tmem_store", "cuda::ptx::tcgen05_wait_st"),
    doc="""Wait until the warp's earlier :func:`st` are complete (the tensor memory written).

    Example::

        tcgen05.wait_st()
    """,
    samples=(Sample("tcgen05.wait_st()", "FENCE.VIEW.ASYNC.T", ptx="tcgen05.wait::st.sync.aligned;",
                    isa="9.7.16.8.5 tcgen05.wait"),),
    refusals=(Refusal("tcgen05.wait_st(0)", "numba_tma: tcgen05.wait_st takes (): too many positional"),),
).intrinsic()


# -- shared memory -> tensor memory ------------------------------------------------------------------------

cp = PtxOp(
    "tcgen05.cp", "tcgen05.cp{cta_group}.{shape} [{taddr}], {sdesc};",
    (_tmem_address("taddr"), Int("sdesc", bits=64)),
    qualifiers=(Qualifier("shape", {s: s for s in ("128x256b", "128x128b", "4x256b", "64x128b.warpx2::02_13",
                                                   "64x128b.warpx2::01_23", "32x128b.warpx4")}, "128x256b"),
                _CTA_GROUP),
    need=SM100A,
    tlx=("cute.nvgpu.tcgen05.Cp128x256bOp", "cuda::ptx::tcgen05_cp_128x256b", "SM100_UTCCP_128dp256bit_1cta"),
    doc="""Copy a matrix from shared memory (named by the descriptor ``sdesc``, :func:`descriptor`)
    into tensor memory at ``taddr``, asynchronously, issued by one thread: ``shape`` (lanes x bits
    per lane) ``128x256b``, ``128x128b``, ``4x256b``, or the multicast forms ``64x128b.warpx2::02_13``
    / ``64x128b.warpx2::01_23`` (to the warp pairs 0-2 and 1-3, or 0-1 and 2-3, half each) and
    ``32x128b.warpx4`` (to all four warps' lanes).  Complete when the mbarrier of a later
    :func:`commit` completes its phase (and ordered before later MMAs of the same thread).

    Example::

        tcgen05.cp(tmem[0] + 256, tcgen05.descriptor(at(scales, s), desc_s, 0, 0))
    """,
    # the other shapes: UTCCP.T.S.128 (128x128b), UTCCP.T.S.4 (4x256b), UTCCP.T.S.2x64 (64x128b.warpx2)
    samples=(Sample("tcgen05.cp(numba.uint32(out[0]), out[1])", "UTCCP.T.S", only={"shape": "128x256b", "cta_group": 1},
                    ptx="tcgen05.cp.cta_group::1.128x256b [%r], %rd;", isa="9.7.16.9.2 tcgen05.cp"),
             Sample("tcgen05.cp(numba.uint32(out[0]), out[1])", "UTCCP.T.S.4x32",
                    only={"shape": "32x128b.warpx4", "cta_group": 1},
                    ptx="tcgen05.cp.cta_group::1.32x128b.warpx4 [%r], %rd;", isa="9.7.16.9.2 tcgen05.cp")),
    refusals=(Refusal("tcgen05.cp(numba.uint32(out[0]), out[1], shape='64x128b')",
                      "tcgen05.cp: argument 'shape' must be a constant, one of '128x256b'"),),
).intrinsic()


# -- ordering around thread synchronisation -------------------------------------------------------------------

fence_before_thread_sync = PtxOp(
    "tcgen05.fence_before_thread_sync", "tcgen05.fence::before_thread_sync;", need=SM100A,
    tlx=("cuda::ptx::tcgen05_fence_before_thread_sync",),
    doc="""Order this thread's earlier asynchronous tcgen05 operations before the thread
    synchronisation that follows (``cuda.syncthreads()``, an mbarrier arrive): what another
    thread does after that synchronisation sees them issued.

    Example::

        tcgen05.fence_before_thread_sync()
        cuda.syncthreads()
    """,
    # ptxas emits no instruction of its own (an ordering constraint on its scheduling)
    samples=(Sample("tcgen05.fence_before_thread_sync()", "",
                    ptx="tcgen05.fence::before_thread_sync;", isa="9.7.16.11.1 tcgen05.fence"),),
    refusals=(Refusal("tcgen05.fence_before_thread_sync(0)",
                      "numba_tma: tcgen05.fence_before_thread_sync takes (): too many positional"),),
).intrinsic()

fence_after_thread_sync = PtxOp(
    "tcgen05.fence_after_thread_sync", "tcgen05.fence::after_thread_sync;", need=SM100A,
    tlx=("cuda::ptx::tcgen05_fence_after_thread_sync",),
    doc="""Order the thread synchronisation before it (``cuda.syncthreads()``, an mbarrier wait)
    before this thread's later asynchronous tcgen05 operations: e.g. the MMA that reads what
    another thread's ``st`` wrote, or the ``ld`` of an accumulator whose commit was waited for.

    Example::

        mbarrier.wait(done, phase)
        tcgen05.fence_after_thread_sync()
    """,
    # ptxas emits no instruction of its own (an ordering constraint on its scheduling)
    samples=(Sample("tcgen05.fence_after_thread_sync()", "",
                    ptx="tcgen05.fence::after_thread_sync;", isa="9.7.16.11.1 tcgen05.fence"),),
    refusals=(Refusal("tcgen05.fence_after_thread_sync(0)",
                      "numba_tma: tcgen05.fence_after_thread_sync takes (): too many positional"),),
).intrinsic()


__all__ = exported("tcgen05")
