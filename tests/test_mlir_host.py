"""The numba-cuda-mlir host (numba_tma.mlir, docs/second_host.md): sample rows of the declarations
compiled through numba-cuda-mlir to the same hand-written PTX and SASS opcode, the same refusals,
a TMA load through a map in global memory, and the numba-cuda-mlir internals it relies on (no GPU)."""

import collections
import re

import numba
import pytest

numba_cuda_mlir = pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed (the mlir extra)")

from numba_cuda_mlir import cuda, tools  # noqa: E402
from numba_cuda_mlir import types as mt  # noqa: E402

import numba_tma.mlir  # noqa: E402
from numba_tma import ArchError, OpArgumentError, TensorMap, inspect, testing  # noqa: E402
from numba_tma.intrinsics.hosts import mlir_adapter  # noqa: E402
from numba_tma.intrinsics._core import OPS, Operand, Refusal  # noqa: E402
from numba_tma.mlir import at, fence, mbarrier, tensormap, tma  # noqa: E402
from test_assembles import ROWS, SIG, _KERNEL, _compile, _kernel, _with_qualifiers  # noqa: E402

MLIR_SIG = (mt.uint8[::1], mt.uint64[::1])



def _row_groups():
    """The rows with hand-written PTX (each op's samples as written), one kernel per architecture
    (on sm_100a the cta_group::2 rows in a kernel of their own: ptxas takes one CTA granularity per
    kernel).  Left out: rows through a by-value map (sample.desc: not on this host below sm_100,
    docs/numba_cuda_mlir_defects.md) and rows with numba-cuda compile options (setmaxnreg's)."""
    groups = collections.defaultdict(list)
    for row in ROWS:
        op, sample, chosen, arch, as_written = row.values
        if as_written and not sample.desc and not sample.options:
            pair = chosen.get("cta_group") in (2, "2") or "cta_group=2" in sample.call
            groups[arch, pair].append((op, sample, chosen))
    return groups


GROUPS = _row_groups()

# The register-tuple ops and the fragment helpers in one sm_90a kernel, compiled by both hosts
# (test_register_tuple_ops_... and test_fragment_helpers_...): wgmma through raw descriptors (by-value
# maps do not exist on this host on sm_90; a float32 and an int32 fragment), then ldmatrix
# (returns_regs, as tcgen05.ld; one register too; its tile named by at()) feeding mma.sync and
# stmatrix (through an at() reassigned in a loop); then every wgmma helper on the accumulator.
FRAGMENT_OPS = ("wgmma.fence", "wgmma.mma_async", "wgmma.wait_group", "mma.ldmatrix", "mma.sync", "mma.stmatrix")
FRAGMENTS = """acc = wgmma.fence(wgmma.zeros(64))
for k in range(2):
    acc = wgmma.mma_async(acc, out[k], out[k + 2], 1)
iacc = wgmma.mma_async(wgmma.zeros(16, numba.int32), out[0], out[1], 1, dtype="s8")
wgmma.commit_group()
acc = wgmma.wait_group(0, acc)
a = mma.ldmatrix(at(smem, cuda.threadIdx.x * 8))
b = mma.ldmatrix(smem[cuda.threadIdx.x * 4:], 1)
row = at(smem, 0)
for k in range(2):
    row = at(smem, cuda.threadIdx.x * 8 + k)
mma.stmatrix(row, (b[0], a[1]))
d = mma.sync(mma.zeros(), a, (b[0], a[1]))
out[4] = numba.uint64(acc[0] + acc[63] + d[0] + d[3] + iacc[15])"""
FRAGMENT_HELPERS = """wgmma.store(acc, c, 0, 0)
x = wgmma.load(c, 64, 0, 32)
wgmma.store_bf16(wgmma.add(x, wgmma.scale(x, 2.0)), c16, 0, 0)
m0, m1 = wgmma.row_max(x)
p = wgmma.exp2_rows(x, 1.5, m0, m1)
s0, s1 = wgmma.row_sum(p)
p = wgmma.scale_rows(p, s0, s1)
wgmma.store_shared_bf16(p, at(smem, 0), desc)
r = wgmma.mma_async_rs(wgmma.fence(wgmma.zeros(64)), wgmma.a_fragment(wgmma.scale(x, 3.0), 1), out[0], 1)
wgmma.commit_group()
r = wgmma.wait_group(0, r)
z = wgmma.mask(wgmma.scale(x, 5.0), 3, 5, 100, 0, -1.0)
q = wgmma.a_fragment(wgmma.scale(x, 7.0), 1, "e4m3")
out[5] = numba.uint64(s0 + m1 + p[3] + r[5] + z[7]) + numba.uint64(q[0] ^ q[1] ^ q[2] ^ q[3])"""
# the helpers' arrays: a 64 x 128 float32 tile and its bfloat16 bits (C-contiguous: paired stores);
# store_shared_bf16's desc is the C tile's map (by value under numba-cuda, in global memory here)
TILES = ("c", "c16")
NUMBA_FRAGMENTS_SIG = (TensorMap.numba_type("uint16", (64, 64), swizzle="128B"), SIG[1], numba.float32[:, ::1],
                       numba.uint16[:, ::1])
MLIR_FRAGMENTS_SIG = (*MLIR_SIG, mt.float32[:, ::1], mt.uint16[:, ::1])


