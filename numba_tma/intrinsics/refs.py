"""``at(array, i)``: name element ``i`` of a shared array for any op, at the cost of one address
computation.

Every op that takes a barrier or a shared source/destination uses element 0 of the array it is
given.  ``bars[s:]`` names barrier ``s`` too, but a run-time slice is a clamped Numba slice (9 PTX
instructions, 7 more for a ring slot ``ring[s * T:]``).  ``at(bars, s)`` is the shared address of
``bars[s]`` (for an array of more dimensions, of the sub-array ``ring[s]``): a multiply-add on the
array's 32-bit shared-window base, which NVVM hoists, so naming costs at most two instructions.
No bounds are checked: ``i`` must lie in ``[0, array.shape[0])``.

Example::

    bars = cuda.shared.array(STAGES, numba.uint64)
    ring = cuda.shared.array((STAGES, 64, 32), numba.float32, alignment=128)
    mbarrier.wait(at(bars, s), phase)
    tma.load(desc, at(ring, s), coords, at(bars, s))
"""

from numba.cuda import types
from numba.cuda.extending import intrinsic

from ._core import I32, OpArgumentError, SharedRef, shared_address


@intrinsic
def at(typingctx, array, index):
    """The shared address of ``array[index]`` (the element, or for a multi-dimensional array the
    sub-array ``array[index]``), for any numba_tma op's barrier or shared-memory argument.

    PTX: at most a multiply-add on the array's shared-window base (``mad.lo.s32``).  Any
    architecture.

    Example::

        mbarrier.wait(at(bars, s), phase)
        tma.load(desc, at(ring, s), (x, y), at(bars, s))
    """
    def codegen(context, builder, sig, args):
        aryty, idxty = sig.args
        base = shared_address(context, builder, aryty, args[0])
        ary = context.make_array(aryty)(context, builder, args[0])
        stride = builder.trunc(builder.extract_value(ary.strides, 0), I32)
        offset = builder.mul(context.cast(builder, args[1], idxty, types.int32), stride)
        return builder.add(base, offset)

    return at_type(array, index)(array, index), codegen


def at_type(array, index) -> SharedRef:
    """The type of ``at(array, index)`` (Numba types), its arguments checked: every host's typing."""
    if not isinstance(array, types.Array):
        raise OpArgumentError(f"numba_tma: at: argument 'array' must be a shared array; got {array}")
    if not isinstance(index, (types.Integer, types.IntegerLiteral)):
        raise OpArgumentError(f"numba_tma: at: argument 'index' must be an integer; got {index}")
    return SharedRef(array.dtype, array.ndim == 1 or array.layout == "C")
