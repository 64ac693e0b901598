"""The Numba type of a :class:`numba_tma.TensorMap` kernel argument, passed by value.

A ``TensorMap`` argument of a kernel becomes a ``__grid_constant__`` parameter: in NVVM IR a
pointer parameter marked ``byval align 64``, listed in the kernel's one ``nvvm.annotations``
``grid_constant`` entry, which libNVVM lowers to ``.param .align 64 .b8 p[128]`` and a
``cvta.param`` address — TMA reads the parameter itself, never a per-thread local copy.  A device
function taking a ``TensorMap`` receives that generic address as a plain pointer.  Which of the two
a function is becomes known only after lowering; :mod:`numba_tma.numba_cuda_hooks` applies the
marking to kernels.

The type key carries what ops check at compile time and what a kernel may read as constants:
the dtype, the element width in bits, rank, box, mode, swizzle and the bytes one load delivers
(``desc.box_bytes``, ``desc.swizzle``).
"""

import functools

from llvmlite import ir
from numba.cuda import types
from numba.cuda.cudadrv import nvvm
from numba.cuda.core.targetconfig import ConfigStack
from numba.cuda.cudadecl import register_attr
from numba.cuda.cudaimpl import lower_attr, lower_constant
from numba.cuda.datamodel import PrimitiveModel
from numba.cuda.models import register_model
from numba.cuda.typing.templates import AttributeTemplate

from ..descriptors.enums import SWIZZLE_BYTES, smem_row_bytes
from ..numba_cuda_hooks import register_by_value, request_grid_constant

TENSORMAP_LL = ir.LiteralStructType([ir.ArrayType(ir.IntType(64), 16)])