def _row(name, index):
    op = OPS[name]
    return next(r for r in ROWS if r.values[0] is op and r.values[1] is op.samples[index] and r.values[4])


def _mlir_kernel(call, name="kernel", template=_KERNEL):
    namespace = {"cuda": cuda, "numba": mt, "types": mt, "at": numba_tma.mlir.at,
                 **{f: getattr(numba_tma.mlir, f) for f in numba_tma.mlir.FAMILIES}}
    exec(template.format(call=call.replace("\n", "\n    "), name=name), namespace)
    return namespace[name]


def _with_tiles(template=_KERNEL):
    """The test kernel's template with the helpers' 2-D arrays as parameters after ``out``."""
    return template.replace("(desc, out)", f"(desc, out, {', '.join(TILES)})")


def _mlir_compile(op, sample, chosen, arch):
    return inspect.compile(_mlir_kernel(_with_qualifiers(sample.call, chosen, op.name)), MLIR_SIG, arch, host="mlir")


@pytest.mark.parametrize("group", sorted(GROUPS), ids=[f"{a}{'-cta_group2' if p else ''}" for a, p in sorted(GROUPS)])
def test_every_sample_row_through_the_mlir_host(group):
    """Each group's rows in one kernel (their results in out[8 + i], so none is dead code): every
    row's hand-written PTX lines and its SASS opcode are in it."""
    arch, rows = group[0], GROUPS[group]
    if arch == "sm_90a" and isinstance(testing.device(), testing.DeviceFacts):
        pytest.skip("numba-cuda-mlir 0.6.0 segfaults compiling this batch where a GPU is present (its "
                    "mlir_optimization.optimize -> driver link; docs/numba_cuda_mlir_defects.md, 8)")
    calls = [_with_qualifiers(s.call, c, o.name).replace("out[0] = ", f"out[{8 + i}] = ")
             for i, (o, s, c) in enumerate(rows)]
    out = inspect.compile(_mlir_kernel("\n".join(calls), name=f"rows_{arch}_{int(group[1])}"), MLIR_SIG, arch,
                          host="mlir")
    assert f".target {arch}" in out.ptx
    missing = [f"{o.name} ({s.isa}): {line}" for o, s, c in rows for line in s.ptx_missing_from(out.ptx)]
    assert not missing, missing
    opcodes = out.opcodes()
    absent = [f"{o.name}: {s.opcode(arch)}" for o, s, c in rows if s.opcode(arch) and not s.found_in(opcodes, arch)]
    assert not absent, absent


def test_calls_folded_to_the_same_types_keep_their_own_keywords():
    """``bulk.load``'s cache_hint passed by position, its multicast and its cache_hint by keyword:
    numba-cuda-mlir folds all three to one argument list at lowering; each keeps its own form."""
    calls = ("bulk.load(smem, desc, 64, bar, out[1])\nbulk.load(smem, desc, 64, bar, multicast=out[2])\n"
             "bulk.load(smem, desc, 64, bar, cache_hint=out[3])")
    ptx = inspect.compile(_mlir_kernel(calls, "folded"), MLIR_SIG, "sm_90a", host="mlir").ptx
    forms = [line.split()[0] for line in ptx.splitlines() if "cp.async.bulk.shared" in line]
    assert forms == ["cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint",
                     "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster",
                     "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"], forms


def _operand_classes(cls=Operand):
    """Every NVIDIA operand class of the package (each lowers itself on both hosts)."""
    for sub in cls.__subclasses__():
        if sub.__module__.startswith("numba_tma."):
            yield sub
        yield from _operand_classes(sub)


def test_the_rows_cover_every_operand_class_and_most_ops():
    names = {o.name for rows in GROUPS.values() for o, _, _ in rows} | set(FRAGMENT_OPS)
    covered = {type(o).__name__ for n in names for o in OPS[n].operands} | \
        {type(o.inner).__name__ for n in names for o in OPS[n].operands if hasattr(o, "inner")}
    lowered = {c.__name__ for c in _operand_classes() if "lower" in vars(c)} - {"TileMap"}   # by-value maps only
    assert lowered <= covered | {"Phase", "Token"}, lowered - covered
    nvidia = {n for n, op in OPS.items() if op.vendor == "nvidia" and op.samples}
    assert len(names) >= 0.9 * len(nvidia), sorted(nvidia - names)


def _typed_by_numba_cuda_mlir(obj):
    """Whether numba-cuda-mlir types ``obj`` as a global of a kernel (a registry of its holds it)."""
    from numba_cuda_mlir.extending import typing_registry
    from numba_cuda_mlir.numba_cuda.typing.templates import builtin_registry

    return any(value is obj for registry in (builtin_registry, typing_registry) for value, _ in registry.globals)


def test_every_public_name_is_lowered_or_missing_with_why():
    """One import for both hosts: numba_tma.mlir's families are numba_tma's, and each public object
    of theirs is typed in numba-cuda-mlir kernels (or named in MISSING, with why)."""
    for family in numba_tma.mlir.FAMILIES:
        module = getattr(numba_tma, family)
        assert getattr(numba_tma.mlir, family) is module
        missing = {n.split(".", 1)[1] for n in numba_tma.mlir.MISSING if n.startswith(family + ".")}
        untyped = {n for n in module.__all__ if not _typed_by_numba_cuda_mlir(getattr(module, n))}
        assert untyped == missing, (family, untyped ^ missing)
    assert numba_tma.mlir.at is numba_tma.at and _typed_by_numba_cuda_mlir(numba_tma.at)


