"""What every LDS-DMA op shares: alias scopes, commit groups, waits, masking.

On LLVM 22 there is no ``asyncmark``: an async group is a count of DMA instructions,
and ``wait_group(N)`` becomes ``s_waitcnt vmcnt(K)`` (gfx942/gfx950) or
``s_wait_asynccnt K`` (gfx1250) where K is a lower bound on the DMA instructions of
the N youngest committed groups: N times the smallest certain size of any group of
the compile (see :class:`AsyncGroups`).  Instructions younger than the waited-for
groups only make ``vmcnt(K)`` wait longer, never shorter, because the DMA loads
complete in order.  The DMA calls carry ``!alias.scope`` and LDS reads carry ``!noalias``
against it, so LLVM does not add its own ``vmcnt(0)`` before every LDS read.  In return
LLVM no longer sees a DMA write the LDS that the program reads: every wait whose intrinsic
LLVM does not already treat as touching all memory (gfx1250's ``s.wait.asynccnt``) is
followed by a :func:`~.llvm_ir.compiler_barrier`, so no LDS read after it is moved above it
or merged with one before it.  An LDS read before a DMA that overwrites it may still be
scheduled after the DMA: the program must separate them with ``s_barrier()`` anyway (its
LDS wait), which LLVM moves nothing across.

:func:`numba_tma.amd.compile` does better on gfx942/gfx950, where vmcnt also counts the
kernel's other vector-memory instructions: its :class:`AsyncGroups` are ``marked``, so
commits and waits are placeholder calls, and the wait counts are read off the assembly
(see :mod:`.vmcnt`), with this bound as the floor.
"""
from llvmlite import ir

from . import targets
from .errors import reject
from .llvm_ir import (I1, I8, I16, I32, LDS, VOID, call_intrinsic, compiler_barrier, i32,
                      lane_id)
from .vmcnt import COMMIT_PLACEHOLDER, WAIT_PLACEHOLDER, vmcnt_immediate

_DOMAIN, _COPIES, _LOCAL_READS = "amdg.AsyncOps", "amdg.AsyncCopies", "amdg.LocalLoads"
MAX_COUNT = 63  # vmcnt and asynccnt are 6-bit counters


def _scope_list(module, name):
    domain = module.add_metadata([ir.MetaDataString(module, _DOMAIN)])
    scope = module.add_metadata([ir.MetaDataString(module, name), domain])
    return module.add_metadata([scope])


def mark_async_copy(instr):
    """Tag a DMA call as writing the async-copy alias scope."""
    instr.set_metadata("alias.scope", _scope_list(instr.module, _COPIES))


def mark_local_read(instr):
    """Tag an LDS load as not aliasing in-flight DMA (the program waited for it)."""
    module = instr.module
    instr.set_metadata("alias.scope", _scope_list(module, _LOCAL_READS))
    instr.set_metadata("noalias", _scope_list(module, _COPIES))


class AsyncGroups:
    """Record of the LDS-DMA instructions and commit groups of one compile.

    A group's *size* is the number of DMA instructions every execution of its commit
    is certain to have issued since the previous commit: each DMA of the group must be
    unconditional (not behind a lane-mask branch) and control-equivalent to the commit
    (the DMA's block dominates the commit's block and the commit's post-dominates the
    DMA's, so both run equally often).  Otherwise the group's size is 0.

    ``wait_group(N)`` may leave at most ``N * min(size of every group)`` instructions in
    flight.  Every committed group of the compile counts, wherever it is (before or
    after the wait, in a loop or in another function), so a wait in a loop also sees
    the groups issued later in the loop body.  The count is computed when the IR is
    written out (see :class:`_WaitImmediate`), i.e. after the whole function exists.
    """

    def __init__(self, marked=False):
        self.groups = []  # (commit block, [(DMA block, unconditional), ...])
        self._open = []
        #: emit commits and waits as the placeholder calls of :mod:`.vmcnt`
        self.marked = marked
        #: N of each wait site, in emission order
        self.wait_pendings = []

    @property
    def open(self):
        """DMA instructions issued since the last commit."""
        return len(self._open)

    def issued(self, block, certain=True):
        self._open.append((block, certain))

    def commit(self, block=None):
        self.groups.append((block, self._open))
        self._open = []

    def sizes(self):
        """The certain instruction count of every committed group."""
        cfgs = {}
        out = []
        for commit_block, dmas in self.groups:
            certain = all(ok and _equivalent(cfgs, block, commit_block) for block, ok in dmas)
            out.append(len(dmas) if certain else 0)
        return out

    def in_flight_allowed(self, pendings):
        """Instructions that may stay in flight once at most *pendings* groups are."""
        sizes = self.sizes()
        if not sizes or not pendings:
            return 0
        return min(MAX_COUNT, pendings * min(sizes))


