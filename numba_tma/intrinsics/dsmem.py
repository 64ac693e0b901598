"""Distributed shared memory (sm_90): asynchronous stores, reductions and bulk copies into the
shared memory of another block of the cluster, each completing on an mbarrier *in that block*.

Every op names a location of this block's shared memory (``dst``, a shared array or
``at(array, i)``) and a barrier ``bar`` of this block; the op writes the same offset in block
``cta_rank`` of the cluster (``mapa``) and signals the barrier at ``bar``'s offset there with the
bytes written (``complete_tx``), so the receiving block waits exactly as for a TMA load::

    # receiver (block r), before:  mbarrier.arrive_expect_tx(bar, 16); mbarrier.wait(bar, phase)
    dsmem.store_async(inbox, (a, b, c, d), bar, r)      # sender: 16 bytes into block r's inbox

The receiver's barrier must be initialised before any block sends to it: ``mbarrier.init``,
``fence.mbarrier_init()`` and a ``cluster.sync()`` in every block.  For a plain synchronous
remote load or store use :func:`numba_tma.cluster.map_shared`.
"""

from numba.cuda import types

from ..reductions import CLUSTER_REDUCE_TYPES
from ._core import Refusal, REQUIRED, Int, PtxOp, Qualifier, Requirement, Sample, SharedArray, Value, exported, reject
from .bulk import barrier_nbytes_operand, check_nbytes, debug_bytes
from .mbarrier import barrier

STORE = Requirement((9, 0), (8, 1))   # st.async, red.async
COPY = Requirement((9, 0), (8, 0))    # cp.async.bulk / cp.reduce.async.bulk to shared::cluster

_MAP = (" .reg .b32 remote_dst, remote_bar;\n mapa.shared::cluster.u32 remote_dst, {dst}, {cta_rank};\n"
        " mapa.shared::cluster.u32 remote_bar, {bar}, {cta_rank};\n")


def _dst(what="this block's shared array whose offset is written in block cta_rank"):
    return SharedArray("dst", what=what)


def _rank():
    return Int("cta_rank", hi=15)


def _copy_operands():
    """``(dst, src, nbytes, bar, cta_rank)`` of the bulk copies into another block."""
    return _dst(), SharedArray("src", what="a shared array (this block's source)"), barrier_nbytes_operand(), barrier(), _rank()


_PTX_TYPE = {types.uint32: "u32", types.int32: "s32", types.uint64: "u64", types.int64: "s64"}


def _same_elements(dst, src):
    if dst.dtype != src.dtype:
        raise reject("dsmem.reduce_copy_async", "dst", f"must hold the elements of src ({src.dtype})", dst.dtype)


def _reduce_type(name, arg, op, dtype):
    """The PTX type suffix of reduction ``op`` on elements of ``dtype``; an int64 add is a u64 add
    (the same bits)."""
    ptx = _PTX_TYPE.get(dtype)
    if ptx and op in ("and", "or", "xor"):
        ptx = "b" + ptx[1:]
    if ptx == "s64" and op == "add":
        ptx = "u64"
    if ptx not in CLUSTER_REDUCE_TYPES[op]:
        allowed = {"u32": "uint32", "s32": "int32", "u64": "uint64 (or int64)", "b32": "int32/uint32"}
        raise reject(name, arg, f"must have elements of a type reduce op {op!r} takes "
                     f"({', '.join(allowed[t] for t in CLUSTER_REDUCE_TYPES[op])})", dtype)
    return "." + ptx


# PTX ISA 9.1 sections of the assembly rows' hand-written PTX
_MAPA = "9.7.9.23 mapa"
_ST_ASYNC = f"{_MAPA}; 9.7.9.12 st.async"


def _mapped(line):
    """A row's PTX: the two ``mapa`` of the destination and the barrier into block ``cta_rank``, then
    ``line``, the op's instruction on them."""
    return ("mapa.shared::cluster.u32 remote_dst, %r, %r;", "mapa.shared::cluster.u32 remote_bar, %r, %r;", line)


# (op, element type, ``.op.type`` as PTX ISA spells it) for each reduction into shared::cluster:
# the assembly rows of red.async (9.7.13.7) and cp.reduce.async.bulk (9.7.9.25.4.2), which take the
# same pairs
_REDUCE_ROWS = (("add", "uint32", "add.u32"), ("add", "int32", "add.s32"), ("add", "uint64", "add.u64"),
                ("min", "uint32", "min.u32"), ("min", "int32", "min.s32"),
                ("max", "uint32", "max.u32"), ("max", "int32", "max.s32"),
                ("inc", "uint32", "inc.u32"), ("dec", "uint32", "dec.u32"),
                ("and", "uint32", "and.b32"), ("or", "uint32", "or.b32"), ("xor", "uint32", "xor.b32"))


