"""Bulk copies (``cp.async.bulk``): contiguous byte ranges between global and shared memory,
shared-to-global reductions, L2 prefetch, and the bulk async-groups that TMA stores use too.

``nbytes`` is a multiple of 16 (refused at compile time when constant); both addresses must be
16-byte aligned.  Shared -> global copies complete through *bulk async-groups*: ``commit_group()``
closes the group of copies this thread issued, ``wait_group(n)`` waits until at most ``n`` groups
are pending, ``wait_group_read(n)`` only until their *sources* were read (the shared buffer may be
reused).  The same three are ``numba_tma.tma.commit_group`` etc.
"""

from numba.cuda import types

from . import debug
from ._core import (IMMEDIATE, Refusal, REQUIRED, CacheHint, Const, GlobalArray, Int, Multicast, PtxOp, Qualifier, Requirement, Sample,
                    SharedArray, SharedRef, exported, literal, reject)
from ..reductions import BULK_REDUCE_TYPES
from .mbarrier import barrier

SM100 = Requirement((10, 0), (8, 6))
# PTX ISA 9.1 sections the assembly rows' hand-written PTX comes from
_BULK = "9.7.9.25.4.1 cp.async.bulk"
_COMPLETION = "9.7.9.27.2"   # bulk and tensor copy completion instructions


NBYTES_RULE = "must be a multiple of 16 bytes (whole 16-byte chunks), from 16 to 2**32 - 16"


def nbytes_operand(name="nbytes"):
    return Int(name, lo=16, hi=(1 << 32) - 16, rule=NBYTES_RULE)


# a copy completing on an mbarrier counts its bytes in the barrier's transaction count
BARRIER_NBYTES_RULE = ("must be a multiple of 16 bytes, from 16 to 2**20 - 16: the copy completes on one "
                       "mbarrier, whose transaction count holds at most 2**20 - 1 bytes")


def barrier_nbytes_operand(name="nbytes"):
    return Int(name, lo=16, hi=(1 << 20) - 16, rule=BARRIER_NBYTES_RULE)


def check_nbytes(op, nbytes):
    value = literal(nbytes)
    if isinstance(value, int) and value % 16:
        raise reject(op, "nbytes", NBYTES_RULE, value)


def debug_bytes(op_name, arrays):
    """Debug mode for a bulk copy of ``nbytes`` between ``arrays`` (operand names): the size a
    multiple of 16, each address 16-byte aligned, and each array (not an ``at()`` address, whose
    extent is unknown) holding at least ``nbytes`` from element 0 — so a run-time size never
    copies past an array."""
    def check(d, tys, args):
        nbytes = d.int64(args["nbytes"], tys["nbytes"])
        debug.check_multiple(d, op_name, "nbytes", nbytes, 1, 16, "a bulk copy moves whole 16-byte chunks")
        for name in arrays:
            ty, val = tys[name], args[name]
            if isinstance(ty, SharedRef):
                address = val
            else:
                address = d.generic_address(val, ty)
                debug.check_holds(d, op_name, name, d.array_bytes(val, ty), nbytes)
            debug.check_aligned(d, op_name, name, address, 16, "a bulk copy's addresses are 16-byte aligned")
    return check


commit_group = PtxOp(
    "bulk.commit_group", "cp.async.bulk.commit_group;",
    tlx=("cute.arch.cp_async_bulk_commit_group", "cuda::ptx::cp_async_bulk_commit_group"),
    samples=(Sample("bulk.store(desc, smem, 64)\nbulk.commit_group()", "UBLKCP.G.S",
                    ptx="cp.async.bulk.commit_group;", isa=f"{_COMPLETION}.1 cp.async.bulk.commit_group"),),
    doc="""Close the bulk async-group of the shared -> global copies (``bulk.store``, ``tma.store``,
    reductions) this thread issued since the last commit.

    Example::

        tma.store(desc, tile, (x, y))
        bulk.commit_group()
        bulk.wait_group_read(0)
    """,
    refusals=(Refusal('bulk.commit_group(1)',
                      'numba_tma: bulk.commit_group takes (): too many positional arguments'),),
).intrinsic()

