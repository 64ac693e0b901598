"""Multicast masks for the usual cluster shapes, and their rules (one bit per block of the cluster:
a mask has 16 bits, a cluster at most 16 blocks).  The compiled helpers
(``numba_tma.cluster.mask_*``) check their constant arguments with :func:`check` at compile time;
the simulator's twins check every call.

>>> mask_row(4, 1), mask_column(2, 4, 1)
(240, 170)
"""

from .errors import OpArgumentError

MASK_BITS = 16


def check(helper: str, **args) -> None:
    """Refuse arguments of ``cluster.<helper>`` (those known: ``None`` is a run-time value) whose
    mask needs more than 16 bits or names a block outside the cluster."""
    def refuse(arg, rule):
        return OpArgumentError(f"numba_tma: cluster.{helper}: argument '{arg}' {rule}; got {args[arg]}")

    for arg in ("size", "cluster_x", "cluster_y"):
        value = args.get(arg)
        if value is not None and not 1 <= value <= MASK_BITS:
            raise refuse(arg, f"must be 1 to {MASK_BITS} (blocks; a multicast mask has {MASK_BITS} bits)")
    x, y = args.get("cluster_x"), args.get("cluster_y")
    row, column = args.get("row"), args.get("column")
    if row is not None and (row < 0 or (x is not None and (row + 1) * x > MASK_BITS)):
        raise refuse("row", f"must be 0 or more, and (row + 1) * cluster_x at most {MASK_BITS}: the row's bits are "
                     f"row * cluster_x .. (row + 1) * cluster_x - 1 of a {MASK_BITS}-bit mask")
    if x is not None and y is not None and x * y > MASK_BITS:
        raise refuse("cluster_y", f"times cluster_x must be at most {MASK_BITS} (blocks in a cluster)")
    if column is not None and (column < 0 or (x is not None and column >= x)):
        raise refuse("column", "must be 0 to cluster_x - 1")


# The masks' arithmetic, written once: what the simulator runs (below, after the checks) and the
# body each host compiles for a run-time argument (numba-cuda's ``compile_internal``,
# numba-cuda-mlir's inlined device function), over 64-bit integers; the hosts cut it to 32 bits.

def all_bits(size):
    """The mask of blocks ``0 .. size - 1``."""
    return (1 << size) - 1


def row_bits(cluster_x, row):
    """The mask of blocks ``row * cluster_x .. (row + 1) * cluster_x - 1``."""
    return ((1 << cluster_x) - 1) << (row * cluster_x)


def column_bits(cluster_x, cluster_y, column):
    """The mask of blocks ``column + y * cluster_x`` for each ``y < cluster_y``."""
    mask = 0
    for y in range(cluster_y):
        mask |= 1 << (column + y * cluster_x)
    return mask


BITS = {"mask_all": all_bits, "mask_row": row_bits, "mask_column": column_bits}   # each helper's arithmetic


def mask_all(size):
    check("mask_all", size=size)
    return all_bits(size)


def mask_row(cluster_x, row):
    check("mask_row", cluster_x=cluster_x, row=row)
    return row_bits(cluster_x, row)


def mask_column(cluster_x, cluster_y, column):
    check("mask_column", cluster_x=cluster_x, cluster_y=cluster_y, column=column)
    return column_bits(cluster_x, cluster_y, column)
