"""``numba_tma.cluster``'s helpers for numba-cuda-mlir kernels: ``map_shared`` (another block's
shared array, ``mapa``) and the multicast masks ``mask_all``, ``mask_row``, ``mask_column``, typed
by the same checks as under numba-cuda (:func:`numba_tma.intrinsics.cluster.map_shared_check`,
:func:`~numba_tma.intrinsics.cluster.mask_check`: the same refusals, word for word).  The masks are
``numba_tma.cluster``'s own objects, registered here as inlined bodies over the arithmetic written
once in :data:`numba_tma.cluster_masks.BITS`.

``map_shared`` is the array's memref in the generic address space with its base address mapped
into block ``cta_rank``'s shared window (``mapa.u64``, as numba-cuda's, on the generic address)."""

import inspect

from .. import cluster_masks
from ..debugging import STATE as DEBUG
from ..intrinsics import cluster, debug
from ..intrinsics.cluster import SM90, map_shared_check, mask_check
from ..intrinsics.hosts.mlir_adapter import device_function, intrinsic, mlir_types, overload, target_chip, with_base_address
from ..intrinsics.hosts.mlir_emitter import MlirEmitter, global_address
from ..intrinsics.hosts.mlir_host import emit_asm, integer, to_numba
from ..intrinsics._core import check_arch, parse_arch

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


# each mask helper inlined into the caller: its arguments widened to 64 bits, the arithmetic written
# once (numba_tma.cluster_masks.BITS, an LLVM-inlined device function here: folded for constants),
# the mask cut to 32 bits, as under numba-cuda
_ALL, _ROW, _COLUMN = (device_function(cluster_masks.BITS[n]) for n in ("mask_all", "mask_row", "mask_column"))


def _all(size):
    return mlir_types.uint32(_ALL(mlir_types.int64(size)))


def _row(cluster_x, row):
    return mlir_types.uint32(_ROW(mlir_types.int64(cluster_x), mlir_types.int64(row)))


def _column(cluster_x, cluster_y, column):
    return mlir_types.uint32(_COLUMN(mlir_types.int64(cluster_x), mlir_types.int64(cluster_y),
                                     mlir_types.int64(column)))


def _register_mask(name, body):
    """``numba_tma.cluster.<name>`` (the same object) in numba-cuda-mlir kernels: typed by the same
    check as under numba-cuda, its body inlined."""
    helper = getattr(cluster, name)
    params = list(inspect.signature(body).parameters)

    def typer(*args):
        mask_check(name, params, [to_numba(t) for t in args])
        return body

    typer.__signature__ = inspect.signature(body)
    overload(helper, inline=True)(typer)
    return helper


HELPERS = {"map_shared": intrinsic(_map_shared, "map_shared"),
           **{name: _register_mask(name, body) for name, body in
              (("mask_all", _all), ("mask_row", _row), ("mask_column", _column))}}
