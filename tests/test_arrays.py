"""numba_tma.arrays: the user's arrays read as the GEMM and attention kernels take them.  PyTorch and CuPy
are stood in for by objects of their modules' names (neither is needed here); the numba view they
get is checked through the interface handed to ``numba.cuda.from_cuda_array_interface`` (captured).
Simulator arrays and numpy are read for real in the simulator half of the ``both_ways`` tests."""

import sys
import types

import numpy as np
import pytest
from numba import cuda

from numba_tma import arrays, testing
from numba_tma.gemm import calls     # (imported before a test stands torch in: gemm's own import looks for it)
from numba_tma.arrays import check_matrix, empty, operand


class _Named:
    """A torch dtype or device: only its ``str`` and ``type`` are read."""

    def __init__(self, text, kind=None):
        self.text, self.type = text, kind

    def __str__(self):
        return self.text

    def __eq__(self, other):            # as torch's dtypes and devices: one of each name
        return isinstance(other, _Named) and (self.text, self.type) == (other.text, other.type)

    def __hash__(self):
        return hash((self.text, self.type))


CUDA0 = _Named("cuda:0", "cuda")


class FakeTensor:
    """A torch tensor as operands reads one."""

    def __init__(self, shape, stride, dtype="torch.bfloat16", itemsize=2, ptr=0x7F0000001000, device=CUDA0):
        self.shape, self._stride, self.dtype = shape, stride, _Named(dtype)
        self._itemsize, self._ptr, self.device = itemsize, ptr, device

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride

    def element_size(self):
        return self._itemsize

    def storage_offset(self):
        return 0

    def as_strided(self, shape, strides, offset):
        """The view a TMA map reads (torch's own): recorded, as its arguments."""
        return ("as_strided", tuple(shape), tuple(strides), offset, self)


FakeTensor.__module__ = "torch"


class FakeCupyArray:
    def __init__(self, shape, typestr, strides=None, ptr=0x7F0000002000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (ptr, False), "version": 3}


FakeCupyArray.__module__ = "cupy"


@pytest.fixture
def views(monkeypatch):
    """The interfaces (and owners) numba is asked to view; the views are ``("view", n)``."""
    seen = []

    def view(interface, owner=None, sync=True):
        seen.append((interface, owner, sync))
        return ("view", len(seen) - 1)

    monkeypatch.setattr(cuda, "from_cuda_array_interface", view)
    monkeypatch.setattr(cuda, "external_stream", lambda ptr: ("stream", ptr))
    arrays._external_stream.cache_clear()
    yield seen
    arrays._external_stream.cache_clear()


@pytest.fixture
def fake_torch(monkeypatch):
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(current_stream=lambda device: types.SimpleNamespace(cuda_stream=0xABC))
    torch.bfloat16, torch.float8_e4m3fn = _Named("torch.bfloat16"), _Named("torch.float8_e4m3fn")
    made = []

    def empty_strided(shape, strides, dtype, device):
        made.append((shape, strides, str(dtype), device))
        return FakeTensor(shape, strides, str(dtype), {"torch.bfloat16": 2, "torch.float8_e4m3fn": 1}[str(dtype)],
                          ptr=0x7F0000004000, device=device)

    torch.empty_strided, torch.made = empty_strided, made
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


# -- PyTorch ------------------------------------------------------------------------------------------

def test_a_bf16_tensor_is_viewed_as_uint16_bits_on_its_current_stream(views, fake_torch):
    x = FakeTensor((64, 48), (56, 1))                     # a row pitch of 56 elements (112 bytes)
    op = operand(x, "a")
    assert (op.name, op.kind, op.dtype, op.shape, op.strides, op.ptr, op.itemsize) == \
        ("a", "torch", "bf16", (64, 48), (56, 1), 0x7F0000001000, 2)
    assert op.owner is x and op.device_array == ("view", 0) and op.stream == ("stream", 0xABC)
    assert views == [({"shape": (64, 48), "strides": (112, 2), "typestr": "<u2", "data": (0x7F0000001000, False),
                       "version": 3}, x, False)]
    assert op.row_major and not op.col_major and not op.is_contiguous


@pytest.mark.parametrize("dtype, itemsize, logical, typestr", [
    ("torch.float16", 2, "f16", "<f2"), ("torch.float32", 4, "f32", "<f4"),
    ("torch.float8_e4m3fn", 1, "e4m3", "|u1"), ("torch.float8_e5m2", 1, "e5m2", "|u1")])
