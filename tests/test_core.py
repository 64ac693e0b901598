"""The emission core: declarations, qualifier sets, templates rendered per target, generated docs."""

import numba
import pytest
from numba import cuda
from numba.cuda import types

import numba_tma
from numba_tma import ArchError, OpArgumentError, inspect
from numba_tma.intrinsics._core import (OPS, Choice, Const, Int, PtxOp, Qualifier, Requirement, build_intrinsic,
                                        exported)

SIG = (numba.uint64[::1],)

# Test-only ops (not registered): a template that names the target it was rendered for, and an op
# with a qualifier set whose values need different PTX ISA versions.
target_comment = build_intrinsic(PtxOp(
    "test.target", "// rendered for {target}", fields=lambda cc, **_: {"target": f"sm_{cc[0]}{cc[1]}"},
    doc_fields={"target": "sm_XY"}, doc="test only"))
flavoured = build_intrinsic(PtxOp(
    "test.flavoured", "// {flavour} {count} {imm}", (Int("count"), Const("imm", 0, 63)),
    qualifiers=(Qualifier("flavour", {"plain": "plain", "future": Choice("future", Requirement((10, 0), (8, 6)))},
                          "plain"),),
    doc="test only"))


def with_target_comment(out):
    target_comment()


def test_templates_are_rendered_for_each_target_of_one_kernel():
    """Numba caches typing across targets; the template must still see the target it lowers for."""
    assert "// rendered for sm_90" in inspect.ptx(with_target_comment, SIG, "sm_90a")
    assert "// rendered for sm_100" in inspect.ptx(with_target_comment, SIG, "sm_100a")
    assert "// rendered for sm_90" in inspect.ptx(with_target_comment, SIG, "sm_90a", lineinfo=True)


def _flavoured(call):
    namespace = {"flavoured": flavoured}
    exec(f"def k(out):\n    {call}\n", namespace)
    return namespace["k"]


def test_a_qualifier_defaults_and_takes_a_keyword():
    assert "// plain" in inspect.ptx(_flavoured("flavoured(out[0], 5)"), SIG, "sm_90a")
    assert "// future" in inspect.ptx(_flavoured("flavoured(out[0], 5, flavour='future')"), SIG, "sm_100a")


def test_a_const_operand_is_an_immediate():
    ptx = inspect.ptx(_flavoured("flavoured(out[0], 17)"), SIG, "sm_90a")
    assert "// plain %r" in ptx and " 17\n" in ptx


def test_a_qualifier_value_raises_the_requirement():
    with pytest.raises(ArchError, match=r"test.flavoured with flavour='future' needs sm_100 or newer, PTX ISA 8.6.*sm_90a"):
        inspect.ptx(_flavoured("flavoured(out[0], 5, flavour='future')"), SIG, "sm_90a")


@pytest.mark.parametrize("call,match", [
    ("flavoured(out[0], 5, flavour='bitter')", r"argument 'flavour' must be a constant, one of 'plain', 'future'"),
    ("flavoured(out[0], 64)", r"argument 'imm' must be in \[0, 63\]; got 64"),
    ("flavoured(out[0], out[1])", r"argument 'imm' must be a compile-time integer constant"),
    ("flavoured(out[0], 5, colour=1)", r"test.flavoured takes \(count, imm, flavour\)"),
])
def test_bad_qualifiers_and_constants_are_named(call, match):
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(_flavoured(call), SIG, "sm_100a")


def test_requirements_combine():
    a, b = Requirement((9, 0), (8, 0)), Requirement((10, 0), (7, 8), arch_specific=True)
    assert (a | b) == Requirement((10, 0), (8, 0), arch_specific=True)
    assert str(a | b) == "sm_100a or newer, PTX ISA 8.0"


@pytest.mark.parametrize("family", numba_tma.FAMILIES)
def test_a_family_exports_exactly_its_declared_ops(family):
    module = getattr(numba_tma, family)
    aliases = list(getattr(module, "ALIASES", ()))   # another family's ops, re-exported
    helpers = list(getattr(module, "HELPERS", ()))   # public functions that are not PTX declarations
    assert module.__all__ == exported(family) + aliases + helpers
    for name in exported(family):
        op = OPS[f"{family}.{name}"]
        intrinsic = getattr(module, name)
        assert str(op.need) in intrinsic.__doc__           # the requirement line comes from the declaration
        assert intrinsic.__module__ == f"numba_tma.{family}"


def test_every_op_module_attribute_is_declared():
    """An intrinsic defined in a family module but not declared would escape docs and tests."""
    for family in numba_tma.FAMILIES:
        module = getattr(numba_tma, family)
        intrinsics = {n for n, v in vars(module).items() if type(v).__name__ == "_Intrinsic"}
        helpers = set(getattr(module, "HELPERS", ()))    # device functions, not intrinsics
        assert intrinsics == set(module.__all__) - (helpers - intrinsics), family


def test_families_import_as_modules():
    import importlib

    import numba_tma.descriptors

    for family in numba_tma.FAMILIES:
        assert importlib.import_module(f"numba_tma.{family}") is getattr(numba_tma, family)
    from numba_tma.tma import load
    assert load is numba_tma.tma.load
    assert numba_tma.descriptors.driver.encode_tiled


def test_intrinsics_type_boolean_results():
    def k(out):
        bars = cuda.shared.array(1, types.uint64)
        out[0] = numba_tma.mbarrier.test_wait(bars, 0)

    assert "selp.u32" in inspect.ptx(k, SIG)
