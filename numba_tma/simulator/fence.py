"""``numba_tma.fence`` under the simulator: its one memory is coherent, so the fences only record
what the checker needs: ``acq_rel`` / ``sc`` what a later relaxed arrival publishes,
``mbarrier_init`` and ``proxy_async`` what the checks of barriers and of the async proxy need
(a barrier's init visible to the cluster and the async proxy; to this block's async proxy).
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
    thread, state = enter()
    scheduler.proxy_fence(thread, _SPACES[space])
    if "shared" in _SPACES[space]:          # this thread's inits: visible to the block's async proxy
        for b in state.barriers.values():
            if b.initialiser is thread:
                b.proxy_fenced = True


def acq_rel(scope):
    thread, _ = enter()
    scheduler.fence(thread, scope)


def sc(scope):
    thread, _ = enter()
    scheduler.fence(thread, scope)


def proxy_tensormap_acquire(desc, scope):
    thread, _ = enter()
    memory.tensormap_acquire(thread, desc)


def proxy_tensormap_release(scope):
    thread, _ = enter()
    memory.tensormap_release(thread)

