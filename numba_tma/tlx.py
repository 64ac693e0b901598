"""TLX's names for numba_tma's ops, for kernels ported from (or read beside) Triton TLX.

Each function has TLX's name and argument order and is a thin wrapper over the numba_tma op named
in its docstring (the docs page ``docs/tlx.md`` has the whole table, and the TLX ops that cannot
exist in a Numba kernel, with why).  Differences from TLX, everywhere:

* **offsets are in the tensor's order** (outermost first, ``(row, col)``), as in TLX; the wrappers
  reverse them into TMA's innermost-first ``coords``;
* ``multicast_targets`` is a 16-bit mask of CTA ranks (``numba_tma.cluster.mask_*``), not a list;
* string options (``eviction_policy``, ``store_reduce``, ``cache_modifier``) must be constants;
* ``async_load(src, result, mask, other, cache_modifier, size)``: ``src`` is the thread's element
  (Numba has no pointers), ``other`` only ``None`` or ``0`` (cp.async's zero fill); AMD's form
  ``amd.async_load`` takes the lane's ``offsets=`` into ``src`` instead of a pointer.

Inside ``@cuda.jit`` each wrapper compiles inline (a Numba ``overload`` on the CUDA target); under
the CUDA simulator the same Python body runs on the simulator's ops.  AMD's TLX names are
``numba_tma.amd`` (``tlx.amd``).

Example::

    import numba
    from numba import cuda
    from numba_tma import tlx

    @cuda.jit
    def k(desc, out):
        bars = tlx.alloc_barriers(1, 1)
        tile = cuda.shared.array((64, 64), numba.float32, alignment=128)
        if cuda.threadIdx.x == 0:
            tlx.barrier_expect_bytes(bars, 64 * 64 * 4)
            tlx.async_descriptor_load(desc, tile, (cuda.blockIdx.y * 64, cuda.blockIdx.x * 64), bars)
        tlx.barrier_wait(bars, 0)
"""

import inspect

import numpy as np
from numba import cuda
from numba.core import types as _numba_types

from .ops import BACKEND, at, bulk, cache, cluster, cp_async, dsmem, mbarrier, sync, tma
from .ops import fence as _fence   # the family; ``fence`` here is TLX's function

__all__ = [
    "alloc_barriers", "async_descriptor_load", "async_descriptor_prefetch_tensor", "async_descriptor_store",
    "async_descriptor_store_wait", "async_load", "async_load_commit_group", "async_load_wait_group",
    "async_remote_shmem_copy", "async_remote_shmem_store", "barrier_arrive", "barrier_expect_bytes", "barrier_wait",
    "cluster_barrier", "cluster_cta_rank", "cluster_size_1d", "fence", "fence_async_shared",
    "fence_mbarrier_init_cluster", "named_barrier_arrive", "named_barrier_wait", "amd",
]

_WRAPPERS = []
VARIANTS = {}   # a wrapper's name -> its variant picker (``_device``'s ``variants``), for every host
_NONE = (_numba_types.NoneType, _numba_types.Omitted)


def _device(fn=None, *, variants=None):
    """``fn`` as written runs under the simulator; on the CUDA target it is inlined as an overload.
    ``variants(**argument types)`` may pick another body for the CUDA target (for options that
    select a PTX form, which Numba cannot branch on inside one body)."""
    if fn is None:
        return lambda f: _device(f, variants=variants)
    _WRAPPERS.append(fn)
    if variants is not None:
        VARIANTS[fn.__name__] = variants
    BACKEND.define_for_compiler(lambda: _inline(fn, variants))
    return fn


def _inline(fn, variants):
    """``fn`` (or the body ``variants`` picks) inlined where a kernel calls it, as a Numba overload
    on the CUDA target."""
    from numba.cuda.extending import overload

    signature = inspect.signature(fn)

    def typer(*args, **kwargs):
        if variants is None:
            return fn
        bound = signature.bind(*args, **kwargs)
        return variants(**bound.arguments)

    typer.__signature__ = signature   # numba matches the call against the typer's parameters
    overload(fn, target="cuda", prefer_literal=True)(typer)


