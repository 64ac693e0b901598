"""See what a kernel becomes — PTX, cubin, SASS — for any architecture, with no GPU.

    >>> import numba
    >>> from numba import cuda
    >>> from numba_tma import TensorMap, fence, inspect, mbarrier, tma
    >>> @cuda.jit
    ... def kernel(desc, out):
    ...     bar = cuda.shared.array(1, numba.uint64)
    ...     tile = cuda.shared.array((32, 32), numba.float32, alignment=128)
    ...     if cuda.threadIdx.x == 0:
    ...         mbarrier.init(bar, 1)
    ...         fence.mbarrier_init()
    ...         mbarrier.arrive_expect_tx(bar, desc.box_bytes)
    ...         tma.load(desc, tile, (0, 0), bar)
    ...     cuda.syncthreads()
    ...     mbarrier.wait(bar, 0)
    ...     out[cuda.threadIdx.x] = tile[0, cuda.threadIdx.x]
    >>> sig = (TensorMap.numba_type("float32", (32, 32)), numba.float32[::1])
    >>> out = inspect.compile(kernel, sig, "sm_90a")
    >>> "cp.async.bulk.tensor.2d" in out.ptx, "UTMALDG.2D" in out.opcodes()
    (True, True)

PTX and everything numba links with a kernel (its fp16/bf16 shims and other linked CUDA sources,
compiled by NVRTC) come from numba-cuda's code library, as its ``compile_all`` would give them but
without needing the driver; kernels calling ``@cuda.jit(device=True)`` functions compile too, for
the arch given (both in :mod:`numba_tma.numba_cuda`).  The cubin is linked
from all of them by nvJitLink (a host library, from the same CUDA wheels as NVVM, so the PTX ISA
always matches; a kernel calling ``setmaxnreg`` as LTO-IR with ``-lto``, whole program, as
numba_tma links it for a launch) and SASS comes from ``cuobjdump`` (PyPI ``nvidia-cuda-cuobjdump`` +
``nvidia-cuda-nvdisasm``).  The cubin and SASS are made only when first read.  Results are cached
per (function, signature, arch, options).

Under numba-cuda's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) this module imports and
:func:`link`, :func:`sass` and :func:`sass_opcodes` work, but :func:`compile` and :func:`ptx`
raise :class:`CompilerMissing`: the simulator replaces numba-cuda's compiler with its own, which
makes no PTX.
"""

from __future__ import annotations

import collections
import functools
import html
import os
import re
import subprocess
import tempfile

from . import debugging
from .intrinsics._core import arch_name, parse_arch
from .numba_cuda.whole_program import refuse_ignored_setmaxnreg
from .ops import BACKEND

__all__ = ["Compiled", "CompilerMissing", "assemble_together", "compile", "ptx", "link", "sass", "sass_opcodes",
           "ToolMissing"]


class ToolMissing(RuntimeError):
    """A host tool (nvJitLink, cuobjdump, nvdisasm) is not installed."""


class CompilerMissing(RuntimeError):
    """numba-cuda's compiler is not in this process: the CUDA simulator replaced it."""


class Compiled:
    """One kernel compiled for one architecture: ``ptx`` now, ``cubin`` and ``sass`` on first use."""

    def __init__(self, arch: str, ptx: str, codes: list):
        self.arch = arch
        self.ptx = ptx
        self._codes = codes                  # what numba links: the kernel's PTX (or LTO-IR), then its files

    @functools.cached_property
    def cubin(self) -> bytes:
        return link(self._codes, self.arch)

    @functools.cached_property
    def sass(self) -> str:
        return sass(self.cubin)

    def opcodes(self) -> set[str]:
        """The set of SASS opcodes (with modifiers, e.g. ``UTMALDG.2D``)."""
        return sass_opcodes(self.sass)

    def opcode_counts(self) -> collections.Counter:
        """How many times each SASS opcode appears (to compare with a control kernel)."""
        return collections.Counter(_OPCODE.findall(self.sass))

    @property
    def entry(self) -> str:
        """The kernel's mangled name (its ``.entry`` in the PTX)."""
        return re.search(r"\.entry\s+([\w$]+)\s*\(", self.ptx).group(1)

    def _repr_html_(self) -> str:
        """Jupyter's view: the PTX and the SASS, TMA / bulk / mbarrier / fence lines highlighted."""
        from .viz import code_html

        try:
            sass_part = code_html(self.sass, "sass")
        except (ToolMissing, RuntimeError) as exc:   # no SASS tools, or the link failed: show why
            sass_part = f"<pre>{html.escape(str(exc))}</pre>"
        return (f"<b>{self.arch}</b><details><summary>PTX</summary>{code_html(self.ptx, 'ptx')}</details>"
                f"<details open><summary>SASS</summary>{sass_part}</details>")