def test_numba_cuda_mlir_imports_numba_tma_mlir_before_it_compiles():
    """The package's ``numba_cuda_mlir_extensions`` entry point names ``numba_tma.mlir.init``, and
    numba-cuda-mlir's dispatcher still runs that group's ``init`` entry points before it compiles
    (so ``from numba_tma import tma`` needs no ``import numba_tma.mlir`` in a kernel's module)."""
    import inspect as pyinspect
    import pathlib
    import tomllib

    from numba_cuda_mlir.numba_cuda.core import entrypoints
    from numba_cuda_mlir.numba_cuda.dispatcher import Dispatcher

    project = tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["numba_cuda_mlir_extensions"] == {"init": "numba_tma.mlir:init"}
    assert callable(numba_tma.mlir.init)
    assert 'group="numba_cuda_mlir_extensions", name="init"' in pyinspect.getsource(entrypoints.init_all)
    assert "entrypoints.init_all()" in pyinspect.getsource(Dispatcher._compilation_chain_init_hook)


def _asm_blocks(ptx):
    """The inline-asm blocks of a kernel, registers and numbers renamed in order of appearance
    (without numba-cuda-mlir's own: it reads ``cuda.threadIdx.x`` with an inline ``mov``)."""
    blocks = [b for b in re.findall(r"// begin inline asm\n(.*?)// end inline asm", ptx, re.S)
              if not re.fullmatch(r"\s*mov.u32 %r\d+, %tid.x;\s*", b)]
    names = {}
    return [re.sub(r"%[a-z]+\d+|\b\d+\b", lambda m: names.setdefault(m.group(), f"R{len(names)}"), b.strip())
            for b in blocks]


def test_inline_asm_is_identical_between_hosts():
    op, sample, chosen, arch, _ = _row("tma.load", 0).values
    llvmlite = _compile(op, sample, chosen, arch).ptx
    mlir = _mlir_compile(op, sample, chosen, arch).ptx
    assert _asm_blocks(mlir) == _asm_blocks(llvmlite) and _asm_blocks(mlir)


def _numba_cuda_kernel(call, name="kernel", template=_KERNEL):
    """The test kernel of ``call`` under numba-cuda, with ``at`` (numba_tma.at) in its namespace."""
    namespace = {"cuda": numba.cuda, "numba": numba, "at": numba_tma.at,
                 **{f: getattr(numba_tma, f) for f in numba_tma.FAMILIES}}
    exec(template.format(call=call.replace("\n", "\n    "), name=name), namespace)
    return namespace[name]


@pytest.fixture(scope="module")
def fragments():
    """The FRAGMENTS and FRAGMENT_HELPERS kernel compiled by each host for sm_90a: ``(numba-cuda's,
    numba-cuda-mlir's)``."""
    call, template = FRAGMENTS + "\n" + FRAGMENT_HELPERS, _with_tiles()
    kernels = (inspect.compile(_numba_cuda_kernel(call, "fragments", template), NUMBA_FRAGMENTS_SIG, "sm_90a"),
               inspect.compile(_mlir_kernel(call, "fragments", template), MLIR_FRAGMENTS_SIG, "sm_90a", host="mlir"))
    inspect.assemble_together(kernels)
    return kernels


def test_register_tuple_ops_assemble_as_under_numba_cuda(fragments):
    """wgmma and mma.sync fragments in and out of the asm: the same SASS MMA as numba-cuda's, and
    the same inline asm (the tuples' registers in the same order)."""
    llvmlite, mlir = fragments
    mmas = {o for o in mlir.opcodes() if "MMA" in o}
    assert mmas == {"HGMMA.64x128x16.F32.BF16", "IGMMA.64x32x32.S8.S8", "HMMA.16816.F32.BF16"}, sorted(mlir.opcodes())
    assert {"WARPGROUP.ARRIVE", "WARPGROUP.DEPBAR.LE", "LDSM.16.M88.4", "LDSM.16.M88", "STSM.16.M88.2"} <= \
        mlir.opcodes()
    assert mmas == {o for o in llvmlite.opcodes() if "MMA" in o}
    assert _asm_blocks(mlir.ptx) == _asm_blocks(llvmlite.ptx)


def _global_as_generic(counts):
    """SASS opcode counts with global loads and stores counted as generic ones: numba-cuda's helpers
    address through integers (``ST.E``), numba-cuda-mlir's keep the pointer's provenance (``STG.E``)."""
    return collections.Counter({re.sub(r"^(ST|LD)G\.", r"\1.", o): n for o, n in counts.items()})


def test_fragment_helpers_assemble_as_under_numba_cuda(fragments):
    """Every wgmma helper (FRAGMENT_HELPERS: a 64 x 128 accumulator stored, 64 x 64 of it loaded back): the same inline asm, in the
    same order (test_register_tuple_ops_...), and the same count of each instruction doing the work
    (an unrolled guarded store per element: BSSY; the paired bfloat16 stores, each a 32-bit store
    where its address is 4-byte aligned, else two 16-bit ones; the swizzled STS)."""
    llvmlite, mlir = (_global_as_generic(f.opcode_counts()) for f in fragments)
    work = {"FADD": 105, "FFMA": 32, "FMUL": 57, "FMNMX": 34, "MUFU.EX2": 32, "SHFL.BFLY": 8, "SHFL.IDX": 8,
            "F2FP.BF16.F32.PACK_AB": 36, "STS": 16, "BSSY": 48, "ST.E": 80, "ST.E.U16": 32, "LD.E": 32}
    assert {o: mlir[o] for o in work} == {o: llvmlite[o] for o in work} == work
    assert {"STG.E", "STG.E.U16", "LDG.E"} <= fragments[1].opcodes()


