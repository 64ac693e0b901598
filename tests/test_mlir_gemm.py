"""numba_tma.gemm's kernel source compiled by numba-cuda-mlir (``kernels.build(..., host="mlir")``,
docs/second_host.md) for sm_90a with no GPU, beside numba-cuda's: its wgmmas issued back to back, and the map in global
memory typed by its layout (``numba_tma.mlir.map_in_global``), which ``wgmma.descriptor`` and the
rest read as under numba-cuda: the same PTX, the same refusals."""

import re

import numba
import pytest

pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed (the mlir extra)")

from numba_cuda_mlir import cuda  # noqa: E402
from numba_cuda_mlir import types as mt  # noqa: E402
from numba_cuda_mlir.numba_cuda.typing.typeof import typeof  # noqa: E402

import numba_tma  # noqa: E402
import numba_tma.mlir  # noqa: E402
from numba_tma import OpArgumentError, TensorMap, inspect  # noqa: E402
from numba_tma.gemm.kernels import THREADS, Kernel, build  # noqa: E402
from numba_tma.intrinsics.hosts.mlir_host import MapInGlobal  # noqa: E402
from numba_tma.mlir import map_in_global_type, tma, wgmma  # noqa: E402
from numba_tma.mlir.tensor_map import GlobalMap, _global_map_class  # noqa: E402