def test_each_torch_dtype_has_its_logical_name_and_storage(views, fake_torch, dtype, itemsize, logical, typestr):
    op = operand(FakeTensor((4, 32), (1, 4), dtype, itemsize), "b")           # column-major
    assert views == []                                     # a tensor's numba view is made when first asked
    op.device_array
    assert op.dtype == logical and views[0][0]["typestr"] == typestr
    assert views[0][0]["strides"] == (itemsize, 4 * itemsize) and op.col_major and not op.row_major


def test_an_explicit_stream_wins_and_external_streams_are_kept_per_pointer(views, fake_torch):
    assert operand(FakeTensor((8, 8), (8, 1)), "a", stream="mine").stream == "mine"
    first, second = (operand(FakeTensor((8, 8), (8, 1)), "a").stream for _ in range(2))
    assert first is second and arrays._external_stream.cache_info().misses == 1


def test_a_cpu_tensor_is_refused(views, fake_torch):
    with pytest.raises(TypeError) as e:
        operand(FakeTensor((8, 8), (8, 1), device=_Named("cpu", "cpu")), "a")
    assert str(e.value) == ("matmul: argument 'a' must be a CUDA array (a torch tensor on a CUDA device, a CuPy array "
                            "or a numba device array); got a tensor on cpu")


def test_a_torch_dtype_outside_the_table_is_refused(views, fake_torch):
    with pytest.raises(TypeError) as e:
        operand(FakeTensor((8, 8), (8, 1), "torch.complex64", 8), "b", caller="grouped_matmul")
    assert str(e.value) == ("grouped_matmul: argument 'b' has an unsupported dtype 'torch.complex64'; supported: "
                            "bf16, f16, f32, f64, e4m3, e5m2, i8, i32")


def test_dtype_reads_raw_torch_bits_but_never_recasts_a_typed_tensor(views, fake_torch):
    assert operand(FakeTensor((8, 16), (16, 1), "torch.uint8", 1), "a", dtype="e4m3").dtype == "e4m3"
    with pytest.raises(TypeError) as e:
        operand(FakeTensor((8, 8), (8, 1), "torch.float32", 4), "a", dtype="bf16")
    assert str(e.value) == ("matmul: argument 'a': dtype='bf16' cannot be read from an array of 'f32' (dtype= names "
                            "what raw uint16 / uint8 bits hold)")


# -- CuPy and __cuda_array_interface__ ----------------------------------------------------------------

def test_a_cupy_array_is_viewed_with_byte_strides_on_cupys_stream(views, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        cuda=types.SimpleNamespace(get_current_stream=lambda: types.SimpleNamespace(ptr=0x55))))
    x = FakeCupyArray((3, 16, 32), "<f4", strides=(4096, 256, 4))
    op = operand(x, "a")
    assert (op.kind, op.dtype, op.shape, op.strides, op.itemsize, op.stream) == \
        ("cupy", "f32", (3, 16, 32), (1024, 64, 1), 4, ("stream", 0x55))
    assert views == [({"shape": (3, 16, 32), "strides": (4096, 256, 4), "typestr": "<f4",
                       "data": (0x7F0000002000, False), "version": 3}, x, False)]
    assert op.tma_ok() and op.tma_ok("store")


def test_missing_strides_mean_c_contiguous(views):
    op = operand(FakeCupyArray((5, 6, 8), "<f2"), "a", stream=0)
    assert op.strides == (48, 8, 1) and op.is_contiguous and views[0][0]["strides"] == (96, 16, 2)


def test_uint16_bits_need_the_caller_to_say_they_are_bf16(views):
    op = operand(FakeCupyArray((16, 16), "<u2"), "a", dtype="bf16", stream=0)
    assert op.dtype == "bf16" and views[0][0]["typestr"] == "<u2"
    with pytest.raises(TypeError) as e:
        operand(FakeCupyArray((16, 16), "<u2"), "a", stream=0)
    assert str(e.value) == "matmul: argument 'a' holds raw '<u2' bits: say what they are with dtype= (one of 'bf16', 'f16')"
    with pytest.raises(TypeError) as e:
        operand(FakeCupyArray((16, 16), "|u1"), "b", stream=0)
    assert str(e.value) == ("matmul: argument 'b' holds raw '|u1' bits: say what they are with dtype= "
                            "(one of 'e4m3', 'e5m2')")
    with pytest.raises(TypeError, match=r"argument 'b': dtype='fp8' is not one of bf16, f16, f32"):
        operand(FakeCupyArray((16, 16), "|u1"), "b", dtype="fp8", stream=0)


