"""Bit layout of the 128-byte CUtensorMap (sm_90, driver 13.0), as established from captures.

The descriptor is handled as one 1024-bit little-endian integer; a field is ``(bit offset,
width)`` in it (byte ``b`` bit ``k`` is bit ``8*b + k``).  See ``docs/descriptors.md`` for the
evidence behind each row.

>>> get(put(0, FIELDS["rank_m1"], 4), FIELDS["rank_m1"])
4
"""

NUM_BYTES = 128

FIELDS = {
    "global_address": (0, 64),     # bytes 0-7
    "mode": (64, 4),               # qword 1 bits 0-3: 0 tiled, 1 im2col
    "rank_m1": (68, 3),            # rank - 1
    "type_code": (71, 4),          # PTX .elemtype code (not the driver enum)
    "interleave": (75, 2),
    "swizzle": (77, 2),            # swizzle span: none / 32B / 64B / 128B
    "oob_fill": (79, 1),
    "tf32": (80, 1),               # set for TFLOAT32 / TFLOAT32_FTZ
    "l2_promotion": (81, 2),
    "large_tensor": (85, 1),       # qword 1 bit 21 (never set by driver 13.0 on sm_90)
    "channels_m1": (440, 8),       # im2col: byte 55 (the tiled box_dim[0] slot)
    "lower_corner": (448, 16),     # im2col: bytes 56-57, packed per rank (CORNER_BITS)
    "upper_corner": (464, 16),     # im2col: bytes 58-59
    "pixels_m1": (480, 10),        # im2col: bytes 60-61
    "box_bytes": (512, 32),        # bytes 64-67: prod(box // element stride) x element size
    "swizzle_span": (576, 32),     # bytes 72-75: 16 << (0, 4, 5, 6)[swizzle]
}

# Per-dimension arrays: (first bit, bits between entries, width, entries).
ARRAYS = {
    "stride_lo": (96, 32, 32, 4),  # bytes 12-27: (global_strides[i] >> 4) & 0xffffffff
    "stride_hi": (224, 4, 4, 4),   # bytes 28-29: (global_strides[i] >> 36), one nibble each
    "dim_m1": (256, 32, 32, 5),    # bytes 32-51: global_dim[i] - 1
    "estride_m1": (416, 3, 3, 5),  # bytes 52-53: element_strides[i] - 1
    "box_m1": (440, 8, 8, 5),      # bytes 55-59: box_dim[i] - 1 (tiled)
}

# im2col corner offsets: bits per offset by rank (3 offsets of 5 bits, 2 of 8, 1 of 16).
CORNER_BITS = {3: 16, 4: 8, 5: 5}


def put(word, field, value):
    """Return ``word`` with ``value`` stored in ``field`` = (offset, width).

    >>> hex(put(0, (4, 4), 0xA))
    '0xa0'
    """
    offset, width = field
    return word | ((value & ((1 << width) - 1)) << offset)


def get(word, field):
    """Read ``field`` = (offset, width) from ``word``.

    >>> get(0xA0, (4, 4))
    10
    """
    offset, width = field
    return (word >> offset) & ((1 << width) - 1)


def get_array(word, name, count):
    """Read ``count`` entries of array ``name``.

    >>> get_array(build([], [("dim_m1", [7, 3])]), "dim_m1", 2)
    [7, 3]
    """
    first, step, width, _ = ARRAYS[name]
    return [get(word, (first + i * step, width)) for i in range(count)]


def build(scalars, arrays):
    """One word from ``(field name, value)`` pairs and ``(array name, values)`` pairs.

    >>> w = build([("mode", 1), ("rank_m1", 2)], [("box_m1", [1, 2])])
    >>> get(w, FIELDS["rank_m1"]), get_array(w, "box_m1", 2)
    (2, [1, 2])
    """
    word = 0
    for name, value in scalars:
        offset, width = FIELDS[name]
        word |= (value & ((1 << width) - 1)) << offset
    for name, values in arrays:
        first, step, width, _ = ARRAYS[name]
        mask = (1 << width) - 1
        for i, v in enumerate(values):
            word |= (v & mask) << (first + i * step)
    return word


def pack_corner(offsets, rank):
    """Pack signed im2col corner offsets for ``rank`` into one 16-bit field.

    >>> hex(pack_corner([-1, -1, -1], 5))
    '0x7fff'
    """
    bits = CORNER_BITS[rank]
    word = 0
    for i, v in enumerate(offsets):
        word = put(word, (i * bits, bits), v)
    return word


def unpack_corner(word, rank):
    """Inverse of :func:`pack_corner` (sign-extends each offset).

    >>> unpack_corner(0x7fff, 5)
    [-1, -1, -1]
    """
    bits = CORNER_BITS[rank]
    out = []
    for i in range(rank - 2):
        v = get(word, (i * bits, bits))
        out.append(v - (1 << bits) if v >> (bits - 1) else v)
    return out