pytestmark = pytest.mark.skipif(numba_tma.ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")

KERNEL = Kernel("bf16", "k", 256, 4)     # bf16, single blocks, B held N x K, no split, 4 stages, TMA stores
BOXES = ((128, KERNEL.bk), KERNEL.b_box(), (64, 64))


def _signature(host_types, map_type):
    """The kernel's arguments (kernels.build): the three maps, the direct output, split-K's workspace
    and counters (all three unused), the tile counts, the scale, the splits, the groups' offsets and
    counts, and the epilogue's tuple."""
    t = host_types
    return (*(map_type("bfloat16", box, swizzle="128B") for box in BOXES), t.uint16[:, :], t.float32[:, :, :],
            t.int32[:], t.int64, t.int64, t.int64, t.float32, t.int64, t.int32[:], t.int64, t.int64,
            t.UniTuple(t.int64, 1))


def _sass_facts(compiled):
    sass = compiled.sass
    return {"CALL": "CALL" in sass, "HGMMA": len(re.findall(r"HGMMA\.64x256x16\.F32\.BF16", sass)),
            "gsb0, 0x1": len(re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x1", sass)),
            "gsb0, 0x0": len(re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, 0x0", sass))}


def test_the_gemm_kernel_compiles_on_the_mlir_host_with_its_wgmmas_back_to_back():
    """The same source as numba-cuda's kernel: no subroutine call (ptxas would serialise the
    wgmmas), the same HGMMAs per K step and the same waits, the TMA loads and stores through maps in
    global memory (each map fenced once, at the kernel's start)."""
    mlir_kernel, numba_kernel = build(KERNEL, host="mlir")[0], build(KERNEL)[0]
    assert mlir_kernel is not numba_kernel
    mlir = inspect.compile(mlir_kernel, _signature(mt, map_in_global_type), "sm_90a", host="mlir",
                           launch_bounds=(THREADS, 1))     # the kernel's jit option
    llvmlite = inspect.compile(numba_kernel, _signature(numba.types, TensorMap.numba_type), "sm_90a")
    assert _sass_facts(mlir) == _sass_facts(llvmlite) == {"CALL": False, "HGMMA": 4, "gsb0, 0x1": 1, "gsb0, 0x0": 1}
    assert {"UTMALDG.2D", "UTMASTG.2D", "UTMACCTL.IV"} <= mlir.opcodes()
    boxes = BOXES
    assert [line.strip() for line in mlir.ptx.splitlines() if "acquire.sys" in line] == \
        [f"fence.proxy.tensormap::generic.acquire.sys [%rd{n}], 128; // numba_tma: argument {i}"
         for i, n in zip(range(len(boxes) - 1, -1, -1), _fenced_registers(mlir.ptx))]
    assert "fence.proxy.tensormap" not in llvmlite.ptx


def _fenced_registers(ptx):
    return re.findall(r"acquire\.sys \[%rd(\d+)\]", ptx)


def _descriptor_kernel(desc, out):
    """A TMA load, then the tile's K-major descriptor and the map's constants, read from its type."""
    tile = cuda.shared.array((64, 64), mt.uint16, alignment=1024)
    bar = cuda.shared.array(1, mt.uint64)
    tma.load(desc, tile, (0, 0), bar)
    out[0] = wgmma.descriptor(tile, desc, 1, 64)
    out[1] = desc.box_bytes + desc.swizzle + desc.smem_bytes


def test_a_map_in_global_memory_gives_the_descriptor_its_type_says():
    """Hand-written PTX: the acquire fence on the map's address at the kernel's start, then the
    load from that address (a map in global memory), the descriptor of a 128B-swizzled bf16 tile (row 64 of 128 bytes, K step 1 of 32
    bytes, the high word 0x40000040: 1024-byte stride, 128B swizzle), 8192 + 128 + 8192."""
    sig = (map_in_global_type("bfloat16", (64, 64), swizzle="128B"), mt.uint64[::1])
    ptx = inspect.compile(_descriptor_kernel, sig, "sm_90a", host="mlir").ptx
    expected = [r"fence\.proxy\.tensormap::generic\.acquire\.sys \[(%rd\d+)\], 128; // numba_tma: argument 0",
                r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes "
                r"\[%r\d+\], \[\1, \{%r\d+, %r\d+\}\], \[%r\d+\];",
                r"mad\.lo\.u32 a, %r\d+, 128, %r\d+;", r"mad\.lo\.u32 a, %r\d+, 32, a;", r"shr\.u32 a, a, 4;",
                r"and\.b32 a, a, 0x3fff;", r"or\.b32 lo, a, 0x10000;", r"mov\.b32 hi, 0x40000040;",
                r"mov\.b64 %rd\d+, \{lo, hi\};", r"mov\.u64\s+%rd\d+, 16512;"]
    text = "\n".join(line.strip() for line in ptx.splitlines())
    assert re.search(expected[0] + r"\n(?:.*\n)*?" + expected[1], text), "the fence and the load"
    assert re.search(r"\n".join(expected[2:9]), text), "the descriptor"
    assert re.search(expected[9], text), "the map's constants"


def _refusal(call, desc_box, swizzle):
    """``call``'s message under numba-cuda (a by-value map) and under numba-cuda-mlir (the map in
    global memory), both of ``desc_box`` and ``swizzle``."""
    messages = []
    for host, namespace, sig in (
            ("numba-cuda", {"cuda": numba.cuda, "numba": numba, "wgmma": numba_tma.wgmma},
             (TensorMap.numba_type("bfloat16", desc_box, swizzle=swizzle), numba.uint64[::1])),
            ("mlir", {"cuda": cuda, "numba": mt, "wgmma": wgmma},
             (map_in_global_type("bfloat16", desc_box, swizzle=swizzle), mt.uint64[::1]))):
        source = (f"def refused(desc, out):\n    tile = cuda.shared.array((64, 64), numba.uint16, alignment=1024)\n"
                  f"    {call}\n")
        exec(source, namespace)
        with pytest.raises(OpArgumentError) as refused:
            inspect.compile(namespace["refused"], sig, "sm_90a", host=host)
        messages.append(str(refused.value).splitlines()[0])
    return messages


@pytest.mark.parametrize("call, box, swizzle", [
    ("out[0] = wgmma.descriptor(tile, desc, 0, 0)", (64, 64), "none"),
    ("out[0] = wgmma.descriptor(tile, desc, 2, 0)", (64, 32), "64B"),
    ("out[0] = wgmma.descriptor_mn(tile, desc, 4, 0)", (64, 64), "128B"),
    ("wgmma.store_shared_bf16(wgmma.zeros(64), tile, desc)", (64, 32), "64B"),
], ids=["descriptor-swizzle", "descriptor-k", "descriptor_mn-k", "store_shared_bf16-box"])
def test_a_map_in_global_memory_is_refused_as_numba_cuda_refuses_the_by_value_map(call, box, swizzle):
    numba_cuda, mlir = _refusal(call, box, swizzle)
    assert numba_cuda.startswith("numba_tma: ") and mlir == numba_cuda


def test_map_in_global_is_typed_by_its_layout_one_python_class_per_layout():
    """numba-cuda-mlir types the value by ``typeof_impl`` (registered for GlobalMap), and its launcher
    reuses an argument's type by the argument's Python class (``_ArgMarshaller._call_impl``'s
    ``type_key``) and array metadata: one class per layout keeps two layouts apart."""
    from numba_cuda_mlir.descriptor import _ArgMarshaller

    first, second = (TensorMap.numba_type("bfloat16", box, swizzle="128B").layout for box in ((64, 64), (128, 64)))
    assert _global_map_class(first) is _global_map_class(first) is not _global_map_class(second)
    value = _global_map_class(first)(None)
    assert isinstance(value, GlobalMap) and typeof(value) == MapInGlobal(first) != MapInGlobal(second)
    assert "type_key = tuple(type(a) for a in args)" in __import__("inspect").getsource(_ArgMarshaller._call_impl), \
        "numba-cuda-mlir's launcher no longer caches argument types by Python class: see numba_tma.mlir.tensor_map"
