"""Every declared op assembles for each architecture it claims, to the instruction (no GPU needed).

The rows come from the declarations (``PtxOp.samples`` x every qualifier combination x the
architectures of ``ARCHS`` the op's requirement admits, see ``_rows``).  A sample's first
combination (the call as written: each qualifier at its default) must put the sample's
hand-written PTX (``Sample.ptx``, written from the PTX ISA section ``Sample.isa`` names) into the
kernel's PTX, line for line with registers matched by class; the other combinations, which have
no hand-written line, must contain the op's rendered template (registers in place of operands).
nvJitLink turns the PTX into a cubin, and the SASS contains the opcode the hardware runs more often
than a control kernel without the op does.  The rows of one architecture are linked into one cubin
and disassembled once (``inspect.assemble_together``).
"""

import concurrent.futures
import functools
import multiprocessing
import pickle
import re

import numba
import pytest
from numba import cuda
from numba.cuda import types

import numba_tma
from numba_tma import TensorMap, inspect
from numba_tma.numba_cuda_hooks import separate_shared_names
from numba_tma.intrinsics._core import OPS, REQUIRED, Sample, parse_arch, ptx_line_pattern, ptx_missing

ARCHS = ["sm_80", "sm_90a", "sm_100a"]
SIG = (numba.uint8[::1], numba.uint64[::1])
_KERNEL = """
def {name}(desc, out):
    bar = cuda.shared.array(4, numba.uint64)
    smem = cuda.shared.array(4096, numba.float32, alignment=1024)
    {call}
"""


def _with_qualifiers(call, chosen, op_name=None):
    """``call`` with ``name=value`` keywords added to the argument list of the op's last call
    (``op_name``, ``"family.op"``; without it, of the last call in ``call``)."""
    if not chosen:
        return call
    cut = call.rindex(")")
    start = call.rfind(f"{op_name}(") if op_name else -1
    if start >= 0:                          # the op's own closing parenthesis
        depth, cut = 0, start + len(op_name)
        for cut in range(start + len(op_name), len(call)):
            depth += {"(": 1, ")": -1}.get(call[cut], 0)
            if depth == 0:
                break
    keywords = ", ".join(f"{k}={v!r}" for k, v in chosen.items())
    return call[:cut] + ("" if call[cut - 1] == "(" else ", ") + keywords + call[cut:]


def _rows():
    """Every sample with its first qualifier combination on every architecture that admits it, and
    with each other combination on the first architecture that admits it (qualifiers change the PTX
    text, not which architectures assemble it, beyond the requirement checked here).  The first
    combination is the call as written, the one its hand-written PTX is for: each qualifier at its
    default (a required one at its first value), or, where ``only`` excludes that, at the first
    value ``only`` admits."""
    for name, op in sorted(OPS.items()):
        if op.vendor != "nvidia":   # the AMD rows: tests/amd/test_amd_declarations.py
            continue
        for i, sample in enumerate(op.samples):
            given = tuple(o.name for o in op.operands if f"{o.name}=" in sample.call)
            instances = [c for c in op.instances()
                         if all(c[k] in (v if isinstance(v, tuple) else (v,)) for k, v in sample.only.items())]
            instances.sort(key=lambda c: [c[q.name] != q.example for q in op.qualifiers])   # stable: the rest keep order
            for n, chosen in enumerate(instances):
                archs = [a for a in ARCHS if op.requirement(chosen, given).supported_on(parse_arch(a))]
                for arch in archs if n == 0 else archs[:1]:
                    label = "-".join([name, str(i), arch] + [f"{k}={v}" for k, v in chosen.items()])
                    yield pytest.param(op, sample, chosen, arch, n == 0, id=label)


def _expected_lines(op, sample, chosen):
    """The instruction lines of the rendered template, as regexes (operands become wildcards)."""
    operands = {"out": "\0"}
    for o in op.operands:   # an optional operand fills its keys only when the call passes it
        passed = o.default is REQUIRED or f"{o.name}=" in sample.call
        operands.update(o.keys("\0", types.uint64 if passed else types.none))
    fields = {k: v for k, v in op.doc_fields.items() if k not in operands} | dict(sample.fields)
    text = op.render(operands, chosen, fields, uid="\1")
    for line in text.splitlines():
        line = line.strip()
        if len(line) > 2 and not line.startswith(".reg"):
            yield re.escape(line).replace("\0", r".+?").replace("\1", r"\d+")


def _kernel(call, name="kernel"):
    namespace = {"cuda": cuda, "numba": numba, "types": types, **{f: getattr(numba_tma, f) for f in numba_tma.FAMILIES}}
    exec(_KERNEL.format(call=call.replace("\n", "\n    "), name=name), namespace)
    return namespace[name]


