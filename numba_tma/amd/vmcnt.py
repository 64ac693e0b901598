"""Exact ``vmcnt`` (gfx942/gfx950) and ``asynccnt`` (gfx1250) for ``async_load_wait_group``,
read off the assembly.

On gfx9 ``vmcnt`` counts every vector-memory instruction (loads, stores, LDS DMA), and
they complete in issue order (LLVM's SIInsertWaitcnts models gfx9 the same way: one
in-order ``VMEM_ACCESS`` event).  ``wait_group(N)`` must complete every instruction
issued before the (N+1)-th youngest commit, so ``vmcnt(K)`` is right for K = the
vector-memory instructions issued *after* that commit on the way to the wait: the DMA
of the N younger groups and every global store or load in between (a pipelined copy's
copy-out).  Counting only DMA instructions, as the IR-level bound of
:class:`~numba_tma.amd.dma.AsyncGroups` does, waits for one more tile than needed.

How :func:`numba_tma.amd.compile` gets the count:

1. Lowering emits each commit and wait as a call of an external placeholder function
   (``numba_tma.commit()``, ``numba_tma.wait(site, K_ir)``).  LLVM moves no memory
   access across such a call, and it is not convergent, so the IR optimizer may still
   unroll the loop around it; every unrolled copy is a call of its own.
2. :func:`with_markers` replaces the placeholders in the optimized IR by
   ``llvm.amdgcn.s.waitcnt``, one per wait instance, and, for the counting compile,
   by markers: inline asm holding an assembler comment (no instruction), at every
   commit and before every wait.  LLVM moves no memory access across inline asm.
3. The counting compile (assembly only: llvmlite has no AMDGPU asm parser, which an
   object with inline asm needs) gives an assembly in which :func:`wait_counts`
   walks the control flow backwards from each wait marker and takes the smallest
   count over all paths; unrolled copies of a wait get counts of their own.
4. Code generation of the same IR without markers, with those counts.
   Each commit is a compiler barrier there (:data:`COMMIT_BARRIER`), as its marker is
   in step 3, so no DMA moves into another group in either.
   :func:`same_memory_order` checks that it issues the vector-memory instructions and
   waits of step 3 in the same order along the same branches (mnemonics, not operands:
   registers differ between the two); otherwise ``compile`` uses the IR-level counts.

On gfx1250 the wait is ``s_wait_asynccnt``, which counts the async global -> LDS copies only
(``global_load_async_to_lds_*``, in issue order as LLVM models them), not plain loads and stores:
the same machinery with that counter (:data:`ASYNCCNT`), so a pipeline whose DMAs sit in an inner
loop keeps its count there too (the IR-level count of such a group is 0).
"""
import dataclasses
import heapq
import re

#: the external functions lowering calls for commits and waits (see dma.py)
COMMIT_PLACEHOLDER = "numba_tma.commit"
WAIT_PLACEHOLDER = "numba_tma.wait"
MAX_VMCNT = 63


def vmcnt_immediate(count):
    """The ``llvm.amdgcn.s.waitcnt`` immediate for ``vmcnt(count)`` on gfx9:
    vmcnt[3:0] in bits 3:0, vmcnt[5:4] in bits 15:14, expcnt/lgkmcnt at "no wait"."""
    imm = ~0xC00F & 0xFFFFFFFF | (count & 0xF) | ((count >> 4) & 0x3) << 14
    return imm - (1 << 32) if imm & 0x80000000 else imm


# -- markers -------------------------------------------------------------------------
#: marker text (an assembler comment) of a commit and of wait instance N
COMMIT_MARK = ";numba_tma.commit"
WAIT_MARK = ";numba_tma.wait "


@dataclasses.dataclass(frozen=True)
class Counter:
    """One arch's DMA wait counter: ``counts`` matches the instructions certain to increment it
    (leaving one out is safe: a count that is too small only makes a wait wait longer);
    ``wait_mnemonic`` starts its wait in the assembly; ``wait_ir(K)`` is the wait in LLVM IR,
    with ``declaration`` its intrinsic's."""

    name: str
    counts: re.Pattern
    wait_mnemonic: str
    wait_ir: object
    declaration: str


_CALL_OF = r"(?:(?:no|must)?tail )?call void @\"?{}\"?"
_COMMIT_CALL = re.compile(_CALL_OF.format(re.escape(COMMIT_PLACEHOLDER)) + r"\(\)")
_WAIT_CALL = re.compile(_CALL_OF.format(re.escape(WAIT_PLACEHOLDER)) +
                        r"\(i32 (?:noundef )?(\d+), i32 (?:noundef )?(-?\d+)\)")