def test_strides_that_split_an_element_are_refused(views):
    with pytest.raises(ValueError) as e:
        operand(FakeCupyArray((4, 4), "<f4", strides=(18, 4)), "c", stream=0)
    assert str(e.value) == "matmul: argument 'c' has byte strides (18, 4), not whole 4-byte elements"


def test_an_object_that_is_no_cuda_array_is_refused_naming_its_type():
    with pytest.raises(TypeError) as e:
        operand([[1.0]], "bias")
    assert str(e.value) == ("matmul: argument 'bias' must be a CUDA array (a torch tensor on a CUDA device, a CuPy "
                            "array or a numba device array); got a builtins.list")


# -- the rules --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, strides, ptr, role, why", [
    ((64, 64), (64, 1), 0x1000, "store", None),
    ((64, 64), (1, 64), 0x1000, "load", "its innermost stride is 64 elements (TMA needs 1: make it contiguous along "
                                        "that axis)"),
    ((64, 64), (64, 1), 0x1008, "load", "its address 0x1008 is not a multiple of 16 bytes"),
    ((64, 60), (60, 1), 0x1000, "load", "its stride along axis 0 is 120 bytes, not a multiple of 16"),
    ((2, 64, 64), (4100, 64, 1), 0x1000, "load", "its stride along axis 0 is 8200 bytes, not a multiple of 16"),
    ((64, 60), (64, 1), 0x1000, "load", None),
    ((64, 60), (64, 1), 0x1000, "store", "its rows are 120 bytes, not whole 16-byte chunks (a TMA store would write "
                                         "past each row)"),
    ((64, 64), (-64, 1), 0x1000, "load", "it has a negative stride (-64, 1) (TMA addresses memory upwards)")])
def test_why_tma_cannot_address_an_operand(views, shape, strides, ptr, role, why):
    interface_strides = tuple(2 * s for s in strides)
    op = operand(FakeCupyArray(shape, "<f2", strides=interface_strides, ptr=ptr), "a", stream=0)
    assert op.why_not_tma(role) == why and op.tma_ok(role) is (why is None)


def test_check_matrix_names_the_dimensions_and_the_dtypes(views):
    op = operand(FakeCupyArray((2, 8, 8), "<f4"), "a", stream=0)
    assert check_matrix(op, ("f32",), ndim=3) is op
    with pytest.raises(ValueError) as e:
        check_matrix(op, ("bf16", "f16"))
    assert str(e.value) == "matmul: argument 'a' must be 2-D; got 3 dimensions (shape (2, 8, 8))"
    with pytest.raises(TypeError) as e:
        check_matrix(op, ("bf16", "e4m3", "e5m2"), ndim=3)
    assert str(e.value) == "matmul: argument 'a' must be one of bf16, e4m3, e5m2; got f32"


# -- outputs -----------------------------------------------------------------------------------------

def test_a_torch_output_is_a_tensor_of_the_logical_dtype_on_the_inputs_device(views, fake_torch):
    like = operand(FakeTensor((8, 8), (8, 1)), "a")
    array, op = empty((32, 16), "bf16", like, order="F")
    op.device_array
    assert fake_torch.made == [((32, 16), (1, 32), "torch.bfloat16", CUDA0)]
    assert (op.name, op.dtype, op.strides, op.stream, op.owner) == ("out", "bf16", (1, 32), like.stream, array)
    assert views[-1][0]["strides"] == (2, 64)


def test_a_cupy_output_holds_bf16_as_uint16_bits(views, monkeypatch):
    made = []

    def cupy_empty(shape, dtype, order):
        made.append((shape, dtype, order))
        return FakeCupyArray(shape, np.dtype(dtype).str)

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(empty=cupy_empty))
    like = operand(FakeCupyArray((8, 8), "<u2"), "a", dtype="bf16", stream=7)
    array, op = empty((4, 32), "bf16", like)
    assert made == [((4, 32), np.dtype("<u2"), "C")] and (op.dtype, op.kind, op.stream) == ("bf16", "cupy", 7)


# -- numba and the simulator (read for real) ----------------------------------------------------------

