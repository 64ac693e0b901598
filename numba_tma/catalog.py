"""Every device op of both vendors, found by its Python name, its instructions (NVIDIA: PTX mnemonic,
SASS opcode; AMD: LLVM intrinsic, ISA mnemonic) or its TLX / CuTe DSL / ``cuda::ptx`` name — all
read from the ops' declarations (:data:`numba_tma.declarations.OPS`).

    >>> from numba_tma import catalog
    >>> [op.name for op in catalog.find("cp.async.bulk.tensor")]
    ['tma.gather4', 'tma.load', 'tma.load_im2col', 'tma.scatter4', 'tma.store']
    >>> [op.name for op in catalog.find("tlx.barrier_wait")]
    ['mbarrier.wait', 'ring.wait']
    >>> [op.name for op in catalog.find("v_readlane_b32")]
    ['amd.readlane', 'amd.wave_reduce']

Library objects are found the same way, by the anchors' names for them:

    >>> [entry.name for entry in catalog.find("producer_acquire")]
    ['ring.acquire']

``python -m numba_tma.catalog`` prints the catalogue as Markdown (``docs/ops.md`` is that output;
a test keeps it current).  ``python -m numba_tma.docgen`` regenerates it together with the
per-family pages (``docs/ops/``) and the type stubs.  It works under numba-cuda's CUDA simulator
too (``import numba_tma`` declares the ops there as well).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import amd, intrinsics  # noqa: F401  (declare every op of both vendors; amd.ops: its families)
from .declarations import OPS
from .intrinsics.wgmma import ANCHOR_NAMES as FRAGMENT_HELPERS
from .pipeline import ANCHOR_NAMES


@dataclass(frozen=True)
class LibraryObject:
    """A library object (not an op): its name in numba-tma, the anchors' names, what it is."""
    name: str
    anchors: tuple
    summary: str

    def words(self) -> list[str]:
        return [self.name, *self.anchors]


LIBRARY = tuple(LibraryObject(name, anchors, summary)
                for name, (anchors, summary) in (ANCHOR_NAMES | FRAGMENT_HELPERS).items())


def find(text: str) -> list:
    """The ops (:class:`~numba_tma.declarations.Declaration`) and then the library objects
    (:class:`LibraryObject`) whose name, instructions or anchor-library name contains ``text``
    (any case)."""
    needle = text.lower()
    ops: list = [op for _, op in sorted(OPS.items()) if any(needle in word.lower() for word in op.words())]
    return ops + [entry for entry in LIBRARY if any(needle in word.lower() for word in entry.words())]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def markdown() -> str:
    """The catalogue: one table per family, one row per op."""
    lines = ["# Device ops", "",
             "Generated from the op declarations by `python -m numba_tma.catalog`; do not edit by hand.",
             "Each op's docstring (`help(numba_tma.tma.load)`) has its arguments and an example.", ""]
    for family in sorted({op.family for op in OPS.values() if op.vendor == "nvidia"}):
        lines += [f"## `numba_tma.{family}`", "", "| op | PTX | requires | options | also known as | SASS |",
                  "|---|---|---|---|---|---|"]
        for _, op in sorted(OPS.items()):
            if op.family != family:
                continue
            ptx = "\n".join(line.strip() for line in op.ptx_text().splitlines())
            options = "\n".join(
                f"{q.name}: " + ", ".join(f"`{v!r}`" + (f" ({op.need | c.need})" if getattr(c, "need", None) else "")
                                          for v, c in q.choices.items())
                for q in op.qualifiers)
            sass = sorted({s.sass if isinstance(s.sass, str) else "/".join(v for v in s.sass.values() if v) for s in op.samples})
            lines.append("| " + " | ".join(_cell(x) for x in (
                f"`{op.name}`", f"`{ptx}`" if "\n" not in ptx else f"<pre>{ptx}</pre>", str(op.need), options,
                ", ".join(f"`{t}`" for t in op.tlx), ", ".join(f"`{s}`" if s else "none" for s in sass))) + " |")
        lines.append("")
    lines += ["## `numba_tma.amd`", "", "AMD ops (gfx942, gfx950, gfx1250; no simulator twin), by family "
              "(`numba_tma.amd.ops.<family>`).", ""]
    for family, module in amd.ops.FAMILIES.items():
        lines += [f"### {family}", "", "| op | LLVM | ISA | requires | also known as |", "|---|---|---|---|---|"]
        for name in amd.ops.declared_in(module):
            op = OPS[f"amd.{name}"]
            lines.append("| " + " | ".join(_cell(x) for x in (
                f"`{op.name}`", "\n".join(f"`{i}`" for i in op.llvm), ", ".join(f"`{i}`" for i in op.isa),
                str(op.need), ", ".join(f"`{t}`" for t in op.tlx))) + " |")
        lines.append("")
    lines += ["## Library objects", "", "`numba_tma.pipeline` (see docs/pipelines.md) and the wgmma fragment "
              "helpers (docs/ops/wgmma.md).", "",
              "| object | what it is | also known as |", "|---|---|---|"]
    for entry in LIBRARY:
        lines.append(f"| `{entry.name}` | {_cell(entry.summary)} | {', '.join(f'`{a}`' for a in entry.anchors)} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
