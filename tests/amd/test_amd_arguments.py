"""Wrong arguments raise ``AMDArgumentError`` naming the argument and the rule.

Review finding: ``lds_array(-1, ...)`` reached an LLVM parse error, and other bad
arguments a raw ``TypeError`` / ``KeyError`` or a Numba error naming the wrong argument.
The fuzz tests call every public entry point with wrong-typed values and let no other
exception type through.
"""
import numba
import numpy as np
import pytest

import numba_tma.amd as amd
from numba_tma.amd import AMDArgumentError, UnsupportedArchError

SIG = "void(float32[::1], float32[::1])"
SIG_2D = "void(float32[:, ::1], float32[:, ::1])"
WRONG = [None, -1, 0, 1.5, True, "", "x", (), (1, "x")]
#: dtype objects the kernels below name as globals
DTYPES = {"F64": np.dtype(np.float64), "RECORD": np.dtype([("a", np.int32)])}


def _kernel(body, value):
    """A kernel ``kern(x, y)`` whose body is *body* with ``{v}`` the literal *value*."""
    namespace = {"amd": amd, "numba": numba, "np": np, **DTYPES}
    exec(f"def kern(x, y):\n    {body.format(v=repr(value))}\n", namespace)
    return namespace["kern"]


def _compiles(body, value, arch="gfx942", signature=SIG):
    return amd.compile(_kernel(body, value), signature, arch)


# -- lds_array --------------------------------------------------------------------------

_USE_TILE = "\n    t[0] = x[0]\n    y[0] = t[1]"
_SHAPE_RULE = (r"amd.lds_array: argument 'shape' must be a positive int or a non-empty tuple of positive "
               r"ints, known at compile time; got ")


@pytest.mark.parametrize("shape,shown", [
    (-1, "-1"), (0, "0"), ((4, 0), r"\(4, 0\)"), ((4, 1.5), r"\(4, float64\)"),
    (None, "None"), (1.5, "float64"), ("64", "'64'"), (True, "True"), ((), r"\(\)"),
])
def test_lds_array_bad_shape(shape, shown):
    with pytest.raises(AMDArgumentError, match=_SHAPE_RULE + shown):
        _compiles("t = amd.lds_array({v}, numba.float32)" + _USE_TILE, shape)


def test_lds_array_runtime_shape():
    def kern(x, y):
        t = amd.lds_array(x.size, numba.float32)
        y[0] = t[0]

    with pytest.raises(AMDArgumentError, match=_SHAPE_RULE + "int64"):
        amd.compile(kern, SIG, "gfx942")


@pytest.mark.parametrize("dtype", ["None", "'float32'", "4", "numba.float32[::1]",
                                   "RECORD"])
def test_lds_array_bad_dtype(dtype):
    with pytest.raises(AMDArgumentError, match=r"amd.lds_array: argument 'dtype' must be a scalar Numba or "
                                               r"NumPy dtype such as numba.float32; got "):
        amd.compile(_kernel("t = amd.lds_array(64, " + dtype + ")" + _USE_TILE, None),
                    SIG, "gfx942")


def test_lds_array_above_every_arch_limit():
    """Refused when typed, whatever the arch: 81921 floats are 4 bytes more than the
    320 KiB of gfx1250, the largest LDS."""
    with pytest.raises(AMDArgumentError, match=r"numba_tma: amd.lds_array: argument 'shape' must fit in 327680 bytes of "
                                               r"float32, the largest LDS of any arch; got \(81921,\), 327684 bytes"):
        _compiles("t = amd.lds_array({v}, numba.float32)" + _USE_TILE, 81921, "gfx1250")
    with pytest.raises(AMDArgumentError, match=r"argument 'shape' must fit in 327680 bytes .*; got .*17592186044416 bytes"):
        _compiles("t = amd.lds_array({v}, numba.float32)" + _USE_TILE, (2**21, 2**21))


@pytest.mark.parametrize("shape,dtype,at", [
    (64, "numba.float32", "1"), ((4, 16), "np.int8", "1, 2"), (8, "F64", "1"),
    (16, "numba.boolean", "1"),
])
def test_lds_array_good_arguments(shape, dtype, at):
    _compiles("t = amd.lds_array({v}, " + dtype + f")\n    t[{at}] = t[{at}]", shape)


# -- compile-time arguments of the ops --------------------------------------------------

_TDM = "d = amd.make_tensor_descriptor(x, (8, 8))\n    t = amd.lds_array(128, numba.float32)\n    "
_LDS = "t = amd.lds_array(64, numba.float32)\n    "

