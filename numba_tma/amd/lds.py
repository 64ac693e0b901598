"""The Numba type of LDS arrays, and the address-space and size rules of the DMA ops.

:func:`~numba_tma.amd.lds_array` is the only way to get LDS in a kernel, so its
result has a type of its own, :class:`LDSArray`, which its slices and views keep
(``copy``), and the ops can refuse at compile time a global array on their LDS side,
an LDS array on their global side, and an LDS allocation too small for what one op
writes (or reads) there.  A slice is checked against its allocation: its start is not
known at compile time.
"""
from numba.core import types
from numba.core.datamodel import models, register_default
from numba.core.imputils import lower_cast

from .errors import reject


class LDSArray(types.Array):
    """An array in LDS; *nbytes* is the size of the ``lds_array`` it is part of."""

    def __init__(self, dtype, ndim, layout, nbytes, readonly=False, aligned=True):
        self.nbytes = nbytes
        super().__init__(dtype, ndim, layout, readonly=readonly, aligned=aligned,
                         name=f"lds array({dtype}, {ndim}d, {layout}) of {nbytes} bytes")

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        base = super().copy(dtype, ndim, layout, readonly)
        return LDSArray(base.dtype, base.ndim, base.layout, self.nbytes,
                        readonly=not base.mutable, aligned=base.aligned)

    @property
    def key(self):
        return super().key + (self.nbytes,)

    @property
    def mangling_args(self):
        name, args = super().mangling_args
        return name, args + [self.nbytes]

    def unify(self, typingctx, other):
        """Two LDS arrays unify to one of the smaller size; with a global one, Numba's
        array (not known to be in LDS)."""
        unified = super().unify(typingctx, other)
        if unified is None or not isinstance(other, LDSArray):
            return unified
        return LDSArray(unified.dtype, unified.ndim, unified.layout,
                        min(self.nbytes, other.nbytes), readonly=not unified.mutable,
                        aligned=unified.aligned)


register_default(LDSArray)(models.ArrayModel)


@lower_cast(LDSArray, types.Array)
def _lds_to_array(context, builder, fromty, toty, val):
    """The value as it is, as Numba casts arrays (one data model for every array type);
    Numba's own cast asserts that two array types of one layout differ in mutability,
    which an LDS array and what it unifies with need not."""
    return val


def require_lds(op, name, ty):
    """*ty* (an array type) must be an LDS array."""
    if not isinstance(ty, LDSArray):
        raise reject(op, name, "must be an LDS array (amd.lds_array, or a slice of one; a kernel "
                     "argument is global memory)", ty)


def require_global(op, name, ty):
    """*ty* (an array type) must not be an LDS array."""
    if isinstance(ty, LDSArray):
        raise reject(op, name, "must be a global array (a kernel argument)", ty)


def require_room(op, name, ty, nbytes, what):
    """The LDS allocation of *ty* must hold *nbytes*, the size of *what* the op writes
    (or reads) there."""
    if ty.nbytes < nbytes:
        raise reject(op, name, f"must hold {what} ({nbytes} bytes)", ty)
