"""Thread-block clusters (sm_90): where a block sits in its cluster, the cluster barrier, and
distributed shared memory (another block's shared array, addressed directly).

Launch a kernel with clusters through :func:`numba_tma.launch` (``cluster=(x, y, z)``).  The
special-register reads are pure: two reads of one register in a kernel become one.
"""

import inspect

from numba.cuda import types

from .. import cluster_masks
from ..numba_cuda.internals import _intrinsic
from . import debug
from ._core import (Refusal, I64, Choice, GlobalArray, OpArgumentError, PtxOp, Qualifier, Requirement, Sample, check_arch,
                    emit_asm, exported, mark_constant_multicast)
from .hosts.llvm_emitter import LlvmEmitter

SM90 = Requirement((9, 0), (7, 8))
_BARRIER = "9.7.13.3 barrier.cluster"   # PTX ISA 9.1 (the assembly rows' hand-written PTX)
_AXES = Qualifier("axis", {"x": ".x", "y": ".y", "z": ".z"}, "x")


def _register(name, register, doc, line, section, axis=True, sass="S2UR", refusals=()):
    """A pure special-register read; ``sass``: per-block registers are ``S2UR`` reads, launch-wide
    ones constant-bank loads (``ULDC``; ``LDCU`` on sm_100a); ``line``: its assembly row's PTX, by
    hand, from PTX ISA 9.1's ``mov`` and the register's ``section``."""
    return PtxOp(
        f"cluster.{name}", f"mov.u32 {{out}}, %{register}{{axis}};" if axis else f"mov.u32 {{out}}, %{register};",
        qualifiers=(_AXES,) if axis else (), need=SM90, returns=types.uint32, memory=False,
        tlx=(f"cute.arch.{name}",),
        samples=(Sample(f"out[0] = cluster.{name}()", sass, ptx=line, isa=f"9.7.9.3 mov; {section}"),),
        refusals=refusals,
        doc=doc + f"""

    Example::

        r = cluster.{name}(){'          # axis="x" (default), "y" or "z"' if axis else ''}
    """,
    ).intrinsic()


ctarank = _register("ctarank", "cluster_ctarank", "This block's rank in its cluster (0 to ``nctarank() - 1``).",
                    "mov.u32 %r, %cluster_ctarank;", "10.16 %cluster_ctarank", axis=False,
                    refusals=(Refusal('out[0] = cluster.ctarank(0)',
                      'numba_tma: cluster.ctarank takes (): too many positional arguments'),))
nctarank = _register("nctarank", "cluster_nctarank", "The number of blocks in this block's cluster.",
                     "mov.u32 %r, %cluster_nctarank;", "10.17 %cluster_nctarank", axis=False,
                     sass={"sm_100a": "LDCU", "": "ULDC"}, refusals=(Refusal('out[0] = cluster.nctarank(1)',
                      'numba_tma: cluster.nctarank takes (): too many positional arguments'),))   # a launch constant
ctaid = _register("ctaid", "cluster_ctaid", "This block's position in its cluster along ``axis``.",
                  "mov.u32 %r, %cluster_ctaid.x;", "10.14 %cluster_ctaid",
                  refusals=(Refusal('out[0] = cluster.ctaid(0)',
                      "cluster.ctaid: argument 'axis' must be a constant, one of 'x', 'y', 'z'"),))
_CONSTANT = {"sm_100a": "LDCU", "": "ULDC"}
nctaid = _register("nctaid", "cluster_nctaid", "The cluster's shape along ``axis``, in blocks.",
                   "mov.u32 %r, %cluster_nctaid.x;", "10.15 %cluster_nctaid", sass=_CONSTANT,
                   refusals=(Refusal('out[0] = cluster.nctaid(None)',
                      "cluster.nctaid: argument 'axis' must be a constant, one of 'x', 'y', 'z'"),))
