"""Ids and LDS: this lane's index in its workgroup, the workgroup's in the grid, and the
workgroup's LDS arrays (``lds_array``, which the LDS operands of the other families take)."""
import math

from llvmlite import ir
from numba.core import cgutils, types

from ...declarations import Refusal
from .. import lds, targets
from .._core import AmdOp, Sample, Typed, shown
from ..errors import reject
from ..llvm_ir import I32, call_intrinsic
from ..targets import ALL, Requirement


def _read_id(llvm_name):
    def typing():
        def codegen(context, builder, sig, args):
            return call_intrinsic(builder, llvm_name, I32, [])
        return types.int32, codegen
    return typing


workitem_id_x = AmdOp(
    "amd.workitem_id_x", _read_id("llvm.amdgcn.workitem.id.x"), result="int", need=Requirement(ALL, 15),
    llvm=("llvm.amdgcn.workitem.id.x",),
    doc="""This lane's x index in its workgroup (``threadIdx.x``): VGPR v0 at kernel entry (gfx9),
    or its low 10 bits (gfx1250, where the ids are packed).  All archs.

    Example::

        lane = amd.workitem_id_x()
    """,
    samples=(Sample("y[0] = amd.workitem_id_x()", "v_cvt_f32_u32_e32 %v, v0",   # read from v0, where the hardware puts it
                    "AMDGPUUsage: Initial Kernel Execution State (work-item id in v0)"),),
    refusals=(Refusal("amd.workitem_id_x(0)", "workitem_id_x takes ()"),),
).intrinsic()

workgroup_id_x = AmdOp(
    "amd.workgroup_id_x", _read_id("llvm.amdgcn.workgroup.id.x"), result="int", need=Requirement(ALL, 15),
    llvm=("llvm.amdgcn.workgroup.id.x",),
    doc="""The workgroup's x index in the grid (``blockIdx.x``), in an SGPR.  All archs.

    Example::

        block = amd.workgroup_id_x()
    """,
    samples=(Sample("y[0] = amd.workgroup_id_x()",
                    # gfx9: converted straight from s2, the system SGPR after the kernarg pointer
                    # s[0:1] (never loaded); gfx1250: ttmp9, or in a cluster the cluster fields of
                    # ttmp6 (IB_STS2 says whether there is one)
                    {"gfx1250": ("s_bfe_u32 %s, ttmp6, 0x4000c", "s_getreg_b32 %s, hwreg(HW_REG_IB_STS2, 6, 4)",
                                 "s_cselect_b32 %s, ttmp9, %s", "s_cvt_f32_i32 %s, %s"),
                     "": "v_cvt_f32_i32_e32 %v, s2"},
                    "AMDGPUUsage: Initial Kernel Execution State (work-group id in an SGPR; GFX12.5 "
                    "architected SGPRs ttmp9 / ttmp6)"),),
    refusals=(Refusal("amd.workgroup_id_x(0)", "workgroup_id_x takes ()"),),
).intrinsic()


#: the most LDS any arch has per workgroup (each arch's own limit is checked by compile)
_MAX_LDS_BYTES = max(a.lds_bytes for a in targets.ARCHS.values())


def _dims(shape):
    """``lds_array``'s dims (a positive int or a non-empty tuple of them, constants: as
    :class:`_Shape` checks), or ``()`` for any other argument."""
    items = tuple(shape) if isinstance(shape, types.BaseTuple) else (shape,)
    dims = tuple(t.literal_value for t in items if isinstance(t, types.IntegerLiteral))
    return dims if items and len(dims) == len(items) and min(dims) >= 1 else ()


class _Shape(Typed):
    """``lds_array``'s shape: a positive int or a non-empty tuple of them, constants."""

    def check(self, op_name, ty):
        if not _dims(ty):
            raise reject(op_name, self.name, "must be a positive int or a non-empty tuple of positive ints, "
                         "known at compile time", shown(ty))