# (op, argument) -> (arch, body with {v}, values that are valid for the argument)
OP_ARGUMENTS = {
    ("lds_array", "shape"): ("gfx942", "t = amd.lds_array({v}, numba.float32)" + _USE_TILE, ()),
    ("lds_array", "dtype"): ("gfx942", "t = amd.lds_array(64, {v})" + _USE_TILE, ()),
    ("async_load_wait_group", "pendings"): ("gfx942", "amd.async_load_wait_group({v})", (0,)),
    ("amd_sched_barrier", "mask"): ("gfx942", "amd.amd_sched_barrier({v})", (0,)),
    ("s_setprio", "priority"): ("gfx942", "amd.s_setprio({v})", (0, 1)),
    ("sched_group_barrier", "size"): ("gfx942", "amd.sched_group_barrier(8, {v}, 0)", (0,)),
    ("async_load", "offsets"): ("gfx942", _LDS + "amd.async_load(x, t, offsets={v})", (-1, 0)),
    ("async_load", "mask"): ("gfx942", _LDS + "amd.async_load(x, t, mask={v})",
                             (None, True)),
    ("async_load", "other"): ("gfx942", _LDS + "amd.async_load(x, t, mask=x[0] > 0, "
                              "other={v})", (None, -1, 0, 1.5, True)),
    ("async_load", "width"): ("gfx942", _LDS + "amd.async_load(x, t, width={v})", ()),
    ("async_load", "cache_modifier"): (
        "gfx942", _LDS + "amd.async_load(x, t, cache_modifier={v})", ("",)),
    ("buffer_load_to_local", "offsets"): (
        "gfx942", _LDS + "amd.buffer_load_to_local(t, x, {v})", (0,)),
    ("buffer_load_to_local", "width"): (
        "gfx942", _LDS + "amd.buffer_load_to_local(t, x, 0, width={v})", ()),
    ("barrier_arrive", "arrive_count"): (
        "gfx1250", "b = amd.lds_array(1, numba.int64)\n    amd.barrier_arrive(b, {v})", ()),
    ("make_tensor_descriptor", "block_shape"): (
        "gfx1250", "d = amd.make_tensor_descriptor(x, {v})", ()),
    ("make_tensor_descriptor", "pad_interval"): (
        "gfx1250", "d = amd.make_tensor_descriptor(x, (8, 8), {v})", (0,)),
    ("update_tensor_descriptor", "add_offsets"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_load(amd.update_tensor_descriptor("
        "d, add_offsets={v}), t)", (None,)),
    ("update_tensor_descriptor", "set_bounds"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_load(amd.update_tensor_descriptor("
        "d, set_bounds={v}), t)", (None,)),
    ("update_tensor_descriptor", "pred"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_load(amd.update_tensor_descriptor("
        "d, pred={v}), t)", (None, True)),
    ("update_tensor_descriptor", "clamp_bounds"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_load(amd.update_tensor_descriptor("
        "d, add_offsets=(1, 0), clamp_bounds={v}), t)", (True,)),
    ("async_amd_descriptor_load", "offsets"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_load(d, t, offsets={v})", (None,)),
    ("async_amd_descriptor_load", "pred"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_load(d, t, pred={v})", (None, True)),
    ("async_amd_descriptor_store", "offsets"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_store(d, t, offsets={v})", (None,)),
    ("async_amd_descriptor_load_fused", "warp_used_hint"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_load_fused(((d, t, {v}), (d, t[64:], 12)))",
        ()),
    ("async_amd_descriptor_load_fused", "cache_modifier"): (
        "gfx1250", _TDM + "amd.async_amd_descriptor_load_fused(((d, t, 3), (d, t[64:], 12)), "
        "{v})", ("",)),
    ("async_amd_descriptor_wait", "pendings"): (
        "gfx1250", "amd.async_amd_descriptor_wait({v})", (0,)),
}


def _is_one_of(value, values):
    return any(type(value) is type(v) and value == v for v in values)


@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize("op_argument", OP_ARGUMENTS, ids="-".join)
def test_op_arguments_fuzz(op_argument, value):
    """Each wrong value raises AMDArgumentError naming the argument; nothing else escapes."""
    arch, body, valid = OP_ARGUMENTS[op_argument]
    signature = SIG_2D if arch == "gfx1250" else SIG
    if _is_one_of(value, valid):
        _compiles(body, value, arch, signature)
        return
    with pytest.raises(AMDArgumentError, match=op_argument[1]):
        _compiles(body, value, arch, signature)


def test_argument_errors_name_the_argument_not_a_neighbour():
    """Review finding: a float size was reported as "mask must be a compile-time
    constant, got int64", from Numba's retry without literals."""
    with pytest.raises(AMDArgumentError, match="numba_tma: amd.sched_group_barrier: argument 'size' must be "
                                               "a compile-time constant; got float64"):
        _compiles("amd.sched_group_barrier(8, {v}, 0)", 1.5)


# -- host-side entry points -------------------------------------------------------------

def _two_args(x, y):
    pass


def _compiled_object():
    return amd.compile(_two_args, SIG, "gfx942").object


# (function, argument) -> (call with the argument set to a value, values that are valid)
HOST_ARGUMENTS = {
    ("compile", "pyfunc"): (lambda v: amd.compile(v, SIG, "gfx942"), ()),
    ("compile", "signature"): (lambda v: amd.compile(_two_args, v, "gfx942"), ()),
    ("compile", "arch"): (lambda v: amd.compile(_two_args, SIG, v), ()),
    ("compile", "name"): (lambda v: amd.compile(_two_args, SIG, "gfx942", name=v),
                          (None, "x")),
    ("compile", "max_workgroup_size"): (
        lambda v: amd.compile(_two_args, SIG, "gfx942", max_workgroup_size=v), (None, 1)),
    ("compile_ir", "module"): (lambda v: amd.compile_ir(v, "gfx942"), ("",)),
    ("compile_ir", "arch"): (lambda v: amd.compile_ir("", v), ()),
    ("compile_ir", "keep"): (lambda v: amd.compile_ir("", "gfx942", keep=v),
                             ((), ["gfx942"])),
    ("link_hsaco", "obj"): (amd.link_hsaco, ()),
}


def _value_id(value):
    """A test id that is the same in every process (pytest-xdist's workers must agree)."""
    return "object()" if type(value) is object else repr(value)


@pytest.mark.parametrize("value", WRONG + [b"", b"\x7fELF" + bytes(60), ["gfx942"], object()],
                         ids=_value_id)
@pytest.mark.parametrize("function_argument", HOST_ARGUMENTS, ids="-".join)
def test_host_entry_points_fuzz(function_argument, value):
    """Each wrong value raises AMDArgumentError naming the argument, before LLVM or ld.lld
    runs; an unknown arch name (a str) raises UnsupportedArchError."""
    call, valid = HOST_ARGUMENTS[function_argument]
    if _is_one_of(value, valid):
        call(value)
        return
    argument = function_argument[1]
    error = UnsupportedArchError if argument == "arch" and isinstance(value, str) else \
        AMDArgumentError
    with pytest.raises(error, match=argument):
        call(value)


@pytest.mark.parametrize("call,rule", [
    (lambda: amd.compile(_two_args, "int32(float32[::1], float32[::1])", "gfx942"),
     "amd.compile: argument 'signature' must return void"),
    (lambda: amd.compile(_two_args, "void(float32[::1])", "gfx942"),
     r"amd.compile: argument 'signature' must give one type per parameter of _two_args \(2\); got 1"),
    (lambda: amd.compile(_two_args, "void(flot32[::1], float32[::1])", "gfx942"),
     r"amd.compile: argument 'signature' must be a Numba signature .*\(name 'flot32' is not defined\)"),
    (lambda: amd.compile(_two_args, SIG, "gfx942", max_workgroup_size=1025),
     r"numba_tma: amd.compile: argument 'max_workgroup_size' must be None or an int in \[1, 1024\]; got 1025"),
    (lambda: amd.compile(_two_args, SIG, "gfx942", max_workgroup_size=np.int32(64)),
     r"amd.compile: argument 'max_workgroup_size' must be None or an int in \[1, 1024\]"),
    (lambda: amd.compile_ir("define void @k( {", "gfx942"),
     r"numba_tma: amd.compile_ir: argument 'module' must be valid LLVM IR; got LLVM IR parsing error"),
    (lambda: amd.link_hsaco(b"\x7fELF" + bytes(60)),
     r"amd.link_hsaco: argument 'obj' must be the bytes of an AMDGPU ELF object \(CompiledModule.object\)"),
])
def test_host_argument_rules(call, rule):
    with pytest.raises(AMDArgumentError, match=rule):
        call()


def test_link_hsaco_takes_a_compiled_object():
    """The object check accepts what compile produces (ld.lld may still be missing)."""
    if amd.find_ld_lld() is None:
        with pytest.raises(FileNotFoundError, match="ld.lld not found"):
            amd.link_hsaco(_compiled_object())
    else:
        assert amd.link_hsaco(_compiled_object())[:4] == b"\x7fELF"
