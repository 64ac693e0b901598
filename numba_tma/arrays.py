"""The user's arrays as the library's kernels take them (numba_tma.gemm, numba_tma.attention):
:func:`operand` reads any CUDA array — a PyTorch tensor on a CUDA device, a CuPy array, a numba
device array, any object with ``__cuda_array_interface__`` (and, under numba-cuda's CUDA
simulator, whose device memory is host memory, a numpy array or a simulator device array) — into
an :class:`Operand`: its logical dtype,
shape, strides in elements, address, the stream its work is ordered on, and a numba device array
over the same memory typed by the storage type (bf16 as ``uint16`` bits, fp8 as ``uint8``), which
kernels and :meth:`numba_tma.TensorMap.tiled` take.  :func:`check_matrix` holds an operand to an
argument's rules and :func:`empty` makes an output of the inputs' kind.

Every refusal names the function, the argument and the rule (a ``TypeError`` for what the array
is, a ``ValueError`` for its shape or layout).  PyTorch is never imported here: a tensor is known
by its class's module, and its dtype by ``str(tensor.dtype)`` (PyTorch exports neither bfloat16
nor fp8 through ``__cuda_array_interface__``, so the view is built from the tensor's own fields).
"""

from __future__ import annotations

import dataclasses
import functools
import sys

import numpy as np

from .descriptors.device_layer import READERS

__all__ = ["DTYPES", "Operand", "check_matrix", "empty", "operand"]

# logical dtype -> (storage typestr, itemsize): what a kernel's view of the memory holds
DTYPES = {"bf16": ("<u2", 2), "f16": ("<f2", 2), "f32": ("<f4", 4), "f64": ("<f8", 8),
          "e4m3": ("|u1", 1), "e5m2": ("|u1", 1), "i8": ("|i1", 1), "i32": ("<i4", 4)}
"""Every logical dtype an operand can have, with its storage typestr and size in bytes."""

_TORCH_DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "f16", "torch.float32": "f32", "torch.float64": "f64",
                 "torch.float8_e4m3fn": "e4m3", "torch.float8_e5m2": "e5m2", "torch.int8": "i8", "torch.int32": "i32"}
# an interface's typestr -> the logical dtype it gives alone (raw bits, '<u2' and '|u1', need dtype=)
_TYPESTRS = {"<f2": "f16", "<f4": "f32", "<f8": "f64", "|i1": "i8", "<i4": "i32"}
# raw bits -> the logical dtypes dtype= may make of them
_BITS = {"<u2": ("bf16", "f16"), "|u1": ("e4m3", "e5m2")}
_TMA_ALIGN = 16                  # bytes: a TMA map's base address and every stride but the innermost
_TORCH_NAMES = {logical: name.removeprefix("torch.") for name, logical in _TORCH_DTYPES.items()}
_KINDS = "a torch tensor on a CUDA device, a CuPy array or a numba device array"


def _where(caller, name):
    return f"{caller}: argument {name!r}"


