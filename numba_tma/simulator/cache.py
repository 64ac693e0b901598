"""``numba_tma.cache`` under the simulator: a cache policy is a hint, nothing to simulate (0)."""


def policy(kind, fraction=1.0, rest=None):
    return 0
