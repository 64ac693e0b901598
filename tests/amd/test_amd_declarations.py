"""Every declared AMD op assembles, for each arch it claims, to the ISA lines its samples were
written with by hand (``Sample.isa``, from the documents ``Sample.ref`` names), and refuses each of
its declared ``Refusal`` calls with an ``OpArgumentError`` carrying the declared message — on the
compiled path only: AMD ops declare no simulator twin (numba-cuda's simulator is CUDA-only)."""
import numba
import pytest

from numba_tma import ArchError, OpArgumentError, amd
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


@pytest.mark.parametrize("op,sample,arch", SAMPLES)
def test_op_assembles_to_its_isa_lines(op, sample, arch):
    asm = amd.compile(_kernel(sample.call), SIG, arch).asm
    assert not isa_missing(sample.lines(arch), asm), f"not in the {arch} assembly (written from {sample.ref})"


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