@pytest.mark.parametrize("refusal", [OPS["mbarrier.init"].refusals[0], *OPS["wgmma.mma_async"].refusals[1:],
                                     OPS["mma.sync"].refusals[0], OPS["tcgen05.ld"].refusals[0],
                                     Refusal("acc = wgmma.zeros(3)", "wgmma.zeros: argument 'count' must be a constant "
                                             "N / 2"),
                                     Refusal("wgmma.store_shared_bf16(wgmma.zeros(64), smem, desc, 1, 2)",
                                             "wgmma.store_shared_bf16: arguments 'first' and 'count' must be constants "
                                             "naming boxes of the fragment's 2"),
                                     Refusal("wgmma.store_shared_bf16(wgmma.zeros(64), smem, out)",
                                             "wgmma.store_shared_bf16: argument 'desc' must be the map in global "
                                             "memory")], ids=lambda r: r.message.split(":")[0])
def test_a_bad_argument_is_refused_with_the_llvmlite_hosts_message(refusal):
    with pytest.raises(OpArgumentError, match=re.escape(refusal.message)):
        inspect.compile(_mlir_kernel(refusal.call), MLIR_SIG, "sm_90a", host="mlir")


@pytest.mark.parametrize("call", ["r = at(1, 0)", "r = at(smem, 1.5)", "mbarrier.init(at(smem, 0), 1)",
                                  "wgmma.store(wgmma.zeros(4), out, 0, 0)", "p = wgmma.scale(wgmma.zeros(4), out)",
                                  "p = wgmma.add(wgmma.zeros(4), wgmma.zeros(8))", "p = wgmma.load(smem, 0, 0, 3)",
                                  "m = wgmma.row_max(wgmma.zeros(4, numba.int32))",
                                  "p = wgmma.exp2_rows(wgmma.zeros(4), 1, 0.0, 0.0)"])
def test_at_and_the_fragment_helpers_refuse_as_under_numba_cuda(call):
    with pytest.raises(OpArgumentError) as llvmlite:
        inspect.compile(_numba_cuda_kernel(call), SIG, "sm_90a")
    with pytest.raises(OpArgumentError, match=re.escape(str(llvmlite.value).splitlines()[0])):
        inspect.compile(_mlir_kernel(call), MLIR_SIG, "sm_90a", host="mlir")


@pytest.mark.parametrize("call", ["out[0] = mbarrier.test_wait_token(bar, mbarrier.arrive(bar))",
                                  "t = mbarrier.arrive(bar)\nif out[1] > 0:\n    t = out[2]\nout[0] = t"])
def test_a_state_token_is_its_own_type_and_an_integer_where_one_is_asked_for_as_under_numba_cuda(call):
    """``mbarrier.StateToken`` on this host (``mlir_host.OwnInteger``): taken by the token ops, stored
    as an integer, unified with one (the parity waits refuse it: tests/test_refusals_both_hosts.py)."""
    for compile_ in (lambda: inspect.compile(_kernel(call), SIG, "sm_90a"),
                     lambda: inspect.compile(_mlir_kernel(call), MLIR_SIG, "sm_90a", host="mlir")):
        assert "mbarrier.arrive" in compile_().ptx.replace("mbarrier.arrive.shared", "mbarrier.arrive")


def test_an_sm_100_op_is_refused_on_sm_90a_with_the_llvmlite_hosts_message():
    call = "tcgen05.fence_before_thread_sync()"
    with pytest.raises(ArchError) as llvmlite:
        inspect.compile(_kernel(call), SIG, "sm_90a")
    with pytest.raises(Exception) as mlir:
        inspect.compile(_mlir_kernel(call), MLIR_SIG, "sm_90a", host="mlir")
    assert str(llvmlite.value) in str(mlir.value)
    assert "needs sm_100a" in str(llvmlite.value)


def test_map_shared_maps_the_generic_address_with_mapa_and_reads_through_it():
    """``cluster.map_shared`` on this host: ``mapa.u64`` of the array's generic address (PTX ISA
    9.7.9.20, as numba-cuda's), and the element read through the result a generic load (``LD.E``),
    as under numba-cuda."""
    call = "peer = cluster.map_shared(smem, 1)\nout[0] = numba.uint64(peer[3])"
    mlir = inspect.compile(_mlir_kernel(call), MLIR_SIG, "sm_90a", host="mlir")
    llvmlite = inspect.compile(_kernel(call), SIG, "sm_90a")
    for out in (mlir, llvmlite):
        assert re.search(r"mapa\.u64 \s*%rd\d+, %rd\d+, %r\d+;", out.ptx), out.ptx
        assert re.search(r"ld\.f32 \s*%f\d+, \[%rd\d+\+12\];", out.ptx), out.ptx
        assert "LD.E" in out.opcodes() and "LDS" not in out.opcodes()


