"""numba_tma's ops under numba-cuda's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``).

The simulator runs a kernel as Python, one thread per CUDA thread, on numpy arrays; the compiled
intrinsics cannot run there, so ``import numba_tma`` under the simulator exports these Python
implementations instead, with the hardware's semantics:

* **mbarrier**: phases, pending arrivals and the transaction count (``expect_tx`` / ``complete_tx``);
  parity and token waits.  A wait that cannot complete raises after ``WAIT_TIMEOUT_S`` with the
  barrier's state (arrivals expected and seen, bytes expected) instead of hanging.
* **tma** (tiled maps): box loads and stores of rank 1-5 taken from the descriptor's own bytes
  (decoded; no second copy of the parameters), out-of-bounds zero / NaN fill, store clipping,
  every swizzle's byte placement (the 16-byte chunk index XOR address bits 7-9), TF32 rounding.
  Copies complete when issued, so the bulk async-group waits have nothing to wait for.
* **bulk** loads and stores, **fence** (no-ops: the simulator has one memory), ``at``,
  ``cache.policy`` (a policy value that changes nothing).

Not simulated yet (each raises ``NotImplementedError`` naming the op): im2col, element strides,
reductions, gather4/scatter4, cp.async, clusters, named barriers, device-side descriptor editing.
"""

from __future__ import annotations

import ctypes
import functools
import math
import threading
import time
from types import SimpleNamespace

import numpy as np

from .descriptors import decode
from .descriptors.enums import SWIZZLE_BYTES, SWIZZLE_ROW_MASK, TYPE_INFO, DataType, Mode, OOBFill

WAIT_TIMEOUT_S = 10.0
_LOCK = threading.Lock()
_BARRIERS: dict[int, dict] = {}   # address of the barrier's uint64 -> its state


def _address(array) -> int:
    return np.asarray(_host(array)).__array_interface__["data"][0]


def _host(array):
    """The numpy array behind a simulator device array (inside or outside a kernel)."""
    if isinstance(array, np.ndarray):
        return array
    inner = array.__dict__.get("_item")       # a device array as a kernel sees it
    return _host(inner if inner is not None else array._ary)


def at(array, index):
    """``array[index]`` as an array starting there (its element 0 is the named element)."""
    return array[index] if array.ndim > 1 else array[index:]


# -- mbarrier -----------------------------------------------------------------------------------

def _state(bar, op):
    state = _BARRIERS.get(_address(bar))
    if state is None:
        raise RuntimeError(f"numba_tma simulator: {op} on a barrier that was never initialised "
                           f"(mbarrier.init first)")
    return state


def _arrive(state, count):
    state["pending"] -= count
    token = state["phase"]
    _advance(state)
    return token


def _advance(state):
    if state["pending"] <= 0 and state["tx"] == 0:
        state["phase"] += 1
        state["pending"] = state["count"]
    elif state["tx"] < 0:
        raise RuntimeError(f"numba_tma simulator: barrier got {-state['tx']} bytes more than it expected")


def init(bar, count):
    with _LOCK:
        _BARRIERS[_address(bar)] = {"count": count, "pending": count, "tx": 0, "phase": 0}


def inval(bar):
    with _LOCK:
        _BARRIERS.pop(_address(bar), None)


def arrive(bar, count=1, sem=None, scope=None, no_complete=False):
    with _LOCK:
        return _arrive(_state(bar, "mbarrier.arrive"), count)


def arrive_expect_tx(bar, nbytes, sem=None, scope=None):
    with _LOCK:
        state = _state(bar, "mbarrier.arrive_expect_tx")
        state["tx"] += nbytes
        return _arrive(state, 1)


def arrive_drop(bar, count=1, sem=None, scope=None):
    with _LOCK:
        state = _state(bar, "mbarrier.arrive_drop")
        state["count"] -= count
        return _arrive(state, count)


def expect_tx(bar, nbytes, scope="cta"):
    with _LOCK:
        _state(bar, "mbarrier.expect_tx")["tx"] += nbytes


def complete_tx(bar, nbytes, scope="cta"):
    with _LOCK:
        state = _state(bar, "mbarrier.complete_tx")
        state["tx"] -= nbytes
        _advance(state)


def _completed(bar, parity, op):
    with _LOCK:
        return (_state(bar, op)["phase"] & 1) != (parity & 1)


def test_wait(bar, phase, sem=None, scope=None):
    return _completed(bar, phase, "mbarrier.test_wait")


def test_wait_token(bar, token, sem=None, scope=None):
    with _LOCK:
        return _state(bar, "mbarrier.test_wait_token")["phase"] > token