store_async = PtxOp(
    "dsmem.store_async",
    "{{\n" + _MAP + " st.async.shared::cluster.mbarrier::complete_tx::bytes{vec}{bits} [remote_dst], {value},"
    " [remote_bar];\n}}",
    (_dst(), Value("value", like="dst"), barrier(), _rank()),
    need=STORE,
    tlx=("tlx.async_remote_shmem_store", "cute.arch.store_async_dsmem", "cute.nvgpu.CopyDsmemStoreOp",
         "cuda::ptx::st_async"),
    samples=(Sample("dsmem.store_async(smem, 1.5, bar, 1)", "STAS", {"vec": "", "bits": ".b32"}, isa=_ST_ASYNC,
                    ptx=_mapped("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [remote_dst], %r, "
                                "[remote_bar];")),
             Sample("dsmem.store_async(smem, (1.0, 2.0, 3.0, 4.0), bar, 1)", "STAS", {"vec": ".v4", "bits": ".b32"},
                    isa=_ST_ASYNC, ptx=_mapped("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 "
                                               "[remote_dst], {%r, %r, %r, %r}, [remote_bar];")),
             Sample("dsmem.store_async(bar[2:], (out[0], out[1]), bar, 1)", "STAS", {"vec": ".v2", "bits": ".b64"},
                    isa=_ST_ASYNC, ptx=_mapped("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b64 "
                                               "[remote_dst], {%rd, %rd}, [remote_bar];"))),
    doc="""Store ``value`` into block ``cta_rank``'s copy of ``dst`` (the same offset in its shared
    memory) and signal that block's barrier at ``bar``'s offset with the bytes stored.  ``value``
    is a number or a tuple of 2 or 4, converted to ``dst``'s element type (32 or 64 bits; at most
    128 bits in all: a 4-tuple needs 32-bit elements).  The address must be aligned to the bytes
    stored (16 for a 4 x 32-bit tuple).

    Example::

        # every block sends its partial sums to block 0's inbox, slot = its rank
        dsmem.store_async(at(inbox, 4 * rank), (s0, s1, s2, s3), at(bars, 0), 0)
    """,
    refusals=(Refusal('dsmem.store_async(smem, (1.0, 2.0, 3.0), bar, 1)',
                      "dsmem.store_async: argument 'value' must be one number or a tuple of 2 or 4"),),
).intrinsic()

reduce_async = PtxOp(
    "dsmem.reduce_async",
    "{{\n" + _MAP + " red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.{op}{type}"
    " [remote_dst], {value}, [remote_bar];\n}}",
    (_dst(), Value("value", like="dst", lengths=(1,), max_bits=64), barrier(), _rank()),
    qualifiers=(Qualifier("op", {o: o for o in CLUSTER_REDUCE_TYPES}, REQUIRED),),
    order=("dst", "value", "bar", "cta_rank", "op"),
    need=STORE,
    check=lambda dst, op, **_: _reduce_type("dsmem.reduce_async", "dst", op, dst.dtype),
    fields=lambda cc, dst, op, **_: {"type": _reduce_type("dsmem.reduce_async", "dst", op, dst.dtype)},
    doc_fields={"type": ".u32"},
    tlx=("cuda::ptx::red_async",),
    samples=tuple(Sample(f"dsmem.reduce_async(cuda.shared.array(8, types.{dtype}), 3, bar, 1)", "REDAS",
                         only={"op": op}, isa=f"{_MAPA}; 9.7.13.7 red.async",
                         ptx=_mapped(f"red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.{op_type} "
                                     f"[remote_dst], {'%rd' if '64' in dtype else '%r'}, [remote_bar];"))
                  for op, dtype, op_type in _REDUCE_ROWS),
    doc="""Reduce ``value`` into block ``cta_rank``'s copy of ``dst`` with ``op`` (``add``, ``min``,
    ``max``, ``inc``, ``dec``, ``and``, ``or``, ``xor``; relaxed, cluster scope) and signal that
    block's barrier at ``bar``'s offset with the element's bytes.  The element type is ``dst``'s,
    checked against the op (PTX ISA: add on uint32/int32/uint64 (int64 adds as uint64), min/max on
    uint32/int32, inc/dec on uint32, and/or/xor on 32-bit integers).

    Example::

        dsmem.reduce_async(at(counts, bucket), 1, bars, owner, op="add")
    """,
    refusals=(Refusal("dsmem.reduce_async(cuda.shared.array(8, types.uint32), 3, bar, 1, op='mul')",
                      "dsmem.reduce_async: argument 'op' must be a constant, one of 'add'"),),
).intrinsic()