class TensorMapType(types.Type):
    """``TensorMap[bfloat16, rank=2, box=(64, 64), tiled]`` — box in the array's own order.

    ``dtype`` is the source array's dtype name; ``data_type`` the TMA data type's name
    (``"BFLOAT16"``); ``element_bits`` the width TMA moves per element (a destination of any dtype of
    that width is accepted); ``swizzle`` the swizzle's name; ``element_strides`` (innermost first,
    ``None`` for all ones) — so a kernel compiled for one map is not reused for a map that lays out
    shared memory differently; ``store_overrun``, the bytes a store crossing the end of a row would
    write past it (0 when none, or when the map opted in: stores through the map are refused
    otherwise, :mod:`numba_tma.descriptors.edge`).
    """

    def __init__(self, dtype, data_type, element_bits, rank, box, mode, swizzle="NONE", box_bytes=None,
                 element_strides=None, store_overrun=0):
        self.dtype, self.data_type, self.element_bits = dtype, data_type, element_bits
        self.rank, self.box, self.mode, self.swizzle, self.box_bytes = rank, tuple(box), mode, swizzle, box_bytes
        self.store_overrun = store_overrun
        self.element_strides = None if element_strides is None or set(element_strides) == {1} else \
            tuple(element_strides)
        extra = "" if swizzle == "NONE" else f", swizzle={swizzle}"
        extra += "" if self.element_strides is None else f", element_strides={self.element_strides}"
        extra += f", store_overrun={store_overrun}" if store_overrun else ""
        super().__init__(name=f"TensorMap[{dtype}, rank={rank}, box={self.box}, {mode}{extra}]")

    @property
    def key(self):
        return (self.dtype, self.data_type, self.element_bits, self.rank, self.box, self.mode, self.swizzle,
                self.box_bytes, self.element_strides, self.store_overrun)

    @property
    def smem_bytes(self):
        """The shared memory one full box spans (``box_bytes``, or more with a swizzle wider than the
        box's rows: rows lie the span apart); ``None`` when ``box_bytes`` is unknown."""
        span = SWIZZLE_BYTES.get(self.swizzle, 0)
        if self.box_bytes is None or not span or self.mode != "tiled":
            return self.box_bytes
        inner = self.box[-1] * (max(self.element_bits, 8) // 8)    # dimension 0's element stride is ignored
        return self.box_bytes // inner * smem_row_bytes(inner, span)



@register_attr
class TensorMapAttributes(AttributeTemplate):
    """Compile-time constants of a map in a kernel: ``desc.box_bytes``, the bytes one full load
    delivers (not for interleaved maps, whose transfer size is not established; what
    ``arrive_expect_tx`` expects), ``desc.smem_bytes``, the shared memory the box spans (more than
    ``box_bytes`` when a swizzle is wider than the box's rows: size tiles with it), and
    ``desc.swizzle``, the swizzle span in bytes (0, 32, 64 or 128)."""

    key = TensorMapType

    def resolve_box_bytes(self, desc):
        return types.int64 if desc.box_bytes is not None else None

    def resolve_smem_bytes(self, desc):
        return types.int64 if desc.smem_bytes is not None else None

    def resolve_swizzle(self, desc):
        return types.int64 if desc.swizzle in SWIZZLE_BYTES else None


@lower_attr(TensorMapType, "box_bytes")
def _lower_box_bytes(context, builder, ty, value):
    return context.get_constant(types.int64, ty.box_bytes)


@lower_attr(TensorMapType, "smem_bytes")
def _lower_smem_bytes(context, builder, ty, value):
    return context.get_constant(types.int64, ty.smem_bytes)


@lower_attr(TensorMapType, "swizzle")
def _lower_swizzle(context, builder, ty, value):
    return context.get_constant(types.int64, SWIZZLE_BYTES[ty.swizzle])


@lower_constant(TensorMapType)
def _refuse_constant_map(context, builder, ty, pyval):
    """A map used as a global or closure variable would be baked into the code: maps are kernel
    arguments (by value, ``__grid_constant__``)."""
    from ..errors import OpArgumentError

    raise OpArgumentError(f"numba_tma: a TensorMap must be a kernel argument (it is passed by value as a "
                          f"__grid_constant__ parameter), not a global or closure variable of the kernel: pass "
                          f"{pyval!r} as an argument, kernel[grid, block](desc, ...), and to device functions likewise")


class _BareByvalAttributes(ir.values.ArgumentAttributes):
    """llvmlite spells ``byval(<type>)``; libNVVM's LLVM 7 parser wants a bare ``byval``."""

    def _expand(self, name, typ):
        return "byval" if name == "byval" else super()._expand(name, typ)


_PROBE_IR = """target triple = "nvptx64-nvidia-cuda"
define void @probe({[16 x i64]}* byval align 64 %p) {
  ret void
}
"""


@functools.lru_cache(maxsize=None)
def _nvvm_wants_typed_byval(arch: str, options: tuple) -> bool:
    """Whether libNVVM parses a module for ``arch`` with ``options`` with its modern parser, which
    wants llvmlite's ``byval(<type>)`` (its LLVM 7 parser wants a bare ``byval``).  Measured, not
    assumed: libNVVM 13.5 uses the modern parser from sm_100 and for ``-g -opt=0`` builds, 13.0
    only from sm_100.  One tiny compile per (arch, options) and process."""
    unit = nvvm.CompilationUnit(dict(options, arch=arch))
    unit.add_module(_PROBE_IR.encode())
    try:
        unit.compile()
    except Exception:  # noqa: BLE001 - libNVVM's errors carry no type; its log says which
        return "expected '('" in unit.get_log()
    return False


def _byval_attributes():
    """``byval align 64`` in the spelling libNVVM will parse the kernel's module with."""
    cfg = ConfigStack.top_or_none()
    cc = getattr(cfg, "compute_capability", None)
    options = tuple(sorted((k, v) for k, v in (getattr(cfg, "nvvm_options", None) or {}).items() if k in ("g", "opt")))
    typed = cc is not None and _nvvm_wants_typed_byval(f"compute_{cc[0]}{cc[1]}{cc[2] if len(cc) > 2 else ''}",
                                                       options)
    attrs = ir.values.ArgumentAttributes() if typed else _BareByvalAttributes()
    attrs.add("byval")
    attrs.align = 64
    return attrs


@register_model(TensorMapType)
class TensorMapModel(PrimitiveModel):
    """A pointer to the 128-byte map; a kernel's own argument becomes byval + grid_constant."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.PointerType(TENSORMAP_LL))

    def from_argument(self, builder, value):
        if isinstance(value, ir.Argument):
            request_grid_constant(value, _byval_attributes())
        return value


register_by_value(TensorMapType, lambda tensor_map: tensor_map.value)
