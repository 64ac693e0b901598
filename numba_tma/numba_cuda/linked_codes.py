"""Everything a kernel links, with no GPU (hook 4 of :mod:`numba_tma.numba_cuda`, for
:mod:`numba_tma.inspect`): numba-cuda 0.30's code library of the kernel, and the CUDA sources it
links compiled with NVRTC directly, with numba-cuda's include paths and options."""

from __future__ import annotations

import numba.cuda.dispatcher as _dispatcher

from .whole_program import uses_setmaxnreg


def _nvrtc_includes():
    """numba-cuda's NVRTC include path (``cudadrv/nvrtc.py:compile``): its own headers for the
    toolkit's major version, the toolkit's, CCCL's and its memory-management headers."""
    import os

    from cuda import pathfinder
    from numba.cuda.cuda_paths import get_cuda_paths
    from numba.cuda.cudadrv import nvrtc

    root = os.path.dirname(os.path.dirname(os.path.abspath(nvrtc.__file__)))
    includes = [os.path.join(root, "include", str(nvrtc._get_nvrtc_version()[0])),
                get_cuda_paths()["include_dir"].info]
    cccl = pathfinder.locate_nvidia_header_directory("cccl")
    if cccl is not None:
        includes.append(cccl.abs_path)
    return includes + [os.path.join(root, "memory_management")]


def _nvrtc_code(source: bytes, name: str, cc, lto: bool):
    """The CUDA source as PTX (bytes), or with ``lto`` as LTO-IR (a ``LinkableCode``), as
    numba-cuda's ``nvrtc.compile`` makes it."""
    from cuda.bindings import nvrtc
    from numba.cuda.cudadrv.linkable_code import LTOIR

    def check(result, *values):
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC failed on {name}: {result}")
        return values[0] if values else None

    program = check(*nvrtc.nvrtcCreateProgram(source, name.encode(), 0, [], []))
    try:
        arch = f"sm_{cc[0]}{cc[1]}{cc[2] if len(cc) > 2 else ''}"
        options = [f"-arch={arch}".encode(), b"-rdc=true"] + [b"-dlto"] * lto + \
            [f"-I{d}".encode() for d in _nvrtc_includes()]
        result, = nvrtc.nvrtcCompileProgram(program, len(options), options)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = check(*nvrtc.nvrtcGetProgramLogSize(program))
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(program, log)
            raise RuntimeError(f"NVRTC could not compile {name}: {log.decode(errors='replace')}")
        if lto:
            code = b" " * check(*nvrtc.nvrtcGetLTOIRSize(program))
            check(*nvrtc.nvrtcGetLTOIR(program, code))
            return LTOIR(code, name=name)
        ptx = b" " * check(*nvrtc.nvrtcGetPTXSize(program))
        check(*nvrtc.nvrtcGetPTX(program, ptx))
        return ptx
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def _kernel_link_files(asm: str) -> list:
    """What numba-cuda's ``_Kernel`` adds to a kernel's link for this PTX: its reshape helpers
    (``reshape_funcs.cu``) when called, and the NRT library (its own ``maybe_link_nrt``)."""
    import os

    from numba.cuda.descriptor import cuda_target

    link = []
    if any(name in asm for name in _dispatcher.reshape_funcs):
        link.append(os.path.join(os.path.dirname(os.path.abspath(_dispatcher.__file__)), "reshape_funcs.cu"))
    _dispatcher._Kernel.maybe_link_nrt(_dispatcher._Kernel, link, cuda_target.target_context, asm)
    return link


def kernel_codes(fn, sig, cc, **options) -> tuple:
    """``(ptx, codes)``: the kernel's PTX and what numba-cuda's ``compile_all(fn, sig, device=False,
    cc=cc, output=...)`` returns for it — with ``output="ptx"`` (the PTX, then every file its code
    library links: CUDA sources compiled to PTX, other code as ``LinkableCode``), or for a kernel
    linked whole-program (hook 8) ``output="ltoir"`` — without the driver.  A ``@cuda.jit`` kernel's
    own ``launch_bounds`` and ``fastmath`` apply unless ``options`` give them (the code its launch
    compiles)."""
    from numba.cuda.compiler import _compile_pyfunc_with_fixup
    from numba.cuda.cudadrv.linkable_code import LTOIR, LinkableCode

    own = getattr(fn, "targetoptions", {})
    options.setdefault("launch_bounds", own.get("launch_bounds"))
    if own.get("fastmath"):
        options.setdefault("fastmath", own["fastmath"])
    lib, _ = _compile_pyfunc_with_fixup(fn, sig, device=False, abi="numba", cc=cc, **options)
    ptxes = list(lib.get_asm_strs(cc=cc))
    lto = uses_setmaxnreg(lib)
    codes = [LTOIR(lib.get_ltoir(cc=cc), name=lib._entry_name)] if lto else list(ptxes)
    for path in _kernel_link_files("\n".join(ptxes)):
        lib.add_linking_file(path)
    for path_or_obj in lib._linking_files:
        obj = LinkableCode.from_path_or_obj(path_or_obj)
        if obj.kind == "cu":
            source = obj.data.encode() if isinstance(obj.data, str) else bytes(obj.data)
            codes.append(_nvrtc_code(source, obj.name, cc, lto))
        else:
            codes.append(obj)
    return ptxes[0], codes
