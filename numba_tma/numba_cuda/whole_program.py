"""Hook 8's rule (:mod:`numba_tma.numba_cuda`): a kernel calling ``setmaxnreg`` is linked
whole-program (:mod:`.compiler`), and refused where ptxas still dropped the instruction.  Importable
without numba-cuda's compiler: :mod:`numba_tma.inspect` links a kernel's codes under the CUDA
simulator too."""

from __future__ import annotations

from ..errors import RegisterCountError

SETMAXNREG_RULE = (
    "a kernel calling wgmma.setmaxnreg must let ptxas compile it whole-program with a known register count: "
    "declare its launch bounds with the blocks per SM, @cuda.jit(launch_bounds=(threads, min_blocks)) (e.g. "
    "(384, 1)), or max_registers=N without launch bounds, and link no PTX, cubin or object files (link= only CUDA "
    "sources, which compile to LTO-IR)")


def uses_setmaxnreg(library) -> bool:
    """Whether a kernel's code library (its module or a device function's it links) has ``setmaxnreg``
    (the inline asm of ``wgmma.setmaxnreg``, in the LLVM IR)."""
    return any("setmaxnreg." in text for text in library.llvm_strs)


def refuse_ignored_setmaxnreg(log: str) -> None:
    """Raise :class:`~numba_tma.errors.RegisterCountError` where the linker's info ``log`` says
    ptxas dropped a ``setmaxnreg`` (a no-op kernel is never handed out)."""
    ignored = [line.strip() for line in log.splitlines() if "'setmaxnreg' ignored" in line]
    if ignored:
        raise RegisterCountError(f"numba_tma: wgmma.setmaxnreg: ptxas ignored it ({'; '.join(ignored)}): "
                                 f"{SETMAXNREG_RULE}")
