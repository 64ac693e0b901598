"""L2 cache policies: 64-bit values that ``cache_hint=`` of every TMA and bulk op takes.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap


def policy(kind: Literal['evict_first', 'evict_last', 'evict_normal', 'evict_unchanged'], fraction: float = 1.0, rest: Literal[None, 'evict_first', 'evict_unchanged'] = None) -> int:
    """An L2 cache policy: ``fraction`` of the accessed lines get eviction priority ``kind``
    (``evict_first``, ``evict_last``, ``evict_normal`` or ``evict_unchanged``), the rest ``rest``
    (``None``: unchanged; ``evict_first`` or ``evict_unchanged``).  Pass the result as
    ``cache_hint=`` to ``tma.load`` / ``store`` / ``reduce`` / ``prefetch`` and the ``bulk`` ops.

    Example::

        keep = cache.policy("evict_last")              # data reused by later blocks
        tma.load(desc, tile, (x, y), bars, cache_hint=keep)

    PTX::

        createpolicy.fractional.L2::evict_first.b64 out, fraction;

    Requires sm_80 or newer, PTX ISA 7.4.

    Also known as: ``tlx eviction_policy=``, ``cute cache_policy``, ``cuda::ptx::createpolicy_fractional``.
    """
