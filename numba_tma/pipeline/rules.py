"""The refusals every pipeline path gives, word for word (configuration, compiled steps, simulated
ring): an argument breaking a rule, and the bytes one TMA stage may receive."""

from __future__ import annotations

from ..errors import OpArgumentError

MAX_TX_BYTES = (1 << 20) - 1     # the transaction bytes one phase can count (PTX: tx-count range)


def refuse(where, argument, rule, value):
    """The error for ``argument`` of ``where`` breaking ``rule``."""
    return OpArgumentError(f"numba_tma: {where}: argument {argument!r} {rule}; got {value!r}")


def stage_bytes(where, expect, layouts, count=None) -> int:
    """The bytes a TMA stage receives: the box bytes of the maps whose ``TileLayout``s are
    ``layouts`` (a map's ``desc.layout``, its Numba type's ``layout`` alike), or ``count``;
    refused, naming ``expect`` as given, beyond what one mbarrier phase can count."""
    if layouts:
        if any(layout.box_bytes is None for layout in layouts):
            raise refuse(where, "expect", "must be maps whose box_bytes is known (not interleaved)", expect)
        count = sum(layout.box_bytes for layout in layouts)
    if not 1 <= count <= MAX_TX_BYTES:
        raise refuse(where, "expect", f"must be from 1 to {MAX_TX_BYTES} bytes per stage (what one mbarrier phase can "
                     "count)", count)
    return count
