"""``TensorMapFields``: every field of a descriptor, and the raw packer behind all encoders."""

from dataclasses import dataclass, field

from . import layout
from .enums import (TYPE_INFO, DataType, Interleave, L2Promotion, Mode, OOBFill, Swizzle)
from .errors import TensorMapError

# swizzle span field per swizzle enum; the 128B atom variants keep a span of 128 B.
_SWIZZLE_CODE = {Swizzle.NONE: 0, Swizzle.SWIZZLE_32B: 1, Swizzle.SWIZZLE_64B: 2, Swizzle.SWIZZLE_128B: 3}
_SPAN_SHIFT = (0, 4, 5, 6)


@dataclass(frozen=True)
class TensorMapFields:
    """All fields of a 128-byte CUtensorMap, dimensions innermost first (like the driver).

    ``box_dim`` is set for tiled maps; ``pixel_box_lower_corner``, ``pixel_box_upper_corner``,
    ``channels_per_pixel`` and ``pixels_per_column`` for im2col maps.  ``large_tensor`` is
    qword-1 bit 21.  ``residual`` holds, XOR-ed, every bit of the source descriptor that these
    fields do not explain (all zero for anything the driver 13.0 produces on sm_90), so
    ``decode(b).encode() == b`` for any 128 bytes.

    >>> f = TensorMapFields(Mode.TILED, DataType.FLOAT32, 0x7f0000000000, (64, 32), (256,),
    ...                     (16, 8), (1, 1))
    >>> f.box_bytes
    512
    >>> len(f.encode())
    128
    """
    mode: Mode
    data_type: DataType
    global_address: int
    global_dim: tuple
    global_strides: tuple
    box_dim: tuple = None
    element_strides: tuple = None
    interleave: Interleave = Interleave.NONE
    swizzle: Swizzle = Swizzle.NONE
    l2_promotion: L2Promotion = L2Promotion.NONE
    oob_fill: OOBFill = OOBFill.NONE
    pixel_box_lower_corner: tuple = None
    pixel_box_upper_corner: tuple = None
    channels_per_pixel: int = None
    pixels_per_column: int = None
    large_tensor: bool = False
    residual: bytes = field(default=bytes(layout.NUM_BYTES), repr=False)

    @property
    def rank(self):
        """Number of dimensions."""
        return len(self.global_dim)

    @property
    def box_bytes(self):
        """The value the driver stores in bytes 64-67 (and limits to 228 KiB).

        Tiled: prod(box_dim[i] // element_strides[i]) * element size; im2col:
        channels_per_pixel * pixels_per_column * element size.  With element strides that do not
        divide the box this is *not* what a load delivers: see :attr:`transfer_bytes`.
        """
        bits = TYPE_INFO[self.data_type].bits
        if self.mode == Mode.IM2COL:
            return self.channels_per_pixel * self.pixels_per_column * bits // 8
        n = 1
        for b, e in zip(self.box_dim, self.element_strides):
            n *= b // e
        return n * bits // 8

    @property
    def transfer_bytes(self):
        """Bytes one full load writes to shared memory: the count an mbarrier must expect.

        Measured on the H200 (driver 13.0) for tiled maps without interleave: element size x
        box_dim[0] x prod(ceil(box_dim[i] / element_strides[i]) for i >= 1) — dimension 0's
        stride does not shrink the transfer, the others round up.  Im2col: channels_per_pixel x
        pixels_per_column x element size.  For interleaved maps the rule is not established
        (the measurements fit no simple formula), so this raises ``TensorMapError``.
        """
        bits = TYPE_INFO[self.data_type].bits
        if self.mode == Mode.IM2COL:
            return transfer_bytes(bits, self.interleave, self.channels_per_pixel, (self.pixels_per_column,), (1,))
        return transfer_bytes(bits, self.interleave, self.box_dim[0], self.box_dim[1:], self.element_strides[1:])

    def encode(self):
        """Pack these fields into the 128 descriptor bytes (no validation; see ``encode_tiled``)."""
        word = pack(self)
        if any(self.residual):
            word ^= int.from_bytes(self.residual, "little")
        return word.to_bytes(layout.NUM_BYTES, "little")

    def __str__(self):
        kind = "im2col" if self.mode == Mode.IM2COL else "tiled"
        lines = [f"CUtensorMap {kind} {self.data_type.name} rank {self.rank} @ {self.global_address:#x}",
                 f"  global_dim      {self.global_dim}  (innermost first)",
                 f"  global_strides  {self.global_strides}  bytes"]
        if self.mode == Mode.IM2COL:
            lines += [f"  corners         lower {self.pixel_box_lower_corner} upper {self.pixel_box_upper_corner}",
                      f"  channels/pixel  {self.channels_per_pixel}, pixels/column {self.pixels_per_column}"]
        else:
            lines.append(f"  box_dim         {self.box_dim}")
        lines += [f"  element_strides {self.element_strides}  -> box-bytes field {self.box_bytes}",
                  f"  interleave {self.interleave.name}, swizzle {self.swizzle.name}, "
                  f"l2_promotion {self.l2_promotion.name}, oob_fill {self.oob_fill.name}"
                  + (", large_tensor (bit 21)" if self.large_tensor else "")]
        if any(self.residual):
            bits = [f"byte {i} mask {b:#04x}" for i, b in enumerate(self.residual) if b]
            lines.append("  unexplained bits: " + "; ".join(bits))
        return "\n".join(lines)


