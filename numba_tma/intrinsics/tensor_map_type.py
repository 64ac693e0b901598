"""The Numba type of a :class:`numba_tma.TensorMap` kernel argument, passed by value.

A ``TensorMap`` argument of a kernel becomes a ``__grid_constant__`` parameter: in NVVM IR a
pointer parameter marked ``byval align 64``, listed in the kernel's one ``nvvm.annotations``
``grid_constant`` entry, which libNVVM lowers to ``.param .align 64 .b8 p[128]`` and a
``cvta.param`` address — TMA reads the parameter itself, never a per-thread local copy.  A device
function taking a ``TensorMap`` receives that generic address as a plain pointer (``byval`` there
would make a local copy).

Launching: numba-cuda hands kernel arguments to cuda.core's parameter packer, which takes a
128-byte tensor map by value only as a ``cuda.core.TensorMapDescriptor``.  The type therefore
derives from ``types.EnumMember`` whose ``dtype`` is a raw pointer: numba-cuda's launcher passes
``TensorMap.value`` (that descriptor) through unchanged.  Its type key carries the map's dtype,
rank, box, mode and the bytes one load delivers, so ops can check them at compile time and a
kernel can read ``desc.box_bytes`` as a constant.
"""

import sys
import weakref

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.datamodel import PrimitiveModel
from numba.cuda.cudadecl import register_attr
from numba.cuda.cudaimpl import lower_attr
from numba.cuda.models import register_model
from numba.cuda.typing.templates import AttributeTemplate

from ._core import current_cc

TENSORMAP_LL = ir.LiteralStructType([ir.ArrayType(ir.IntType(64), 16)])


class TensorMapType(types.EnumMember):
    """``TensorMap[float32, rank=2, box=(64, 64), tiled]`` — box in the array's own order."""

    def __init__(self, host_class, dtype, rank, box, mode, box_bytes):
        self.map_dtype, self.rank, self.box, self.mode = dtype, rank, tuple(box), mode
        self.box_bytes = box_bytes
        super().__init__(host_class, types.CPointer(types.uint8))
        self.name = f"TensorMap[{dtype}, rank={rank}, box={self.box}, {mode}]"

    @property
    def key(self):
        return self.instance_class, self.map_dtype, self.rank, self.box, self.mode, self.box_bytes


@register_attr
class TensorMapAttributes(AttributeTemplate):
    """``desc.box_bytes`` in a kernel: the bytes one full load delivers, a compile-time constant
    (not available for interleaved maps, whose transfer size is not established)."""

    key = TensorMapType

    def resolve_box_bytes(self, desc):
        return types.int64 if desc.box_bytes is not None else None


@lower_attr(TensorMapType, "box_bytes")
def _lower_box_bytes(context, builder, ty, value):
    return context.get_constant(types.int64, ty.box_bytes)


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


def _lowering_a_kernel() -> bool:
    """Whether numba-cuda is lowering a kernel entry point (not a device function).

    numba-cuda 0.30 records this nowhere the lowering can see, so look at who called
    ``compile_cuda``: its kernel paths are ``_Kernel`` and ``_compile_pyfunc_with_fixup(device=False)``,
    its device-function paths ``compile_device`` and ``_compile_pyfunc_with_fixup(device=True)``.
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "compile_cuda":
        frame = frame.f_back
    caller = frame.f_back if frame is not None else None
    while caller is not None and caller.f_code.co_name == "_acquire_compile_lock":  # its decorator
        caller = caller.f_back
    if caller is None or caller.f_code.co_name == "compile_device":
        return False
    if caller.f_code.co_name == "_compile_pyfunc_with_fixup":
        return not caller.f_locals.get("device", True)
    return True


# kernel function -> its grid_constant metadata node and parameter indices
_GRID_CONSTANT = weakref.WeakKeyDictionary()


def _mark_grid_constant(builder, value):
    fn, module = builder.function, builder.module
    # numba's kernel_fixup later drops the return-pointer argument 0, so the position counted
    # here is the 1-based index NVVM expects.
    index = list(fn.args).index(value)
    annotations = cgutils.get_or_insert_named_metadata(module, "nvvm.annotations")
    node, indices = _GRID_CONSTANT.get(fn, (None, ()))
    if node is not None:
        annotations.operands.remove(node)  # one entry per kernel lists every grid_constant index
    indices = indices + (index,)
    node = module.add_metadata([fn, ir.MetaDataString(module, "grid_constant"),
                                module.add_metadata([ir.Constant(ir.IntType(32), i) for i in indices])])
    annotations.add(node)
    _GRID_CONSTANT[fn] = (node, indices)


@register_model(TensorMapType)
class TensorMapModel(PrimitiveModel):
    """A pointer to the 128-byte map; a kernel's own argument is marked byval + grid_constant."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.PointerType(TENSORMAP_LL))

    def from_argument(self, builder, value):
        if isinstance(value, ir.Argument) and "byval" not in value.attributes and _lowering_a_kernel():
            value.attributes = _byval_attributes()
            _mark_grid_constant(builder, value)
        return value
