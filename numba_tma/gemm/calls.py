"""A GEMM call seen before, launched again without planning: ``matmul`` keys a call by what decides
its kernel and maps (shapes, strides, types, the addresses' alignment, the epilogue's vectors, the
stream, the other arguments) and, for a key seen before, re-points that call's TMA maps at the new
addresses (``TensorMap.at_address``), allocates the output and launches the same kernel through a
launch prepared at its first run (``numba_tma.prepare_launch``: no typing or argument preparation
but the maps' and the arrays' addresses)."""

import collections
import dataclasses
import types

from .. import prepare_launch
from ..arrays import empty, is_torch, operand, torch_stream
from ..descriptors.device_layer import READERS
from .kernels import THREADS


class Again:
    """A call seen before, to launch again on arrays of the same shapes, strides and types at other
    addresses: its maps re-pointed (``TensorMap.at_address``), a new output (and split-K
    workspace) unless given, the same kernel through a launch prepared at the first run."""

    def __init__(self, args, kernel, grid, nbytes, cluster, stream, tma_out, splits, shape, out_dtype, like):
        # the kernel's arguments: (desc_a, desc_b, desc_c, out, work, the rest); the maps kept
        # without the call's arrays, out and work as placeholders where the kernel reads none
        self.maps = tuple(m.at_address(m.address) for m in args[:3])
        self.placeholders, self.rest = args[3:5], args[5:]
        self.kernel, self.grid, self.nbytes, self.cluster, self.stream = kernel, grid, nbytes, cluster, stream
        self.tma_out, self.splits, self.shape, self.out_dtype = tma_out, splits, shape, out_dtype
        owner = types.SimpleNamespace(device=like.owner.device) if like.kind == "torch" else None
        self.like = dataclasses.replace(like, made=None, owner=owner)   # what empty() reads of it
        # what changes between calls: the maps; the output where it is stored from registers; the workspace
        self.varying = (0, 1, 2) + (() if tma_out else (3,)) + ((4,) if splits > 1 else ())
        self.prepared = None    # the launch, prepared at the first run (numba_tma.prepare_launch)

    def run(self, a_address, b_address, out, out_address):
        made = None
        if out is None:
            out, made = empty(self.shape, self.out_dtype, like=self.like)
            out_address = made.ptr
        ta, tb, tc = self.maps
        a_map, b_map = ta.at_address(a_address), tb.at_address(b_address)
        values = [a_map, b_map, tc.at_address(out_address, out) if self.tma_out else a_map, out, None]
        work = None             # (its Operand)
        if self.splits > 1:
            values[4], work = empty((self.splits, *self.shape), "f32", like=self.like, name="workspace")
        if self.prepared is None:           # (the first run: typed and checked once, on numba views)
            args = list(values[:3]) + list(self.placeholders) + list(self.rest)
            if not self.tma_out:
                args[3] = (made or operand(out, "out", dtype=self.out_dtype, stream=self.stream)).device_array
            if work is not None:
                args[4] = work.device_array
            self.prepared = prepare_launch(self.kernel, self.grid, THREADS, *args, varying=self.varying,
                                           shared_mem=self.nbytes, cluster=self.cluster, stream=self.stream)
        self.prepared.launch(*(values[i] for i in self.varying))
        return out


SEEN = collections.OrderedDict()     # call key -> Again (the most recent CALLS_KEPT)
CALLS_KEPT = 64


def remember(key, again):
    """Keep ``again`` for calls of ``key`` (the least recent of more than CALLS_KEPT forgotten)."""
    SEEN[key] = again
    if len(SEEN) > CALLS_KEPT:
        SEEN.popitem(last=False)


def address_key(x):
    """(address, the rest of the key) of a torch tensor, a numba device array or (under the
    simulator) a host array; None otherwise."""
    if is_torch(x):
        return x.data_ptr(), (tuple(x.shape), x.stride(), x.dtype, x.device)
    view = READERS.device_array_view(x)
    if view is not None:
        return view[3], (view[0], view[1], view[2], getattr(x, "stream", 0))
    host = READERS.host_array(x)
    if host is None:
        return None
    return host.__array_interface__["data"][0], (host.dtype.str, host.shape, host.strides, type(x))


def call_key(a, b, out, keywords):
    """(the addresses of a, b and out, the rest of the call as a hashable key), or None for a call
    planned anew every time (arrays of other kinds, epilogue arrays of M x N, autotuning)."""
    if keywords["c"] is not None or keywords["residual"] is not None or keywords["config"] == "autotune":
        return None
    found = [address_key(x) for x in (a, b)]
    if None in found:
        return None
    o = (None, None) if out is None else address_key(out)
    if o is None:
        return None
    # the addresses' alignment decides what TMA reads and what is staged: part of the key
    rest = [found[0][1], found[1][1], o[1], found[0][0] % 16, found[1][0] % 16, (o[0] or 0) % 16]
    for name in ("bias", "a_scale", "b_scale"):
        x = keywords[name]
        if x is None or isinstance(x, (int, float)):
            rest.append(x)
        else:
            k = address_key(x)
            if k is None:
                return None
            rest.append(k)
    if any(not isinstance(v, (int, float)) for v in keywords["epilogue_args"]):
        return None
    if is_torch(a):                                  # the stream the call runs on
        rest.append(torch_stream(a))
    rest += [keywords[k] for k in ("activation", "epilogue", "epilogue_args", "alpha", "beta", "out_dtype",
                                   "config", "dtype")]
    try:
        key = tuple(rest)
        hash(key)
    except TypeError:
        return None
    return found[0][0], found[1][0], o[0], key