def transfer_bytes(bits, interleave, inner, outer, outer_strides):
    """Bytes one full load of ``bits``-bit elements writes to shared memory (measured on the H200,
    driver 13.0): ``inner`` elements along dimension 0 (a tiled box's innermost extent: its element
    stride does not shrink the transfer; im2col's channels per pixel) times each extent of the
    other dimensions, ``outer`` (any order), over its element stride in ``outer_strides``, rounded
    up (im2col: pixels per column, stride 1).  TensorMapError for an ``interleave``d map, whose
    transfer size is not established (the measurements fit no simple formula)."""
    if interleave != Interleave.NONE:
        raise unknown_transfer(interleave)
    n = inner
    for b, e in zip(outer, outer_strides):
        n *= -(-b // e)
    return n * bits // 8


def unknown_transfer(interleave) -> TensorMapError:
    """The error for asking what a load through an ``interleave``d map delivers."""
    return TensorMapError("interleave", interleave.name, "the bytes an interleaved load delivers are not "
                          "established; measure them for your map (see docs/descriptors.md)")


def pack(f):
    """Pack a :class:`TensorMapFields` into a 1024-bit integer (the residual is not applied)."""
    if f.swizzle not in _SWIZZLE_CODE:
        raise TensorMapError("swizzle", f.swizzle, "the 128B atom swizzles are not encodable: their "
                             "descriptor bits are unconfirmed (driver 13.0 rejects them on sm_90)")
    info, code = TYPE_INFO[f.data_type], _SWIZZLE_CODE[f.swizzle]
    units = [s >> 4 for s in f.global_strides]
    scalars = [("global_address", f.global_address), ("mode", f.mode), ("rank_m1", f.rank - 1),
               ("type_code", info.code), ("interleave", f.interleave), ("swizzle", code),
               ("oob_fill", f.oob_fill), ("tf32", info.tf32), ("l2_promotion", f.l2_promotion),
               ("large_tensor", f.large_tensor), ("box_bytes", f.box_bytes),
               ("swizzle_span", 16 << _SPAN_SHIFT[code])]
    arrays = [("stride_lo", units), ("stride_hi", [u >> 32 for u in units]),
              ("dim_m1", [d - 1 for d in f.global_dim]), ("estride_m1", [e - 1 for e in f.element_strides])]
    if f.mode == Mode.IM2COL:
        scalars += [("channels_m1", f.channels_per_pixel - 1), ("pixels_m1", f.pixels_per_column - 1),
                    ("lower_corner", layout.pack_corner(f.pixel_box_lower_corner, f.rank)),
                    ("upper_corner", layout.pack_corner(f.pixel_box_upper_corner, f.rank))]
    else:
        arrays.append(("box_m1", [b - 1 for b in f.box_dim]))
    return layout.build(scalars, arrays)