class _ScalarDtype(Typed):
    """An element type: a scalar Numba or NumPy dtype such as ``numba.float32``."""

    def check(self, op_name, ty):
        if not (isinstance(ty, (types.DType, types.NumberClass)) and isinstance(ty.dtype, (types.Number, types.Boolean))):
            raise reject(op_name, self.name, "must be a scalar Numba or NumPy dtype such as numba.float32", shown(ty))


def _nbytes(dims, elem):
    return math.prod(dims) * (1 if isinstance(elem, types.Boolean) else elem.bitwidth // 8)


def _fits_any_lds(shape, dtype):
    """The rule of two arguments: the array (shape x dtype) fits in the largest LDS of any arch."""
    dims, elem = _dims(shape), dtype.dtype
    if _nbytes(dims, elem) > _MAX_LDS_BYTES:
        raise reject("lds_array", "shape", f"must fit in {_MAX_LDS_BYTES} bytes of {elem}, the largest LDS "
                     "of any arch", f"{dims}, {_nbytes(dims, elem)} bytes")


def _lds_array(shape, dtype):
    dims, elem = _dims(shape), dtype.dtype
    aryty = lds.LDSArray(elem, len(dims), "C", _nbytes(dims, elem))

    def codegen(context, builder, sig, args):
        elem = context.get_data_type(aryty.dtype)
        itemsize = context.get_abi_sizeof(elem)
        storage = ir.ArrayType(elem, math.prod(dims))
        gv = cgutils.add_global_variable(builder.module, storage, "lds", addrspace=3)
        gv.linkage = "internal"
        gv.initializer = ir.Constant(storage, ir.Undefined)  # LDS cannot be initialized
        gv.align = 16
        strides, step = [], itemsize
        for n in reversed(dims):
            strides.insert(0, step)
            step *= n
        ary = context.make_array(aryty)(context, builder)
        intp = lambda n: context.get_constant(types.intp, n)  # noqa: E731
        context.populate_array(ary, data=builder.addrspacecast(gv, ary.data.type),
                               shape=[intp(n) for n in dims],
                               strides=[intp(s) for s in strides],
                               itemsize=intp(itemsize), meminfo=None)
        return ary._getvalue()

    return aryty, codegen


lds_array = AmdOp(
    "amd.lds_array", _lds_array, (_Shape("shape", "int | tuple[int, ...]"), _ScalarDtype("dtype", "type")),
    check=_fits_any_lds,
    result="LDSArray", need=Requirement(ALL, 15),
    doc="""A C-contiguous array in LDS (``addrspace(3)``), like ``cuda.shared.array``.

    *shape*: a positive int or a tuple of them, constants.  *dtype*: a scalar dtype.
    Arrays above the largest LDS of any arch (320 KiB) are refused here; the arch's
    own limit is checked by :func:`numba_tma.amd.compile`.  Its type is an
    :class:`~numba_tma.amd.lds.LDSArray`, which its slices and views keep, so the ops
    check that their LDS arguments are in LDS and large enough.  It emits no instruction:
    an ``addrspace(3)`` global that the kernel's LDS size counts.

    Example::

        tile = amd.lds_array(1024, numba.float32)
    """,
    samples=(Sample("t = amd.lds_array(64, numba.float32)\nt[lane] = 1.0\ny[lane] = t[63 - lane]",
                    {"gfx1250": ("ds_store_b32 %v, %v", "ds_load_b32 %v, %v"),
                     "": ("ds_write_b32 %v, %v", "ds_read_b32 %v, %v")},
                    "CDNA3 ISA 12.x DS instructions; GFX12 renames them ds_store / ds_load"),),
    refusals=(Refusal("amd.lds_array(0, numba.float32)", "amd.lds_array: argument 'shape' must be a positive int"),
              Refusal("amd.lds_array(4, 4)", "amd.lds_array: argument 'dtype' must be a scalar Numba or NumPy dtype"),
              Refusal("amd.lds_array((512, 161), numba.float32)", "amd.lds_array: argument 'shape' must fit in 327680 "
                      "bytes of float32, the largest LDS of any arch; got (512, 161), 329728 bytes")),
).intrinsic()
