"""``MapLayout``: everything about a ``TensorMap`` but its address, worked out once per layout.

``TensorMap.tiled`` and ``TensorMap.im2col`` hand their arguments, in the array's own order, to
:func:`tiled_layout` / :func:`im2col_layout`.  Those check them, encode the 128 bytes at address 0
and state, from the same checked arguments, what a kernel knows about the map (its
:class:`~numba_tma.descriptors.tile_layout.TileLayout`); every map of the layout holds the one
:class:`MapLayout` and only splices in its address.  Nothing here decodes bytes.

Array order is the only order here: :func:`encoder_arguments` gives the encoders theirs (innermost
first) and :func:`_in_array_terms` restates the encoders' errors in the array's terms, the two
places the order changes.
"""

from __future__ import annotations

import functools
import operator
import re

from .edge import array_dimension, store_overrun
from .encode import encode_im2col, encode_tiled
from .enums import TYPE_INFO, DataType, Interleave, Mode, Swizzle
from .errors import TensorMapError
from .fields import transfer_bytes
from .tile_layout import DTYPES, TileLayout
from .validate import INNER_ALIGN, RANK, address_alignment, check_global_address, swizzle_span


class MapLayout:
    """One layout of maps: ``tile`` (the :class:`TileLayout`: dtype, TMA type and element width,
    rank, box, mode, swizzle, ``box_bytes``, element strides, store overrun as kernels see it), the
    dtype ``name``, ``shape`` and byte ``strides`` of the arrays it maps, ``corners`` (an im2col
    map's pixel-box corners, ``(lower, upper)``; None for tiled), the options the tile does not carry
    (``interleave``, ``l2_promotion``, ``oob_fill``, ``allow_store_overrun``), ``tail`` (bytes
    8-127 of every map of it; 0-7 are the address) and ``align`` (the address's alignment).

    ``numba_type`` (its kernel argument type) and ``seen`` (what an array ``with_array`` or
    ``retarget`` accepted said: :func:`numba_tma.descriptors.tensor_map._signature`) are filled in
    when first known."""

    __slots__ = ("tile", "name", "shape", "strides", "corners", "interleave", "l2_promotion", "oob_fill",
                 "allow_store_overrun", "tail", "align", "numba_type", "seen")

    def __init__(self, tile, name, shape, strides, corners, interleave, l2_promotion, oob_fill, allow_store_overrun,
                 tail):
        self.tile, self.name, self.shape, self.strides, self.corners = tile, name, shape, strides, corners
        self.interleave, self.l2_promotion, self.oob_fill = interleave, l2_promotion, oob_fill
        self.allow_store_overrun, self.tail = allow_store_overrun, tail
        self.align = address_alignment(interleave)
        self.numba_type = self.seen = None

    data_type = property(lambda self: DataType[self.tile.data_type], doc="The TMA data type (an enum member).")
    swizzle = property(lambda self: Swizzle[self.tile.swizzle], doc="The swizzle (an enum member).")

    @property
    def store_overrun(self) -> int:
        """Bytes a store crossing the end of a row writes past it, opted in or not (the tile's is 0
        when opted in): :mod:`numba_tma.descriptors.edge`."""
        return store_overrun(self.tile.element_bits, self.shape[-1])

    @property
    def geometry(self) -> tuple:
        """What the map copies, in array order: the tiled box, or im2col's ``(lower corner, upper
        corner, channels_per_pixel, pixels_per_column)``."""
        box = self.tile.box
        return box if self.corners is None else (*self.corners, box[1], box[0])

    def options(self) -> dict:
        """The map's enums, by the encoders' argument names."""
        return dict(data_type=self.data_type, interleave=self.interleave, swizzle=self.swizzle,
                    l2_promotion=self.l2_promotion, oob_fill=self.oob_fill)

    def encoder_arguments(self) -> dict:
        """The encoders' arguments but the address, for maps of this layout (:func:`encoder_arguments`)."""
        return encoder_arguments(self.tile.mode, self.shape, self.strides, self.geometry, self.tile.element_strides,
                                 self.options())

    def checked_address(self, address) -> int:
        """An array's data pointer, checked as the encoders check ``global_address``, in the array's terms."""
        try:
            return check_global_address(address, self.interleave)
        except TensorMapError as e:
            raise _in_array_terms(e, self.tile.mode, self.name, self.shape, self.options()) from None