@pytest.mark.parametrize("call", ["cluster.map_shared(out, 17)", "cluster.map_shared(1, 0)",
                                  "cluster.map_shared(smem, 1.5)", "out[0] = cluster.mask_all(17)",
                                  "out[0] = cluster.mask_row(4, 4)", "out[0] = cluster.mask_column(4, 8, 0)",
                                  "out[0] = cluster.mask_column(2, 2, 2)", "out[0] = cluster.mask_all(1.0)"])
def test_the_cluster_helpers_refuse_as_under_numba_cuda(call):
    with pytest.raises(OpArgumentError) as llvmlite:
        inspect.compile(_kernel(call), SIG, "sm_90a")
    with pytest.raises(Exception) as mlir:
        inspect.compile(_mlir_kernel(call), MLIR_SIG, "sm_90a", host="mlir")
    assert str(llvmlite.value).splitlines()[0] in str(mlir.value)


def test_constant_masks_are_folded_and_run_time_ones_computed():
    """``mask_row(4, 3)`` (0xF000 = 61440), ``mask_column(2, 8, 1)`` (0xAAAA = 43690) are constants
    in the PTX; a run-time ``mask_all`` is shifts and a subtraction, no call."""
    call = "out[0] = cluster.mask_row(4, 3)\nout[1] = cluster.mask_column(2, 8, 1)\nout[2] = cluster.mask_all(out[3])"
    out = inspect.compile(_mlir_kernel(call), MLIR_SIG, "sm_90a", host="mlir")
    assert re.search(r"mov\.u64 \s*%rd\d+, 61440;", out.ptx) and re.search(r"mov\.u64 \s*%rd\d+, 43690;", out.ptx)
    assert re.search(r"shl\.b64 \s*%rd\d+, %rd\d+, %r\d+;", out.ptx) and "call" not in out.ptx.split(".entry")[1]


def test_a_tensor_map_is_typed_and_passed_by_value_as_numba_cuda_mlir_launches_one():
    """A ``numba_tma.TensorMap`` argument of a numba-cuda-mlir kernel: typed as the by-value map of
    its layout (refused below sm_100 by its ops, naming defect 3), and handed to numba-cuda-mlir's
    launcher as the address of its 128 bytes (``__tma_descriptor_c_api__``, which the launcher
    copies)."""
    import ctypes

    from numba_cuda_mlir.numba_cuda.typing.typeof import typeof

    from numba_tma.intrinsics.hosts.mlir_host import TensorMap as MlirTensorMap

    class Array:
        __cuda_array_interface__ = {"shape": (64, 64), "typestr": "<f4", "data": (0x7F0000000000, False),
                                    "strides": None, "version": 3}

    desc = TensorMap.tiled(Array(), (32, 32), swizzle="128B")
    ty = typeof(desc)
    assert isinstance(ty, MlirTensorMap) and ty.layout == desc.layout
    assert ctypes.string_at(desc.__tma_descriptor_c_api__(), 128) == desc.bytes


def test_setmaxnreg_is_refused_where_ptxas_would_drop_it():
    """numba-cuda-mlir links a kernel's PTX as its own compilation unit, where ptxas drops setmaxnreg:
    the op is refused at lowering on this host (not a kernel running without it), while the same
    call compiles under numba-cuda (whole-program: hook 8)."""
    from numba_tma.errors import RegisterCountError

    call = "wgmma.setmaxnreg(232, 'inc')"
    assert "USETMAXREG.TRY_ALLOC.CTAPOOL" in inspect.compile(_kernel(call), SIG, "sm_90a", launch_bounds=(128, 1)).opcodes()
    with pytest.raises(Exception) as mlir:
        inspect.compile(_mlir_kernel(call), MLIR_SIG, "sm_90a", host="mlir")
    assert isinstance(mlir.value, RegisterCountError) or "RegisterCountError" in repr(mlir.value)
    assert "ignores setmaxnreg (C7504" in str(mlir.value) and "no whole-program link" in str(mlir.value)


# a 1024-byte aligned ring of two tiles, then two barriers: 8 KiB in; the same carve as under numba-cuda
PLAN = numba_tma.SharedMemoryPlan().array("ring", (2, 32, 32), numba.float32, swizzle="128B").barriers("full", 2)
carve = PLAN.carver()


def test_tma_load_through_a_global_descriptor_into_a_carved_plan_assembles():
    """A map in global memory (the acquire fence), into stage 1 of a SharedMemoryPlan's ring carved
    out of dynamic shared memory (plan.carver(), this host's carve of the plan: the start rounded up to
    1024 bytes, then the plan's offsets; also the loud test of mlir_adapter.dynamic_shared_bytes and
    NamedTuple)."""
    def tile_copy(desc, out):
        smem = carve()
        if cuda.threadIdx.x == 0:
            mbarrier.init(at(smem.full, 1), 1)
            fence.mbarrier_init()
            mbarrier.arrive_expect_tx(at(smem.full, 1), 4096)
            tma.load(desc, at(smem.ring, 1), (0, 0), at(smem.full, 1))
        cuda.syncthreads()
        mbarrier.wait(at(smem.full, 1), 0)
        out[cuda.threadIdx.x] = smem.ring[1, 0, cuda.threadIdx.x] + smem.ring.shape[2]

    out = inspect.compile(tile_copy, (mt.uint8[::1], mt.float32[::1]), "sm_90a", host="mlir")
    assert re.search(r"fence\.proxy\.tensormap::generic\.acquire\.sys \[%rd\d+\], 128;\n", out.ptx)   # in the op
    assert {"UTMALDG.2D", "SYNCS.EXCH.64", "SYNCS.ARRIVE.TRANS64", "SYNCS.PHASECHK.TRANS64.TRYWAIT"} <= out.opcodes()
    assert re.search(r"\.extern \.shared .*__dynamic_shmem__|\.shared \.align 16 \.b8 __dynamic_shmem__", out.ptx)
    assert re.search(r"and\.b64\s+%rd\d+, %rd\d+, 1023;", out.ptx), "the start is not rounded up to 1024 bytes"
    assert re.search(r"add\.s64\s+%rd\d+, %rd\d+, 8192;", out.ptx) and re.search(r", 4096;", out.ptx)


