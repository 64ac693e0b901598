"""``numba_tma.cache`` under the simulator: a cache policy is a hint, nothing to simulate (0)."""

CACHE_OPS = dict(policy=lambda kind, fraction=1.0, rest=None: 0)
