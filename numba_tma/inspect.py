"""See what a kernel becomes — PTX, cubin, SASS — for any architecture, with no GPU.

    >>> from numba_tma import inspect
    >>> out = inspect.compile(kernel, (numba.uint8[::1], numba.float32[:, ::1]), arch="sm_90a")
    >>> "cp.async.bulk.tensor.2d" in out.ptx, "UTMALDG" in out.sass
    (True, True)

PTX comes from numba-cuda's ``compile_ptx`` (libNVVM), the cubin from nvJitLink (a host library,
from the same CUDA wheels as NVVM, so the PTX ISA always matches), and SASS from ``cuobjdump``
(PyPI ``nvidia-cuda-cuobjdump`` + ``nvidia-cuda-nvdisasm``).  Results are cached per
(function, signature, arch).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass

from .intrinsics._core import arch_name, parse_arch

__all__ = ["Compiled", "compile", "ptx", "cubin", "sass", "sass_opcodes", "ToolMissing"]


class ToolMissing(RuntimeError):
    """A host tool (nvJitLink, cuobjdump, nvdisasm) is not installed."""


@dataclass(frozen=True)
class Compiled:
    """One kernel compiled for one architecture."""

    arch: str
    ptx: str
    cubin: bytes
    sass: str

    def opcodes(self) -> set[str]:
        """The set of SASS opcodes (with modifiers, e.g. ``UTMALDG.2D``)."""
        return sass_opcodes(self.sass)


def _signature(sig):
    """A hashable form of ``sig``: a signature string or a sequence of argument types."""
    return sig if isinstance(sig, str) else tuple(sig)


def ptx(fn, sig, arch="sm_90a", **options) -> str:
    """PTX for kernel ``fn`` with argument types ``sig`` (a tuple of Numba types or a signature
    string such as ``"void(float32[::1])"``; ``options`` go to ``compile_ptx``)."""
    return _ptx(fn, _signature(sig), parse_arch(arch), tuple(sorted(options.items())))


@functools.lru_cache(maxsize=256)
def _ptx(fn, sig, cc, options):
    from numba import cuda

    text, _ = cuda.compile_ptx(fn, sig, cc=cc, **dict(options))
    return text


def cubin(ptx_text: str, arch="sm_90a") -> bytes:
    """Assemble PTX into a cubin for ``arch`` with nvJitLink (no GPU needed)."""
    from cuda.bindings import nvjitlink

    name = arch_name(parse_arch(arch))
    handle = nvjitlink.create(1, [f"-arch={name}"])
    try:
        data = ptx_text.encode()
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "numba_tma.ptx")
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as exc:
            log = _jitlink_log(handle)
            raise RuntimeError(f"nvJitLink could not assemble the PTX for {name}: {exc}\n{log}") from exc
        out = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, out)
        return bytes(out)
    finally:
        nvjitlink.destroy(handle)


def _jitlink_log(handle) -> str:
    from cuda.bindings import nvjitlink

    size = nvjitlink.get_error_log_size(handle)
    buf = bytearray(size)
    nvjitlink.get_error_log(handle, buf)
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


_OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def sass_opcodes(sass_text: str) -> set[str]:
    """Opcodes (with modifiers) appearing in ``cuobjdump`` output."""
    return set(_OPCODE.findall(sass_text))


def compile(fn, sig, arch="sm_90a", **options) -> Compiled:  # noqa: A001 - mirrors numba's name
    """PTX, cubin and SASS of kernel ``fn`` for ``arch`` (``"sm_90a"``, ``"sm_100a"``...)."""
    return _compile(fn, _signature(sig), parse_arch(arch), tuple(sorted(options.items())))


@functools.lru_cache(maxsize=256)
def _compile(fn, sig, cc, options):
    text = _ptx(fn, sig, cc, options)
    binary = cubin(text, cc)
    return Compiled(arch=arch_name(cc), ptx=text, cubin=binary, sass=sass(binary))