# Each option that picks a PTX form (or leaves an argument out) has its own body, picked at compile
# time by the wrapper's ``variants`` from the call's types: no body branches on an option (so every
# host inlines it without typing a branch it does not take).

def _load(desc, result, offsets, barrier, eviction_policy=None, multicast_targets=None, two_ctas=False):
    tma.load(desc, result, offsets[::-1], barrier, multicast=multicast_targets)


def _load_evict(desc, result, offsets, barrier, eviction_policy=None, multicast_targets=None, two_ctas=False):
    tma.load(desc, result, offsets[::-1], barrier, cache_hint=cache.policy(eviction_policy),
             multicast=multicast_targets)


def _load_pair(desc, result, offsets, barrier, eviction_policy=None, multicast_targets=None, two_ctas=False):
    tma.load(desc, result, offsets[::-1], barrier, multicast=multicast_targets, cta_group=2)


def _load_pair_evict(desc, result, offsets, barrier, eviction_policy=None, multicast_targets=None, two_ctas=False):
    tma.load(desc, result, offsets[::-1], barrier, cache_hint=cache.policy(eviction_policy),
             multicast=multicast_targets, cta_group=2)


def _pick_load(two_ctas=False, eviction_policy=None, **_):
    return {(False, False): _load, (False, True): _load_evict, (True, False): _load_pair,
            (True, True): _load_pair_evict}[_value(two_ctas) is True, _value(eviction_policy) is not None]


@_device(variants=_pick_load)
def async_descriptor_load(desc, result, offsets, barrier, eviction_policy=None, multicast_targets=None,
                          two_ctas=False):
    """``tma.load(desc, result, offsets reversed, barrier, cache_hint=cache.policy(eviction_policy),
    multicast=multicast_targets)``; ``two_ctas=True`` (a constant; sm_100a): ``cta_group=2``."""
    _pick_load(two_ctas, eviction_policy)(desc, result, offsets, barrier, eviction_policy, multicast_targets)


def _store(desc, source, offsets, eviction_policy=None, store_reduce=None):
    tma.store(desc, source, offsets[::-1])


def _store_evict(desc, source, offsets, eviction_policy=None, store_reduce=None):
    tma.store(desc, source, offsets[::-1], cache_hint=cache.policy(eviction_policy))


def _reduce(desc, source, offsets, eviction_policy=None, store_reduce=None):
    tma.reduce(desc, source, offsets[::-1], store_reduce)


def _reduce_evict(desc, source, offsets, eviction_policy=None, store_reduce=None):
    tma.reduce(desc, source, offsets[::-1], store_reduce, cache_hint=cache.policy(eviction_policy))


def _pick_store(eviction_policy=None, store_reduce=None, **_):
    return {(False, False): _store, (False, True): _store_evict, (True, False): _reduce,
            (True, True): _reduce_evict}[_value(store_reduce) is not None, _value(eviction_policy) is not None]


@_device(variants=_pick_store)
def async_descriptor_store(desc, source, offsets, eviction_policy=None, store_reduce=None):
    """``tma.store(desc, source, offsets reversed)``, or ``tma.reduce(..., store_reduce)`` with
    ``store_reduce`` = ``"add"``, ``"min"``...; ``eviction_policy`` as for the load."""
    _pick_store(eviction_policy, store_reduce)(desc, source, offsets, eviction_policy, store_reduce)


def _prefetch(desc, offsets, eviction_policy=None):
    tma.prefetch(desc, offsets[::-1])


def _prefetch_evict(desc, offsets, eviction_policy=None):
    tma.prefetch(desc, offsets[::-1], cache_hint=cache.policy(eviction_policy))


def _pick_prefetch(eviction_policy=None, **_):
    return _prefetch if _value(eviction_policy) is None else _prefetch_evict


