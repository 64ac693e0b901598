"""The 16-byte store edge on every route a map takes into a kernel (no GPU): a store or reduce
through a map whose rows end short of 16 bytes is refused at compile time for a by-value map,
opted in by the map or the call; host re-pointing keeps the fact; the simulator refuses as the
compiled op does and, opted in, writes what the H200 writes (checked against hand-written
expectations).  The GPU halves: tests/test_gpu_store_identity.py, tests/test_gpu_debug.py."""

import numba
import numpy as np
import pytest
from numba import cuda

import numba_tma
from numba.cuda import types
from numba_tma import OpArgumentError, TensorMap, TensorMapError, inspect, tlx, tma
from numba_tma.intrinsics.tensor_map_type import global_map_type

from test_simulator import simulate
from test_tensor_map_arg import FakeCudaArray


def _map(width, dtype=np.float32, box=(8, 16), **kw):
    """A map over the first ``width`` columns of an (8, 64) buffer (rows 256 bytes apart)."""
    item = np.dtype(dtype).itemsize
    return TensorMap.tiled(FakeCudaArray((8, width), dtype, strides=(64 * item, item)), box, **kw)


def store_kernel(desc):
    tile = cuda.shared.array((8, 16), numba.float32, alignment=128)
    tma.store(desc, tile, (0, 0))


def store_opted_in(desc):
    tile = cuda.shared.array((8, 16), numba.float32, alignment=128)
    tma.store(desc, tile, (0, 0), allow_overrun=True)


def reduce_kernel(desc):
    tile = cuda.shared.array((8, 16), numba.float32, alignment=128)
    tma.reduce(desc, tile, (0, 0), "add")


def tlx_store(desc):
    tile = cuda.shared.array((8, 16), numba.float32, alignment=128)
    tlx.async_descriptor_store(desc, tile, (0, 0))


def tlx_reduce(desc):
    tile = cuda.shared.array((8, 16), numba.float32, alignment=128)
    tlx.async_descriptor_store(desc, tile, (0, 0), store_reduce="add")


@pytest.mark.parametrize("width, overrun", [(59, 4), (62, 8), (57, 12), (61, 12)])
def test_the_overrun_is_the_bytes_to_the_next_16(width, overrun):
    # 59 x 4 = 236 bytes -> 240; 62 x 4 = 248 -> 256; 57 x 4 = 228 -> 240; 61 x 4 = 244 -> 256
    assert _map(width).store_overrun == overrun


@pytest.mark.parametrize("width", [60, 64, 4])
def test_rows_of_whole_16_bytes_have_none(width):
    desc = _map(width, box=(8, 16))
    assert desc.store_overrun == 0
    assert "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group" in inspect.ptx(store_kernel,
                                                                                       (desc._numba_type_,))


@pytest.mark.parametrize("kernel", [store_kernel, reduce_kernel, tlx_store, tlx_reduce],
                         ids=["tma.store", "tma.reduce", "tlx.store", "tlx.store_reduce"])
def test_a_by_value_map_past_the_edge_is_refused_at_compile_time(kernel):
    desc = _map(59)
    op = "tma.reduce" if "reduce" in kernel.__name__ else "tma.store"
    with pytest.raises(OpArgumentError) as info:
        inspect.ptx(kernel, (desc._numba_type_,))
    message = str(info.value)
    assert f"numba_tma: {op}: argument 'desc' would write outside the tensor" in message
    assert "rows (dimension 1 of the array, columns) 4 bytes short of a multiple of 16" in message
    assert "(4 bytes = 1 float32 element past every row it crosses; measured on the H200)" in message
    assert "make the array's last dimension a multiple of 4 elements" in message
    assert "TensorMap.tiled(array, box, allow_store_overrun=True)" in message and "allow_overrun=True" in message