clusterid = _register("clusterid", "clusterid", "This cluster's position in the grid along ``axis``, in clusters.",
                      "mov.u32 %r, %clusterid.x;", "10.12 %clusterid",
                      refusals=(Refusal("out[0] = cluster.clusterid('w')",
                      "cluster.clusterid: argument 'axis' must be a constant, one of 'x', 'y', 'z'"),))
nclusterid = _register("nclusterid", "nclusterid", "The grid's shape along ``axis``, in clusters.",
                       "mov.u32 %r, %nclusterid.x;", "10.13 %nclusterid", sass=_CONSTANT,
                       refusals=(Refusal("out[0] = cluster.nclusterid(axis='xy')",
                      "cluster.nclusterid: argument 'axis' must be a constant, one of 'x', 'y', 'z'"),))

is_first_cta = PtxOp(
    "cluster.is_first_cta",
    "{{\n .reg .b32 r;\n .reg .pred p;\n mov.u32 r, %cluster_ctarank;\n setp.eq.u32 p, r, 0;\n"
    " selp.u32 {out}, 1, 0, p;\n}}",
    need=SM90, returns=types.boolean, memory=False, tlx=("cute.arch.is_first_cta_in_cluster",),
    samples=(Sample("out[0] = cluster.is_first_cta()", "S2UR",
                    ptx=("mov.u32 r, %cluster_ctarank;", "setp.eq.u32 p, r, 0;", "selp.u32 %r, 1, 0, p;"),
                    isa="9.7.9.3 mov; 10.16 %cluster_ctarank; 9.7.6.2 setp; 9.7.6.3 selp"),),
    doc="""``True`` in the cluster's first block (rank 0).

    Example::

        if cluster.is_first_cta():
            mbarrier.init(bars, cluster.nctarank())
    """,
    refusals=(Refusal('out[0] = cluster.is_first_cta(rank=0)',
                      "numba_tma: cluster.is_first_cta takes (): got an unexpected keyword argument 'rank'"),),
).intrinsic()

arrive = PtxOp(
    "cluster.arrive", "barrier.cluster.arrive{relaxed};",
    qualifiers=(Qualifier("relaxed", {False: "", True: Choice(".relaxed", Requirement((9, 0), (8, 0)))}, False),),
    need=SM90, tlx=("cute.arch.cluster_arrive", "cuda::ptx::barrier_cluster_arrive"),
    samples=(Sample("cluster.arrive()", "UCGABAR_ARV", ptx="barrier.cluster.arrive;", isa=_BARRIER),),
    doc="""Arrive at the cluster barrier (every thread of every block of the cluster takes part);
    ``relaxed=True`` drops the release ordering.  Pair with :func:`wait`.

    Example::

        cluster.arrive()
        ...                                 # independent work
        cluster.wait()
    """,
    refusals=(Refusal('cluster.arrive(relaxed=1)',
                      "cluster.arrive: argument 'relaxed' must be a constant, one of False, True"),),
).intrinsic()

wait = PtxOp(
    "cluster.wait", "barrier.cluster.wait;", need=SM90,
    tlx=("cute.arch.cluster_wait", "cuda::ptx::barrier_cluster_wait"),
    samples=(Sample("cluster.arrive()\ncluster.wait()", "UCGABAR_WAIT", ptx="barrier.cluster.wait;", isa=_BARRIER),),
    doc="""Wait until every thread of the cluster arrived (:func:`arrive`); acquire ordering.

    Example::

        cluster.wait()
    """,
    refusals=(Refusal('cluster.wait(acquire=True)',
                      "numba_tma: cluster.wait takes (): got an unexpected keyword argument 'acquire'"),),
).intrinsic()