@_device(variants=_pick_prefetch)
def async_descriptor_prefetch_tensor(desc, offsets, eviction_policy=None):
    """``tma.prefetch(desc, offsets reversed)`` into L2."""
    _pick_prefetch(eviction_policy)(desc, offsets, eviction_policy)


@_device
def async_descriptor_store_wait(pendings):
    """``bulk.commit_group()`` then ``bulk.wait_group_read(pendings)``: at most ``pendings`` (a
    constant) groups of stores still read shared memory (TLX commits the stores it issued, then
    waits; the source tiles of the others may be reused)."""
    bulk.commit_group()
    bulk.wait_group_read(pendings)


@_device
def barrier_expect_bytes(bar, size):
    """``mbarrier.arrive_expect_tx(bar, size)``: expects ``size`` bytes **and counts one arrival**
    (as TLX's does: it is arrive.expect_tx, not expect_tx)."""
    mbarrier.arrive_expect_tx(bar, size)


@_device
def barrier_wait(bar, phase):
    """``mbarrier.wait(bar, phase)``."""
    mbarrier.wait(bar, phase)


def _arrive(bar, arrive_count=1, remote_cta_rank=None):
    mbarrier.arrive(bar, arrive_count)


def _arrive_remote(bar, arrive_count=1, remote_cta_rank=None):
    mbarrier.arrive_remote(bar, remote_cta_rank, arrive_count)


def _pick_arrive(remote_cta_rank=None, **_):
    return _arrive if _value(remote_cta_rank) is None else _arrive_remote


@_device(variants=_pick_arrive)
def barrier_arrive(bar, arrive_count=1, remote_cta_rank=None):
    """``mbarrier.arrive(bar, arrive_count)``, or ``mbarrier.arrive_remote(bar, remote_cta_rank,
    arrive_count)`` on the barrier at the same offset in that CTA of the cluster."""
    _pick_arrive(remote_cta_rank)(bar, arrive_count, remote_cta_rank)


@_device
def named_barrier_wait(bar_id, num_threads):
    """``sync.named_barrier_sync(bar_id, num_threads)`` (``bar.sync``)."""
    sync.named_barrier_sync(bar_id, num_threads)


@_device
def named_barrier_arrive(bar_id, num_threads):
    """``sync.named_barrier_arrive(bar_id, num_threads)`` (``bar.arrive``)."""
    sync.named_barrier_arrive(bar_id, num_threads)


def _fence_async(scope):
    _fence.proxy_async()


def _fence_acq_rel(scope):
    _fence.acq_rel(scope)


@_device(variants=lambda scope: _fence_async if getattr(scope, "literal_value", None) == "async_shared"
         else _fence_acq_rel)
def fence(scope):
    """``"gpu"`` / ``"sys"``: ``fence.acq_rel(scope)``; ``"async_shared"``: ``fence.proxy_async()``."""
    (_fence_async if scope == "async_shared" else _fence_acq_rel)(scope)


@_device
def fence_async_shared():
    """``fence.proxy_async()`` (TLX's deprecated alias of ``fence("async_shared")``)."""
    _fence.proxy_async()


@_device
def fence_mbarrier_init_cluster():
    """``fence.mbarrier_init()`` (release, cluster scope)."""
    _fence.mbarrier_init()


@_device
def cluster_barrier():
    """``cluster.sync()``: arrive and wait at the cluster barrier."""
    cluster.sync()


@_device
def cluster_cta_rank():
    """``cluster.ctarank()``."""
    return cluster.ctarank()


@_device
def cluster_size_1d():
    """``cluster.nctarank()``."""
    return cluster.nctarank()


@_device
def async_remote_shmem_store(dst, src, remote_cta_rank, barrier):
    """``dsmem.store_async(dst, src, barrier, remote_cta_rank)``: ``src`` is a value (a number or a
    tuple of 2 or 4), stored into CTA ``remote_cta_rank``'s ``dst`` and completing on its barrier."""
    dsmem.store_async(dst, src, barrier, remote_cta_rank)