def encoder_arguments(mode, shape, strides, geometry, element_strides, options) -> dict:
    """The encoders' keyword arguments but the address (dimensions innermost first) for a map given
    in array order: ``geometry`` as :attr:`MapLayout.geometry`, ``options`` as :meth:`MapLayout.options`."""
    args = dict(options, global_dim=shape[::-1], global_strides=tuple(reversed(strides[:-1])),
                element_strides=None if element_strides is None else element_strides[::-1])
    if mode == "tiled":
        args["box_dim"] = geometry[::-1]
    else:
        lower, upper, channels, pixels = geometry
        args.update(pixel_box_lower_corner=lower[::-1], pixel_box_upper_corner=upper[::-1],
                    channels_per_pixel=channels, pixels_per_column=pixels)
    return args


@functools.lru_cache(maxsize=512)
def tiled_layout(name, shape, strides, itemsize, box, element_strides, interleave, swizzle, l2_promotion, oob_fill,
                 data_type, allow_store_overrun) -> MapLayout:
    """The layout of a tiled map over an array of dtype ``name``, ``shape`` and byte ``strides``,
    checked and encoded (``box`` and ``element_strides`` tuples of ints in array order, the options
    enums or None, as ``TensorMap.tiled`` coerced them)."""
    options = _checked("tiled", name, shape, strides, itemsize, element_strides, data_type, interleave, swizzle,
                       l2_promotion, oob_fill)
    if len(box) != len(shape):
        raise TensorMapError("box", box, f"must have one entry per array dimension ({len(shape)})")
    return _made("tiled", name, shape, strides, box, element_strides, options, allow_store_overrun)


@functools.lru_cache(maxsize=512)
def im2col_layout(name, shape, strides, itemsize, lower, upper, channels, pixels, element_strides, interleave,
                  swizzle, l2_promotion, oob_fill, data_type, allow_store_overrun) -> MapLayout:
    """Like :func:`tiled_layout` for an im2col map (corners in array order: D, H, W)."""
    options = _checked("im2col", name, shape, strides, itemsize, element_strides, data_type, interleave, swizzle,
                       l2_promotion, oob_fill)
    spatial = len(shape) - 2
    for arg, corner in (("pixel_box_lower_corner", lower), ("pixel_box_upper_corner", upper)):
        if len(corner) != spatial:
            raise TensorMapError(arg, corner, f"must have one entry per spatial dimension ({spatial}: rank - 2)")
    return _made("im2col", name, shape, strides, (lower, upper, channels, pixels), element_strides, options,
                 allow_store_overrun)


def _checked(mode, name, shape, strides, itemsize, element_strides, data_type, interleave, swizzle, l2_promotion,
             oob_fill) -> dict:
    """What the encoders cannot check (they see no array), in the array's terms; the options by the
    encoders' names, ``data_type`` the array's own where None."""
    if name not in DTYPES:
        raise TensorMapError("array dtype", name, f"must be one of {sorted(DTYPES)}")
    if data_type is None:
        data_type = DTYPES[name]
    elif TYPE_INFO[data_type].bits != 8 * itemsize:
        raise TensorMapError("data_type", data_type.name, f"must have the array's element width ({8 * itemsize} bits, "
                             f"{name}): TMA reads the array's elements as this type"
                             + ("; packed sub-byte types need numba_tma.descriptors.encode_tiled"
                                if TYPE_INFO[data_type].bits < 8 else ""))
    rank = len(shape)
    lo, hi = RANK[Mode[mode.upper()]]
    if not lo <= rank <= hi:
        layouts = " (NWC, NHWC or NDHWC) for an im2col map" if mode == "im2col" else ""
        raise TensorMapError("array shape", shape, f"must have {lo} to {hi} dimensions{layouts}")
    if strides[-1] != itemsize and shape[-1] != 1:  # a last dimension of 1 has no meaningful stride
        raise TensorMapError("array strides", strides[-1], f"must be the element size, {itemsize}: TMA reads the "
                             "innermost dimension contiguously — copy to a contiguous array", index=rank - 1,
                             note=f"bytes ({array_dimension(rank - 1, rank, mode)})")
    if element_strides is not None and len(element_strides) != rank:
        raise TensorMapError("element_strides", element_strides, f"must have one entry per array dimension ({rank})")
    return dict(data_type=data_type, interleave=interleave, swizzle=swizzle, l2_promotion=l2_promotion,
                oob_fill=oob_fill)


