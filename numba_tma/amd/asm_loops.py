"""The loops of an AMDGPU assembly listing: what a kernel's steady state costs.

A loop here is the code from a label to a branch back to it, in layout order (LLVM
lays a loop out contiguously).  Its *tiles* are its DMA instructions (LDS DMA or TDM
tensor loads), one per tile in the kernels of ``examples/amd_pipelined_copy.py``, so
``per_tile`` is the instructions one tile costs, whether or not LLVM unrolled the loop.

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


def loops(asm):
    """Every loop of *asm*, in layout order."""
    lines = _lines(asm)
    found = []
    for end, line in enumerate(lines):
        m = _BACK_BRANCH.match(line)
        if m and m[1] + ":" in lines[:end]:
            start = lines.index(m[1] + ":")
            body = tuple(x for x in lines[start + 1:end + 1] if not x.endswith(":"))
            found.append(Loop(m[1], body))
    return found


def steady_state(asm):
    """The loop with the most DMA instructions per iteration (an unrolled main loop
    rather than its remainder); the first of them on a tie."""
    found = loops(asm)
    if not found:
        raise ValueError("the assembly has no loop")
    return max(found, key=lambda loop: loop.tiles)
