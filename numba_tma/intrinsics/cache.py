"""L2 cache policies: 64-bit values that ``cache_hint=`` of every TMA and bulk op takes."""

from numba.cuda import types

from ._core import Refusal, REQUIRED, Float, PtxOp, Qualifier, Requirement, Sample, exported

_KINDS = ("evict_first", "evict_last", "evict_normal", "evict_unchanged")

policy = PtxOp(
    "cache.policy", "createpolicy.fractional.L2::{kind}{rest}.b64 {out}, {fraction};",
    (Float("fraction", 0.0, 1.0, default=1.0),),
    qualifiers=(Qualifier("kind", {k: k for k in _KINDS}, REQUIRED),
                Qualifier("rest", {None: "", "evict_first": ".L2::evict_first",
                                   "evict_unchanged": ".L2::evict_unchanged"}, None)),
    order=("kind", "fraction", "rest"),
    need=Requirement((8, 0), (7, 4)), returns=types.uint64, memory=False,
    tlx=("tlx eviction_policy=", "cute cache_policy", "cuda::ptx::createpolicy_fractional"),
    # with a run-time fraction ptxas computes the policy bits with ordinary arithmetic
    samples=(Sample("out[0] = cache.policy(fraction=out[1] * 0.001)", "F2I.U32.TRUNC.NTZ",
                    ptx="createpolicy.fractional.L2::evict_first.b64 %rd, %f;", isa="9.7.9.18 createpolicy"),),
    doc="""An L2 cache policy: ``fraction`` of the accessed lines get eviction priority ``kind``
    (``evict_first``, ``evict_last``, ``evict_normal`` or ``evict_unchanged``), the rest ``rest``
    (``None``: unchanged; ``evict_first`` or ``evict_unchanged``).  Pass the result as
    ``cache_hint=`` to ``tma.load`` / ``store`` / ``reduce`` / ``prefetch`` and the ``bulk`` ops.

    Example::

        keep = cache.policy("evict_last")              # data reused by later blocks
        tma.load(desc, tile, (x, y), bars, cache_hint=keep)
    """,
    refusals=(Refusal("out[0] = cache.policy('evict_sometimes')",
                      "cache.policy: argument 'kind' must be a constant, one of 'evict_first'"),
              Refusal("out[0] = cache.policy('evict_first', fraction=2)",
                      "cache.policy: argument 'fraction' must be in (0.0, 1.0]"),),
).intrinsic()

__all__ = exported("cache")
