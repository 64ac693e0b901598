"""Every declared AMD op assembles, for each arch it claims, to the ISA lines its samples were
written with by hand (``Sample.isa``, from the documents ``Sample.ref`` names), and refuses each of
its declared ``Refusal`` calls with an ``OpArgumentError`` carrying the declared message — on the
compiled path only: AMD ops declare no simulator twin (numba-cuda's simulator is CUDA-only)."""
import numba
import pytest

from numba_tma import ArchError, OpArgumentError, amd
from numba_tma.amd import ops
from numba_tma.amd._core import Sample, isa_missing
from numba_tma.declarations import OPS

AMD_OPS = sorted((name, op) for name, op in OPS.items() if op.vendor == "amd")
SIG = "void(float32[::1], float32[::1], int32)"
_KERNEL = """
def kernel(x, y, n):
    lane = amd.workitem_id_x()
    tile = amd.lds_array(4096, numba.float32)
    bar = amd.lds_array(1, numba.int64)
    {call}
"""


def _kernel(call):
    namespace = {"amd": amd, "numba": numba}
    exec(_KERNEL.format(call=call.replace("\n", "\n    ")), namespace)
    return namespace["kernel"]


SAMPLES = [pytest.param(op, sample, arch, id=f"{name}-{i}-{arch}") for name, op in AMD_OPS
           for i, sample in enumerate(op.samples) for arch in sample.archs or op.need.archs]
UNCLAIMED = [pytest.param(op, arch, id=f"{name}-{arch}") for name, op in AMD_OPS
             for arch in amd.ARCHS if arch not in op.need.archs]
REFUSALS = [pytest.param(op, r, id=f"{name}-{i}") for name, op in AMD_OPS for i, r in enumerate(op.refusals)]


def test_every_amd_op_has_samples_refusals_and_no_twin():
    assert [n for n, op in AMD_OPS if not op.samples or not op.refusals or op.twin] == []
    assert len(AMD_OPS) == len(amd.FEATURES) - 1   # every op; make_buffer_rsrc is an emitter


def test_every_amd_op_is_declared_in_one_family_module():
    declared = [name for module in ops.FAMILIES.values() for name in ops.declared_in(module)]
    assert sorted(declared) == sorted(name.split(".", 1)[1] for name, _ in AMD_OPS)   # each once
    assert list(ops.FAMILIES) == ["workgroup", "async_loads", "scheduling", "tensor_descriptors", "lanes"]
    assert [ops.family_of(n) for n in ("lds_array", "async_load_wait_group", "s_barrier", "make_tensor_descriptor",
                                       "dpp")] == ["workgroup", "async_loads", "scheduling", "tensor_descriptors",
                                                   "lanes"]
    assert amd.lds_array is ops.workgroup.lds_array and amd.dpp is ops.lanes.dpp


@pytest.mark.parametrize("op,sample,arch", SAMPLES)
def test_op_assembles_to_its_isa_lines(op, sample, arch):
    asm = amd.compile(_kernel(sample.call), SIG, arch).asm
    assert not isa_missing(sample.lines(arch), asm, sample.comments), \
        f"not in the {arch} assembly (written from {sample.ref})"


@pytest.mark.parametrize("op,arch", UNCLAIMED)
def test_an_arch_the_op_does_not_claim_is_refused(op, arch):
    """Before LLVM runs (which would abort the process), naming the archs that have it (a TDM
    sample's descriptor is refused first, by make_tensor_descriptor, which has the same archs)."""
    with pytest.raises(ArchError) as info:
        amd.compile(_kernel(op.samples[0].call), SIG, arch)
    assert f"available on {', '.join(op.need.archs)} only; requested arch is {arch}" in str(info.value)


@pytest.mark.parametrize("op,refusal", REFUSALS)
def test_the_compiled_op_refuses(op, refusal):
    with pytest.raises(OpArgumentError) as info:
        amd.compile(_kernel(refusal.call), SIG, op.need.archs[0])
    assert refusal.message in str(info.value)


@pytest.mark.parametrize("wrong", ["s_setprio 2", "s_setprio", "s_setprio %v"])
def test_a_wrong_isa_line_is_not_found(wrong):
    asm = amd.compile(_kernel("amd.s_setprio(3)"), SIG, "gfx942").asm
    assert Sample("", "s_setprio 3", "").lines("gfx942") == ("s_setprio 3",) and not isa_missing(["s_setprio 3"], asm)
    assert isa_missing([wrong], asm) == [wrong]


def test_comment_lines_match_only_rows_that_ask_for_them():
    """A scheduling barrier is an assembler comment: its rows see comments, the others do not."""
    asm = amd.compile(_kernel("amd.sched_group_barrier(0x8, 1, 0)"), SIG, "gfx942").asm
    line = "; sched_group_barrier mask(0x00000008) size(1) SyncID(0)"
    assert not isa_missing([line], asm, comments=True)
    assert isa_missing([line], asm) == [line]
    wrong = "; sched_group_barrier mask(0x00000008) size(2) SyncID(0)"
    assert isa_missing([wrong], asm, comments=True) == [wrong]
    assert isa_missing(["; sched_barrier mask(0x00000000)"], asm, comments=True)   # another op's comment