def wait_instances(optimized_ir):
    """``[(site, IR-level count)]`` of every wait placeholder call left in the
    optimized IR, in text order (an unrolled wait appears once per copy)."""
    return [(int(m[1]), int(m[2])) for m in _WAIT_CALL.finditer(optimized_ir)]


#: what a commit becomes in the final code: a compiler barrier (no instruction), so that
#: no DMA crosses it there either, as none crosses the marker of the counting code
COMMIT_BARRIER = 'fence syncscope("singlethread") seq_cst'


def with_markers(optimized_ir, counts, markers=True, counter=None):
    """*optimized_ir* with its placeholders replaced: the *counter*'s wait (default
    :data:`VMCNT`: ``s_waitcnt vmcnt(counts[i])``) for wait instance *i* and, with *markers*,
    an inline-asm comment before it and at every commit (assembly only: LLVM cannot put
    inline asm in an object without the AMDGPU asm parser, which llvmlite does not
    initialize); without, each commit is :data:`COMMIT_BARRIER`."""
    counter = counter or VMCNT
    def marker(text):
        return f'call void asm sideeffect "{text}", ""()\n  ' if markers else ""

    text = _COMMIT_CALL.sub(marker(COMMIT_MARK).rstrip() or COMMIT_BARRIER, optimized_ir)
    instance = iter(range(len(counts)))

    def wait(_match):
        i = next(instance)
        return f"{marker(WAIT_MARK + str(i))}{counter.wait_ir(counts[i])}"

    text = _WAIT_CALL.sub(wait, text)
    intrinsic = re.escape(counter.declaration.split("@")[1].split("(")[0])
    text = re.sub(rf"^declare [^\n]*@\"?({intrinsic}|"
                  rf"{re.escape(COMMIT_PLACEHOLDER)}|{re.escape(WAIT_PLACEHOLDER)})\"?\([^\n]*\n",
                  "", text, flags=re.MULTILINE)
    return text + f"\n{counter.declaration}\n"


# -- the assembly ----------------------------------------------------------------------
# Instructions certain to increment vmcnt on gfx9.  Leaving one out is safe: a count
# that is too small only makes the wait wait longer.  Cache-control buffer ops are left
# out.
_VMEM = re.compile(r"^(buffer|global|flat|scratch|tbuffer)_(load|store|atomic)")
VMCNT = Counter("vmcnt", _VMEM, "s_waitcnt",
                lambda k: f"call void @llvm.amdgcn.s.waitcnt(i32 {vmcnt_immediate(k)})",
                "declare void @llvm.amdgcn.s.waitcnt(i32 immarg)")
# gfx1250: the async copies into LDS; ``s.wait.asynccnt`` touches only inaccessible memory, so
# the compiler barrier that follows it in lowering (dma.py) follows it here too
ASYNCCNT = Counter("asynccnt", re.compile(r"^global_load_async_to_lds_"), "s_wait_asynccnt",
                   lambda k: f"call void @llvm.amdgcn.s.wait.asynccnt(i16 {k})\n  {COMMIT_BARRIER}",
                   "declare void @llvm.amdgcn.s.wait.asynccnt(i16 immarg)")
_BRANCH = re.compile(r"^s_(c?branch)\w* (\.LBB\d+_\d+)$")
_LABEL = re.compile(r"^(\.LBB\d+_\d+):")
_CALL = re.compile(r"^s_(swappc|setpc|call)_")

_COMMIT, _VMEM_OP = "commit", "vmem"


def _function_lines(asm, name):
    """The lines of function *name*, from its label to its ``.Lfunc_end``; ``[]`` when
    *asm* has no such function."""
    lines = asm.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"{name}:")), None)
    if start is None:
        return []
    end = next((i for i in range(start, len(lines)) if lines[i].startswith(".Lfunc_end")),
               len(lines))
    return lines[start + 1:end]


def _blocks(lines, counter):
    """Basic blocks: ``[(label or None, items, successor labels, falls through)]``.
    Items are ``"commit"``, ``"vmem"`` or ``("wait", instance)``.  None for a function
    that calls (a callee's commits and waits would be invisible)."""
    blocks, items, label = [], [], None

    def close(successors, falls):
        blocks.append((label, items, successors, falls))

    for raw in lines:
        line = raw.strip()
        if line.startswith(COMMIT_MARK):
            items.append(_COMMIT)
            continue
        if line.startswith(WAIT_MARK):
            items.append(("wait", int(line[len(WAIT_MARK):])))
            continue
        line = line.split(";")[0].strip()
        if not line or line.startswith("."):
            if (m := _LABEL.match(line)):
                close([], True)
                items, label = [], m[1]
            continue
        if _CALL.match(line):
            return None
        if counter.counts.match(line):
            items.append(_VMEM_OP)
        elif (m := _BRANCH.match(line)):
            close([m[2]], m[1] == "cbranch")
            items, label = [], None
        elif line.startswith("s_endpgm"):
            close([], False)
            items, label = [], None
    close([], False)
    return blocks