sync = PtxOp(
    "cluster.sync", "barrier.cluster.arrive;\nbarrier.cluster.wait;", need=SM90,
    tlx=("cute.arch.cluster_sync", "tlx.cluster_barrier"),
    samples=(Sample("cluster.sync()", "UCGABAR_WAIT", ptx=("barrier.cluster.arrive;", "barrier.cluster.wait;"),
                    isa=_BARRIER),),
    doc="""Arrive and wait at the cluster barrier: ``cuda.syncthreads()`` for the whole cluster (after
    it, shared-memory writes of every block before it are visible to every block).

    Example::

        cluster.sync()
    """,
    refusals=(Refusal('cluster.sync(True)',
                      'numba_tma: cluster.sync takes (): too many positional arguments'),),
).intrinsic()

cta_rank_of = PtxOp(
    "cluster.cta_rank_of", "getctarank.u64 {out}, {array};",
    (GlobalArray("array", what="a shared array (this block's, or one from map_shared)"),),
    need=SM90, returns=types.uint32, memory=False, tlx=("cute.arch.block_rank_in_cluster (of an address)",),
    samples=(Sample("out[0] = cluster.cta_rank_of(smem)", "S2UR", ptx="getctarank.u64 %r, %rd;",
                    isa="9.7.9.24 getctarank"),),
    doc="""Which block of the cluster owns the shared memory of ``array`` (this block's rank for a
    local array; ``r`` for ``map_shared(array, r)``).

    Example::

        assert cluster.cta_rank_of(cluster.map_shared(tile, 1)) == 1
    """,
    refusals=(Refusal('out[0] = cluster.cta_rank_of(1)',
                      "cluster.cta_rank_of: argument 'array' must be"),),
).intrinsic()


@_intrinsic(target="cuda", prefer_literal=True)
def map_shared(typingctx, array, cta_rank):
    """The shared array ``array`` as it lives in block ``cta_rank`` of this cluster: an ordinary
    Numba array (loads, stores, atomics) over that block's shared memory (``mapa``).  Issue a
    ``cluster.sync()`` between the other block's writes and these reads.  A constant ``cta_rank``
    outside 0-15 is refused at compile time; debug mode traps an ``array`` not in shared memory.

    PTX::

        mapa.u64 remote, local, cta_rank;

    Requires sm_90 or newer, PTX ISA 7.8.

    Example::

        peer = cluster.map_shared(tile, (cluster.ctarank() + 1) % cluster.nctarank())
        value = peer[i]
    """
    map_shared_check(array, cta_rank)

    def codegen(context, builder, sig, args):
        check_arch("cluster.map_shared", SM90)
        aryty, rankty = sig.args
        local = context.make_array(aryty)(context, builder, args[0])
        if debug.STATE.on:
            debug.check_shared(LlvmEmitter(context, builder), "cluster.map_shared", "array",
                               builder.ptrtoint(local.data, I64))
        rank = context.cast(builder, args[1], rankty, types.uint32)
        address = emit_asm(builder, "mapa.u64 $0, $1, $2;", [(builder.ptrtoint(local.data, I64), "l"), (rank, "r")],
                           result="=l", memory=False)
        remote = context.make_array(aryty)(context, builder)
        context.populate_array(remote, data=builder.inttoptr(address, local.data.type), shape=local.shape,
                               strides=local.strides, itemsize=local.itemsize, meminfo=local.meminfo)
        return remote._getvalue()

    return array(array, cta_rank), codegen


def map_shared_check(array, cta_rank) -> None:
    """Refuse the argument types of ``map_shared`` that cannot be: ``array`` not an array, a
    ``cta_rank`` not an integer, or a constant one outside the 16 blocks of a cluster (every host)."""
    if not isinstance(array, types.Array):
        raise OpArgumentError(f"numba_tma: cluster.map_shared: argument 'array' must be a shared array; got {array}")
    if not isinstance(cta_rank, (types.Integer, types.IntegerLiteral)):
        raise OpArgumentError(f"numba_tma: cluster.map_shared: argument 'cta_rank' must be an integer; got {cta_rank}")
    rank = _known(cta_rank)
    if rank is not None and not 0 <= rank < cluster_masks.MASK_BITS:
        raise OpArgumentError(f"numba_tma: cluster.map_shared: argument 'cta_rank' must be 0 to "
                              f"{cluster_masks.MASK_BITS - 1} (a cluster has at most {cluster_masks.MASK_BITS} blocks); "
                              f"got {rank}")