@dataclasses.dataclass(frozen=True)
class Operand:
    """One array argument of a GEMM call, read once (:func:`operand`)."""

    name: str
    """The argument's name, for messages."""
    caller: str
    """The function it was passed to, for messages."""
    kind: str
    """What the user passed: ``"torch"``, ``"cupy"``, ``"numba"`` (a numba device array, or any
    other object with ``__cuda_array_interface__``) or ``"host"`` (a numpy or simulator device
    array under the simulator)."""
    dtype: str
    """The logical dtype, a key of :data:`DTYPES`."""
    shape: tuple
    strides: tuple
    """In elements."""
    ptr: int
    """The device address of element 0 (under the simulator, the host address)."""
    itemsize: int
    made: object
    """The numba device array :attr:`device_array` is, or a :class:`_Later` making it when first asked."""
    owner: object
    """The user's object (keeps the memory alive)."""
    stream: object
    """The stream the caller's work is ordered on: a numba stream, or 0."""

    @property
    def device_array(self):
        """A numba device array over the same memory, of the same shape and strides, typed by the
        storage type (:data:`DTYPES`); a torch tensor's is made when first asked (a TMA map reads
        the tensor itself: :meth:`map_array`)."""
        if type(self.made) is _Later:
            object.__setattr__(self, "made", self.made.make())
        return self.made

    def map_array(self):
        """What :meth:`numba_tma.TensorMap.tiled` reads for this operand: a torch tensor's own view
        of its memory (fp8 as uint8: TMA has no fp8 type), else :attr:`device_array`."""
        if self.kind != "torch":
            return self.device_array
        x = self.owner.as_strided(self.shape, self.strides, self.owner.storage_offset() +
                                  (self.ptr - self.owner.data_ptr()) // self.itemsize)
        return x.view(sys.modules["torch"].uint8) if self.dtype in ("e4m3", "e5m2") else x

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def row_major(self) -> bool:
        """A 2-D operand whose rows are contiguous, each row ``strides[0] >= cols`` elements apart."""
        return self.ndim == 2 and _pitched(self.shape, self.strides, 1, 0)

    @property
    def col_major(self) -> bool:
        """A 2-D operand whose columns are contiguous, each column ``strides[1] >= rows`` elements apart."""
        return self.ndim == 2 and _pitched(self.shape, self.strides, 0, 1)

    @property
    def is_contiguous(self) -> bool:
        """C-contiguous (size-1 dimensions' strides aside)."""
        step = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != step:
                return False
            step *= n
        return True

    def why_not_tma(self, role="load") -> str | None:
        """Why a TMA map cannot address this operand (``role`` ``"load"`` or ``"store"``), or None:
        the innermost stride must be 1 element, no stride negative, the base address and every
        other stride multiples of 16 bytes, and for a store each row whole 16-byte chunks (TMA writes a partial chunk on
        into the next row)."""
        if self.ndim and self.shape[-1] != 1 and self.strides[-1] != 1:
            return f"its innermost stride is {self.strides[-1]} elements (TMA needs 1: make it contiguous along that axis)"
        if any(s < 0 for s in self.strides):
            return f"it has a negative stride {self.strides} (TMA addresses memory upwards)"
        if self.ptr % _TMA_ALIGN:
            return f"its address {self.ptr:#x} is not a multiple of {_TMA_ALIGN} bytes"
        for axis, stride in enumerate(self.strides[:-1]):
            if stride * self.itemsize % _TMA_ALIGN:
                return (f"its stride along axis {axis} is {stride * self.itemsize} bytes, not a multiple of "
                        f"{_TMA_ALIGN}")
        if role == "store" and self.ndim and self.shape[-1] * self.itemsize % _TMA_ALIGN:
            return (f"its rows are {self.shape[-1] * self.itemsize} bytes, not whole {_TMA_ALIGN}-byte chunks (a TMA "
                    "store would write past each row)")
        return None

    def tma_ok(self, role="load") -> bool:
        """Whether a TMA map can address this operand (:meth:`why_not_tma`)."""
        return self.why_not_tma(role) is None

    def viewed(self, shape, strides, offset=0) -> Operand:
        """This operand's memory from element ``offset`` seen with ``shape`` and ``strides`` (in
        elements, none negative): another :class:`Operand` of the same owner and stream."""
        shape, strides = tuple(shape), tuple(strides)
        ptr = self.ptr + offset * self.itemsize
        if self.kind == "host":
            span = (sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * self.itemsize if all(shape) else 0
            memory = np.asarray(_HostMemory(ptr, max(span, self.itemsize), self.owner))
            host = np.ndarray(shape, np.dtype(DTYPES[self.dtype][0]), buffer=memory,
                              strides=tuple(s * self.itemsize for s in strides))
            device = _simulated_device_array(host)
        else:
            device = _Later(_device_view, self.owner, ptr, shape, strides, self.dtype)
        return dataclasses.replace(self, shape=shape, strides=strides, ptr=ptr, made=device)

    def transposed(self) -> Operand:
        """A 2-D operand's transpose (a view)."""
        return self.viewed(self.shape[::-1], self.strides[::-1])


class _Later:
    """A call made when its value is first needed: ``function(*arguments)``."""

    def __init__(self, function, *arguments):
        self.function, self.arguments = function, arguments

    def make(self):
        return self.function(*self.arguments)


def _pitched(shape, strides, inner, outer):
    """Axis ``inner`` contiguous and axis ``outer`` at least a whole ``inner`` extent apart (an
    axis of size 1 has any stride)."""
    return ((shape[inner] == 1 or strides[inner] == 1) and
            (shape[outer] == 1 or strides[outer] >= max(shape[inner], 1)))


def operand(x, name, *, dtype=None, stream=None, caller="matmul") -> Operand:
    """``x`` (the argument ``name`` of ``caller``) as an :class:`Operand`.

    ``dtype`` gives the logical dtype of raw bits: a ``uint16`` array holding bf16 (``"bf16"``;
    CuPy and numpy have no bfloat16) or f16, a ``uint8`` one holding fp8 (``"e4m3"``, ``"e5m2"``);
    otherwise it must name the array's own dtype.  ``stream`` (a numba stream) wins over the
    array's: PyTorch's current stream on the tensor's device, CuPy's current stream, a numba
    device array's own (0 for the default stream)."""
    if is_torch(x):
        return _from_torch(x, name, dtype, stream, caller)
    host = READERS.host_array(x)
    if host is not None:
        return _from_host(x, host, name, dtype, stream, caller)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError(f"{_where(caller, name)} must be a CUDA array ({_KINDS}); got a "
                        f"{type(x).__module__}.{type(x).__qualname__}")
    return _from_interface(x, cai, name, dtype, stream, caller)


def _logical(own, given, where):
    """The logical dtype: ``own`` (the array's, None for raw bits of the typestr ``bits``) or
    ``given`` (``dtype=``)."""
    found, bits = own
    if given is None:
        if found is not None:
            return found
        if bits in _BITS:
            raise TypeError(f"{where} holds raw {bits!r} bits: say what they are with dtype= "
                            f"(one of {', '.join(map(repr, _BITS[bits]))})")
        raise TypeError(f"{where} has an unsupported dtype {bits!r}; supported: {', '.join(DTYPES)}")
    if given not in DTYPES:
        raise TypeError(f"{where}: dtype={given!r} is not one of {', '.join(DTYPES)}")
    if given != found and given not in _BITS.get(bits, ()):
        raise TypeError(f"{where}: dtype={given!r} cannot be read from an array of {found or bits!r} (dtype= names "
                        f"what raw uint16 / uint8 bits hold)")
    return given


def _element_strides(byte_strides, itemsize, where):
    if any(s % itemsize for s in byte_strides):
        raise ValueError(f"{where} has byte strides {tuple(byte_strides)}, not whole {itemsize}-byte elements")
    return tuple(s // itemsize for s in byte_strides)


def _c_strides(shape):
    """The element strides of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _device_view(x, ptr, shape, strides, dtype):
    """A numba device array over ``x``'s memory, ``strides`` in elements, typed by ``dtype``'s storage."""
    from numba import cuda

    typestr, itemsize = DTYPES[dtype]
    interface = {"shape": shape, "strides": tuple(s * itemsize for s in strides), "typestr": typestr,
                 "data": (ptr, False), "version": 3}
    return cuda.from_cuda_array_interface(interface, owner=x, sync=False)


def is_torch(x) -> bool:
    """Whether ``x`` is a PyTorch tensor (known by its class's module: torch is not imported)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def torch_stream(x) -> int:
    """The CUDA stream PyTorch runs work on for tensor ``x``: its device's current stream."""
    return sys.modules["torch"].cuda.current_stream(x.device).cuda_stream


@functools.lru_cache(maxsize=None)
def _external_stream(ptr):
    """A numba stream for the CUDA stream ``ptr`` (0, the default stream, stays 0)."""
    from numba import cuda

    return cuda.external_stream(ptr) if ptr else 0


def _from_torch(x, name, dtype, stream, caller):
    where = _where(caller, name)
    if x.device.type != "cuda":
        raise TypeError(f"{where} must be a CUDA array ({_KINDS}); got a tensor on {x.device}")
    torch_dtype = str(x.dtype)
    own = _TORCH_DTYPES.get(torch_dtype)
    bits = {"torch.uint16": "<u2", "torch.uint8": "|u1"}.get(torch_dtype, torch_dtype)
    logical = _logical((own, bits), dtype, where)
    shape, strides = tuple(x.shape), tuple(x.stride())
    if stream is None:
        stream = _external_stream(torch_stream(x))
    return Operand(name, caller, "torch", logical, shape, strides, x.data_ptr(), x.element_size(),
                   _Later(_device_view, x, x.data_ptr(), shape, strides, logical), x, stream)


def _from_interface(x, cai, name, dtype, stream, caller):
    where = _where(caller, name)
    typestr = cai["typestr"]
    logical = _logical((_TYPESTRS.get(typestr), typestr), dtype, where)
    itemsize = DTYPES[logical][1]
    shape = tuple(cai["shape"])
    strides = _c_strides(shape) if cai.get("strides") is None else _element_strides(cai["strides"], itemsize, where)
    ptr = cai["data"][0]
    kind = "cupy" if type(x).__module__.startswith("cupy") else "numba"
    if stream is None:
        if kind == "cupy":
            import cupy

            stream = _external_stream(cupy.cuda.get_current_stream().ptr)
        else:
            stream = getattr(x, "stream", 0)
    return Operand(name, caller, kind, logical, shape, strides, ptr, itemsize,
                   _device_view(x, ptr, shape, strides, logical), x, stream)


def _from_host(x, host, name, dtype, stream, caller):
    """A numpy or simulator device array: the backend's device memory is host memory."""
    where = _where(caller, name)
    typestr = host.dtype.str
    logical = _logical((_TYPESTRS.get(typestr), typestr), dtype, where)
    itemsize = DTYPES[logical][1]
    strides = _element_strides(host.strides, itemsize, where)
    view = host.view(np.dtype(DTYPES[logical][0]))
    return Operand(name, caller, "host", logical, tuple(host.shape), strides, host.__array_interface__["data"][0],
                   itemsize, _simulated_device_array(view), x, getattr(x, "stream", 0) if stream is None else stream)


class _HostMemory:
    """``nbytes`` of host memory at ``address`` as numpy's array interface (bytes), keeping ``owner`` alive."""

    def __init__(self, address, nbytes, owner):
        self.__array_interface__ = {"data": (address, False), "shape": (nbytes,), "typestr": "|u1", "version": 3}
        self.owner = owner


def _simulated_device_array(view):
    """A simulator device array over ``view``'s memory (numba-cuda's simulator makes its
    ``cuda.device_array`` a wrapper of the numpy array it passes numpy's ``buffer``, ``offset`` and
    ``strides`` to): the buffer is the bytes ``view`` spans."""
    from numba import cuda

    low = sum((n - 1) * s for n, s in zip(view.shape, view.strides) if s < 0) if view.size else 0
    high = sum((n - 1) * s for n, s in zip(view.shape, view.strides) if s > 0) + view.itemsize if view.size else 0
    memory = np.asarray(_HostMemory(view.__array_interface__["data"][0] + low, high - low, view))
    return cuda.device_array(view.shape, view.dtype, buffer=memory, offset=-low, strides=view.strides)


def check_matrix(op: Operand, dtypes, ndim=2) -> Operand:
    """``op`` itself, held to an argument's rules: ``ndim`` dimensions, a logical dtype among
    ``dtypes``; else the ``TypeError`` / ``ValueError`` naming the argument and the rule."""
    where = _where(op.caller, op.name)
    if op.ndim != ndim:
        raise ValueError(f"{where} must be {ndim}-D; got {op.ndim} dimension{'s' * (op.ndim != 1)} "
                         f"(shape {op.shape})")
    if op.dtype not in dtypes:
        raise TypeError(f"{where} must be one of {', '.join(dtypes)}; got {op.dtype}")
    return op


_PLACEHOLDERS = {}


def placeholder(dtype, ndim=2, size=1):
    """A device array standing for an argument a kernel does not read (kept: one of each kind):
    ``ndim`` dimensions of one element, or with ``size=0`` a 1-D array of none (a view of one
    element: its address valid, nothing for the kernel to read or write)."""
    key = (np.dtype(dtype).str, ndim, size)
    if key not in _PLACEHOLDERS:
        from numba import cuda

        if size == 0:
            _PLACEHOLDERS[key] = cuda.device_array(1, dtype)[:0]
        else:
            _PLACEHOLDERS[key] = cuda.device_array((1,) * ndim, dtype)
    return _PLACEHOLDERS[key]


def empty(shape, dtype, like: Operand, *, name="out", order="C"):
    """``(array, its Operand)``: a new array of ``shape`` and logical ``dtype`` of ``like``'s kind,
    on its device and stream — a torch tensor of that dtype for torch inputs, a CuPy array for CuPy
    ones, else a numba device array (a simulator one under the simulator) — bf16 in CuPy and numba
    as ``uint16`` bits, fp8 as ``uint8``; ``order`` ``"C"`` (row-major) or ``"F"``."""
    shape = tuple(shape)
    storage = np.dtype(DTYPES[dtype][0])
    if like.kind == "torch":
        torch = sys.modules["torch"]
        strides = _c_strides(shape) if order == "C" else _c_strides(shape[::-1])[::-1]
        array = torch.empty_strided(shape, strides, dtype=getattr(torch, _TORCH_NAMES[dtype]),
                                    device=like.owner.device)
    elif like.kind == "cupy":
        array = sys.modules["cupy"].empty(shape, dtype=storage, order=order)
    else:
        from numba import cuda

        array = cuda.device_array(shape, dtype=storage, order=order, stream=like.stream)
    return array, operand(array, name, dtype=dtype, stream=like.stream, caller=like.caller)
