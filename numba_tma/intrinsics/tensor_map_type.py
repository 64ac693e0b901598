"""The Numba type of a :class:`numba_tma.TensorMap` kernel argument, passed by value.

A ``TensorMap`` argument of a kernel becomes a ``__grid_constant__`` parameter: in NVVM IR a
pointer parameter marked ``byval align 64``, listed in the kernel's one ``nvvm.annotations``
``grid_constant`` entry, which libNVVM lowers to ``.param .align 64 .b8 p[128]`` and a
``cvta.param`` address — TMA reads the parameter itself, never a per-thread local copy.  A device
function taking a ``TensorMap`` receives that generic address as a plain pointer.  Which of the two
a function is becomes known only after lowering; :mod:`numba_tma.numba_cuda` applies the
marking to kernels.

The type key carries what ops check at compile time and what a kernel may read as constants:
the dtype, the element width in bits, rank, box, mode, swizzle and the bytes one load delivers
(``desc.box_bytes``, ``desc.swizzle``).

``TensorMap.to_device()``'s array is typed by the same facts (:class:`MapInGlobalArray`, a
read-only ``uint8`` array type): the ops check it as its map (:func:`as_map`, :func:`map_value`).
"""

import functools

from llvmlite import ir
from numba.cuda import types
from numba.cuda.datamodel import PrimitiveModel
from numba.cuda.datamodel.models import ArrayModel
from numba.cuda.models import register_model

from ..descriptors import by_value
from ..descriptors.enums import SWIZZLE_BYTES
from ..descriptors.tile_layout import TileLayout, register_kernel_type
from ..numba_cuda.internals import AttributeTemplate, ConfigStack, lower_attr, lower_constant, nvvm, register_attr
from ..numba_cuda.kernel_arguments import register_by_value, request_grid_constant

TENSORMAP_LL = ir.LiteralStructType([ir.ArrayType(ir.IntType(64), 16)])


class TensorMapType(types.Type):
    """``TensorMap[bfloat16, rank=2, box=(64, 64), tiled]`` — box in the array's own order.

    The type of every map with one :class:`~numba_tma.descriptors.tile_layout.TileLayout`
    (``layout``, its key), whose facts it shows as attributes: ``dtype``, ``data_type``,
    ``element_bits``, ``rank``, ``box``, ``mode``, ``swizzle``, ``box_bytes``, ``element_strides``,
    ``store_overrun``, ``smem_bytes`` — so a kernel compiled for one map is not reused for a map that
    lays out shared memory differently, and a map with a store overrun refuses stores.

    ``in_global``: ``False`` here (a by-value parameter).  A map in global memory of a known layout
    (``TensorMap.to_device()``, and ``numba_tma.mlir.map_in_global`` on numba-cuda-mlir) is checked
    as this type, through :class:`GlobalTensorMapType`, which sets it: the ops then read it as a map
    in global memory (the acquire fence).  ``fenced_once``: the numba-cuda-mlir subclass's acquire
    fence is its lowering's, once per thread at the kernel's start, not each op's (``False`` here:
    a by-value map needs none).
    """

    in_global = False
    fenced_once = False

    def __init__(self, layout: TileLayout):
        self.layout = layout
        super().__init__(name=f"TensorMap[{layout}]")

    @property
    def key(self):
        return self.layout

    dtype = property(lambda self: self.layout.dtype)
    data_type = property(lambda self: self.layout.data_type)
    element_bits = property(lambda self: self.layout.element_bits)
    rank = property(lambda self: self.layout.rank)
    box = property(lambda self: self.layout.box)
    mode = property(lambda self: self.layout.mode)
    swizzle = property(lambda self: self.layout.swizzle)
    box_bytes = property(lambda self: self.layout.box_bytes)
    element_strides = property(lambda self: self.layout.element_strides)
    store_overrun = property(lambda self: self.layout.store_overrun)
    smem_bytes = property(lambda self: self.layout.smem_bytes)


register_kernel_type(functools.lru_cache(maxsize=None)(TensorMapType))


