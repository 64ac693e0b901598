"""``numba_tma.fence`` under the simulator: in its one coherent memory the ordering fences are
no-ops; ``mbarrier_init`` and ``proxy_async`` record what the checks of barriers and of the async
proxy need (below).
"""

from __future__ import annotations

from . import memory
from .state import enter


# The simulator has one coherent memory and completes a barrier's init at once; fence.proxy_async
# orders the block's generic writes for the async proxy (memory.py checks TMA / bulk sources).

def mbarrier_init():
    thread, state = enter()
    for b in state.barriers.values():
        b.fenced = True


def proxy_async(space):
    thread, _ = enter()
    if space in (None, "shared::cta"):
        memory.fence_generic(thread.block)
    elif space == "shared::cluster":
        for block in thread.block.cluster.blocks:
            memory.fence_generic(block)


def acq_rel(scope):
    pass


def sc(scope):
    pass


def proxy_tensormap_acquire(desc, scope):
    pass


def proxy_tensormap_release(scope):
    pass

