"""Issue 19.2: what ``lds_array`` makes known at compile time is checked then.

``lds_array`` is the only LDS allocation of a kernel, so its arrays have a type of their
own (``LDSArray``) that slices and views keep: the ops refuse a global array where they
write LDS, an LDS array where they read global memory, and an LDS allocation smaller
than what they write.  Also: a negative constant bound, and an NVIDIA op in an AMD
kernel.
"""
import numba
import pytest

import numba_tma.amd as amd
from numba_tma import mbarrier
from numba_tma.amd import AMDArgumentError, UnsupportedArchError

SIG = "void(float32[::1], float32[::1], int32)"
SIG_2D = "void(float32[:, ::1], float32[:, ::1], int32)"


def _compile(source, arch="gfx942", signature=SIG):
    """Compile ``kern(x, y, n)`` whose body is *source*; x and y are global arrays."""
    namespace = {"amd": amd, "numba": numba, "mbarrier": mbarrier}
    exec("def kern(x, y, n):\n    lane = amd.workitem_id_x()\n    "
         + source.replace("\n", "\n    ") + "\n", namespace)
    return amd.compile(namespace["kern"], signature, arch)


_TILE = "t = amd.lds_array(256, numba.float32)\n"


@pytest.mark.parametrize("source,arch,rule", [
    (_TILE + "amd.buffer_load_to_local(y, x, lane)", "gfx942",
     r"amd.buffer_load_to_local: argument 'dest' must be an LDS array \(amd.lds_array, or a slice of one; a "
     r"kernel argument is global memory\); got array\(float32, 1d, C\)"),
    (_TILE + "amd.buffer_load_to_local(t, t, lane)", "gfx942",
     r"amd.buffer_load_to_local: argument 'ptr' must be a global array \(a kernel argument\); got lds "
     r"array\(float32, 1d, C\) of 1024 bytes"),
    (_TILE + "amd.async_load(t[64:], t, offsets=lane)", "gfx1250",
     r"amd.async_load: argument 'src' must be a global array \(a kernel argument\); got lds array\(float32, "
     r"1d, \w\) of 1024 bytes"),
    (_TILE + "amd.async_load(x, y, offsets=lane)", "gfx950", r"amd.async_load: argument 'result' must be an LDS array"),
], ids=["buffer-dest-global", "buffer-ptr-lds", "async-src-lds", "async-result-global"])
def test_dma_writes_lds_and_reads_global_memory(source, arch, rule):
    with pytest.raises(AMDArgumentError, match=rule):
        _compile(source, arch)


@pytest.mark.parametrize("source,arch,rule", [
    # 64 lanes x 4 bytes = 256 bytes; 32 floats are 128
    ("t = amd.lds_array(32, numba.float32)\namd.async_load(x, t, offsets=lane)", "gfx942",
     r"amd.async_load: argument 'result' must hold one wave's write, 64 lanes x 4 bytes \(256 bytes\); got "
     r"lds array\(float32, 1d, C\) of 128 bytes"),
    # 64 lanes x 16 bytes = 1024 bytes; 255 floats are 1020
    ("t = amd.lds_array(255, numba.float32)\namd.buffer_load_to_local(t, x, lane, width=16)",
     "gfx950", r"amd.buffer_load_to_local: argument 'dest' must hold one wave's write, 64 lanes x 16 bytes "
               r"\(1024 bytes\); got lds array\(float32, 1d, C\) of 1020 bytes"),
    # masked lanes of a zero-filling buffer load write zeros: the whole wave writes
    ("t = amd.lds_array(63, numba.float32)\namd.buffer_load_to_local(t, x, lane, mask=lane < n)",
     "gfx942", r"amd.buffer_load_to_local: argument 'dest' must hold one wave's write, 64 lanes x 4 bytes \(256 bytes\); got lds array\(float32, 1d, C\) of 252 bytes"),
    # the masked lanes store other
    ("t = amd.lds_array(16, numba.float32)\n"
     "amd.async_load(x, t, offsets=lane, mask=lane < 16, other=1.0)", "gfx1250",
     r"amd.async_load: argument 'result' must hold one wave's write, 32 lanes x 4 bytes \(128 bytes\); got lds "
     r"array\(float32, 1d, C\) of 64 bytes"),
], ids=["async-gfx942", "buffer-x4-gfx950", "buffer-zero-fill", "async-other-gfx1250"])
def test_an_lds_array_smaller_than_one_wave_s_write_is_refused(source, arch, rule):
    with pytest.raises(AMDArgumentError, match=rule):
        _compile(source, arch)


