"""The gfx1250 Tensor Data Mover descriptor: field table and static validation.

Bit positions are counted from bit 0 of each group (group 0 and groups 2-3 are
128 bits, group 1 is 256 bits; dword k holds bits 32k..32k+31).  Descriptor
dimension 0 is the innermost (fastest) one; ``tensor_dimN_stride`` is the stride,
in elements, of dimension N+1.  Source: Triton's ``TDMUtility.cpp``.
"""
from dataclasses import dataclass

from .errors import reject
from .targets import check_int_range

GROUP_BITS = (128, 256, 128, 128)
MAX_RANK = 5
DESCRIPTOR_TYPE = 2  # group 0 bits [127:126]


@dataclass(frozen=True)
class Field:
    group: int
    lsb: int
    width: int


FIELDS = {
    "pred": Field(0, 0, 2),
    "lds_addr": Field(0, 32, 32),
    "global_addr": Field(0, 64, 57),
    "type": Field(0, 126, 2),
    "multicast_mask": Field(1, 0, 16),
    "data_size": Field(1, 16, 2),
    "barrier_enable": Field(1, 18, 1),
    "pad_enable": Field(1, 20, 1),
    "pad_interval": Field(1, 22, 3),
    "pad_amount": Field(1, 25, 7),
    "barrier_addr": Field(1, 32, 16),
    "tensor_dim0": Field(1, 48, 32),
    "tensor_dim1": Field(1, 80, 32),
    "tile_dim0": Field(1, 112, 16),
    "tile_dim1": Field(1, 128, 16),
    "tile_dim2": Field(1, 144, 16),
    "tensor_dim0_stride": Field(1, 160, 48),
    "tensor_dim1_stride": Field(1, 208, 48),
    "tensor_dim2": Field(2, 0, 32),
    "tensor_dim3": Field(2, 32, 32),
    "tensor_dim2_stride": Field(2, 64, 48),
    "tile_dim3": Field(2, 112, 16),
    "tensor_dim3_stride": Field(3, 0, 48),
    "tensor_dim4": Field(3, 48, 32),
    "tile_dim4": Field(3, 80, 16),
}


def tensor_dim(d):
    return f"tensor_dim{d}"


def tile_dim(d):
    return f"tile_dim{d}"


def stride_of_dim(d):
    """Field holding the stride of descriptor dimension *d* (d >= 1)."""
    return f"tensor_dim{d - 1}_stride"


def groups_for_rank(rank):
    """Rank 1-2 use the two-group ``.d2`` intrinsics, rank 3-5 all four groups."""
    return 2 if rank <= 2 else 4