def _predecessors(blocks):
    index = {label: i for i, (label, *_rest) in enumerate(blocks) if label}
    preds = [[] for _ in blocks]
    for i, (_label, _items, successors, falls) in enumerate(blocks):
        for target in successors:
            preds[index[target]].append(i)
        if falls and i + 1 < len(blocks):
            preds[i + 1].append(i)
    return preds


def _scan_back(items, commits, cost, needed):
    """Walk *items* backwards; ``(True, cost)`` at the *needed*-th commit, else
    ``(False, commits, cost)`` at the start of the items."""
    for item in reversed(items):
        if item == _COMMIT:
            commits += 1
            if commits == needed:
                return True, cost
        elif item == _VMEM_OP:
            cost += 1
    return False, commits, cost


def _count_before(blocks, preds, block, position, pendings):
    """The fewest vector-memory instructions between the (pendings+1)-th commit before
    *position* of *block* and that position, over the paths that have such a commit
    (Dijkstra on (block, commits seen)); MAX_VMCNT when no path has one."""
    needed = pendings + 1
    heap, seen = [], set()

    def walk(items, b, commits, cost):
        result = _scan_back(items, commits, cost, needed)
        if result[0]:
            heapq.heappush(heap, (result[1], -1, 0))
        else:
            for p in preds[b]:
                heapq.heappush(heap, (result[2], p, result[1]))

    walk(blocks[block][1][:position], block, 0, 0)
    while heap:
        cost, b, commits = heapq.heappop(heap)
        if b == -1:
            return min(cost, MAX_VMCNT)
        if (b, commits) not in seen:
            seen.add((b, commits))
            walk(blocks[b][1], b, commits, cost)
    return MAX_VMCNT


def wait_counts(asm, name, pendings, counter=None):
    """``[K]`` per wait instance of function *name* in *asm* (made from
    :func:`with_markers` IR), where ``pendings[i]`` is instance *i*'s N.  An instance
    that appears more than once (code generation duplicated its block) gets the
    smallest K; one that is not in the function (deleted, or in another function)
    None.  None instead of the list when *asm* has no function *name* or it makes
    calls (see :func:`_blocks`).  *counter*: :data:`VMCNT` by default."""
    lines = _function_lines(asm, name)
    blocks = _blocks(lines, counter or VMCNT) if lines else None
    if blocks is None:
        return None
    preds = _predecessors(blocks)
    counts = [None] * len(pendings)
    for b, (_label, items, _succ, _falls) in enumerate(blocks):
        for position, item in enumerate(items):
            if isinstance(item, tuple):
                i = item[1]
                k = _count_before(blocks, preds, b, position, pendings[i])
                counts[i] = k if counts[i] is None else min(counts[i], k)
    return counts


def _memory_order(asm, name, counter):
    """The function's labels, branches, vector-memory instructions (their mnemonics) and
    vmcnt waits (without their counts), in order: what the counts of :func:`wait_counts`
    depend on.  Operands are left out: register allocation and address offsets differ
    between the two code generations (an inner loop's DMA got ``v28`` in one and ``v40``
    in the other), and a vector-memory instruction counts once whatever its operands."""
    out = []
    for raw in _function_lines(asm, name):
        line = raw.split(";")[0].strip()
        if counter.counts.match(line):
            out.append(line.split()[0])
        elif _LABEL.match(line) or _BRANCH.match(line):
            out.append(line)
        elif line.startswith("s_endpgm"):
            out.append(line)
        elif line.startswith(counter.wait_mnemonic) and counter.name in line:
            out.append(counter.wait_mnemonic)
    return out


def same_memory_order(marked_asm, asm, name, counter=None):
    """Do the two assemblies of function *name* issue the same vector-memory
    instructions and vmcnt waits in the same order along the same branches?  The
    markers constrain the scheduler, so other instructions may be placed differently;
    those do not change any count."""
    counter = counter or VMCNT
    order = _memory_order(marked_asm, name, counter)
    return bool(order) and order == _memory_order(asm, name, counter)