@pytest.mark.parametrize("source,arch", [
    ("t = amd.lds_array(32, numba.float32)\namd.async_load(x, t, offsets=lane)", "gfx1250"),  # wave32
    ("t = amd.lds_array(32, numba.float32)\namd.async_load(x, t, offsets=lane, mask=lane < 32)",
     "gfx942"),  # the masked lanes write nothing
    ("t = amd.lds_array((4, 64), numba.float32)\namd.async_load(x, t[1], offsets=lane)\n"
     "amd.async_load(x, t.reshape(256)[64:], offsets=lane)\n"
     "u = amd.lds_array(64, numba.float32)\namd.async_load(x, t[2] if n > 0 else u, offsets=lane)\n"
     "v = y if n > 0 else t[0]\nv[lane] = 1.0", "gfx942"),  # rows, views, unified arrays
    ("amd.barrier_arrive(amd.lds_array(4, numba.float32).view(numba.int64))", "gfx1250"),
], ids=["wave32", "masked", "views", "barrier-view"])
def test_lds_arrays_that_fit_compile(source, arch):
    _compile(source, arch)


_DESC = "d = amd.make_tensor_descriptor(x, (4, 64){pad})\n"


@pytest.mark.parametrize("source,pad,floats,needed", [
    ("amd.async_amd_descriptor_load(d, t)", "", 256, 1024),
    ("amd.async_amd_descriptor_store(d, t)", "", 256, 1024),
    ("amd.async_amd_descriptor_load_fused(((d, t[:128], 1), (d, t, 2)))", "", 256, 1024),
    # a pad of 4 floats after each 64: after elements 64, 128 and 192 (none after the
    # last), so the block spans 256 + 3 x 4 = 268 floats
    ("amd.async_amd_descriptor_load(d, t)", ", 64, 4", 268, 1072),
], ids=["load", "store", "fused", "padded"])
def test_a_tdm_block_larger_than_its_lds_array_is_refused(source, pad, floats, needed):
    body = _DESC.format(pad=pad) + source
    _compile(f"t = amd.lds_array({floats}, numba.float32)\n" + body, "gfx1250", SIG_2D)
    op = source.split("(")[0].removeprefix("amd.")
    with pytest.raises(AMDArgumentError, match=rf"numba_tma: amd.{op}: argument '\w+' must hold one block of \(4, 64\) x "
                                               rf"4 bytes.* \({needed} bytes\); got lds "
                                               rf"array\(float32, 1d, C\) of {needed - 4} bytes"):
        _compile(f"t = amd.lds_array({floats - 1}, numba.float32)\n" + body, "gfx1250", SIG_2D)


@pytest.mark.parametrize("source,rule", [
    (_TILE + "d = amd.make_tensor_descriptor(t, (4, 64))",
     r"amd.make_tensor_descriptor: argument 'array' must be a global array \(a kernel argument\)"),
    (_DESC.format(pad="") + "amd.async_amd_descriptor_load(d, y[0])",
     r"amd.async_amd_descriptor_load: argument 'result' must be an LDS array"),
    ("amd.barrier_arrive(y[0].view(numba.int64))", r"amd.barrier_arrive: argument 'bar' must be an LDS array"),
], ids=["descriptor-of-lds", "load-into-global", "barrier-global"])
def test_tdm_and_barrier_arrays_are_in_their_memory(source, rule):
    with pytest.raises(AMDArgumentError, match=rule):
        _compile(source, "gfx1250", SIG_2D)


@pytest.mark.parametrize("bounds,rule", [
    ("(-1, 64)", r"argument 'set_bounds\[0\]' must be an int in \[0, 2147483647\]; got -1"),
    ("(64, -5)", r"argument 'set_bounds\[1\]' must be an int in \[0, 2147483647\]; got -5"),
    ("(2**31, 64)", r"argument 'set_bounds\[0\]' must be an int in \[0, 2147483647\]; got 2147483648"),
], ids=["minus-1", "minus-5", "2**31"])
def test_a_constant_bound_out_of_range_is_refused(bounds, rule):
    """It was truncated to the 32-bit field: -1 became a bound of 2**32 - 1."""
    source = (_TILE + _DESC.format(pad="") + "amd.async_amd_descriptor_load("
              f"amd.update_tensor_descriptor(d, set_bounds={bounds}), t)")
    with pytest.raises(AMDArgumentError, match="numba_tma: amd.update_tensor_descriptor: " + rule):
        _compile(source, "gfx1250", SIG_2D)


@pytest.mark.parametrize("source", [
    "b = amd.lds_array(1, numba.int64)\nmbarrier.init(b, 1)",   # an attribute of the module
    "b = amd.lds_array(1, numba.int64)\ninit(b, 1)",            # the op itself
], ids=["module-attribute", "imported"])
def test_an_nvidia_op_in_an_amd_kernel_is_named(source):
    """Numba's error was ``Unknown attribute 'init' of type Module(...)`` (or
    ``Untyped global name 'init'``)."""
    with pytest.raises(UnsupportedArchError, match=r"numba_tma\.mbarrier\.init is an NVIDIA op "
                                                   r"\(numba-tma's CUDA API\): AMD kernels use "
                                                   r"the ops of numba_tma\.amd"):
        namespace = {"amd": amd, "numba": numba, "mbarrier": mbarrier, "init": mbarrier.init}
        exec("def kern(x, y, n):\n    " + source.replace("\n", "\n    ") + "\n", namespace)
        amd.compile(namespace["kern"], SIG, "gfx942")