@dataclass(frozen=True)
class TileSpec:
    """What is fixed when the kernel is compiled: element size, block, LDS padding.

    ``block_shape`` is row-major (outermost first).  ``pad_interval`` and
    ``pad_amount`` are in elements: after every ``pad_interval`` elements the LDS
    copy skips ``pad_amount`` elements (0, 0 = no padding).
    """
    elem_bytes: int
    block_shape: tuple
    pad_interval: int = 0
    pad_amount: int = 0

    def __post_init__(self):
        op = "make_tensor_descriptor"
        if self.elem_bytes not in (1, 2, 4, 8):
            raise reject(op, "array", "must have elements of 1, 2, 4 or 8 bytes", f"{self.elem_bytes!r} bytes")
        if not isinstance(self.block_shape, tuple) or not 1 <= len(self.block_shape) <= MAX_RANK:
            raise reject(op, "block_shape", f"must be a tuple of 1 to {MAX_RANK} dims", repr(self.block_shape))
        for n in self.block_shape:
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 0xFFFF:
                raise reject(op, "block_shape", "must have dims that are ints in [1, 65535]",
                             repr(self.block_shape))
        for name in ("pad_interval", "pad_amount"):
            check_int_range(op, name, getattr(self, name), 0, 2**31 - 1)
        if (self.pad_interval, self.pad_amount) != (0, 0):
            interval, amount = self.pad_dwords()
            if interval < 2 or interval > 256 or interval & (interval - 1):
                raise reject(op, "pad_interval", f"must be a power of two of 2..256 dwords "
                             f"({self.elem_bytes}-byte elements)", f"{self.pad_interval} elements")
            if not 1 <= amount <= 128:
                raise reject(op, "pad_amount", "must be 1..128 dwords", f"{self.pad_amount} elements")

    @property
    def rank(self):
        return len(self.block_shape)

    def pad_dwords(self):
        """Padding (interval, amount) in whole dwords, or raise if not whole."""
        sizes = (self.pad_interval * self.elem_bytes, self.pad_amount * self.elem_bytes)
        if any(s % 4 for s in sizes):
            raise reject("make_tensor_descriptor", "pad_interval", "and pad_amount must be whole dwords",
                         f"{self.pad_interval} and {self.pad_amount} elements of {self.elem_bytes} bytes")
        return sizes[0] // 4, sizes[1] // 4

    def padded_elements(self, elements):
        """LDS elements taken by the first *elements* elements of the block."""
        if not self.pad_interval:
            return elements
        return elements + elements // self.pad_interval * self.pad_amount

    def lds_bytes(self):
        """LDS bytes one block spans: from its first element to past its last (no pad
        follows the last element)."""
        count = 1
        for n in self.block_shape:
            count *= n
        return (self.padded_elements(count - 1) + 1) * self.elem_bytes

    def static_fields(self):
        """Fields known at compile time: element size, tile dims, padding, type."""
        values = {"type": DESCRIPTOR_TYPE, "data_size": self.elem_bytes.bit_length() - 1}
        for d, n in enumerate(reversed(self.block_shape)):
            values[tile_dim(d)] = n
        if self.pad_interval:
            interval, amount = self.pad_dwords()
            values.update(pad_enable=1, pad_interval=interval.bit_length() - 2,
                          pad_amount=amount - 1)
        return values


def pack(values):
    """Python ints of every field -> the groups as ints (the reference packer)."""
    groups = [0] * len(GROUP_BITS)
    for name, value in values.items():
        field = FIELDS[name]
        if not 0 <= value < 1 << field.width:
            raise reject("tdm", name, f"must fit in {field.width} bits (a TDM descriptor field)", value)
        groups[field.group] |= value << field.lsb
    return groups


def unpack(groups):
    """The groups as ints -> every field's value."""
    return {name: (groups[f.group] >> f.lsb) & ((1 << f.width) - 1)
            for name, f in FIELDS.items()}


def validate_warp_hints(hints, max_waves=32):
    """Check ``warp_used_hint`` masks of a fused load: 2-4 members, each non-empty and
    axis-aligned (some wave-id bits pinned, the rest free), pairwise disjoint."""
    op = "async_amd_descriptor_load_fused"
    if not 2 <= len(hints) <= 4:
        raise reject(op, "members", "must be 2 to 4 members", f"{len(hints)} members")
    seen = 0
    for i, hint in enumerate(hints):
        if isinstance(hint, bool) or not isinstance(hint, int) or not 0 < hint < 1 << max_waves:
            raise reject(op, f"members[{i}]", f"must have a warp_used_hint that is a non-empty wave mask "
                         f"below 1 << {max_waves}", repr(hint))
        waves = [w for w in range(max_waves) if hint >> w & 1]
        free = 0
        for w in waves:
            free |= w ^ waves[0]
        if len(waves) != 1 << bin(free).count("1"):
            raise reject(op, f"members[{i}]", "must have an axis-aligned warp_used_hint (its wave ids all "
                         "combinations of some free wave-id bits)", f"{hint:#x}")
        if hint & seen:
            raise reject(op, f"members[{i}]", "must have a warp_used_hint disjoint from the earlier members'",
                         f"{hint:#x}, which overlaps one")
        seen |= hint