def wait(bar, phase, sem=None, scope=None):
    deadline = time.monotonic() + WAIT_TIMEOUT_S
    while not _completed(bar, phase, "mbarrier.wait"):
        if time.monotonic() > deadline:
            state = _state(bar, "mbarrier.wait")
            raise RuntimeError(
                f"numba_tma simulator: mbarrier.wait(parity {phase & 1}) cannot complete: the barrier expects "
                f"{state['count']} arrivals per phase and still misses {state['pending']}, and "
                f"{state['tx']} bytes of async copies were expected but not delivered")
        time.sleep(0)
    return None


def try_wait(bar, phase, suspend_ns=None, sem=None, scope=None):
    return _completed(bar, phase, "mbarrier.try_wait")


def pending_count(token):
    raise NotImplementedError("numba_tma simulator: mbarrier.pending_count is not simulated yet")


# -- TMA -----------------------------------------------------------------------------------------

def _fields(desc):
    return _decoded(desc.bytes if hasattr(desc, "bytes") else _host(desc).tobytes())


@functools.lru_cache(maxsize=256)
def _decoded(raw):
    fields = decode(raw)
    if fields.mode != Mode.TILED:
        raise NotImplementedError("numba_tma simulator: im2col maps are not simulated yet")
    if any(e != 1 for e in fields.element_strides):
        raise NotImplementedError("numba_tma simulator: element strides are not simulated yet")
    return fields


