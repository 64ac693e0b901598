"""The 16-byte store edge: what a TMA store or reduce writes past the end of dimension 0.

Measured on the H200 (driver 580.159.04; the same is reported for Triton on an H100,
triton-lang/triton#11583): a ``tma.store`` / ``tma.reduce`` whose box crosses the end of
dimension 0 (the array's last, contiguous dimension) writes the tile's bytes, or adds its values,
for every byte from ``global_dim[0] * element size`` up to the next multiple of 16 bytes of each
row, as if they were inside the tensor.  A float32 tensor 59 elements wide (236 bytes) gets element
59 written, one 62 wide gets 62 and 63.  Loads are not affected (their fill is per element).

A map's *store overrun* is that number of bytes (0 when its rows are a multiple of 16 bytes).  A
store through a map with an overrun is refused unless the user opts in (the bytes are theirs: the
padding of a pitched allocation, say): ``TensorMap.tiled(..., allow_store_overrun=True)`` or
``tma.store(..., allow_overrun=True)``.  ``docs/troubleshooting.md`` lists every route a map takes
into a kernel and how each is covered.

>>> store_overrun(32, 59), store_limit(32, 59), store_overrun(16, 64)
(4, 60, 0)
"""


def store_overrun(bits: int, width: int) -> int:
    """Bytes a TMA store writes past the end of a dimension-0 row of ``width`` elements of
    ``bits`` bits (0 to 15)."""
    nbytes = -(-(width * bits) // 8)
    return -nbytes % 16


def store_limit(bits: int, width: int) -> int:
    """The element index, exclusive, up to which a store writes along dimension 0: ``width``
    rounded up to the next 16 bytes."""
    per_chunk = 128 // bits
    return -(-width // per_chunk) * per_chunk if 128 % bits == 0 else width


def array_dimension(dim: int, rank: int, mode: str) -> str:
    """How errors name array dimension ``dim``: ``dimension 0 of the array, rows``."""
    roles = ("N", *("D", "H", "W")[5 - rank:], "C") if mode == "im2col" else ("rows", "columns")
    role = dict(zip(range(rank - len(roles), rank), roles)).get(dim)
    return f"dimension {dim} of the array" + (f", {role}" if role else "")


def overrun_rule(map_text: str, dtype: str, bits: int, overrun: int, rank: int, mode: str) -> str:
    """Why a store through ``map_text`` (of ``dtype``, whose rows end ``overrun`` bytes short of a
    16-byte boundary) is refused, and the two fixes, with the array dimension in the user's order.
    The one text the compiled ops and the simulator share."""
    per_chunk = 128 // bits if 128 % bits == 0 else None
    elements = f" = {overrun * 8 // bits} {dtype} element{'s' if overrun * 8 // bits > 1 else ''}" if per_chunk else ""
    pad = f"a multiple of {per_chunk} elements" if per_chunk else "a multiple of 16 bytes"
    return (f"would write outside the tensor: {map_text} has rows ({array_dimension(rank - 1, rank, mode)}) "
            f"{overrun} bytes short of a multiple of 16, and a TMA store or reduce whose box crosses the end of a row "
            f"writes on to the next 16-byte boundary ({overrun} bytes{elements} past every row it crosses; measured "
            f"on the H200) — make the array's last dimension {pad} (map a padded array, ignore the extra columns), "
            f"or opt in where those bytes are yours: TensorMap.tiled(array, box, allow_store_overrun=True) "
            f"(.im2col likewise) or allow_overrun=True on this call")