@pytest.mark.both_ways
def test_a_numba_device_array_is_read_and_its_view_shares_the_memory():
    host = np.arange(16 * 24, dtype=np.float32).reshape(16, 24)
    x = cuda.to_device(host)[2:10, 8:24]                           # a strided slice
    op = operand(x, "a")
    assert (op.kind, op.dtype, op.shape, op.strides, op.itemsize) == (
        "host" if testing.WAY == "simulator" else "numba", "f32", (8, 16), (24, 1), 4)
    assert op.ptr % 16 == 0 and op.row_major and op.tma_ok()
    view = op.device_array
    assert (view.shape, view.strides, view.dtype) == ((8, 16), (96, 4), np.float32)
    view[0:1, 0:1].copy_to_device(np.full((1, 1), -1.0, np.float32))
    assert x.copy_to_host()[0, 0] == -1.0 and x.copy_to_host()[0, 1] == 2 * 24 + 9


@pytest.mark.both_ways
def test_numpy_is_a_device_array_only_under_the_simulator():
    host = np.zeros((4, 8), np.uint16)
    if testing.WAY != "simulator":
        with pytest.raises(TypeError, match="argument 'a' must be a CUDA array .*; got a numpy.ndarray"):
            operand(host, "a", dtype="bf16")
        return
    op = operand(host[:, 4:], "a", dtype="bf16")
    assert (op.dtype, op.shape, op.strides, op.ptr) == ("bf16", (4, 4), (8, 1), host.ctypes.data + 8)
    view = op.device_array
    assert type(view) is type(cuda.device_array(1)) and view.dtype == np.uint16
    view[1:2, 0:1].copy_to_device(np.full((1, 1), 0x3F80, np.uint16))      # bf16 1.0 into the user's array
    assert host[1, 4] == 0x3F80 and host.sum() == 0x3F80


@pytest.mark.both_ways
def test_a_numba_output_is_a_numba_device_array_of_the_storage_type():
    like = operand(cuda.to_device(np.zeros((2, 2), np.float16)), "a")
    array, op = empty((8, 4), "bf16", like, order="F")
    assert array.dtype == np.uint16 and array.strides == (2, 16)
    assert (op.name, op.dtype, op.shape, op.strides, op.col_major) == ("out", "bf16", (8, 4), (1, 8), True)


def test_a_torch_operand_gives_its_maps_the_tensors_own_view(views, fake_torch):
    """TMA maps read a torch tensor through torch's view of it (no numba view is made): the
    transpose of a column-major B is ``as_strided`` over the same storage, its offset in elements."""
    x = FakeTensor((32, 64), (1, 40), ptr=0x7F0000001000 + 16)       # column-major, 8 elements past its storage
    x.storage_offset = lambda: 8
    op = operand(x, "b")
    assert op.map_array() == ("as_strided", (32, 64), (1, 40), 8, x)
    assert op.transposed().map_array() == ("as_strided", (64, 32), (40, 1), 8, x)
    assert views == []


def test_a_torch_call_is_keyed_by_its_shapes_strides_types_alignment_and_stream(fake_torch):
    """calls.call_key on torch tensors (the key of a call seen before): the addresses apart,
    what decides the kernel and its maps, the addresses' alignment and torch's current stream."""

    a, b = FakeTensor((64, 32), (32, 1)), FakeTensor((32, 48), (1, 32), ptr=0x7F0000009000)
    keywords = dict(bias=None, activation="relu", epilogue=None, epilogue_args=(), alpha=1.0, beta=0.0, c=None,
                    residual=None, out_dtype=None, a_scale=None, b_scale=None, config=None, dtype=None)
    a_address, b_address, out_address, key = calls.call_key(a, b, None, keywords)
    assert (a_address, b_address, out_address) == (0x7F0000001000, 0x7F0000009000, None)
    moved = FakeTensor((64, 32), (32, 1), ptr=0x7F0000005000)          # another a, aligned: the same key
    assert calls.call_key(moved, b, None, keywords)[3] == key
    assert calls.call_key(FakeTensor((64, 32), (32, 1), ptr=0x7F0000005002), b, None, keywords)[3] != key
    assert calls.call_key(FakeTensor((64, 32), (40, 1)), b, None, keywords)[3] != key
    assert calls.call_key(a, b, None, dict(keywords, activation="gelu"))[3] != key
    fake_torch.cuda.current_stream = lambda device: types.SimpleNamespace(cuda_stream=0xDEF)
    assert calls.call_key(a, b, None, keywords)[3] != key
    assert calls.call_key(a, b, None, dict(keywords, residual=a)) is None     # M x N epilogue arrays: planned