def _two_maps(a, b, flag, out):
    """Loads through two maps in global memory: a in a loop, b once, and one through whichever map
    ``flag`` picks at run time."""
    bar = cuda.shared.array(1, mt.uint64)
    tile = cuda.shared.array((32, 32), mt.float32, alignment=128)
    for i in range(flag):
        tma.load(a, tile, (0, i), bar)
    tma.load(b, tile, (0, 0), bar)
    tma.load(a if flag > 3 else b, tile, (0, 0), bar)
    out[0] = tile[0, 0]


def test_maps_in_global_memory_are_fenced_once_at_the_kernels_start():
    """map_in_global's maps (typed by layout): each kernel argument acquired once, at the start of
    the kernel (its comment naming the argument), not before each load (ptxas makes each fence a
    wait for every scoreboard and a descriptor-cache invalidation, UTMACCTL.IV); a map chosen at run
    time is fenced right before its op.  Expected PTX from the ISA (fence.proxy.tensormap)."""
    layout = numba_tma.mlir.map_in_global_type("float32", (32, 32))
    out = inspect.compile(_two_maps, (layout, layout, mt.int64, mt.float32[::1]), "sm_90a", host="mlir")
    lines = [line.strip() for line in out.ptx.splitlines()]
    fences = [i for i, line in enumerate(lines) if line.startswith("fence.proxy.tensormap")]
    loads = [i for i, line in enumerate(lines) if line.startswith("cp.async.bulk.tensor")]
    assert len(fences) == 3 and len(loads) >= 3   # (the loop's unrolled)
    start = [re.fullmatch(r"fence\.proxy\.tensormap::generic\.acquire\.sys \[%rd\d+\], 128; // numba_tma: "
                          r"argument (\d)", lines[i]) for i in fences[:2]]
    assert all(start) and sorted(m[1] for m in start) == ["0", "1"] and fences[1] < loads[0]
    assert re.fullmatch(r"fence\.proxy\.tensormap::generic\.acquire\.sys \[(%rd\d+)\], 128;", lines[fences[2]])
    picked = re.search(r"\[(%rd\d+)\], 128;", lines[fences[2]])[1]
    assert loads[-2] < fences[2] < loads[-1] and f"[{picked}, {{" in lines[loads[-1]]
    assert out.sass.count("UTMACCTL.IV") == 3


def test_a_map_in_global_memory_is_read_only_in_the_kernel():
    """Fenced once at the kernel's start, map_in_global's map must not change during the kernel: a
    store into it is refused by typing (its type is a read-only array), and so is every op that
    writes a descriptor (their operands take no map)."""
    layout = numba_tma.mlir.map_in_global_type("float32", (32, 32))

    def store(desc, out):
        desc[0] = 1

    def replace(desc, out):
        tensormap.replace_global_address(desc, out[0])

    with pytest.raises(Exception, match=r"Cannot modify readonly array of type: TensorMap\[float32, .*\] in global memory"):
        inspect.compile(store, (layout, mt.uint64[::1]), "sm_90a", host="mlir")
    with pytest.raises(Exception, match="tensormap.replace_global_address: argument 'buf' must be a uint8 array"):
        inspect.compile(replace, (layout, mt.uint64[::1]), "sm_90a", host="mlir")


def _by_value_copy(desc, out):
    """A TMA load through a by-value map, its byte count and swizzle read from the map's type."""
    bar = cuda.shared.array(1, mt.uint64)
    tile = cuda.shared.array((32, 32), mt.float32, alignment=128)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bar, 1)
        mbarrier.arrive_expect_tx(bar, desc.box_bytes)
        tma.load(desc, tile, (0, 0), bar)
    mbarrier.wait(bar, 0)
    out[cuda.threadIdx.x] = tile[0, cuda.threadIdx.x] + desc.swizzle


BY_VALUE_SIG = (numba_tma.mlir.map_type("float32", (32, 32)), mt.float32[::1])


def test_tma_load_through_a_by_value_map_on_sm_100a_assembles():
    """numba_tma.mlir.map_type: a __grid_constant__ parameter of 128 bytes, read in place (cvta.param,
    no acquire fence: not a map in global memory).  This is also the loud test of what
    mlir_adapter.by_value_type and by_value_attributes rely on (ByValPointerTypeModel, the
    llvm.byval / llvm.align / nvvm.grid_constant parameter attributes)."""
    out = inspect.compile(_by_value_copy, BY_VALUE_SIG, "sm_100a", host="mlir")
    assert re.search(r"\.param \.align 64 \.b8 \w+_param_0\[128\]", out.ptx), "the map is no longer passed by value"
    assert "cvta.param.u64" in out.ptx and "fence.proxy.tensormap" not in out.ptx
    assert re.search(r"mbarrier.arrive.expect_tx.shared::cta.b64 _, \[%r\d+\], 4096;|, 4096;", out.ptx)   # box_bytes
    assert {"UTMALDG.2D", "SYNCS.ARRIVE.TRANS64"} <= out.opcodes()