def mask_check(name, params, args) -> list:
    """Refuse the argument types of ``cluster.<name>`` (a mask helper with parameters ``params``):
    each must be an integer, the constant ones keeping :func:`numba_tma.cluster_masks.check`'s rules
    (every host).  Returns the constant values (``None`` for a run-time one)."""
    for arg, ty in zip(params, args):
        if not isinstance(ty, (types.Integer, types.IntegerLiteral)):
            raise OpArgumentError(f"numba_tma: cluster.{name}: argument '{arg}' must be an integer; got {ty}")
    cluster_masks.check(name, **{arg: _known(ty) for arg, ty in zip(params, args)})
    return [_known(ty) for ty in args]


def _known(ty):
    """A constant argument's value, ``None`` for a run-time one."""
    value = getattr(ty, "literal_value", None)
    return value if isinstance(value, int) else None


def _mask_helper(name, doc):
    """A multicast-mask helper: its constant arguments checked at compile time by
    :func:`numba_tma.cluster_masks.check` (so a constant shape needing more than 16 bits is refused
    where it is written), the mask computed by its arithmetic (:data:`numba_tma.cluster_masks.BITS`,
    integer arithmetic, folded by the compiler for constants)."""
    compute = cluster_masks.BITS[name]
    params = list(inspect.signature(compute).parameters)

    def typer(typingctx, *args):
        known = mask_check(name, params, args)

        def codegen(context, builder, sig, llargs):
            if None not in known:   # a constant mask: the launch checks the cluster holds its blocks
                mark_constant_multicast(builder, f"cluster.{name}({', '.join(map(str, known))})", compute(*known))
            wide = types.int64(*(types.int64 for _ in sig.args))
            values = [context.cast(builder, v, t, types.int64) for v, t in zip(llargs, sig.args)]
            mask = context.compile_internal(builder, compute, wide, values)
            return context.cast(builder, mask, types.int64, types.uint32)
        return types.uint32(*args), codegen

    namespace = {"typer": typer}
    exec(f"def {name}(typingctx, {', '.join(params)}):\n    return typer(typingctx, {', '.join(params)})", namespace)
    helper = namespace[name]
    helper.__doc__ = doc
    return _intrinsic(target="cuda", prefer_literal=True)(helper)


_MASK_PTX = """
    PTX::

        shl.b32 / add.s32 (integer arithmetic, no instruction of its own)

    Requires sm_90 or newer, PTX ISA 8.0 (for the multicast copy it feeds).  Constant arguments
    whose mask needs more than 16 bits (or names a block outside the cluster) are refused at
    compile time."""

mask_all = _mask_helper("mask_all", """The multicast mask of every CTA of a
    cluster of ``size`` blocks (``multicast=`` of ``tma.load`` / ``bulk.load``).
""" + _MASK_PTX + """

    Example::

        tma.load(desc, tile, coords, bars, multicast=cluster.mask_all(cluster.nctarank()))
    """)

mask_row = _mask_helper("mask_row",
                        """The multicast mask of the CTAs of row ``row`` of a 2-D cluster ``cluster_x`` blocks
    wide (rank = x + y * cluster_x).
""" + _MASK_PTX + """

    Example::

        mask = cluster.mask_row(cluster.nctaid("x"), cluster.ctaid("y"))
    """)

mask_column = _mask_helper("mask_column", """The multicast mask of the CTAs of column ``column``
    of a ``cluster_x`` x ``cluster_y`` cluster.
""" + _MASK_PTX + """

    Example::

        mask = cluster.mask_column(cluster.nctaid("x"), cluster.nctaid("y"), cluster.ctaid("x"))
    """)


HELPERS = ("map_shared", "mask_all", "mask_row", "mask_column")   # public, not PTX declarations
__all__ = exported("cluster") + list(HELPERS)