def _global_view(fields):
    """The tensor as a numpy array (outermost first) over its memory, from the descriptor."""
    info = TYPE_INFO[fields.data_type]
    itemsize = max(1, info.bits // 8)
    shape = tuple(reversed(fields.global_dim))
    strides = tuple(reversed(fields.global_strides)) + (itemsize,)
    span = sum((n - 1) * s for n, s in zip(shape, strides)) + itemsize
    raw = np.ctypeslib.as_array((ctypes.c_uint8 * span).from_address(fields.global_address))
    return np.lib.stride_tricks.as_strided(raw.view(f"u{itemsize}" if itemsize > 1 else "u1"),
                                           shape=shape, strides=strides)


def _box_slices(fields, coords):
    """For each dimension (outermost first): the box's index range clipped to the tensor, and the
    part of the box it fills."""
    out = []
    for c, b, n in zip(reversed(coords), reversed(fields.box_dim), reversed(fields.global_dim)):
        lo, hi = max(c, 0), min(c + b, n)
        out.append((slice(lo, max(lo, hi)), slice(lo - c, max(lo, hi) - c)))
    return out


def _swizzled(offsets, swizzle_bytes):
    """Where byte offset(s) of a dense box land in shared memory under the swizzle: the 16-byte
    chunk index XOR address bits 7-9 (one, two or three of them for 32B, 64B, 128B)."""
    mask = SWIZZLE_ROW_MASK[swizzle_bytes]
    return offsets ^ (((offsets >> 7) & mask) << 4)


def _swizzle_offsets(nbytes, swizzle_bytes):
    return _swizzled(np.arange(nbytes), swizzle_bytes)


def _swizzle_bytes(fields):
    return SWIZZLE_BYTES[fields.swizzle.name]


def _tf32(values):
    bits = values.view(np.uint32)
    return ((bits + np.uint32(0xFFF) + ((bits >> 13) & 1)) & np.uint32(0xFFFFE000)).astype(values.dtype)


def _check_coords(fields, coords):
    if len(coords) != fields.rank:
        raise RuntimeError(f"numba_tma simulator: coords has {len(coords)} entries for a rank-{fields.rank} map")
    itemsize = max(1, TYPE_INFO[fields.data_type].bits // 8)
    if (coords[0] * itemsize) % 16:
        raise RuntimeError(f"numba_tma simulator: coords[0]={coords[0]} times the element size is not a multiple "
                           "of 16 bytes (the H200 faults with CUDA_ERROR_ILLEGAL_INSTRUCTION)")


def load(desc, dst, coords, bar, cache_hint=None, dst_space="cluster", cta_group=1):
    fields = _fields(desc)
    _check_coords(fields, coords)
    view = _global_view(fields)
    fill = 0
    if fields.oob_fill == OOBFill.NAN_REQUEST_ZERO_FMA and TYPE_INFO[fields.data_type].floating:
        fill = {2: 0x7E00, 4: 0x7FFFFFFF, 8: 0x7FF8000000000000}.get(view.dtype.itemsize, 0)
    box = np.full(tuple(reversed(fields.box_dim)), fill, view.dtype)
    ranges = _box_slices(fields, coords)
    box[tuple(r for _, r in ranges)] = view[tuple(g for g, _ in ranges)]
    if fields.data_type in (DataType.TFLOAT32, DataType.TFLOAT32_FTZ):
        box = _tf32(box)
    raw = box.reshape(-1).view(np.uint8)
    target = _host(dst).reshape(-1).view(np.uint8)
    target[_swizzle_offsets(raw.size, _swizzle_bytes(fields))] = raw
    complete_tx(bar, raw.size)


def store(desc, src, coords, cache_hint=None):
    fields = _fields(desc)
    if coords[0] < 0:
        raise RuntimeError("numba_tma simulator: a TMA store box starting before the tensor (coords[0] < 0) kills "
                           "the kernel on the H200")
    _check_coords(fields, coords)
    view = _global_view(fields)
    shape = tuple(reversed(fields.box_dim))
    nbytes = math.prod(shape) * view.dtype.itemsize
    raw = _host(src).reshape(-1).view(np.uint8)[_swizzle_offsets(nbytes, _swizzle_bytes(fields))]
    box = raw.view(view.dtype).reshape(shape)
    ranges = _box_slices(fields, coords)
    writable = np.lib.stride_tricks.as_strided(view, view.shape, view.strides, writeable=True)
    writable[tuple(g for g, _ in ranges)] = box[tuple(r for _, r in ranges)]


def swizzled_index(desc, r, c):
    """The flat shared-memory element index of box element (r, c) under the map's swizzle."""
    fields = _fields(desc)
    size = max(1, TYPE_INFO[fields.data_type].bits // 8)
    return _swizzled((r * fields.box_dim[0] + c) * size, _swizzle_bytes(fields)) // size


def _nothing(*args, **kwargs):
    """Copies complete when issued in the simulator: nothing to commit or wait for."""


def _not_simulated(name):
    def op(*args, **kwargs):
        raise NotImplementedError(f"numba_tma simulator: {name} is not simulated yet (issue: TMA kernels on a CPU)")
    op.__name__ = name
    return op


# -- bulk ------------------------------------------------------------------------------------------

def bulk_load(dst, src, nbytes, bar, cache_hint=None):
    _host(dst).reshape(-1).view(np.uint8)[:nbytes] = _host(src).reshape(-1).view(np.uint8)[:nbytes]
    complete_tx(bar, nbytes)


def bulk_store(dst, src, nbytes, cache_hint=None):
    _host(dst).reshape(-1).view(np.uint8)[:nbytes] = _host(src).reshape(-1).view(np.uint8)[:nbytes]


def _family(name, **ops):
    return SimpleNamespace(__name__=f"numba_tma.{name}", **ops)


_GROUPS = dict(commit_group=_nothing, wait_group=_nothing, wait_group_read=_nothing)

FAMILIES = {
    "mbarrier": _family("mbarrier", init=init, inval=inval, arrive=arrive, arrive_expect_tx=arrive_expect_tx,
                        arrive_drop=arrive_drop, expect_tx=expect_tx, complete_tx=complete_tx, test_wait=test_wait,
                        test_wait_token=test_wait_token, try_wait=try_wait, wait=wait, pending_count=pending_count),
    "fence": _family("fence", mbarrier_init=_nothing, proxy_async=_nothing, acq_rel=_nothing, sc=_nothing,
                     proxy_tensormap_acquire=_nothing, proxy_tensormap_release=_nothing),
    "tma": _family("tma", load=load, store=store, prefetch=_nothing, prefetch_descriptor=_nothing,
                   load_im2col=_not_simulated("tma.load_im2col"), reduce=_not_simulated("tma.reduce"),
                   gather4=_not_simulated("tma.gather4"), scatter4=_not_simulated("tma.scatter4"),
                   swizzled_index=swizzled_index, **_GROUPS),
    "bulk": _family("bulk", load=bulk_load, store=bulk_store, prefetch=_nothing,
                    reduce=_not_simulated("bulk.reduce"), store_bytemask=_not_simulated("bulk.store_bytemask"),
                    **_GROUPS),
    "cache": _family("cache", policy=lambda kind, fraction=1.0, rest=None: 0),
}


class _Unsimulated:
    """A family none of whose ops is simulated yet: each raises ``NotImplementedError`` naming it."""

    def __init__(self, name):
        self.__name__ = f"numba_tma.{name}"

    def __getattr__(self, op):
        return _not_simulated(f"{self.__name__.split('.')[-1]}.{op}")


for _name in ("cluster", "cp_async", "dsmem", "sync", "tensormap"):
    FAMILIES[_name] = _Unsimulated(_name)