def test_uint8_rows_name_their_bytes():
    desc = _map(50, np.uint8, box=(8, 16))              # 50 bytes -> 64: 14 bytes past
    with pytest.raises(OpArgumentError, match=r"14 bytes = 14 uint8 elements past every row"):
        inspect.ptx(_tile_store("uint8"), (desc._numba_type_,))


def _tile_store(dtype):
    namespace = {"cuda": cuda, "numba": numba, "tma": tma}
    exec(f"""
def k(desc):
    tile = cuda.shared.array((8, 16), numba.{dtype}, alignment=128)
    tma.store(desc, tile, (0, 0))
""", namespace)
    return namespace["k"]


def test_the_map_or_the_call_opts_in():
    assert inspect.ptx(store_kernel, (_map(59, allow_store_overrun=True)._numba_type_,))
    assert inspect.ptx(store_opted_in, (_map(59)._numba_type_,))
    assert _map(59, allow_store_overrun=True)._numba_type_ == _map(64)._numba_type_   # no overrun to refuse


def test_the_opt_in_must_be_a_bool():
    with pytest.raises(TensorMapError, match=r"allow_store_overrun=1: must be True or False"):
        _map(59, allow_store_overrun=1)


def test_im2col_stores_count_channels_as_the_rows():
    x = FakeCudaArray((2, 8, 8, 60), np.float16, strides=(8192, 1024, 128, 2))   # 60 x 2 bytes = 120 -> 128
    desc = TensorMap.im2col(x, (0, 0), (0, 0), 56, 8)
    assert desc.store_overrun == 8
    def k(desc):
        block = cuda.shared.array(8 * 56, numba.uint16, alignment=128)
        tma.store(desc, block, (0, 0, 0, 0))
    with pytest.raises(OpArgumentError, match=r"rows \(dimension 3 of the array, C\) 8 bytes short"):
        inspect.ptx(k, (desc._numba_type_,))


def test_scatter4_is_refused_too():
    desc = TensorMap.tiled(FakeCudaArray((64, 59), np.float32, strides=(256, 4)), (1, 16))
    def k(desc):
        rows = cuda.shared.array(64, numba.float32, alignment=128)
        tma.scatter4(desc, rows, 0, (0, 1, 2, 3))
    with pytest.raises(OpArgumentError, match=r"tma.scatter4: argument 'desc' would write outside the tensor"):
        inspect.compile(k, (desc._numba_type_,), "sm_100a")


def _in_global(desc):
    """The Numba type of ``desc.to_device()``'s array (no GPU here to make one)."""
    return global_map_type(desc.layout)


@pytest.mark.parametrize("kernel", [store_kernel, reduce_kernel, tlx_store, tlx_reduce],
                         ids=["tma.store", "tma.reduce", "tlx.store", "tlx.store_reduce"])
def test_a_map_in_global_memory_past_the_edge_is_refused_as_the_by_value_map(kernel):
    """``desc.to_device()`` is typed by the map's layout: the same refusal, word for word (the H100
    wrote past every row through it before)."""
    desc = _map(59)
    with pytest.raises(OpArgumentError) as by_value:
        inspect.ptx(kernel, (desc._numba_type_,))
    with pytest.raises(OpArgumentError) as in_global:
        inspect.ptx(kernel, (_in_global(desc),))
    assert str(in_global.value) == str(by_value.value)
    assert "argument 'desc' would write outside the tensor" in str(in_global.value)


def test_a_map_in_global_memory_opts_in_by_the_map_or_the_call():
    # the map's opt-in is in its type (no overrun left to refuse), as for the by-value map
    opted = _in_global(_map(59, allow_store_overrun=True))
    assert opted.tile_layout.store_overrun == 0 and opted == _in_global(_map(64))
    assert _in_global(_map(59)).tile_layout.store_overrun == 4 and _in_global(_map(59)) != opted
    # the fence before the store, then the store itself (PTX ISA 9.7.13.4, 9.7.9.27.1.2)
    for kernel, desc in ((store_kernel, opted), (store_opted_in, _in_global(_map(59)))):
        ptx = inspect.ptx(kernel, (desc,))
        fence = ptx.index("fence.proxy.tensormap::generic.acquire.sys [%rd")
        assert ptx.index("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd", fence)


