"""``TensorMap``: the tensor-map object users build on the host and pass to kernels.

Example::

    # fragment: a, kernel, grid, block and out are the caller's
    desc = TensorMap.tiled(a, (64, 64), swizzle="128B")   # a: any CUDA array, box in a's order
    kernel[grid, block](desc, out)                        # by value, __grid_constant__
    desc.box_bytes                                        # what mbarrier.arrive_expect_tx expects

``bytes`` are encoded by numba_tma's pure-Python encoder (byte-identical to the driver, see
``docs/descriptors.md``); a layout (everything but the address) is encoded once per process and
later maps only splice in the address.  Passing the map by value goes through numba-cuda's
launcher, which only takes a ``cuda.core.TensorMapDescriptor``: each launch copies ``bytes`` into
a kept one (:mod:`numba_tma.descriptors.by_value`); a GPU test checks that the bytes the kernel
receives equal ``bytes``.  ``to_device()`` gives the global-memory form, which carries ``bytes``
themselves in a device array typed by the map's layout.
"""

from __future__ import annotations

import ctypes
import functools
import html
import sys

from .decode import decode
from .device_layer import READERS
from .enums import DataType, Interleave, L2Promotion, OOBFill, Swizzle, coerce
from .errors import TensorMapError
from .fields import unknown_transfer
from .map_layout import MapLayout, im2col_layout, tiled_layout
from .tile_layout import TileLayout, device_map, kernel_type
from .validate import MAX_ADDRESS, _int
from .validate import _ints as _int_list

@functools.lru_cache(maxsize=None)
def _typestr(typestr):
    import numpy as np

    return np.dtype(typestr).name, np.dtype(typestr).itemsize


def _simulated(array):
    """Under numba-cuda's CUDA simulator, the numpy array behind ``array`` (a simulator device
    array, which forwards numpy's array interface to it, or a numpy array: all memory is host
    memory there); otherwise ``None`` (the backend's reader: :mod:`.device_layer`)."""
    return READERS.host_array(array)


def _array_view(array):
    """``(address, shape, byte strides, dtype name)`` of a CUDA array (PyTorch, CAI or DLPack; a
    host array under the CUDA simulator)."""
    host = _simulated(array)
    if host is not None:
        name, itemsize = _typestr(host.dtype.str)
        return host.__array_interface__["data"][0], host.shape, host.strides, name, itemsize
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        # read directly: PyTorch exports neither bfloat16 (CAI) nor fp8 (CAI, DLPack) dtypes
        if not array.is_cuda:
            raise TensorMapError("array", f"a {array.device} tensor", "must be on a CUDA device")
        itemsize = array.element_size()
        strides = tuple(s * itemsize for s in array.stride())
        return array.data_ptr(), tuple(array.shape), strides, str(array.dtype).removeprefix("torch."), itemsize
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is not None:
        shape = tuple(cai["shape"])
        if cai["typestr"][0] == ">":
            raise TensorMapError("array", cai["typestr"], "must be little-endian (TMA copies bytes as they are)")
        name, itemsize = _typestr(cai["typestr"])
        # PyTorch exports bfloat16 as raw 2 bytes (str() of a dtype is slow: only asked then)
        if itemsize == 2 and name not in ("float16", "int16", "uint16") and \
                str(getattr(array, "dtype", "")).endswith("bfloat16"):
            name = "bfloat16"
        strides = cai.get("strides") or _c_strides(shape, itemsize)
        return cai["data"][0], shape, tuple(strides), name, itemsize
    if hasattr(array, "__dlpack__"):
        from cuda.core.utils import StridedMemoryView

        view = StridedMemoryView.from_any_interface(array, stream_ptr=-1)
        if not view.is_device_accessible:
            raise TensorMapError("array", type(array).__name__, "must be in memory the GPU can access (a device array)")
        itemsize = view.dtype.itemsize
        strides = view.strides or _c_strides(view.shape, 1)
        return view.ptr, tuple(view.shape), tuple(s * itemsize for s in strides), view.dtype.name, itemsize
    raise TensorMapError("array", type(array).__name__,
                         "must expose __cuda_array_interface__ or __dlpack__ (a numba, CuPy or PyTorch CUDA array)")


def _interface(array):
    """``(typestr, shape, strides, data pointer)`` as ``array``'s ``__cuda_array_interface__`` gives
    them (``strides`` may be None), where the interface alone describes the array (not a PyTorch
    tensor, read directly: see :func:`_array_view`); else None.  A
    numba-cuda device array is read from its attributes (its property builds the dictionary and
    tests contiguity on every call), its strides always given."""
    own = READERS.device_array_view(array)
    if own is not None:
        return own
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        return None
    cai = getattr(array, "__cuda_array_interface__", None)
    return None if cai is None else (cai["typestr"], cai["shape"], cai.get("strides"), cai["data"][0])