@_device
def async_remote_shmem_copy(dst, src, remote_cta_rank, barrier):
    """``dsmem.copy_async(dst, src, src's bytes, barrier, remote_cta_rank)``: all of ``src`` into CTA
    ``remote_cta_rank``'s ``dst``, completing on its barrier."""
    dsmem.copy_async(dst, src, src.size * src.itemsize, barrier, remote_cta_rank)


# TLX's cache_modifier strings (Triton's load cache modifiers) that cp.async has: ".ca" caches in
# L1 and L2, ".cg" in L2 only (16-byte copies); "" is Triton's default, ".ca" for cp.async.
_CP_ASYNC_CACHE = {"": "ca", ".ca": "ca", ".cg": "cg"}


def _value(arg):
    """An argument's Python value: itself under the simulator; when compiling, the value of its
    literal (or omitted, or None) type, else the type (not a constant)."""
    if isinstance(arg, _numba_types.Omitted):
        return arg.value
    if isinstance(arg, _numba_types.NoneType):
        return None
    return getattr(arg, "literal_value", arg)


def _is_integer_mask(mask) -> bool:
    """``mask`` is an integer, not a boolean (a Numba type when compiling, a value under the
    simulator): ``async_load(src, result, 12)`` passes 12 as the mask, not the size."""
    return isinstance(mask, (_numba_types.Integer, int, np.integer)) and not isinstance(mask, bool)


def _async_load_rules(mask, other, cache_modifier, size):
    """cp_async.load's ``cache`` for TLX's options; refuses what cp.async cannot express."""
    from .errors import OpArgumentError

    def reject(arg, rule, got):
        return OpArgumentError(f"numba_tma: tlx.async_load: argument '{arg}' {rule}; got {got}")

    if _is_integer_mask(mask):
        raise reject("mask", "must be None or a boolean (a comparison such as col < n), not an integer: the "
                     "third argument is the mask; the size is the keyword size= (4, 8 or 16)", _value(mask))
    other, cache_modifier, size = _value(other), _value(cache_modifier), _value(size)
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size not in (4, 8, 16):
        raise reject("size", "must be a constant, 4, 8 or 16 (the bytes one cp.async copies)", size)
    if other is not None and (type(other) is not int or other != 0):   # 0.0 has no literal type in Numba
        raise reject("other", "must be None or the integer constant 0 (cp.async zero-fills the bytes of "
                     "masked lanes, its src-size operand, and can store no other value)", other)
    if not isinstance(cache_modifier, str) or cache_modifier not in _CP_ASYNC_CACHE:
        raise reject("cache_modifier", "must be a constant, one of '', '.ca', '.cg' (cp.async.ca caches in "
                     "L1 and L2, cp.async.cg in L2 only)", repr(cache_modifier))
    cache = _CP_ASYNC_CACHE[cache_modifier]
    if cache == "cg" and size != 16:
        raise reject("size", "must be 16 with cache_modifier='.cg' (cp.async.cg copies 16 bytes)", size)
    return cache


def _load_ca(src, result, mask=None, other=None, cache_modifier="", size=16):
    cp_async.load(result, src, size, cache="ca")


def _load_cg(src, result, mask=None, other=None, cache_modifier="", size=16):
    cp_async.load(result, src, size, cache="cg")


def _load_ca_masked(src, result, mask=None, other=None, cache_modifier="", size=16):
    cp_async.load(result, src, size, src_nbytes=size if mask else 0, cache="ca")


def _load_cg_masked(src, result, mask=None, other=None, cache_modifier="", size=16):
    cp_async.load(result, src, size, src_nbytes=size if mask else 0, cache="cg")


def _pick_async_load(src=None, result=None, mask=None, other=None, cache_modifier="", size=16):
    cache = _async_load_rules(mask, other, cache_modifier, size)
    masked = mask is not None and not isinstance(mask, _NONE)
    return {("ca", False): _load_ca, ("cg", False): _load_cg,
            ("ca", True): _load_ca_masked, ("cg", True): _load_cg_masked}[cache, masked]