def test_a_by_value_map_is_refused_below_sm_100_naming_the_defect():
    with pytest.raises(ArchError, match=r"tma.load: a by-value TensorMap argument needs sm_100 or newer .*"
                                        r"numba_cuda_mlir_defects.md, item 3.*numba_tma.mlir.map_in_global"):
        inspect.compile(_by_value_copy, BY_VALUE_SIG, "sm_90a", host="mlir")


# -- the numba-cuda-mlir internals numba_tma.intrinsics.hosts.mlir_adapter relies on ---------------------

def test_numba_cuda_mlir_still_caches_the_host_compute_capability_in_tools():
    assert hasattr(tools, "_cached_cc") and hasattr(tools, "get_gpu_compute_capability"), \
        "numba_cuda_mlir.tools._cached_cc is gone: mlir_adapter.compiling_for needs another way to compile with no GPU"
    before = tools._cached_cc
    with mlir_adapter.compiling_for((10, 0, "a")):
        assert tools.get_gpu_compute_capability(tuple) == (10, 0)
    assert tools._cached_cc == before


def test_numba_cuda_mlir_still_gives_lowering_the_chip():
    seen = []

    def typer(typingctx):
        def codegen(builder, target, args, kwargs):
            seen.append(mlir_adapter.target_chip(builder))
        return mt.void(), codegen

    probe = mlir_adapter.intrinsic(typer, "probe")
    mlir_adapter.refresh()

    def kernel(out):
        probe()

    inspect.compile(kernel, (mt.uint64[::1],), "sm_100a", host="mlir")
    assert seen == ["sm_100a"], "builder.targetoptions['chip'] no longer names the target"


def test_numba_cuda_mlir_still_takes_data_models_from_models_register_model():
    """numba_tma.mlir.at's type is a 32-bit integer through mlir_adapter.register_address_type (the
    FRAGMENTS kernel lowers it, and reassigns one in a loop: a stack slot of that model)."""
    from numba_cuda_mlir.models import mlir_data_manager

    with mlir_adapter.ir.Context():
        model = mlir_data_manager.lookup(numba_tma.intrinsics.hosts.mlir_host.SharedRef(mt.uint64, True))
        assert str(model.get_value_type()) == "i32", "numba_cuda_mlir.models.register_model no longer sets the model"


def test_numba_cuda_mlir_still_retypes_keyword_calls_folded():
    """If this fails, numba-cuda-mlir re-types keyword calls correctly: drop the work-around in
    mlir_adapter.intrinsic."""
    calls = []

    def typer(typingctx, a, b=None, c=None):
        calls.append((a, b, c))
        def codegen(builder, target, args, kwargs):
            pass
        return mt.void(a, b, c), codegen

    typer.__signature__ = __import__("inspect").signature(typer)
    probe = numba_cuda_mlir.numba_cuda.extending._intrinsic(target="cuda", prefer_literal=True)(typer)
    mlir_adapter.refresh()

    def kernel(out):
        probe(1, c=2)

    inspect.compile(kernel, (mt.uint64[::1],), "sm_90a", host="mlir")
    assert any(b is not None and not isinstance(b, mt.Omitted) and c is None for _, b, c in calls), calls


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_numba_cuda_mlir_still_lowers_gpu_printf_to_vprintf(arch):
    """Debug mode's messages (mlir_emitter.MlirEmitter.printf) are ``gpu.printf`` ops, which
    numba-cuda-mlir's pipeline lowers (on its LLVM 7 path for sm_90a too) to a ``vprintf`` call
    with the format as a global byte array, as numba-cuda's print: if this fails, debug mode on this
    host prints nothing (or does not compile)."""
    from numba_tma.intrinsics.hosts.mlir_emitter import MlirEmitter

    def typer(typingctx, value):
        def codegen(builder, target, args, kwargs):
            d = MlirEmitter()
            with d.if_then(d.icmp_unsigned("!=", builder.load_var(args[0]), 0)):
                d.printf("probe %lld\n", [d.zext(builder.load_var(args[0]), 64)])
        return mt.void(value), codegen

    probe = mlir_adapter.intrinsic(typer, "printf_probe")
    mlir_adapter.refresh()

    def kernel(out):
        probe(out[0])

    ptx = inspect.compile(kernel, (mt.uint32[::1],), arch, host="mlir").ptx
    assert re.search(r"call(\.uni)? \(retval0\),\s*vprintf,", ptx), "gpu.printf no longer becomes a vprintf call"
    assert "{112, 114, 111, 98, 101, 32, 37, 108, 108, 100, 10" in ptx   # "probe %lld\n"


