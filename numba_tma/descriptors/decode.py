"""``decode``: 128 descriptor bytes back to :class:`TensorMapFields`."""

from . import layout
from .enums import TYPE_BY_CODE, DataType, Interleave, L2Promotion, Mode, OOBFill, Swizzle
from .errors import TensorMapError
from .fields import TensorMapFields, pack


def descriptor_bytes(desc):
    """``desc`` (``bytes``, ``bytearray`` or another buffer, such as a uint8 numpy array) as the
    128 bytes of a CUtensorMap; TensorMapError for anything else.

    >>> len(descriptor_bytes(bytearray(128)))
    128
    """
    try:
        desc = memoryview(desc).tobytes()
    except TypeError:
        raise TensorMapError("desc", desc, "must be the 128 bytes of a CUtensorMap (bytes, bytearray or a "
                             "buffer)") from None
    if len(desc) != layout.NUM_BYTES:
        raise TensorMapError("desc", f"<{len(desc)} bytes>", "a CUtensorMap is exactly 128 bytes")
    return desc


def decode(desc):
    """Decode a 128-byte CUtensorMap (ours, the driver's, Triton's, CUTLASS's...).

    Bits the layout does not explain are kept in ``residual``, so ``decode(b).encode() == b``
    holds for every descriptor whose rank field says 1 to 5 (others raise TensorMapError).

    >>> from numba_tma.descriptors import encode_tiled
    >>> f = decode(encode_tiled("float32", 0x7f0000000000, [64, 32], [256], [16, 8], [1, 1]))
    >>> f.box_dim, f.global_strides
    ((16, 8), (256,))
    """
    word = int.from_bytes(descriptor_bytes(desc), "little")
    F, g = layout.FIELDS, layout.get
    rank = g(word, F["rank_m1"]) + 1
    if rank > 5:
        raise TensorMapError("desc", f"<rank - 1 field = {rank - 1}>", "not a CUtensorMap: rank must be 1..5")
    mode = Mode.IM2COL if g(word, F["mode"]) == Mode.IM2COL else Mode.TILED
    code, tf32 = g(word, F["type_code"]), g(word, F["tf32"])
    data_type = TYPE_BY_CODE.get((code, tf32), TYPE_BY_CODE.get((code, 0), DataType.UINT8))
    units = layout.get_array(word, "stride_lo", rank - 1)
    highs = layout.get_array(word, "stride_hi", rank - 1)
    interleave = g(word, F["interleave"])
    kw = dict(
        mode=mode, data_type=data_type, global_address=g(word, F["global_address"]),
        global_dim=tuple(d + 1 for d in layout.get_array(word, "dim_m1", rank)),
        global_strides=tuple(((h << 32) | u) << 4 for u, h in zip(units, highs)),
        element_strides=tuple(e + 1 for e in layout.get_array(word, "estride_m1", rank)),
        interleave=Interleave(min(interleave, 2)), swizzle=Swizzle(g(word, F["swizzle"])),
        l2_promotion=L2Promotion(g(word, F["l2_promotion"])), oob_fill=OOBFill(g(word, F["oob_fill"])),
        large_tensor=bool(g(word, F["large_tensor"])))
    if mode == Mode.IM2COL and rank >= 3:
        kw.update(channels_per_pixel=g(word, F["channels_m1"]) + 1,
                  pixels_per_column=g(word, F["pixels_m1"]) + 1,
                  pixel_box_lower_corner=tuple(layout.unpack_corner(g(word, F["lower_corner"]), rank)),
                  pixel_box_upper_corner=tuple(layout.unpack_corner(g(word, F["upper_corner"]), rank)))
    else:
        kw.update(mode=Mode.TILED, box_dim=tuple(b + 1 for b in layout.get_array(word, "box_m1", rank)))
    fields = TensorMapFields(**kw)
    residual = word ^ pack(fields)
    if residual:
        fields = TensorMapFields(**kw, residual=residual.to_bytes(layout.NUM_BYTES, "little"))
    return fields