@_device(variants=_pick_async_load)
def async_load(src, result, mask=None, other=None, cache_modifier="", size=16):
    """``cp_async.load(result, src, size, cache=...)``: one thread copies ``size`` (a constant 4, 8
    or 16) bytes from global ``src`` to shared ``result`` (TLX's per-thread ``cp.async``; TLX's
    argument order, with NVIDIA's ``size`` last, a keyword).  ``mask`` (None or a boolean: an
    integer is refused) False copies no byte and zero-fills ``result`` (``src_nbytes=0``; ``src``
    must still be an element of the array); ``other`` must be None or 0 (the zero fill is all
    cp.async can store); ``cache_modifier`` ``""`` / ``".ca"`` (``cache="ca"``) or ``".cg"``
    (``cache="cg"``, 16-byte copies only)."""
    cache = _async_load_rules(mask, other, cache_modifier, size)
    if mask is None:
        cp_async.load(result, src, size, cache=cache)
    else:
        cp_async.load(result, src, size, src_nbytes=size if mask else 0, cache=cache)


@_device
def async_load_commit_group():
    """``cp_async.commit_group()``."""
    cp_async.commit_group()


@_device
def async_load_wait_group(pendings):
    """``cp_async.wait_group(pendings)``."""
    cp_async.wait_group(pendings)


def alloc_barriers(num_barriers, arrive_count=1):
    """``num_barriers`` mbarriers in shared memory, initialised to ``arrive_count`` by thread 0 and
    made visible (``fence.mbarrier_init()``, ``syncthreads``): call it at the top of the kernel,
    in every thread.  ``num_barriers`` must be a constant."""
    return BACKEND.barriers(num_barriers, arrive_count)


def barrier_count(num_barriers) -> int:
    """``alloc_barriers``' ``num_barriers`` (a Numba type): its constant, or a refusal."""
    count = getattr(num_barriers, "literal_value", None)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        from .errors import OpArgumentError

        raise OpArgumentError(f"numba_tma: tlx.alloc_barriers: argument 'num_barriers' must be a positive "
                              f"integer constant (it sizes a shared array); got {num_barriers}")
    return count


def _barrier_array(count):
    """``count`` uint64 in the block's static shared memory (``count`` a constant), for
    :func:`alloc_barriers` — under numba-cuda ``cuda.shared.array`` in an inlined overload, under
    numba-cuda-mlir an intrinsic (``numba_tma.mlir.tlx``)."""
    raise RuntimeError("numba_tma.tlx._barrier_array runs inside @cuda.jit kernels")


def barriers_body(count):
    """The kernel-side body of :func:`alloc_barriers` for ``count`` barriers (every host's)."""
    def impl(num_barriers, arrive_count=1):
        bars = _barrier_array(count)
        if cuda.threadIdx.x == 0:
            for i in range(count):
                mbarrier.init(at(bars, i), arrive_count)
            _fence.mbarrier_init()
        cuda.syncthreads()
        return bars
    return impl


def _define_alloc_barriers():
    """``alloc_barriers`` and its shared array, inlined where a kernel calls them."""
    from numba.cuda import types
    from numba.cuda.extending import overload

    @overload(alloc_barriers, target="cuda", prefer_literal=True, inline="always")   # returns a new array
    def _alloc_barriers(num_barriers, arrive_count=1):
        return barriers_body(barrier_count(num_barriers))

    @overload(_barrier_array, target="cuda", prefer_literal=True, inline="always")
    def _barrier_array_cuda(count):
        n = count.literal_value

        def impl(count):
            return cuda.shared.array(n, types.uint64)
        return impl


BACKEND.define_for_compiler(_define_alloc_barriers)
_WRAPPERS.append(alloc_barriers)


def __getattr__(name):
    if name == "amd":   # AMD's TLX names, imported on first use (it initialises LLVM's AMDGPU target)
        from . import amd

        return amd
    raise AttributeError(f"module 'numba_tma.tlx' has no attribute {name!r}")