def test_descriptor_bytes_of_your_own_still_compile_and_are_checked_on_the_device():
    """A plain uint8 array says no layout: it compiles as before (the fence, the store), and debug
    mode checks the edge on the device (tests/test_gpu_debug.py runs it)."""
    plain = types.uint8[::1]
    ptx = inspect.ptx(store_kernel, (plain,))
    assert "fence.proxy.tensormap::generic.acquire.sys [%rd" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd" in ptx
    edge = ", ".join(map(str, b"past the end of the row"))     # the trap's message, bytes of a PTX string
    with numba_tma.debug():
        checked = inspect.ptx(store_kernel, (plain,))
        typed = inspect.ptx(store_kernel, (_in_global(_map(64)),))
    assert edge in checked and edge not in ptx
    assert edge not in typed      # a typed map's edge was checked at compile time: no trap for it


def test_host_repointing_keeps_the_fact_and_the_opt_in():
    buffers = [FakeCudaArray((8, 59), np.float32, address=0x7F0000000000 + i * 0x10000, strides=(256, 4))
               for i in range(2)]
    desc = TensorMap.tiled(buffers[0], (8, 16))
    assert desc.with_array(buffers[1])._numba_type_ == desc._numba_type_
    assert desc._numba_type_.store_overrun == 4
    opted = TensorMap.tiled(buffers[0], (8, 16), allow_store_overrun=True)
    assert opted.with_array(buffers[1]).allow_store_overrun and opted.retarget(buffers[1]).allow_store_overrun
    wide = TensorMap.tiled(FakeCudaArray((8, 64), np.float32), (8, 16))
    with pytest.raises(TensorMapError, match=r"must match the map's float32\[8, 64\]"):
        wide.retarget(FakeCudaArray((8, 59), np.float32, strides=(256, 4)))     # a narrower view


def test_numba_type_takes_the_overrun():
    t = TensorMap.numba_type("float32", (8, 16), store_overrun=4)
    assert t.store_overrun == 4 and "store_overrun=4" in str(t)
    with pytest.raises(TensorMapError, match=r"store_overrun=16"):
        TensorMap.numba_type("float32", (8, 16), store_overrun=16)


SIM_SETUP = """
import numba_tma
from numba_tma.simulator import SimulatorError

@cuda.jit
def put(desc, col, allow, reduce):
    tile = cuda.shared.array((2, 16), numba.float32, alignment=128)
    for i in range(32):
        tile[i // 16, i % 16] = 100 + i
    fence.proxy_async()
    if reduce:
        tma.reduce(desc, tile, (col, 0), "add", allow_overrun=allow)
    else:
        tma.store(desc, tile, (col, 0), allow_overrun=allow)
    tma.commit_group()
    tma.wait_group(0)

def run(width, col, allow=False, reduce=False, opt_in=False, device=None):
    buf = np.zeros((2, 64), np.float32)
    d = cuda.to_device(buf)
    desc = TensorMap.tiled(d[:, :width], (2, 16), allow_store_overrun=opt_in)
    arg = {None: desc, "to_device": desc.to_device(),            # typed by the map's layout
           "bytes": cuda.to_device(np.frombuffer(desc.bytes, np.uint8))}[device]   # bytes of one's own
    try:
        put[1, 1](arg, col, allow, reduce)
    except Exception as exc:
        return type(exc).__name__ + ": " + str(exc)
    return d.copy_to_host()
"""