def assemble_together(kernels) -> None:
    """Give each of ``kernels`` (:class:`Compiled`, one architecture) its cubin and SASS from one
    nvJitLink link and one ``cuobjdump`` run over all of them, instead of one of each per kernel
    (a disassembler process costs ~0.4 s).  Kernels that link other files as well, or link
    whole-program (``setmaxnreg``), are assembled on their own, as :attr:`Compiled.sass` does."""
    kernels = [k for k in kernels if k._codes == [k.ptx] and "sass" not in k.__dict__]
    if not kernels:
        return
    arch = kernels[0].arch
    if any(k.arch != arch for k in kernels):
        raise ValueError("assemble_together: the kernels must be compiled for one architecture")
    cubin = link([k.ptx for k in kernels], arch)
    sections = re.split(r"\n\s*Function : ([\w$]+)\n", sass(cubin))
    by_name = dict(zip(sections[1::2], sections[2::2]))
    for k in kernels:
        k.__dict__.update(cubin=cubin, sass=by_name[k.entry])


def _signature(sig):
    """A hashable form of ``sig``: a signature string or a sequence of argument types."""
    return sig if isinstance(sig, str) else tuple(sig)


HOSTS = ("numba-cuda", "mlir")


def compile(fn, sig, arch="sm_90a", host="numba-cuda", **options) -> Compiled:  # noqa: A001 - mirrors numba's name
    """Kernel ``fn`` with argument types ``sig`` (a tuple of Numba types or a signature string such
    as ``"void(float32[::1])"``) compiled for ``arch`` (``"sm_90a"``, ``"sm_100a"``...); ``options``
    go to numba-cuda's compiler (``debug``, ``opt``, ``fastmath``, ``lineinfo``, ``launch_bounds``:
    a ``@cuda.jit`` kernel's own by default...).

    ``host="mlir"``: ``fn`` (a Python function, or a ``numba_cuda_mlir.cuda.jit`` kernel's) is
    compiled by numba-cuda-mlir instead, ``sig`` in its types (``numba_cuda_mlir.types``), with
    ``options`` for its ``cuda.jit`` (docs/second_host.md)."""
    if host not in HOSTS:
        raise ValueError(f"host={host!r}: expected one of {', '.join(map(repr, HOSTS))}")
    if host == "mlir":
        return _compile_mlir(getattr(fn, "py_func", fn), _signature(sig), parse_arch(arch),
                             tuple(sorted(options.items())), debugging.key())
    if BACKEND.compiler_missing:
        name = getattr(fn, "__name__", repr(fn))
        raise CompilerMissing(
            f"numba_tma.inspect.compile({name}): {BACKEND.compiler_missing}: compile in a process started without it "
            "(another notebook kernel, or a subprocess); link, sass and sass_opcodes work here")
    return _compile(fn, _signature(sig), parse_arch(arch), tuple(sorted(options.items())), debugging.key())


def ptx(fn, sig, arch="sm_90a", **options) -> str:
    """The kernel's PTX (see :func:`compile`)."""
    return compile(fn, sig, arch, **options).ptx


@functools.lru_cache(maxsize=256)
def _compile(fn, sig, cc, options, debug_key):   # debug_key: debug mode changes the code
    return Compiled(arch_name(cc), *BACKEND.kernel_codes(fn, sig, cc, **dict(options)))


@functools.lru_cache(maxsize=256)
def _compile_mlir(pyfunc, sig, cc, options, debug_key):   # debug_key: debug mode changes the code
    from .mlir import kernel_ptx   # (numba_tma's objects typed in numba-cuda-mlir kernels)

    ptx = kernel_ptx(pyfunc, sig, cc, arch_name(cc), **dict(options))
    return Compiled(arch_name(cc), ptx, [ptx])


