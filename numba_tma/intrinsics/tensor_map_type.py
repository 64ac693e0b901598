"""The Numba type of a :class:`numba_tma.TensorMap` kernel argument, passed by value.

A ``TensorMap`` argument becomes a ``__grid_constant__`` kernel parameter: in NVVM IR a pointer
parameter marked ``byval align 64`` plus an ``nvvm.annotations`` ``grid_constant`` entry, which
libNVVM lowers to ``.param .align 64 .b8 p[128]`` and a ``cvta.param`` address — TMA reads the
parameter itself, never a per-thread local copy.

Launching: numba-cuda hands kernel arguments to cuda.core's parameter packer, which takes a
128-byte tensor map by value only as a ``cuda.core.TensorMapDescriptor``.  The type therefore
derives from ``types.EnumMember`` whose ``dtype`` is a raw pointer: numba-cuda's launcher passes
``TensorMap.value`` (that descriptor) through unchanged.  Its type key carries the map's dtype,
rank, box and mode, so ops can check them at compile time.
"""

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.datamodel import PrimitiveModel
from numba.cuda.models import register_model

from ._core import current_cc

TENSORMAP_LL = ir.LiteralStructType([ir.ArrayType(ir.IntType(64), 16)])


class TensorMapType(types.EnumMember):
    """``TensorMap[float32, rank=2, box=(64, 64), tiled]`` — box in the array's own order."""

    def __init__(self, host_class, dtype, rank, box, mode):
        self.map_dtype, self.rank, self.box, self.mode = dtype, rank, tuple(box), mode
        super().__init__(host_class, types.CPointer(types.uint8))
        self.name = f"TensorMap[{dtype}, rank={rank}, box={self.box}, {mode}]"

    @property
    def key(self):
        return self.instance_class, self.map_dtype, self.rank, self.box, self.mode

    @property
    def box_elements(self):
        n = 1
        for b in self.box:
            n *= b
        return n


class _BareByvalAttributes(ir.values.ArgumentAttributes):
    """llvmlite spells ``byval(<type>)``; libNVVM parses IR for targets before sm_100 with its
    LLVM 7 dialect, which wants a bare ``byval`` (for sm_100+ it wants llvmlite's spelling)."""

    def _expand(self, name, typ):
        return "byval" if name == "byval" else super()._expand(name, typ)


def _byval_attributes():
    cc = current_cc()
    modern = cc is not None and tuple(cc[:2]) >= (10, 0)
    attrs = ir.values.ArgumentAttributes() if modern else _BareByvalAttributes()
    attrs.add("byval")
    attrs.align = 64
    return attrs


@register_model(TensorMapType)
class TensorMapModel(PrimitiveModel):
    """A pointer to the 128-byte parameter; marks the kernel argument byval + grid_constant."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.PointerType(TENSORMAP_LL))

    def from_argument(self, builder, value):
        if isinstance(value, ir.Argument) and "byval" not in value.attributes:
            value.attributes = _byval_attributes()
            fn, module = builder.function, builder.module
            # numba's kernel_fixup later drops the return-pointer argument 0, so the position
            # counted here is the 1-based index NVVM expects.
            index = list(fn.args).index(value)
            entry = module.add_metadata(
                [fn, ir.MetaDataString(module, "grid_constant"),
                 module.add_metadata([ir.Constant(ir.IntType(32), index)])]
            )
            cgutils.get_or_insert_named_metadata(module, "nvvm.annotations").add(entry)
        return value