def _successors(block):
    term = block.terminator
    if term is None:
        return []
    targets_ = [op for op in term.operands if isinstance(op, ir.Block)]
    targets_ += [b for _, b in getattr(term, "cases", ())]
    default = getattr(term, "default", None)
    if isinstance(default, ir.Block):
        targets_.append(default)
    targets_ += list(getattr(term, "destinations", ()))
    return targets_


def _idoms(entry, succs):
    """Immediate dominators (Cooper, Harvey, Kennedy) of the nodes reachable from entry."""
    order, seen, stack = [], {entry}, [(entry, iter(succs[entry]))]
    while stack:
        node, it = stack[-1]
        for nxt in it:
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(succs[nxt])))
                break
        else:
            stack.pop()
            order.append(node)
    rpo = order[::-1]
    index = {n: i for i, n in enumerate(rpo)}
    preds = {n: [] for n in rpo}
    for n in rpo:
        for s in succs[n]:
            preds[s].append(n)
    idom = {entry: entry}

    def intersect(a, b):
        while a is not b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for n in rpo[1:]:
            new = None
            for p in preds[n]:
                if p in idom:
                    new = p if new is None else intersect(p, new)
            if idom.get(n) is not new:
                idom[n] = new
                changed = True
    return idom


def _dominates(idom, a, b):
    while b in idom:
        if b is a:
            return True
        if idom[b] is b:
            return False
        b = idom[b]
    return False


_EXIT = object()


def _cfg(function):
    blocks = list(function.blocks)
    succs = {b: _successors(b) for b in blocks}
    dom = _idoms(blocks[0], succs)
    rsuccs = {b: [] for b in blocks}
    rsuccs[_EXIT] = [b for b in blocks if isinstance(b.terminator, ir.Ret)]
    for b in blocks:
        for s in succs[b]:
            rsuccs[s].append(b)
    return dom, _idoms(_EXIT, rsuccs)


def _equivalent(cfgs, block, commit_block):
    """Do *block* (a DMA) and *commit_block* always run together, equally often?"""
    if block is None or commit_block is None:
        return block is commit_block
    function = block.parent
    if function is not commit_block.parent:
        return False
    if block is commit_block:
        return True
    if function not in cfgs:
        cfgs[function] = _cfg(function)
    dom, postdom = cfgs[function]
    return _dominates(dom, block, commit_block) and _dominates(postdom, commit_block, block)


class _WaitImmediate(ir.Constant):
    """The immediate of a wait, computed from *groups* each time the IR is written out,
    so that groups committed after the wait (later in a loop body) count too."""

    def __init__(self, ty, groups, pendings, encode):
        self._groups, self._pendings, self._encode = groups, pendings, encode
        super().__init__(ty, 0)

    @property
    def constant(self):
        return self._encode(self.count)

    @constant.setter
    def constant(self, value):
        pass

    @property
    def count(self):
        return self._groups.in_flight_allowed(self._pendings)

    def get_reference(self):
        return self.type.format_constant(self.constant)

    def __str__(self):
        return f"{self.type} {self.get_reference()}"


# arch -> (intrinsic, immediate type, count -> immediate, fenced).  ``s.waitcnt`` carries
# no memory attribute, so LLVM moves no memory access across it (nor across the
# placeholder call of a marked wait); ``s.wait.asynccnt`` is memory(inaccessiblemem), so
# a compiler barrier follows it.
_WAIT_FOR_DMA = {
    targets.CDNA3: ("llvm.amdgcn.s.waitcnt", I32, vmcnt_immediate, False),
    targets.CDNA4: ("llvm.amdgcn.s.waitcnt", I32, vmcnt_immediate, False),
    targets.GFX1250: ("llvm.amdgcn.s.wait.asynccnt", I16, int, True),
}


def emit_async_load_commit_group(builder, arch, groups):
    """Close the open group of LDS-DMA instructions (emits no instruction on LLVM 22)."""
    targets.require("async_load_commit_group", arch)
    groups.commit(builder.block)
    if groups.marked:
        _call_placeholder(builder, COMMIT_PLACEHOLDER, [])


def _call_placeholder(builder, name, args):
    """A call of the external function *name*, which :mod:`.vmcnt` replaces in the
    optimized IR: LLVM moves no memory access across it, and it is not convergent
    (so loops around it may be unrolled)."""
    module = builder.module
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(VOID, [a.type for a in args]), name)
    builder.call(fn, args)


