"""``numba_tma.cluster``'s helpers for numba-cuda-mlir kernels: ``map_shared`` (another block's
shared array, ``mapa``) and the multicast masks ``mask_all``, ``mask_row``, ``mask_column``, typed
by the same checks as under numba-cuda (:func:`numba_tma.intrinsics.cluster.map_shared_check`,
:func:`~numba_tma.intrinsics.cluster.mask_check`: the same refusals, word for word).

``map_shared`` is the array's memref in the generic address space with its base address mapped
into block ``cta_rank``'s shared window (``mapa.u64``, as numba-cuda's, on the generic address).  A
mask of constant arguments is that constant (``numba_tma.cluster.MASKS``); otherwise it is computed
in 64-bit integer arithmetic (``mask_column`` as 16 selected bits: a cluster has at most 16 blocks),
cut to 32 bits."""

import inspect

from ..cluster_masks import MASK_BITS
from ..debugging import STATE as DEBUG
from ..intrinsics import debug
from ..intrinsics.cluster import MASKS, SM90, map_shared_check, mask_check
from ..intrinsics.mlir_adapter import arith, intrinsic, ir, lowering_utilities, target_chip, with_base_address
from ..intrinsics.mlir_emitter import MlirEmitter, global_address
from ..intrinsics.mlir_host import emit_asm, integer, to_mlir, to_numba
from ..intrinsics._core import check_arch, parse_arch
from numba.cuda import types

__all__ = ["HELPERS"]


def _map_shared(typingctx, array, cta_rank):
    """``cluster.map_shared(array, cta_rank)``, as under numba-cuda."""
    array_type, rank_type = to_numba(array), to_numba(cta_rank)
    map_shared_check(array_type, rank_type)

    def codegen(builder, target, args, kwargs):
        check_arch("cluster.map_shared", SM90, parse_arch(target_chip(builder)))
        local, rank = (builder.load_var(v) for v in args)
        if DEBUG.on:   # the array lies in shared memory, as under numba-cuda
            debug.check_shared(MlirEmitter(), "cluster.map_shared", "array", global_address(local))
        rank = integer(rank, rank_type, 32)
        builder.store_var(target, with_base_address(
            local, lambda base: emit_asm("mapa.u64 $0, $1, $2;", [(base, "l"), (rank, "r")], ["=l"], memory=False)))

    return array(array, cta_rank), codegen


def _i64(value):
    return lowering_utilities.constant(value, ir.IntegerType.get_signless(64))


def _mask_all(size):
    return arith.subi(arith.shli(_i64(1), size), _i64(1))


def _mask_row(cluster_x, row):
    return arith.shli(_mask_all(cluster_x), arith.muli(row, cluster_x))


def _mask_column(cluster_x, cluster_y, column):
    mask = _i64(0)
    for y in range(MASK_BITS):   # bit column + y * cluster_x for each row y < cluster_y
        bit = arith.shli(_i64(1), arith.addi(column, arith.muli(_i64(y), cluster_x)))
        inside = arith.cmpi(arith.CmpIPredicate.slt, _i64(y), cluster_y)
        mask = arith.ori(mask, arith.select(inside, bit, _i64(0)))
    return mask


_RUN_TIME = {"mask_all": _mask_all, "mask_row": _mask_row, "mask_column": _mask_column}


def _mask_helper(name):
    """``cluster.<name>`` as a numba-cuda-mlir intrinsic."""
    compute = MASKS[name]
    params = list(inspect.signature(compute).parameters)

    def typer(typingctx, *args):
        numba_args = [to_numba(t) for t in args]
        known = mask_check(name, params, numba_args)

        def codegen(builder, target, llargs, kwargs):
            i32 = ir.IntegerType.get_signless(32)
            if None not in known:
                builder.store_var(target, lowering_utilities.constant(compute(*known) & 0xFFFFFFFF, i32))
                return
            values = [integer(builder.load_var(v), ty, 64) for v, ty in zip(llargs, numba_args)]
            builder.store_var(target, arith.trunci(i32, _RUN_TIME[name](*values)))

        return to_mlir(types.uint32)(*args), codegen

    typer.__signature__ = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in ["typingctx", *params]])
    return intrinsic(typer, name)


HELPERS = {"map_shared": intrinsic(_map_shared, "map_shared"), **{name: _mask_helper(name) for name in MASKS}}