def _signature(array, view) -> tuple:
    """What an array's interface says but its address: the key of an interface seen before."""
    return type(array), view[1], view[0], view[2]


def _seen_address(view, align):
    """The data pointer of an interface seen before, if it keeps the encoders' address rule (else
    None: the full checks decide)."""
    address = view[3]
    return address if type(address) is int and 0 < address < MAX_ADDRESS and not address % align else None


def _named_by_typestr(view, name) -> bool:
    """Whether the interface's typestr alone gives the array's dtype ``name`` (not bfloat16 told by
    a dtype, see :func:`_array_view`): then the interface decides what the checks decide."""
    return _typestr(view[0])[0] == name


@functools.lru_cache(maxsize=1024)
def _c_strides(shape, itemsize):
    """The byte strides of a C-contiguous array of ``shape`` (a tuple of ints)."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))



def _ints(name, values, optional=False):
    """``values`` as a tuple of exact integers (``None`` stays ``None`` where ``optional``)."""
    return None if optional and values is None else tuple(_int_list(name, values))


def _options(interleave, swizzle, l2_promotion, oob_fill, data_type):
    """The enum options, coerced (and so validated and hashable) before the layout cache."""
    return (coerce(Interleave, interleave, "interleave"), coerce(Swizzle, swizzle, "swizzle"),
            coerce(L2Promotion, l2_promotion, "l2_promotion"), coerce(OOBFill, oob_fill, "oob_fill"),
            None if data_type is None else coerce(DataType, data_type, "data_type"))


def _flag(name, value):
    if not isinstance(value, bool):
        raise TensorMapError(name, value, "must be True or False")
    return value


_TILED: dict = {}   # TensorMap.tiled's arguments but the address -> its MapLayout (validated once)
_TILED_BY_INTERFACE: dict = {}   # (array type, typestr, shape, strides, the other arguments) -> (_TILED's
#                                  MapLayout, the items from the shape on, as last checked): the arguments of a map
#                                  made and checked before


def _plain_key(key) -> bool:
    """Whether ``key`` (its last item ``allow_store_overrun``) holds only exact ints, strs, None and
    tuples of ints, and a bool last — so a cached entry answers only for arguments equal in every
    way that matters (``1 == True`` and ``2 == 2.0`` as dict keys: no bool, float, numpy scalar or
    enum member passes for another)."""
    if type(key[-1]) is not bool:
        return False
    for item in key[:-1]:
        kind = type(item)
        if kind is tuple:
            for i in item:
                if type(i) is not int:
                    return False
        elif item is not None and kind is not int and kind is not str:
            return False
    return True


_INT = frozenset((int,))


def _int_tuple(value) -> bool:
    """Whether ``value`` is a tuple of exact ints (as :func:`_plain_key` wants a tuple item)."""
    return type(value) is tuple and _INT.issuperset(map(type, value))


class TensorMap:
    """A 128-byte CUtensorMap over a CUDA array, plus what kernels need to check it.

    Build one with :meth:`tiled` or :meth:`im2col`.  Attributes: ``dtype`` (numpy-style name),
    ``rank``, ``box`` (array order; for im2col ``(pixels_per_column, channels_per_pixel)``),
    ``box_bytes``, ``swizzle``, ``bytes``, ``fields`` (every decoded field), ``mode``.
    The source array is kept alive as long as the map.
    """

    _device = None     # to_device()'s array, once asked (a fresh map sets only its array, bytes and layout)

    @classmethod
    def _over(cls, array, address, layout: MapLayout) -> "TensorMap":
        """The map over ``array`` at the (checked) ``address`` with ``layout``."""
        made = cls.__new__(cls)
        made._array = array            # keeps the memory alive while the map exists
        made.bytes = address.to_bytes(8, "little") + layout.tail
        made._layout = layout
        return made

    dtype = property(lambda self: self._layout.tile.dtype, doc="The array's dtype name (and the TMA type where "
                     "``data_type`` chose another: ``\"float32 as TFLOAT32\"``).")
    rank = property(lambda self: self._layout.tile.rank, doc="The array's number of dimensions.")
    box = property(lambda self: self._layout.tile.box, doc="The box, array order (im2col: ``(pixels, channels)``).")
    mode = property(lambda self: self._layout.tile.mode, doc="``\"tiled\"`` or ``\"im2col\"``.")
    allow_store_overrun = property(lambda self: self._layout.allow_store_overrun,
                                   doc="Whether stores may write past the rows' ends (see :meth:`tiled`).")
    layout = property(lambda self: self._layout.tile, doc="What a kernel knows about this map at compile time "
                      "(:class:`~numba_tma.descriptors.tile_layout.TileLayout`: one value per layout, the key of its "
                      "Numba type).")

    @classmethod
    def tiled(cls, array, box, *, swizzle="none", l2_promotion="128B", oob_fill="none",
              element_strides=None, interleave="none", data_type=None, allow_store_overrun=False) -> "TensorMap":
        """A tiled map over ``array`` copying boxes of shape ``box`` (in ``array``'s own index order).

        ``element_strides`` is also in array order.  ``data_type`` picks a TMA type other than the
        array's, of the same width (``"tfloat32"`` or ``"float32_ftz"`` over float32).  Raises
        :class:`TensorMapError` naming the argument and the rule for anything the driver would reject.

        A TMA store or reduce writes on past the end of each row up to the next 16-byte boundary
        (:mod:`numba_tma.descriptors.edge`): when the array's last dimension is not a multiple of 16
        bytes, kernels refuse to store through the map unless ``allow_store_overrun=True`` says
        those bytes (``desc.store_overrun`` per row) are the caller's to overwrite.

        Example::

            # fragment: a device array needs a GPU (or the simulator: NUMBA_ENABLE_CUDASIM=1)
            a = cuda.to_device(np.zeros((1024, 512), np.float32))
            desc = TensorMap.tiled(a, (64, 32))      # 64 rows x 32 columns per box
        """
        cai = _interface(array)
        if cai is not None:       # an interface seen before answers alone (every map from it was checked)
            by_interface = (type(array), cai[0], cai[1], cai[2], box, element_strides,
                            swizzle, l2_promotion, oob_fill, interleave, data_type, allow_store_overrun)
            try:
                seen = _TILED_BY_INTERFACE.get(by_interface)
            except TypeError:     # an unhashable item (a list): the full checks decide
                seen = cai = None
            # equal to a checked key, and of its kinds: a str typestr, the other items the objects last
            # checked (a call site's constants, an array's own shape; a typestr is often new), a shape of
            # ints, or all plain
            if seen is not None and type(cai[0]) is str:
                layout, o = seen
                exact = o[1] is cai[2] and o[2] is box and o[3] is element_strides and o[4] is swizzle and \
                    o[5] is l2_promotion and o[6] is oob_fill and o[7] is interleave and o[8] is data_type and \
                    o[9] is allow_store_overrun and (o[0] is cai[1] or _int_tuple(cai[1]))
                if not exact and _plain_key(by_interface[2:]):
                    exact = True
                    _TILED_BY_INTERFACE[by_interface] = layout, by_interface[2:]   # this call's objects next
                if exact:
                    address = _seen_address(cai, layout.align)
                    if address is not None:
                        return cls._over(array, address, layout)
        address, shape, strides, name, itemsize = _array_view(array)
        key = (name, shape, strides, box, element_strides, swizzle, l2_promotion, oob_fill, interleave, data_type,
               allow_store_overrun)
        cacheable = _plain_key(key)
        layout = _TILED.get(key) if cacheable else None
        if layout is None:
            layout = tiled_layout(name, shape, strides, itemsize, _ints("box", box),
                                  _ints("element_strides", element_strides, optional=True),
                                  *_options(interleave, swizzle, l2_promotion, oob_fill, data_type),
                                  _flag("allow_store_overrun", allow_store_overrun))
            if cacheable:
                if len(_TILED) >= 1024:
                    _TILED.clear()
                _TILED[key] = layout
        address = layout.checked_address(address)
        if cacheable and cai is not None and type(by_interface[1]) is str and _plain_key(by_interface[2:]) and \
                _named_by_typestr(cai, name):
            if len(_TILED_BY_INTERFACE) >= 1024:
                _TILED_BY_INTERFACE.clear()
            _TILED_BY_INTERFACE[by_interface] = layout, by_interface[2:]
        return cls._over(array, address, layout)

    @classmethod
    def im2col(cls, array, pixel_box_lower_corner, pixel_box_upper_corner, channels_per_pixel, pixels_per_column,
               *, swizzle="none", l2_promotion="128B", oob_fill="none", element_strides=None,
               interleave="none", data_type=None, allow_store_overrun=False) -> "TensorMap":
        """An im2col map over an N(D)(H)WC ``array`` (rank 3-5, channels innermost).

        Each load gathers ``pixels_per_column`` pixels x ``channels_per_pixel`` channels; the
        corners bound the pixel window per spatial dimension, in array order (``(H, W)`` for NHWC).
        Use with ``tma.load_im2col``.  ``allow_store_overrun`` as for :meth:`tiled` (the channels are
        the rows).

        Example::

            # fragment: a device array needs a GPU (or the simulator: NUMBA_ENABLE_CUDASIM=1)
            x = cuda.to_device(np.zeros((2, 16, 16, 64), np.float16))     # NHWC
            desc = TensorMap.im2col(x, (-1, -1), (-1, -1), 64, 128)       # 3x3 conv, padding 1
        """
        address, shape, strides, name, itemsize = _array_view(array)
        layout = im2col_layout(name, shape, strides, itemsize, _ints("pixel_box_lower_corner", pixel_box_lower_corner),
                               _ints("pixel_box_upper_corner", pixel_box_upper_corner),
                               _int("channels_per_pixel", channels_per_pixel),
                               _int("pixels_per_column", pixels_per_column),
                               _ints("element_strides", element_strides, optional=True),
                               *_options(interleave, swizzle, l2_promotion, oob_fill, data_type),
                               _flag("allow_store_overrun", allow_store_overrun))
        return cls._over(array, layout.checked_address(address), layout)

    # -- attributes --------------------------------------------------------------------------
    @property
    def fields(self):
        """Every field of the descriptor (:class:`TensorMapFields`, innermost-first), decoded from
        :attr:`bytes` (for display and cross-checks: the attributes below read the map's layout)."""
        return decode(self.bytes)

    @property
    def box_bytes(self) -> int:
        """Bytes one full box load delivers: what ``mbarrier.arrive_expect_tx`` must expect
        (``fields.transfer_bytes``; not established for interleaved maps: TensorMapError)."""
        box_bytes = self._layout.tile.box_bytes
        if box_bytes is None:
            raise unknown_transfer(self._layout.interleave)
        return box_bytes

    @property
    def smem_bytes(self) -> int:
        """Shared memory one full box spans: ``box_bytes``, or more when a swizzle is wider than
        the box's rows (they lie the swizzle span apart; measured on the H200).  Size tiles with it."""
        return self.layout.smem_bytes

    @property
    def store_overrun(self) -> int:
        """Bytes past the end of each row (dimension 0) that a TMA store or reduce crossing it
        writes: the row's bytes rounded up to 16 (0 to 15; see :mod:`numba_tma.descriptors.edge`).
        Kernels refuse to store through a map with an overrun unless it was built with
        ``allow_store_overrun=True``."""
        return self._layout.store_overrun

    @property
    def swizzle(self) -> Swizzle:
        return self._layout.swizzle

    @property
    def address(self) -> int:
        """The global address (bytes 0-7 of the descriptor)."""
        return int.from_bytes(self.bytes[:8], "little")

    def _address_of(self, array) -> int:
        """The data pointer of ``array``, which must have this map's shape, strides and dtype.  An
        array whose ``__cuda_array_interface__`` matches, item for item, one this map accepted
        before is answered from that interface alone (the checks would give the same answer)."""
        layout = self._layout
        cai = _interface(array)
        if layout.seen is not None and cai is not None and _signature(array, cai) == layout.seen:
            address = _seen_address(cai, layout.align)
            if address is not None:
                return address
        address, shape, strides, name, itemsize = _array_view(array)
        innermost_contiguous = strides[-1] == itemsize or shape[-1] == 1
        if (shape, tuple(strides[:-1]), name) != (layout.shape, layout.strides[:-1], layout.name) or \
                not innermost_contiguous:
            raise TensorMapError("array", f"{name}{list(shape)} strides {list(strides)}",
                                 f"must match the map's {layout.name}{list(layout.shape)} with outer strides "
                                 f"{list(layout.strides[:-1])}")
        address = layout.checked_address(address)
        if cai is not None and _named_by_typestr(cai, name):
            layout.seen = _signature(array, cai)
        return address

    def at_address(self, address, owner=None) -> "TensorMap":
        """A new map like this one over the memory at ``address``, which the caller has read to
        hold an array of this map's shape, strides and dtype (only the address is checked, as
        the encoders check it; ``owner``, if given, is kept alive with the map): for a library
        that reads its arrays itself and launches one kernel over many of them."""
        return TensorMap._over(owner, self._layout.checked_address(address), self._layout)

    def with_array(self, array) -> "TensorMap":
        """A new map like this one over another array of identical shape, strides and dtype:
        ``bytes`` get the new address spliced in (no validation or layout work)."""
        return TensorMap._over(array, self._address_of(array), self._layout)

    def retarget(self, array) -> "TensorMap":
        """Point *this* map at another array of identical shape, strides and dtype, in place, and
        return it: the cheapest way to launch one kernel over many arrays.  Launches already made
        keep the address they were given (the driver copies kernel parameters at launch).

        Example::

            # fragment: the caller's kernel, batches and launch shape
            for a in batches:
                kernel[grid, block](desc.retarget(a), out)
        """
        self.bytes = self._address_of(array).to_bytes(8, "little") + self._layout.tail
        self._array, self._device = array, None
        return self

    # -- kernel arguments ----------------------------------------------------------------------
    @staticmethod
    def numba_type(dtype, box, mode="tiled", rank=None, box_bytes=None, swizzle="none", store_overrun=0):
        """The Numba type of a map argument, for compiling without an array (e.g. with
        ``numba_tma.inspect``): ``TensorMap.numba_type("float32", (64, 64))``.  An im2col map also
        gives its tensor ``rank``; ``box_bytes`` defaults to the full box (unit element strides);
        ``store_overrun`` (bytes, 0-15) is that of a map whose rows are not a multiple of 16 bytes,
        through which stores are refused (``desc.store_overrun``)."""
        return kernel_type(TileLayout.describe(dtype, box, mode, rank, box_bytes, swizzle, store_overrun))

    @property
    def _numba_type_(self):
        """The Numba type numba-cuda gives this map as a kernel argument: its :attr:`layout`'s, kept
        by the layout once asked (a map's layout never changes: ``retarget`` and ``with_array`` only
        take arrays of the same shape, strides and dtype)."""
        layout = self._layout
        found = layout.numba_type
        if found is None:
            found = layout.numba_type = kernel_type(layout.tile)
        return found

    def __tma_descriptor_c_api__(self) -> int:
        """The address of the map's 128 bytes (:attr:`bytes`, kept by the map): how numba-cuda-mlir's
        launcher takes a by-value map argument (it copies them at the launch)."""
        return ctypes.cast(ctypes.c_char_p(self.bytes), ctypes.c_void_p).value

    def driver_bytes(self) -> bytes:
        """The same map encoded by the CUDA driver (``cuTensorMapEncode*`` through cuda.bindings;
        needs a GPU): a cross-check of :attr:`bytes`, which are equal on every tested driver."""
        from . import driver

        encode = driver.encode_tiled if self.mode == "tiled" else driver.encode_im2col
        return encode(global_address=self.address, **self._layout.encoder_arguments())

    def to_device(self):
        """The 128 bytes in a ``uint8`` device array, the global-memory form, typed by the map's
        layout (``TensorMap[...] in global memory``, read-only): the ops check it as they check
        the by-value map (a store through a map whose rows end short of 16 bytes is refused at
        compile time unless the map or the call opts in) and issue
        ``fence.proxy.tensormap::generic.acquire.sys`` before TMA reads it.  Its views (slices)
        and descriptor bytes of your own in a plain ``uint8`` array say no layout: debug mode and
        the simulator check those."""
        if self._device is None:
            import numpy as np

            self._device = device_map(np.frombuffer(self.bytes, dtype=np.uint8), self._layout.tile)
        return self._device

    # -- display -------------------------------------------------------------------------------
    def _box_bytes_text(self):
        try:
            return str(self.box_bytes)
        except TensorMapError:
            return "unknown (interleaved)"

    def __repr__(self):
        layout = self._layout
        return (f"TensorMap.{self.mode}({self.dtype}, shape={list(layout.shape)}, box={list(self.box)}, "
                f"box_bytes={self._box_bytes_text()}, swizzle={layout.swizzle.name}, "
                f"l2_promotion={layout.l2_promotion.name}, oob_fill={layout.oob_fill.name}{self._overrun_text()}, "
                f"address=0x{self.address:x})")

    def _overrun_text(self):
        over = self.store_overrun
        return f", store_overrun={over}{' (allowed)' if self.allow_store_overrun else ''}" if over else ""

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td><code>{html.escape(str(v))}</code></td></tr>"
                       for k, v in vars(self.fields).items())
        return (f"<b>TensorMap.{self.mode}</b> {self.dtype}, box {list(self.box)} (array order), "
                f"{self._box_bytes_text()} bytes per box<table>{rows}</table>")