def _inputs(codes):
    """``(nvJitLink input type, bytes, name)`` for each code numba's ``compile_all`` returned."""
    from cuda.bindings import nvjitlink
    from numba.cuda import LTOIR, Archive, Cubin, Fatbin, Object, PTXSource

    kinds = {PTXSource: nvjitlink.InputType.PTX, Cubin: nvjitlink.InputType.CUBIN, Fatbin: nvjitlink.InputType.FATBIN,
             Object: nvjitlink.InputType.OBJECT, Archive: nvjitlink.InputType.LIBRARY, LTOIR: nvjitlink.InputType.LTOIR}
    for i, code in enumerate(codes):
        if isinstance(code, (str, bytes)):   # PTX from NVVM or NVRTC
            data = code.encode() if isinstance(code, str) else code
            yield nvjitlink.InputType.PTX, data.rstrip(b"\0") + b"\0", f"numba_tma_{i}.ptx"
        else:                                # a LinkableCode object
            yield kinds[type(code)], bytes(code.data), code.name


def link(codes, arch="sm_90a") -> bytes:
    """Link PTX (a string, or a list of codes as ``compile_all`` returns them) into a cubin for
    ``arch`` with nvJitLink (no GPU needed); with LTO-IR among them, with link-time optimisation
    (``-lto``: the whole program at once, as numba-cuda links it).  A ``setmaxnreg`` ptxas dropped
    is refused (:class:`~numba_tma.errors.RegisterCountError`)."""
    from cuda.bindings import nvjitlink

    codes = [codes] if isinstance(codes, (str, bytes)) else codes
    name = arch_name(parse_arch(arch))
    inputs = list(_inputs(codes))
    options = [f"-arch={name}"] + ["-lto"] * any(kind == nvjitlink.InputType.LTOIR for kind, _, _ in inputs)
    handle = nvjitlink.create(len(options), options)
    try:
        try:
            for kind, data, label in inputs:
                nvjitlink.add_data(handle, kind, data, len(data), label)
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as exc:
            log = _jitlink_log(handle)
            raise RuntimeError(f"nvJitLink could not link the code for {name}: {exc}\n{log}") from exc
        refuse_ignored_setmaxnreg(_jitlink_log(handle, info=True))
        out = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, out)
        return bytes(out)
    finally:
        nvjitlink.destroy(handle)


def _jitlink_log(handle, info=False) -> str:
    """nvJitLink's error log (``info``: its info log, where ptxas's notes are)."""
    from cuda.bindings import nvjitlink

    size = (nvjitlink.get_info_log_size if info else nvjitlink.get_error_log_size)(handle)
    buf = bytearray(size)
    (nvjitlink.get_info_log if info else nvjitlink.get_error_log)(handle, buf)
    return buf.decode(errors="replace").rstrip("\x00")


def _tool(name: str) -> str:
    from cuda.pathfinder import find_nvidia_binary_utility

    path = find_nvidia_binary_utility(name)
    if not path:
        raise ToolMissing(
            f"{name} not found: install it with `pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` "
            "(or the project's [cu13] extra)"
        )
    return path


def sass(cubin_bytes: bytes) -> str:
    """Disassemble a cubin with ``cuobjdump --dump-sass``."""
    cuobjdump = _tool("cuobjdump")
    nvdisasm_dir = os.path.dirname(_tool("nvdisasm"))
    env = dict(os.environ, PATH=nvdisasm_dir + os.pathsep + os.environ.get("PATH", ""))
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin_bytes)
        f.flush()
        run = subprocess.run([cuobjdump, "--dump-sass", f.name], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        raise RuntimeError(f"cuobjdump failed ({run.returncode}): {run.stderr.strip()}")
    return run.stdout


_OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*(?:x[0-9][A-Z0-9_.x]*)?)")   # HGMMA.64x128x16.F32.BF16


def sass_opcodes(sass_text: str) -> set[str]:
    """Opcodes (with modifiers) appearing in ``cuobjdump`` output."""
    return set(_OPCODE.findall(sass_text))
