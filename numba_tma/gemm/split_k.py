"""Split-K's reduction, inside the GEMM kernel: each (tile, split) unit writes its float32 partial
into its split's plane of a (splits, M, N) workspace, then counts itself in the tile's counter (one
per 64-row half of a tile); the unit that counts last sums the planes in a fixed order — split 0
first, its own partial from registers, ``wgmma.load`` and ``wgmma.add`` plane by plane — and goes
on as an unsplit tile does (scale, fused epilogue, cast, store).  Every call gives the same bits
whichever split finishes last, and a call is one launch.

The counters are a zeroed int32 array kept per stream (:func:`counters`); the last unit of a
tile sets its counter back to zero, so the array is zero again when the kernel ends.
"""

import numpy as np

_COUNTERS = {}       # stream -> the zeroed int32 counters its split-K launches use


def counters(n, stream):
    """A zeroed int32 device array of at least ``n`` counters for split-K launches on ``stream``
    (kept: each launch leaves it zero; launches on one stream run one after another)."""
    found = _COUNTERS.get(stream)
    if found is None or found.shape[0] < n:
        from numba import cuda

        found = cuda.to_device(np.zeros(max(n, 1024), np.int32), stream=stream)
        _COUNTERS[stream] = found
    return found