copy_async = PtxOp(
    "dsmem.copy_async",
    "{{\n" + _MAP + " cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [remote_dst], [{src}],"
    " {nbytes}, [remote_bar];\n}}",
    _copy_operands(),
    need=COPY,
    check=lambda nbytes, **_: check_nbytes("dsmem.copy_async", nbytes),
    debug=debug_bytes("dsmem.copy_async", ("dst", "src")),
    tlx=("tlx.async_remote_shmem_copy", "cute.nvgpu.cpasync.CopyBulkS2SOp",
         "cuda::ptx::cp_async_bulk (shared::cluster.shared::cta)"),
    samples=(Sample("dsmem.copy_async(smem, smem[1024:], 256, bar, 1)", "UBLKCP.S.S",
                    ptx=_mapped("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [remote_dst], "
                                "[%r], %r, [remote_bar];"), isa=f"{_MAPA}; 9.7.9.25.4.1 cp.async.bulk"),),
    doc="""Copy ``nbytes`` (a multiple of 16; both addresses 16-byte aligned) from this block's
    ``src`` into block ``cta_rank``'s copy of ``dst``, completing on that block's barrier at
    ``bar``'s offset.  ``src`` written with ordinary stores needs ``fence.proxy_async()`` first.

    Example::

        fence.proxy_async()
        dsmem.copy_async(at(ring, slot), tile, 8192, at(full, slot), (rank + 1) % n)
    """,
    refusals=(Refusal('dsmem.copy_async(smem, smem[1024:], 256, bar, 16)',
                      "dsmem.copy_async: argument 'cta_rank' must be in [0, 15]"),
              Refusal('dsmem.copy_async(smem, smem[1024:], 1 << 20, bar, 1)',
                      "dsmem.copy_async: argument 'nbytes' must be a multiple of 16 bytes, from 16 to 2**20 - 16"),),
).intrinsic()

reduce_copy_async = PtxOp(
    "dsmem.reduce_copy_async",
    "{{\n" + _MAP + " cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.{op}{type}"
    " [remote_dst], [{src}], {nbytes}, [remote_bar];\n}}",
    _copy_operands(),
    qualifiers=(Qualifier("op", {o: o for o in CLUSTER_REDUCE_TYPES}, REQUIRED),),
    order=("dst", "src", "nbytes", "bar", "cta_rank", "op"),
    need=COPY,
    check=lambda nbytes, dst, src, op, **_: (check_nbytes("dsmem.reduce_copy_async", nbytes),
                                             _same_elements(dst, src),
                                             _reduce_type("dsmem.reduce_copy_async", "src", op, src.dtype)),
    debug=debug_bytes("dsmem.reduce_copy_async", ("dst", "src")),
    fields=lambda cc, src, op, **_: {"type": _reduce_type("dsmem.reduce_copy_async", "src", op, src.dtype)},
    doc_fields={"type": ".u32"},
    tlx=("cuda::ptx::cp_reduce_async_bulk (shared::cluster.shared::cta)",),
    samples=tuple(Sample(f"dsmem.reduce_copy_async(cuda.shared.array(64, types.{dtype}), "
                         f"cuda.shared.array(64, types.{dtype}), 64, bar, 1)", "UBLKRED.S.S",
                         only={"op": op}, isa=f"{_MAPA}; 9.7.9.25.4.2 cp.reduce.async.bulk",
                         ptx=_mapped("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes."
                                     f"{op_type} [remote_dst], [%r], %r, [remote_bar];"))
                  for op, dtype, op_type in _REDUCE_ROWS),
    doc="""Reduce ``nbytes`` of this block's ``src`` element-wise into block ``cta_rank``'s copy of
    ``dst`` with ``op``, completing on that block's barrier at ``bar``'s offset.  The element type
    is ``src``'s (``dst`` must hold the same), checked against the op (add on uint32/int32/uint64,
    min/max on uint32/int32, inc/dec on uint32, and/or/xor on 32-bit integers).

    Example::

        dsmem.reduce_copy_async(totals, partial, 4096, bars, 0, op="add")   # into block 0
    """,
    refusals=(Refusal("dsmem.reduce_copy_async(cuda.shared.array(64, types.uint32), cuda.shared.array(64, types.uint32), 40, bar, 1, op='add')",
                      "dsmem.reduce_copy_async: argument 'nbytes' must be a multiple of 16 bytes"),),
).intrinsic()

__all__ = exported("dsmem")
