"""Every declared op assembles for each architecture it claims, to the instruction (no GPU needed).

The rows come from the declarations (``PtxOp.samples`` x every qualifier combination x the
architectures of ``ARCHS`` the op's requirement admits, see ``_rows``).  A sample's first
combination (the call as written: each qualifier at its default) must put the sample's
hand-written PTX (``Sample.ptx``, written from the PTX ISA section ``Sample.isa`` names) into the
kernel's PTX, line for line with registers matched by class; the other combinations, which have
no hand-written line, must contain the op's rendered template (registers in place of operands).
nvJitLink turns the PTX into a cubin, and the SASS contains the opcode the hardware runs more often
than a control kernel without the op does.  The rows compile in batches, up to ``BATCH`` rows of
different ops in one kernel (``_batches``), and the kernels of one architecture are linked into
one cubin and disassembled once (``inspect.assemble_together``).
"""

import collections
import functools
import re

import numba
import pytest
from numba import cuda
from numba.cuda import types

import numba_tma
from numba_tma import TensorMap, inspect
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


def _signature(sample):
    if not sample.desc:
        return SIG
    dtype, box, swizzle = sample.desc
    return TensorMap.numba_type(dtype, box, swizzle=swizzle), SIG[1]


def _compile(op, sample, chosen, arch):
    return inspect.compile(_kernel(_with_qualifiers(sample.call, chosen, op.name)), _signature(sample), arch,
                           **sample.options)


BATCH = 25


def _batches():
    """The rows in kernels of up to ``BATCH`` rows (compiling a kernel costs ~25 ms besides its
    rows).  A kernel holds rows that compile alike (of one architecture, map type and set of
    compile options; on sm_100a the cta_group::2 rows apart: ptxas takes one CTA granularity per
    kernel; the rows whose op adds no instruction apart: their kernel must equal the control; a row
    expecting a MOV alone: whether ptxas moves a constant with MOV or IMAD.MOV.U32 depends on the
    rest of the kernel), and at most one row of each op, so that no row's lines can come from
    another row of its op."""
    batches = collections.defaultdict(list)
    for row in ROWS:
        op, sample, chosen, arch, _ = row.values
        pair = chosen.get("cta_group") in (2, "2") or "cta_group=2" in sample.call
        alone = row.id if sample.opcode(arch) == "MOV" else ""
        kind = batches[arch, sample.desc, tuple(sorted(sample.options.items())), pair, bool(sample.opcode(arch)), alone]
        free = [b for b in kind if len(b) < BATCH and all(r.values[0] is not op for r in b)]
        if not free:
            kind.append([])
            free = kind[-1:]
        min(free, key=len).append(row)
    return [batch for kind in batches.values() for batch in kind]


BATCHES = _batches()
BATCH_OF = {row.id: n for n, rows in enumerate(BATCHES) for row in rows}


def _compile_batch(n):
    """Batch ``n``'s rows in one kernel, each storing its results to an element of ``out`` of its
    own (``out[8 + i]``), so that no row's result is dead code."""
    calls = [re.sub(r"^out\[\d+\] = ", f"out[{8 + i}] = ", _with_qualifiers(s.call, c, o.name), flags=re.M)
             for i, (o, s, c, _, _) in enumerate(row.values for row in BATCHES[n])]
    _, sample, _, arch, _ = BATCHES[n][0].values
    return inspect.compile(_kernel("\n".join(calls), f"batch_{n}"), _signature(sample), arch, **sample.options)


@functools.cache
def _assembled(arch):
    """Every batch of ``arch`` compiled (or the error it raised), and the control kernel, with their
    SASS from one link and one disassembly."""
    results = {}
    for n, rows in enumerate(BATCHES):
        if rows[0].values[3] == arch:
            try:
                results[n] = _compile_batch(n)
            except Exception as exc:   # noqa: BLE001 - its rows then compile alone
                results[n] = exc
    control = inspect.compile(_kernel("pass"), SIG, arch)
    inspect.assemble_together([control] + [r for r in results.values() if not isinstance(r, Exception)])
    return results, control


@functools.cache
def _opcode_counts(kernel):
    """The kernel's SASS opcodes and how often each appears, read once (a batch is read by each of its rows)."""
    return kernel.opcode_counts()


def _count(counts, sample, arch):
    """How many opcodes of ``counts`` the row's expected opcode covers."""
    return sum(n for opcode, n in counts.items() if sample.found_in({opcode}, arch))


@pytest.mark.parametrize("op,sample,chosen,arch,as_written", ROWS)
def test_op_assembles_to_its_instruction(request, op, sample, chosen, arch, as_written):
    """The row's lines are in the PTX of its batch's kernel and its opcode in the SASS, more often
    than in the control kernel: once more for each row of the kernel expecting that opcode (or one
    it covers) whose op has side effects (its asm is volatile: the compiler keeps each), and at
    least once for the pure ones (``op.memory`` false), which it may compute once between them.
    Where the batch does not compile, the row compiles alone (a row that does not compile fails
    by itself)."""
    results, control = _assembled(arch)
    n = BATCH_OF[request.node.callspec.id]
    out, members = results[n], [row.values[:2] for row in BATCHES[n]]
    if isinstance(out, Exception):
        out, members = _compile(op, sample, chosen, arch), [(op, sample)]
    assert f".target {arch}" in out.ptx
    if as_written:   # the hand-written PTX of the ISA section the sample names
        missing = sample.ptx_missing_from(out.ptx)
        assert not missing, f"not in the PTX (written from PTX ISA {sample.isa}): {missing}"
    else:
        for pattern in _expected_lines(op, sample, chosen):
            assert re.search(pattern, out.ptx), f"{pattern!r} not in the PTX"
    assert out.cubin[:4] == b"\x7fELF"
    counts = _opcode_counts(out)
    if not sample.opcode(arch):     # the op has no instruction of its own there: nothing is added
        assert counts == _opcode_counts(control)
        return
    assert sample.found_in(counts, arch), sorted(counts)
    kept = sum(o.memory and sample.found_in({s.opcode(arch)}, arch) for o, s in members)
    added = _count(counts, sample, arch) - _count(_opcode_counts(control), sample, arch)
    assert added >= max(kept, 1), (f"{sample.opcode(arch)}: {added} more than in a kernel without the ops, not at "
                                   f"least one and one for each of the kernel's {kept} rows with side effects "
                                   "expecting it")


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
    row = next(r for r in ROWS if r.id == "tma.load-1-sm_90a-dst_space=cluster-cta_group=1")
    out = _compile(*row.values[:4])   # alone: other rows of its batch have other tma.load lines
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