def test_the_simulator_refuses_and_writes_as_the_gpu():
    out = simulate(setup=SIM_SETUP, body="""
        print("refused:", run(59, 48))
        print("reduce refused:", run(59, 48, reduce=True))
        got = run(59, 48, opt_in=True)
        print("opted in:", got[0, 56:].tolist(), got[1, 56:].tolist())
        got = run(59, 48, allow=True, reduce=True)
        print("reduced:", got[0, 56:].tolist())
        got = run(62, 48, allow=True)
        print("62 wide:", got[0, 56:].tolist())
        got = run(59, 32, device="bytes")
        print("not crossing:", float(got[0, 47]), float(got[0, 48]))
        print("global refused:", run(59, 48, device="bytes"))
        got = run(59, 48, allow=True, device="bytes")
        print("global opted in:", got[0, 56:].tolist())
        print("to_device refused:", run(59, 32, device="to_device"))
        print("to_device reduce refused:", run(59, 32, reduce=True, device="to_device"))
        got = run(59, 48, opt_in=True, device="to_device")
        print("to_device, the map opted in:", got[0, 56:].tolist(), got[1, 56:].tolist())
        got = run(59, 48, allow=True, reduce=True, device="to_device")
        print("to_device, the call opted in:", got[0, 56:].tolist())
    """)
    assert "refused: OpArgumentError: tid=[0, 0, 0] ctaid=[0, 0, 0]: " in out      # the simulator names the thread
    assert ("numba_tma: tma.store: argument 'desc' would write outside the tensor: "
            "TensorMap[float32, rank=2, box=(2, 16), tiled, store_overrun=4] has rows (dimension 1 of the array, "
            "columns) 4 bytes "
            "short of a multiple of 16") in out
    assert "numba_tma: tma.reduce: argument 'desc' would write outside" in out
    # the box covers columns 48..63; 59 is past the 59-wide edge, 60 the next 16-byte boundary
    assert "opted in: [108.0, 109.0, 110.0, 111.0, 0.0, 0.0, 0.0, 0.0] [124.0, 125.0, 126.0, 127.0, 0.0, 0.0" in out
    assert "reduced: [108.0, 109.0, 110.0, 111.0, 0.0, 0.0, 0.0, 0.0]" in out
    assert "62 wide: [108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]" in out     # 248 bytes -> 256
    assert "not crossing: 115.0 0.0" in out          # a box inside the row of a map in memory: no opt-in
    assert ("numba_tma simulator: tma.store: the box (elements 48..63 of dimension 0)"
            " crosses the end of the row (59 elements, 236 bytes: not a multiple of 16)") in out
    assert "global opted in: [108.0, 109.0, 110.0, 111.0, 0.0, 0.0, 0.0, 0.0]" in out
    # to_device()'s array is refused as the compiled op refuses it, at any box (the map's type says the rows)
    assert ("to_device refused: OpArgumentError: tid=[0, 0, 0] ctaid=[0, 0, 0]: numba_tma: tma.store: argument "
            "'desc' would write outside the tensor: TensorMap[float32, rank=2, box=(2, 16), tiled, store_overrun=4]") \
        in out
    assert "to_device reduce refused: OpArgumentError: tid=[0, 0, 0] ctaid=[0, 0, 0]: numba_tma: tma.reduce:" in out
    # and its opt-ins write what the H200 writes: columns 48..58 and 59 (to the 240-byte boundary), not 60..63
    assert ("to_device, the map opted in: [108.0, 109.0, 110.0, 111.0, 0.0, 0.0, 0.0, 0.0] "
            "[124.0, 125.0, 126.0, 127.0, 0.0, 0.0, 0.0, 0.0]") in out
    assert "to_device, the call opted in: [108.0, 109.0, 110.0, 111.0, 0.0, 0.0, 0.0, 0.0]" in out


def test_the_map_shows_its_overrun():
    assert "store_overrun=4, address" in repr(_map(59))
    assert "store_overrun=4 (allowed)" in repr(_map(59, allow_store_overrun=True))
    assert "store_overrun" not in repr(_map(60))