wait_group = PtxOp(
    "bulk.wait_group", "cp.async.bulk.wait_group {n};", (Const("n", 0, 63),),
    tlx=("tlx.async_descriptor_store_wait", "cuda::ptx::cp_async_bulk_wait_group"),
    samples=(Sample("bulk.store(desc, smem, 64)\nbulk.commit_group()\nbulk.wait_group(0)", "DEPBAR",
                    ptx="cp.async.bulk.wait_group 0;", isa=f"{_COMPLETION}.2 cp.async.bulk.wait_group"),),
    doc="""Wait until at most ``n`` (a constant, 0-63) of this thread's bulk async-groups are pending:
    their writes are done and visible.

    Example::

        bulk.wait_group(0)
    """,
    refusals=(Refusal('bulk.wait_group(64)',
                      "bulk.wait_group: argument 'n' must be in [0, 63]"),
              Refusal('bulk.wait_group(out[0])',
                      "bulk.wait_group: argument 'n' must be a compile-time integer constant", constant_only=IMMEDIATE),),
).intrinsic()

wait_group_read = PtxOp(
    "bulk.wait_group_read", "cp.async.bulk.wait_group.read {n};", (Const("n", 0, 63),),
    tlx=("cute.arch.cp_async_bulk_wait_group(read=True)", "cuda::ptx::cp_async_bulk_wait_group_read"),
    samples=(Sample("bulk.store(desc, smem, 64)\nbulk.commit_group()\nbulk.wait_group_read(1)", "DEPBAR",
                    ptx="cp.async.bulk.wait_group.read 1;", isa=f"{_COMPLETION}.2 cp.async.bulk.wait_group"),),
    doc="""Wait until at most ``n`` (a constant, 0-63) of this thread's bulk async-groups still have
    to *read* their shared-memory sources: the source buffers of the others may be overwritten.

    Example::

        bulk.wait_group_read(0)      # the tile may be refilled now
    """,
    refusals=(Refusal('bulk.wait_group_read(-1)',
                      "bulk.wait_group_read: argument 'n' must be in [0, 63]"),),
).intrinsic()