ROWS = list(_rows())


def _compile(op, sample, chosen, arch, name="kernel"):
    sig = SIG
    if sample.desc:
        dtype, box, swizzle = sample.desc
        sig = (TensorMap.numba_type(dtype, box, swizzle=swizzle), SIG[1])
    return inspect.compile(_kernel(_with_qualifiers(sample.call, chosen, op.name), name), sig, arch, **sample.options)


def _codes(share):
    """``{row id: (its PTX, what numba links for it), or the error it raised}`` for the rows
    ``ROWS[share::2]`` (an index: a forked process then pickles only its results).  Each kernel has
    a name of its own, as the two processes' kernels are linked into one cubin per architecture."""
    out = {}
    for n, row in enumerate(ROWS[share::2]):
        op, sample, chosen, arch, _ = row.values
        try:
            compiled = _compile(op, sample, chosen, arch, f"kernel_{share}_{n}")
            out[row.id] = compiled.ptx, compiled._codes
        except Exception as exc:   # noqa: BLE001 - reported by the row's own test
            try:
                pickle.dumps(exc)
                out[row.id] = exc
            except Exception:   # noqa: BLE001 - an error that cannot cross processes: its text does
                out[row.id] = RuntimeError(f"{type(exc).__name__}: {exc}")
    return out


def _forked_codes(share):
    separate_shared_names(10**7)   # its shared arrays' symbols must not clash with this process's
    return _codes(share)


@functools.cache
def _all_codes():
    """Every row compiled, half of them in a forked process (the CI machine has two cores, and
    compiling ~500 kernels is most of this file's time)."""
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        child = pool.submit(_forked_codes, 1)
        codes = _codes(0)
        codes.update(child.result())
    return codes


@functools.cache
def _assembled(arch):
    """Every row of ``arch`` compiled (or the error it raised), and the control kernel, with their
    SASS from one link and one disassembly."""
    results = {}
    for row in ROWS:
        if row.values[3] == arch:
            code = _all_codes()[row.id]
            results[row.id] = code if isinstance(code, Exception) else inspect.Compiled(arch, *code)
    control = inspect.compile(_kernel("pass"), SIG, arch)
    inspect.assemble_together([control] + [r for r in results.values() if not isinstance(r, Exception)])
    return results, control


def _count(counts, sample, arch):
    """How many opcodes of ``counts`` the row's expected opcode covers."""
    return sum(n for opcode, n in counts.items() if sample.found_in({opcode}, arch))


@pytest.mark.parametrize("op,sample,chosen,arch,as_written", ROWS)
def test_op_assembles_to_its_instruction(request, op, sample, chosen, arch, as_written):
    results, control = _assembled(arch)
    out = results[request.node.callspec.id]
    if isinstance(out, Exception):
        raise out
    assert f".target {arch}" in out.ptx
    if as_written:   # the hand-written PTX of the ISA section the sample names
        missing = sample.ptx_missing_from(out.ptx)
        assert not missing, f"not in the PTX (written from PTX ISA {sample.isa}): {missing}"
    else:
        for pattern in _expected_lines(op, sample, chosen):
            assert re.search(pattern, out.ptx), f"{pattern!r} not in the PTX"
    assert out.cubin[:4] == b"\x7fELF"
    if not sample.opcode(arch):     # the op has no instruction of its own there: nothing is added
        assert out.opcode_counts() == control.opcode_counts()
        return
    assert sample.found_in(out.opcodes(), arch), sorted(out.opcodes())
    assert _count(out.opcode_counts(), sample, arch) > _count(control.opcode_counts(), sample, arch), \
        f"{sample.opcode(arch)} appears no more often than in a kernel without the op"


def test_every_declared_op_has_an_assembly_row():
    missing = [name for name, op in OPS.items() if not op.samples]
    assert not missing, f"ops without a Sample (no assembly-test row): {missing}"


def test_every_sample_has_hand_written_ptx_and_its_isa_section():
    missing = [f"{name} sample {i}" for name, op in sorted(OPS.items()) if op.vendor == "nvidia"
               for i, s in enumerate(op.samples) if not s.ptx or not all(line.strip() for line in s.ptx) or not re.match(r"\d+(\.\d+)+ \S", s.isa)]
    assert not missing, f"samples without hand-written ptx=... and isa='<section> <instruction>': {missing}"


