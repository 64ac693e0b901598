"""``numba_tma.fence`` under the simulator: in its one coherent memory the ordering fences are
no-ops; ``mbarrier_init`` and ``proxy_async`` record what the checks of barriers and of the async
proxy need (below).
"""

from __future__ import annotations

from . import memory, scheduler
from .state import enter

# the proxy fence's state spaces, as the checker's marks tell them apart
_SPACES = {None: ("shared", "global"), "shared::cta": ("shared",), "shared::cluster": ("shared",),
           "global": ("global",)}


# The simulator has one coherent memory and completes a barrier's init at once; fence.proxy_async
# orders this thread's generic writes for the async proxy (memory.py checks TMA / bulk operands).

def mbarrier_init():
    thread, state = enter()
    for b in state.barriers.values():
        b.fenced = True


def proxy_async(space):
    thread, _ = enter()
    scheduler.proxy_fence(thread, _SPACES[space])


def acq_rel(scope):
    pass


def sc(scope):
    pass


def proxy_tensormap_acquire(desc, scope):
    thread, _ = enter()
    memory.tensormap_acquire(thread, desc)


def proxy_tensormap_release(scope):
    thread, _ = enter()
    memory.tensormap_release(thread)

