"""The loops of an AMDGPU assembly listing: what a kernel's steady state costs.

A loop here is the blocks LLVM's verbose assembly marks as one: its header
(``; =>This Inner Loop Header``) and every block annotated ``; in Loop: Header=<it>``,
with the blocks of loops nested in it (``; Parent Loop``), in layout order.  A listing
without these annotations falls back to the code from a label to the last branch back to
it.  Reading the annotations counts a block placed after the back branch (an exec-masked
store LLVM moved out of line) and does not take a forward branch's return jump (a slice
clamp's out-of-line block jumping back) for a loop.  Its *tiles* are its DMA
instructions (LDS DMA or TDM tensor loads), one per tile in the kernels of
``examples/amd_pipelined_copy.py``, so ``per_tile`` is the instructions one tile costs,
whether or not LLVM unrolled the loop.

Example::

    # fragment: kernel: a numba_tma.amd.compile result
    loop = steady_state(kernel.asm)
    print(loop.tiles, loop.per_tile, loop.waits)
"""
import re
from dataclasses import dataclass

_DMA = re.compile(r"^(buffer_load_dword\w* .* lds$|global_load_lds_\w+ |"
                  r"global_load_async_to_lds_\w+ |tensor_load_to_lds )")
_LABEL = re.compile(r"^(\.LBB\d+_\d+):")
_BACK_BRANCH = re.compile(r"^s_c?branch\w* (\.LBB\d+_\d+)$")


@dataclass(frozen=True)
class Loop:
    """One loop: its label and its instruction lines (back branch included)."""
    label: str
    instructions: tuple

    @property
    def tiles(self):
        """DMA instructions per iteration."""
        return sum(1 for line in self.instructions if _DMA.match(line))

    @property
    def per_tile(self):
        """Instructions per DMA instruction (per iteration when there is none)."""
        return len(self.instructions) / max(self.tiles, 1)

    @property
    def waits(self):
        """The ``s_wait*`` lines, in order."""
        return tuple(line for line in self.instructions if line.startswith("s_wait"))


def _lines(asm):
    """Instruction lines and loop labels, comments and directives dropped."""
    out = []
    for raw in asm.splitlines():
        line = raw.split(";")[0].strip()
        if _LABEL.match(line):
            out.append(_LABEL.match(line)[1] + ":")
        elif line and not line.startswith(".") and not line.endswith(":"):
            out.append(line)
    return out


_BLOCK = re.compile(r"^(?:\.L(BB\d+_\d+):|; %bb\.\d+:)")
_HEADER = re.compile(r"=>\s*This (?:Inner )?Loop Header")
_IN_LOOP = re.compile(r"in Loop: Header=(BB\d+_\d+)")
_PARENT = re.compile(r"Parent Loop (BB\d+_\d+)")


def _blocks(asm):
    """The listing's blocks in layout order: (label or None, header it is of or None,
    innermost loop it is in or None, parent loop of the loop it heads, instructions)."""
    blocks = [[None, None, None, None, []]]
    for raw in asm.splitlines():
        text = raw.strip()
        m = _BLOCK.match(text)
        if m:
            blocks.append([m[1], None, None, None, []])
        comment = raw.split(";", 1)[1] if ";" in raw else ""
        block = blocks[-1]
        if not block[4]:  # annotations come with the label, before the first instruction
            if _HEADER.search(comment):
                block[1] = block[0]
            if _IN_LOOP.search(comment):
                block[2] = _IN_LOOP.search(comment)[1]
            if _PARENT.search(comment):
                block[3] = _PARENT.search(comment)[1]
        line = raw.split(";")[0].strip()
        if line and not m and not line.startswith(".") and not line.endswith(":"):
            block[4].append(line)
    return blocks


def _annotated_loops(asm):
    blocks = _blocks(asm)
    parent = {b[1]: b[3] for b in blocks if b[1]}
    found = []
    for header in (b[1] for b in blocks if b[1]):
        body = []
        for label, heads, inner, _, instructions in blocks:
            loop = heads or inner
            while loop is not None and loop != header:
                loop = parent.get(loop)
            if loop == header:
                body += instructions
        found.append(Loop(f".L{header}", tuple(body)))
    return found


def _layout_loops(asm):
    """Loops as the code from a label to the last branch back to it."""
    lines = _lines(asm)
    last = {}
    for end, line in enumerate(lines):
        m = _BACK_BRANCH.match(line)
        if m and m[1] + ":" in lines[:end]:
            last[m[1]] = end
    found = []
    for label, end in last.items():
        start = lines.index(label + ":")
        body = tuple(x for x in lines[start + 1:end + 1] if not x.endswith(":"))
        found.append((start, Loop(label, body)))
    return [loop for _, loop in sorted(found, key=lambda item: item[0])]


def loops(asm):
    """Every loop of *asm*, in layout order of their headers (see the module's text)."""
    return _annotated_loops(asm) or _layout_loops(asm)


def steady_state(asm):
    """The loop with the most DMA instructions per iteration (an unrolled main loop
    rather than its remainder); the first of them on a tie."""
    found = loops(asm)
    if not found:
        raise ValueError("the assembly has no loop")
    return max(found, key=lambda loop: loop.tiles)