@pytest.mark.parametrize("name,table,types_of", [
    ("bulk.reduce", "BULK_REDUCE_TYPES", {"uint32": "u32", "int32": "s32", "uint64": "u64", "int64": "s64",
                                          "float32": "f32", "float64": "f64", "float16": "f16"}),
    ("dsmem.reduce_async", "CLUSTER_REDUCE_TYPES", {"uint32": "u32", "int32": "s32", "uint64": "u64"}),
    ("dsmem.reduce_copy_async", "CLUSTER_REDUCE_TYPES", {"uint32": "u32", "int32": "s32", "uint64": "u64"}),
])
def test_the_reduction_rows_cover_every_type_the_op_takes(name, table, types_of):
    """The reductions' rows are written out by hand, one per (op, element type): none is left out."""
    from numba_tma import reductions

    def ptx_type(op, dtype):   # the logical ops of shared::cluster are b32 in the table
        t = types_of[dtype]
        return "b32" if table == "CLUSTER_REDUCE_TYPES" and op in ("and", "or", "xor") else t

    rows = {(s.only["op"], ptx_type(s.only["op"], re.search(r"types\.(\w+)", s.call).group(1)))
            for s in OPS[name].samples}
    assert rows == {(op, t) for op, ts in getattr(reductions, table).items() for t in ts}


# A compiled row and wrong lines for it, each one change away from the right one.
_RIGHT = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r], [%rd, {%r, %r}], [%r];"
_WRONG = [
    _RIGHT.replace(".shared::cluster.global", ".global.shared::cluster"),   # the state spaces swapped
    _RIGHT.replace(".2d.", ".3d."),                                        # another rank
    _RIGHT.replace(".tile.", ".im2col."),                                  # another load mode
    _RIGHT.replace(".mbarrier::complete_tx::bytes", ".mbarrier::complete_tx::bytes.multicast::cluster"),
    _RIGHT.replace(".mbarrier::complete_tx::bytes", ""),                   # a qualifier left out
    _RIGHT.replace("[%r], [%rd", "[%rd], [%rd"),                           # the tile's address as 64 bits
    _RIGHT.replace("{%r, %r}", "{%r, %r, %r}"),                            # a coordinate too many
    _RIGHT.replace("[%r];", "[%r], %rs;"),                                 # an operand too many
    _RIGHT.replace(";", ""),
]


def test_a_hand_written_line_matches_registers_by_class_and_the_rest_literally():
    assert ptx_line_pattern("mov.u32 %r, %cluster_ctarank;").fullmatch("mov.u32 %r12, %cluster_ctarank;")
    assert not ptx_line_pattern("mov.u32 %r, %cluster_ctarank;").fullmatch("mov.u32 %rd12, %cluster_ctarank;")
    assert not ptx_line_pattern("ld.b64 %rd, [%r];").fullmatch("ld.b64 %rd1, [%rd2];")
    assert ptx_line_pattern("@!p bra numba_tma_wait_%n;").fullmatch("@!p bra numba_tma_wait_17;")
    assert not ptx_missing(["st.v2.b64 [%rd+16], {a, b};"], "\tst.v2.b64  [%rd3+16], { a, b } ;")   # spacing
    assert ptx_missing(["a;", "b;"], "b;\na;") == ["b;"]   # in order


@pytest.mark.parametrize("wrong", _WRONG)
def test_a_wrong_hand_written_line_is_not_found_in_the_kernel(wrong):
    """The check of the hand-written PTX can fail: one qualifier, operand or register class off
    from the right line, and the compiled kernel's PTX does not have it."""
    results, _ = _assembled("sm_90a")
    row = "tma.load-1-sm_90a-dst_space=cluster-cta_group=1"
    out = results[row]
    right = Sample("", "", ptx=_RIGHT)
    assert OPS["tma.load"].samples[1].ptx[1] == _RIGHT and not right.ptx_missing_from(out.ptx)
    assert Sample("", "", ptx=wrong).ptx_missing_from(out.ptx) == [wrong]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_tma_load_acquires_the_global_descriptor(arch):
    """A map in global memory needs the tensormap acquire fence; it becomes UTMACCTL.IV."""
    out = inspect.compile(_kernel("tma.load(desc, smem, (0, 0), bar)"), SIG, arch)
    fence_at = out.ptx.index("fence.proxy.tensormap::generic.acquire.sys [%rd")
    assert fence_at < out.ptx.index("cp.async.bulk.tensor.2d")
    assert "UTMACCTL.IV" in out.opcodes()


def test_wait_loop_labels_are_unique():
    """Two waits in one kernel get distinct labels (``${:uid}``), so the loops stay distinct even
    where NVVM inlines them into one scope."""
    out = inspect.compile(_kernel("mbarrier.wait(bar, 0)\nmbarrier.wait(bar[1:], 1)"), SIG, "sm_90a")
    labels = {line.strip().rstrip(":") for line in out.ptx.splitlines() if line.strip().startswith("numba_tma_wait_")
              and line.strip().endswith(":")}
    assert len(labels) == 2
    assert out.opcodes() >= {"SYNCS.PHASECHK.TRANS64.TRYWAIT"}