def emit_async_load_wait_group(builder, arch, groups, pendings):
    """Wait until at most *pendings* committed groups are in flight.

    gfx942/gfx950: ``llvm.amdgcn.s.waitcnt`` -> ``s_waitcnt vmcnt(K)``;
    gfx1250: ``llvm.amdgcn.s.wait.asynccnt`` -> ``s_wait_asynccnt K``.
    K is ``pendings * (smallest certain group size)`` over every group of *groups*,
    and is fixed when the IR is written out (groups committed later count too).
    With ``groups.marked`` the wait is the placeholder call ``numba_tma.wait(site, K)``,
    which :func:`numba_tma.amd.compile` turns into ``s_waitcnt`` with the count read
    off the assembly, at least K (see :mod:`.vmcnt`).
    LLVM moves no memory access across the wait: an LDS read after it is never read
    before it, nor merged with a read before it (see :data:`_WAIT_FOR_DMA`).
    Returns the wait's immediate operand (a :class:`_WaitImmediate`; ``.count`` is K).
    """
    targets.require("async_load_wait_group", arch)
    targets.check_int_range("async_load_wait_group", "pendings", pendings, 0, MAX_COUNT)
    name, ty, encode, fenced = _WAIT_FOR_DMA[arch]
    site = len(groups.wait_pendings)
    groups.wait_pendings.append(pendings)
    if groups.marked:
        imm = _WaitImmediate(I32, groups, pendings, int)
        _call_placeholder(builder, WAIT_PLACEHOLDER, [i32(site), imm])
        return imm
    imm = _WaitImmediate(ty, groups, pendings, encode)
    call_intrinsic(builder, name, VOID, [imm])
    if fenced:
        compiler_barrier(builder)
    return imm


def _bits(ty):
    if isinstance(ty, ir.IntType):
        return ty.width
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}.get(type(ty))


def _slot_value(builder, op, other, width):
    """*other* as the value one lane stores into its ``width``-byte LDS slot."""
    bits = _bits(other.type)
    if bits == 8 * width:
        return other
    if bits == 32 and width % 4 == 0:
        word = other if other.type == I32 else builder.bitcast(other, I32)
        vec = ir.Constant(ir.VectorType(I32, width // 4), None)
        for k in range(width // 4):
            vec = builder.insert_element(vec, word, i32(k))
        return vec
    raise reject(op, "other", f"must have {8 * width} bits, or 32 bits to fill each dword of a "
                 f"{width}-byte slot", other.type)


def issue_masked(builder, row, op, groups, issue, mask, other, lds_base, width, *,
                 masks_lanes=False):
    """Emit one DMA instruction with ``issue(mask)`` on the lanes where *mask* holds.

    Without *mask* the DMA is unconditional and counts fully in its group.  With
    *mask* and *masks_lanes* (gfx1250 ``async_load``: ``issue`` points the masked lanes'
    LDS address out of range, as Triton does) the DMA stays unconditional too, and so
    does its group's size.  Otherwise it sits behind an exec-mask branch, which LLVM
    skips (``s_cbranch_execz``) when no lane of the wave is active; such a DMA makes
    its group's size uncertain (0), so every wait of the compile becomes ``vmcnt(0)`` /
    ``s_wait_asynccnt 0``.  Masked lanes write nothing; with *other* they store it
    into their slot ``lds_base + lane * width`` (a plain LDS store, tagged like an LDS
    read so that LLVM adds no ``vmcnt(0)`` before it: its slot is not one the DMA
    writes).
    """
    if mask is not None and mask.type != I1:
        raise reject(op, "mask", "must be an i1 value", mask.type)
    value = None if other is None else _slot_value(builder, op, other, width)
    if mask is None or masks_lanes:
        mark_async_copy(issue(mask))
        groups.issued(builder.block)
        if value is not None:
            with builder.if_then(builder.not_(mask)):
                _store_other(builder, row, value, lds_base, width)
        return
    with builder.if_else(mask) as (active, masked):
        with active:
            mark_async_copy(issue(None))
            groups.issued(builder.block, certain=False)
        with masked:
            if value is not None:
                _store_other(builder, row, value, lds_base, width)


def _store_other(builder, row, value, lds_base, width):
    offset = builder.mul(lane_id(builder, row.wave_size), i32(width))
    slot = builder.gep(lds_base, [offset], source_etype=I8)
    slot = builder.bitcast(slot, value.type.as_pointer(LDS))
    mark_local_read(builder.store(value, slot, align=min(width, 16)))
