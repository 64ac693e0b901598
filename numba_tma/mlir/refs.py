"""``numba_tma.mlir.at(array, i)``: ``numba_tma.at`` for numba-cuda-mlir kernels, the shared address
of ``array[i]`` (an element, or the sub-array of a multi-dimensional array) for any op's barrier
or shared-memory argument, typed by the same rules (:func:`numba_tma.intrinsics.refs.at_type`).

It lowers as under numba-cuda: the array's 32-bit shared-window base plus ``i`` times its first
stride in bytes (read from the memref's strided metadata); no bounds are checked."""

from numba.cuda import types

from ..intrinsics.hosts.mlir_adapter import arith, intrinsic, ir, lowering_utilities, memref
from ..intrinsics.hosts.mlir_host import integer, shared_address, to_mlir, to_numba
from ..intrinsics.refs import at_type

__all__ = ["at"]


def _at(typingctx, array, index):
    """The shared address of ``array[index]``, as ``numba_tma.at``."""
    index_type = to_numba(index)
    ref = at_type(*(types.unliteral(t) for t in (to_numba(array), index_type)))   # as numba-cuda: no literals

    def codegen(builder, target, args, kwargs):
        array_value, index_value = (builder.load_var(v) for v in args)
        i32 = ir.IntegerType.get_signless(32)
        shape = ir.MemRefType(array_value.type)
        stride = memref.extract_strided_metadata(array_value)[2 + shape.rank]   # strides follow the sizes
        element_bytes = lowering_utilities.get_type_size_bytes(shape.element_type)
        stride_bytes = arith.muli(arith.index_cast(i32, stride), lowering_utilities.constant(element_bytes, i32))
        offset = arith.muli(integer(index_value, index_type, 32), stride_bytes)
        builder.store_var(target, arith.addi(shared_address(array_value), offset))

    return to_mlir(ref)(array, index), codegen


at = intrinsic(_at, "at")