class GlobalTensorMapType(TensorMapType):
    """A map in global memory whose type says its layout, as the ops check it (the same rules and
    words as a by-value map of that layout: its name is the by-value map's) and lower it: as a
    map in global memory (``in_global``), the address of its 128 bytes, acquired before each op.
    Never a kernel argument's type: :class:`MapInGlobalArray` (numba-cuda) and numba-cuda-mlir's
    ``MapInGlobal`` are, translated to this for the ops (:func:`as_map`)."""

    in_global = True


class MapInGlobalArray(types.Array):
    """numba-cuda's type of ``TensorMap.to_device()``'s array: the map's 128 bytes in a read-only
    ``uint8`` device array (held and launched as that array, and indexable as one), its key also
    the map's :class:`~numba_tma.descriptors.tile_layout.TileLayout` (``tile_layout``; ``layout`` is
    the array's, ``"C"``).  The ops see it as its map, ``map`` (:func:`as_map`)."""

    def __init__(self, tile_layout: TileLayout):
        self.tile_layout = tile_layout
        self.map = _global_map(tile_layout)
        super().__init__(types.uint8, 1, "C", readonly=True, name=f"TensorMap[{tile_layout}] in global memory")

    @property
    def key(self):
        return super().key, self.tile_layout


_global_map = functools.lru_cache(maxsize=None)(GlobalTensorMapType)
global_map_type = functools.lru_cache(maxsize=None)(MapInGlobalArray)
register_model(MapInGlobalArray)(ArrayModel)


def as_map(ty):
    """The type the ops check an argument of type ``ty`` as: ``TensorMap.to_device()``'s array as
    its map in global memory (:class:`GlobalTensorMapType`), anything else as it is."""
    return ty.map if isinstance(ty, MapInGlobalArray) else ty


def map_value(context, builder, ty, value):
    """The value of an argument of type ``ty`` as the ops lower it, beside :func:`as_map`:
    ``TensorMap.to_device()``'s array as the address of its 128 bytes (a map's value, as a by-value
    map's is its parameter's address), anything else as it is."""
    if not isinstance(ty, MapInGlobalArray):
        return value
    data = context.make_array(ty)(context, builder, value).data
    return builder.bitcast(data, ir.PointerType(TENSORMAP_LL))


class _MapAttributes(AttributeTemplate):
    """Compile-time constants of a map in a kernel: ``desc.box_bytes``, the bytes one full load
    delivers (not for interleaved maps, whose transfer size is not established; what
    ``arrive_expect_tx`` expects), ``desc.smem_bytes``, the shared memory the box spans (more than
    ``box_bytes`` when a swizzle is wider than the box's rows: size tiles with it), and
    ``desc.swizzle``, the swizzle span in bytes (0, 32, 64 or 128)."""

    def resolve_box_bytes(self, desc):
        return types.int64 if as_map(desc).box_bytes is not None else None

    def resolve_smem_bytes(self, desc):
        return types.int64 if as_map(desc).smem_bytes is not None else None

    def resolve_swizzle(self, desc):
        return types.int64 if as_map(desc).swizzle in SWIZZLE_BYTES else None


@register_attr
class TensorMapAttributes(_MapAttributes):
    key = TensorMapType


@register_attr
class MapInGlobalAttributes(_MapAttributes):
    key = MapInGlobalArray


for _type_class in (TensorMapType, MapInGlobalArray):
    lower_attr(_type_class, "box_bytes")(
        lambda context, builder, ty, value: context.get_constant(types.int64, as_map(ty).box_bytes))
    lower_attr(_type_class, "smem_bytes")(
        lambda context, builder, ty, value: context.get_constant(types.int64, as_map(ty).smem_bytes))
    lower_attr(_type_class, "swizzle")(
        lambda context, builder, ty, value: context.get_constant(types.int64, SWIZZLE_BYTES[as_map(ty).swizzle]))


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


register_by_value(TensorMapType, by_value.argument, reset=by_value.forget)