def test_numba_tma_launch_checks_a_numba_cuda_mlir_kernel_then_uses_its_launcher(monkeypatch):
    """``numba_tma.launch`` of a numba-cuda-mlir kernel: the same argument refusals as for
    numba-cuda's (no device needed), the device's limits (a stand-in device here), then
    numba-cuda-mlir's own launch configuration ``[grid, block, stream, shared_mem, cluster]``."""
    import sys

    from numba_tma import LaunchError, launch, launch_limits
    from numba_tma.mlir import launching

    kernel = cuda.jit(chip="sm_90a")(lambda out: None)
    with pytest.raises(LaunchError, match=re.escape("grid=(3, 1, 1): must be divisible by cluster=(2, 1, 1)")):
        launch(kernel, 3, 32, None, cluster=(2, 1, 1))
    with pytest.raises(LaunchError, match=re.escape("shared_mem=-1: must be a non-negative number of bytes")):
        launch(kernel, 2, 32, None, shared_mem=-1)

    class Device:   # an H200's limits (launch_limits.H200), as numba-cuda-mlir's Device attributes give them
        id, name, compute_capability = 99, "stand-in", (9, 0)
        MAX_THREADS_PER_BLOCK, MAX_BLOCK_DIM_X, MAX_BLOCK_DIM_Y, MAX_BLOCK_DIM_Z = 1024, 1024, 1024, 64
        MAX_GRID_DIM_X, MAX_GRID_DIM_Y, MAX_GRID_DIM_Z = (1 << 31) - 1, 65535, 65535
        MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, MAX_SHARED_MEMORY_PER_BLOCK = 232448, 49152

    launched = []

    class Kernel:
        def __getitem__(self, config):
            return lambda *args: launched.append((config, args))

    monkeypatch.setattr(launching, "cuda", type("cuda", (), {"get_current_device": staticmethod(Device)}))
    monkeypatch.setitem(launch_limits._DEVICES, Device.id, launch_limits.of_device(Device()))
    monkeypatch.setattr(mlir_adapter, "is_kernel", lambda obj: isinstance(obj, Kernel))
    launch(Kernel(), 4, 128, "out", cluster=(2, 1, 1), shared_mem=100_000)
    launch(Kernel(), 1, 64, "out")
    assert launched == [(((4, 1, 1), (128, 1, 1), 0, 100_000, (2, 1, 1)), ("out",)),
                        (((1, 1, 1), (64, 1, 1), 0, 0), ("out",))]
    with pytest.raises(LaunchError, match=re.escape("block=(2048, 1, 1): 2048 threads per block; this device "
                                                    "(stand-in) allows at most 1024")):
        launch(Kernel(), 1, 2048, "out")
    assert not sys.modules["numba_tma.launch"]._mlir_kernel(object())     # numba-cuda's (or anything else)


def test_a_refused_mlir_launch_is_explained_by_the_kernels_own_figures():
    """numba-cuda-mlir compiles the kernel inside its launcher, so its static shared memory and the
    threads its registers allow are read when the driver refuses a launch: a LaunchError naming
    them (the refusal as its cause), or the refusal itself when they do not explain it.  (A
    stand-in dispatcher; tests/test_gpu_mlir_host.py has the driver's refusals.)"""
    from numba_tma import LaunchError, launch_limits
    from numba_tma.mlir import launching

    class Refused(RuntimeError):
        pass

    class Kernel:   # numba-cuda-mlir's dispatcher methods kernel_figures reads
        def __init__(self, static, most_threads):
            self.figures, self.asked = (static, most_threads), []

        def typeof_pyval(self, value):
            return f"type of {value}"

        def get_shared_mem_per_block(self, signature):
            self.asked.append(signature)
            return self.figures[0]

        def get_max_threads_per_block(self, signature):
            return self.figures[1]

    def explain(kernel, block=(256, 1, 1), shared_mem=200_000):
        launching.explain(Refused("CUDA_ERROR_INVALID_VALUE"), kernel, ("a", 1), (1, 1, 1), block, shared_mem,
                          (1, 1, 1), launch_limits.H200)

    static = Kernel(40_960, 1024)
    with pytest.raises(LaunchError, match=re.escape("shared_mem=200000: 200000 bytes of dynamic shared memory per "
                                                    "block; the simulated device (an H200) allows at most 232448 "
                                                    "bytes of shared memory per block (dynamic and static together, "
                                                    "with the opt-in), of which the kernel's static shared arrays "
                                                    "take 40960")) as refusal:
        explain(static)
    assert isinstance(refusal.value.__cause__, Refused) and static.asked == [("type of a", "type of 1")]
    with pytest.raises(LaunchError, match=re.escape("block=(256, 1, 1): 256 threads per block; this kernel allows at "
                                                    "most 128 (the registers each thread uses")):
        explain(Kernel(0, 128))
    explain(Kernel(0, 1024))                                  # nothing to explain: the refusal stands
    explain(type("Unreadable", (), {"typeof_pyval": lambda self, v: 1 / 0})())


def test_numba_cuda_mlir_dispatchers_still_give_a_signatures_figures():
    """What mlir_adapter.kernel_figures calls on a numba-cuda-mlir kernel: typeof_pyval(value),
    get_shared_mem_per_block(sig) and get_max_threads_per_block(sig)."""
    import inspect as python_inspect

    kernel = cuda.jit(chip="sm_90a")(lambda out: None)
    assert list(python_inspect.signature(kernel.typeof_pyval).parameters) == ["val"]
    for name in ("get_shared_mem_per_block", "get_max_threads_per_block"):
        assert list(python_inspect.signature(getattr(kernel, name)).parameters) == ["sig"], name