def _made(mode, name, shape, strides, geometry, element_strides, options, allow_store_overrun) -> MapLayout:
    """Encode the checked arguments at address 0 (the encoders check the driver's rules) and state
    the layout from them (``geometry`` as :attr:`MapLayout.geometry`)."""
    encoder = encode_tiled if mode == "tiled" else encode_im2col
    try:
        encoded = encoder(global_address=0, **encoder_arguments(mode, shape, strides, geometry, element_strides,
                                                                 options))
    except TensorMapError as e:
        raise _in_array_terms(e, mode, name, shape, options) from None
    shape, strides = tuple(map(operator.index, shape)), tuple(map(operator.index, strides))
    data_type, interleave = options["data_type"], options["interleave"]
    bits = TYPE_INFO[data_type].bits
    if mode == "tiled":   # dimension 0 (the array's last) and the others
        box, corners = geometry, None
        inner, outer, outer_strides = box[-1], box[:-1], (element_strides or (1,) * len(box))[:-1]
    else:                 # channels per pixel, pixels per column
        lower, upper, channels, pixels = geometry
        box, corners = (pixels, channels), (lower, upper)
        inner, outer, outer_strides = channels, (pixels,), (1,)
    box_bytes = None if interleave != Interleave.NONE else transfer_bytes(bits, interleave, inner, outer, outer_strides)
    overrun = 0 if allow_store_overrun else store_overrun(bits, shape[-1])
    shown = name if data_type == DTYPES[name] else f"{name} as {data_type.name}"   # "float32 as TFLOAT32"
    tile = TileLayout(shown, data_type.name, bits, len(shape), box, mode, options["swizzle"].name, box_bytes,
                      element_strides, overrun)
    return MapLayout(tile, name, shape, strides, corners, interleave, options["l2_promotion"], options["oob_fill"],
                     allow_store_overrun, encoded[8:])


# The encoders' array arguments (innermost first) as TensorMap's (array order): entry i is array
# dimension ``rank - skip - i``, which TensorMap's argument holds at index ``dimension - first``.
_ARRAY_ORDER = {"global_dim": ("array shape", 1, 0), "global_strides": ("array strides", 2, 0),
                "box_dim": ("box", 1, 0), "element_strides": ("element_strides", 1, 0),
                "pixel_box_lower_corner": ("pixel_box_lower_corner", 2, 1),
                "pixel_box_upper_corner": ("pixel_box_upper_corner", 2, 1)}
_DRIVER_ENTRY = re.compile(r"\b({})\[(\d+)\]".format("|".join(_ARRAY_ORDER)))


def _in_array_terms(e, mode, name, shape, options):
    """The encoders' error ``e`` (driver parameters, innermost first) restated in TensorMap's
    arguments, in the array's order, with the array dimension meant and what to change: the one
    place driver terms are translated."""
    rank = len(shape)

    def entry(argument, index):  # -> (TensorMap's argument, its index, array dimension)
        user, skip, first = _ARRAY_ORDER[argument]
        dim = rank - skip - index
        return user, dim - first, dim

    rule = _DRIVER_ENTRY.sub(lambda m: "{}[{}]".format(*entry(m[1], int(m[2]))), e.rule)  # references in the rule
    argument, index, value, note, hint = e.argument, e.index, e.value, None, None
    if argument in _ARRAY_ORDER and index is not None:
        argument, index, dim = entry(argument, index)
        note = f"({array_dimension(dim, rank, mode)})"
        if argument == "array strides":
            note = f"bytes {note}"
            hint = ("copy to a contiguous array" if value < 0 else
                    "pad the rows (e.g. allocate with a pitch) or copy to a contiguous array")
        elif argument == "box" and dim == rank - 1:
            hint = _inner_hint(options)
    elif argument == "channels_per_pixel":
        note, hint = f"({array_dimension(rank - 1, rank, mode)})", _inner_hint(options)
    elif argument == "box_dim":  # the whole box
        argument, value, hint = "box", value[::-1], "make the box smaller"
    elif argument == "channels_per_pixel x pixels_per_column":
        hint = "use fewer pixels_per_column"
    elif argument == "global_address":
        argument, value = "array data pointer", hex(value) if isinstance(value, int) else value
        hint = "allocate the array aligned, or start the view at an aligned offset"
    elif argument == "oob_fill":
        rule, hint = f"NaN fill needs a floating-point array, not {name}", "use oob_fill='none'"
    return TensorMapError(argument, value, rule if hint is None else f"{rule} — {hint}", index=index, note=note)


def _inner_hint(options):
    """What to make the innermost box extent, in elements (its rules are in bytes)."""
    size = TYPE_INFO[options["data_type"]].bits // 8
    span = swizzle_span(options["interleave"], options["swizzle"])
    hint = f"use a multiple of {INNER_ALIGN // size}"
    return hint if span is None else f"{hint} up to {span // size}, or another swizzle"