load = PtxOp(
    "bulk.load",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{multicast}{cache_hint} [{dst}], [{src}],"
    " {nbytes}, [{bar}]{mask}{policy};",
    (SharedArray("dst", what="a shared array (the destination)"), GlobalArray("src"), barrier_nbytes_operand(), barrier(),
     CacheHint(), Multicast()),
    check=lambda nbytes, **_: check_nbytes("bulk.load", nbytes), debug=debug_bytes("bulk.load", ("dst", "src")),
    tlx=("cute.nvgpu.cpasync.CopyBulkG2SOp", "cuda::ptx::cp_async_bulk"),
    samples=(Sample("bulk.load(smem, desc, 64, bar)", "UBLKCP.S.G", isa=_BULK,
                    ptx="cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r], [%rd], %r, [%r];"),
             Sample("bulk.load(smem, desc, 64, bar, cache_hint=out[1])", "UBLKCP.S.G", isa=_BULK,
                    ptx="cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
                        "[%r], [%rd], %r, [%r], %rd;"),
             Sample("bulk.load(smem, desc, 64, bar, multicast=out[1])", "UBLKCP.S.G.MULTICAST", isa=_BULK,
                    ptx="cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                        "[%r], [%rd], %r, [%r], %rs;")),
    doc="""Copy ``nbytes`` bytes from global memory (``src``, element 0) to shared memory (``dst``),
    completing on the mbarrier ``bar`` (``arrive_expect_tx(bar, nbytes)`` first).  ``multicast``: a
    16-bit mask of the cluster's CTAs that also receive the bytes (as for ``tma.load``).

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, 4096)
            bulk.load(buf, a[row], 4096, bars)        # one row of a pitched 2-D array
        mbarrier.wait(bars, 0)
    """,
    refusals=(Refusal('bulk.load(smem, desc, 20, bar)',
                      "bulk.load: argument 'nbytes' must be a multiple of 16 bytes"),
              Refusal('bulk.load(smem, desc, 64, bar, multicast=0)',
                      "bulk.load: argument 'multicast' must be in [1, 65535]"),
              Refusal('bulk.load(smem, desc, 1 << 20, bar)',
                      "bulk.load: argument 'nbytes' must be a multiple of 16 bytes, from 16 to 2**20 - 16: the copy "
                      "completes on one mbarrier, whose transaction count holds at most 2**20 - 1 bytes; got 1048576"),),
).intrinsic()

store = PtxOp(
    "bulk.store", "cp.async.bulk.global.shared::cta.bulk_group{cache_hint} [{dst}], [{src}], {nbytes}{policy};",
    (GlobalArray("dst"), SharedArray("src", what="a shared array (the source)"), nbytes_operand(), CacheHint()),
    check=lambda nbytes, **_: check_nbytes("bulk.store", nbytes), debug=debug_bytes("bulk.store", ("dst", "src")),
    tlx=("tlx.async_store", "cute.nvgpu.cpasync.CopyBulkS2GOp", "cuda::ptx::cp_async_bulk"),
    samples=(Sample("bulk.store(desc, smem, 64)", "UBLKCP.G.S", isa=_BULK,
                    ptx="cp.async.bulk.global.shared::cta.bulk_group [%rd], [%r], %r;"),
             Sample("bulk.store(desc, smem, 64, cache_hint=out[1])", "UBLKCP.G.S", isa=_BULK,
                    ptx="cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd], [%r], %r, %rd;")),
    doc="""Copy ``nbytes`` bytes from shared memory (``src``) to global memory (``dst``); completes
    through the bulk async-groups (:func:`commit_group`, :func:`wait_group`).  Write ``src`` with
    ordinary stores, then ``fence.proxy_async()`` before this op reads it.

    Example::

        fence.proxy_async()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            bulk.store(out[row], buf, 4096)
            bulk.commit_group()
            bulk.wait_group(0)
    """,
    refusals=(Refusal('bulk.store(desc, 1, 64)',
                      "bulk.store: argument 'src' must be a shared array"),),
).intrinsic()

store_bytemask = PtxOp(
    "bulk.store_bytemask",
    "cp.async.bulk.global.shared::cta.bulk_group{cache_hint}.cp_mask [{dst}], [{src}], {nbytes}{policy}, {mask};",
    (GlobalArray("dst"), SharedArray("src", what="a shared array (the source)"), nbytes_operand(), Int("mask", bits=16),
     CacheHint()),
    need=SM100, check=lambda nbytes, **_: check_nbytes("bulk.store_bytemask", nbytes),
    debug=debug_bytes("bulk.store_bytemask", ("dst", "src")),
    tlx=("cute.nvgpu.cpasync.CopyBulkS2GByteMaskOp", "cuda::ptx::cp_async_bulk_cp_mask"),
    samples=(Sample("bulk.store_bytemask(desc, smem, 64, 0x00FF)", "UBLKCP.G.S", isa=_BULK,
                    ptx="cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd], [%r], %r, %rs;"),),
    doc="""Like :func:`store`, writing only the bytes whose bit in the 16-bit ``mask`` is set, in
    every 16-byte chunk (bit ``i`` is byte ``i`` of the chunk).

    Example::

        bulk.store_bytemask(out[row], buf, 4096, 0x0F0F)
    """,
    refusals=(Refusal('bulk.store_bytemask(desc, smem, 64, 0x10000)',
                      "bulk.store_bytemask: argument 'mask' must be in [0, 65535]"),),
).intrinsic()

# The reductions a shared -> global bulk reduce has, by the source's element type (PTX ISA,
# cp.reduce.async.bulk): the PTX type suffix, per op.
_TYPE = {types.uint32: "u32", types.int32: "s32", types.uint64: "u64", types.int64: "s64", types.float32: "f32",
         types.float64: "f64", types.float16: "f16"}
_BITS = {"u32": "b32", "s32": "b32", "u64": "b64", "s64": "b64"}
REDUCE_OPS = tuple(BULK_REDUCE_TYPES)


# The assembly rows of bulk.reduce: (op, element type, ``.redOp.type`` as PTX ISA 9.7.9.25.4.2
# spells it for that element type: ``.noftz`` on f16 adds, ``.b32``/``.b64`` for the bit-size ops).
_REDUCE_ROWS = (
    ("add", "uint32", "add.u32"), ("add", "int32", "add.s32"), ("add", "uint64", "add.u64"),
    ("add", "float32", "add.f32"), ("add", "float64", "add.f64"), ("add", "float16", "add.noftz.f16"),
    ("min", "uint32", "min.u32"), ("min", "int32", "min.s32"), ("min", "uint64", "min.u64"),
    ("min", "int64", "min.s64"), ("min", "float16", "min.f16"),
    ("max", "uint32", "max.u32"), ("max", "int32", "max.s32"), ("max", "uint64", "max.u64"),
    ("max", "int64", "max.s64"), ("max", "float16", "max.f16"),
    ("inc", "uint32", "inc.u32"), ("dec", "uint32", "dec.u32"),
    ("and", "uint32", "and.b32"), ("and", "int32", "and.b32"), ("and", "uint64", "and.b64"),
    ("and", "int64", "and.b64"),
    ("or", "uint32", "or.b32"), ("or", "int32", "or.b32"), ("or", "uint64", "or.b64"), ("or", "int64", "or.b64"),
    ("xor", "uint32", "xor.b32"), ("xor", "int32", "xor.b32"), ("xor", "uint64", "xor.b64"),
    ("xor", "int64", "xor.b64"),
)


def _reduce_suffix(op, ptx):
    """The instruction's type suffix: bit types for the logical ops, ``.noftz`` for f16 adds."""
    if op in ("and", "or", "xor"):
        return "." + _BITS[ptx]
    return (".noftz" if ptx == "f16" and op == "add" else "") + "." + ptx


def _reduce_type(op, src):
    ptx = _TYPE.get(src.dtype)
    if ptx not in BULK_REDUCE_TYPES[op]:
        allowed = ", ".join(t for t in BULK_REDUCE_TYPES[op])
        raise reject("bulk.reduce", "src", f"must have elements of a type reduce op {op!r} takes ({allowed})", src)
    return _reduce_suffix(op, ptx)


reduce = PtxOp(
    "bulk.reduce",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group{cache_hint}.{op}{type} [{dst}], [{src}], {nbytes}{policy};",
    (GlobalArray("dst"), SharedArray("src", what="a shared array (the source)"), nbytes_operand(), CacheHint()),
    qualifiers=(Qualifier("op", {o: o for o in REDUCE_OPS}, REQUIRED),),
    order=("dst", "src", "nbytes", "op", "cache_hint"),
    check=lambda nbytes, src, op, **_: (check_nbytes("bulk.reduce", nbytes), _reduce_type(op, src)),
    debug=debug_bytes("bulk.reduce", ("dst", "src")),
    fields=lambda cc, src, op, **_: {"type": _reduce_type(op, src)},
    doc_fields={"type": ".u32"},
    tlx=("cuda::ptx::cp_reduce_async_bulk",),
    samples=tuple(Sample(f"bulk.reduce(desc, cuda.shared.array(64, types.{dtype}), 64)", f"UBLKRED.G.S.{op.upper()}",
                         only={"op": op}, isa="9.7.9.25.4.2 cp.reduce.async.bulk",
                         ptx=f"cp.reduce.async.bulk.global.shared::cta.bulk_group.{op_type} [%rd], [%r], %r;")
                  for op, dtype, op_type in _REDUCE_ROWS),
    doc="""Reduce ``nbytes`` bytes of shared memory (``src``) into global memory (``dst``) element-wise
    with ``op`` (``add``, ``min``, ``max``, ``inc``, ``dec``, ``and``, ``or``, ``xor``), atomically
    per element; the element type is ``src``'s, checked against the op at compile time (PTX ISA:
    add on u32/s32/u64/f32/f64/f16, min/max on u32/s32/u64/s64/f16, inc/dec on u32, and/or/xor on
    32- and 64-bit integers).  Completes through the bulk async-groups.

    Example::

        bulk.reduce(totals, partial, 4096, "add")
        bulk.commit_group()
    """,
    refusals=(Refusal("bulk.reduce(desc, cuda.shared.array(64, types.uint32), 64, op='mul')",
                      "bulk.reduce: argument 'op' must be a constant, one of 'add'"),),
).intrinsic()

prefetch = PtxOp(
    "bulk.prefetch", "cp.async.bulk.prefetch.L2.global{cache_hint} [{src}], {nbytes}{policy};",
    (GlobalArray("src"), nbytes_operand(), CacheHint()),
    check=lambda nbytes, **_: check_nbytes("bulk.prefetch", nbytes), debug=debug_bytes("bulk.prefetch", ("src",)),
    tlx=("cuda::ptx::cp_async_bulk_prefetch",),
    samples=(Sample("bulk.prefetch(desc, 256)", "UBLKPF.L2", ptx="cp.async.bulk.prefetch.L2.global [%rd], %r;",
                    isa="9.7.9.25.4.3 cp.async.bulk.prefetch"),),
    doc="""Prefetch ``nbytes`` bytes of global memory starting at ``src`` into L2.

    Example::

        bulk.prefetch(a[row + 1], 4096)
    """,
    refusals=(Refusal('bulk.prefetch(desc, 8)',
                      "bulk.prefetch: argument 'nbytes' must be a multiple of 16 bytes"),),
).intrinsic()

__all__ = exported("bulk")
