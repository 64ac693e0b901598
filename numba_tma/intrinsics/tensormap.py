"""Editing tensor maps on the device (sm_90a): copy a descriptor into a buffer, replace its fields,
and publish it to the TMA unit — so one kernel can retarget a descriptor per problem (a grouped
GEMM walking tensors of different shapes and addresses).

The usual sequence: ``copy`` the by-value map into a 128-byte-aligned ``uint8`` buffer in shared
memory, ``replace_*`` the fields there, ``cp_fenceproxy`` it to a 128-byte buffer in global
memory, then ``fence.proxy_tensormap_acquire(buf, "gpu")`` before passing that buffer to
``tma.load`` / ``tma.store`` (which take a ``uint8`` device array as the descriptor).  Field values
are the logical ones (a dimension's size in elements, a stride in bytes), dimensions counted
innermost first as in the driver's arguments: ``i = 0`` is the array's last axis; strides are the
driver's ``globalStrides`` (``i = 0`` is the stride of dimension 1).
"""

from numba.cuda import types

from . import debug
from ._core import (IMMEDIATE, Refusal, Const, GlobalArray, Int, PtxOp, Qualifier, Requirement, Sample, SharedArray, exported, literal,
                    reject)
from .tma import Descriptor

SM90A = Requirement((9, 0), (8, 3), arch_specific=True)
_SCOPES = {"cta": ".cta", "cluster": ".cluster", "gpu": ".gpu", "sys": ".sys"}


def _buffer(name="buf"):
    return GlobalArray(name, what="a uint8 array (global or shared memory) holding a 128-byte descriptor",
                       dtypes=(types.uint8,))


_COPY = "\n".join(f" ld.v2.b64 {{{{a, b}}}}, [{{desc}}+{16 * i}];\n st.v2.b64 [{{buf}}+{16 * i}], {{{{a, b}}}};"
                  for i in range(8))

copy = PtxOp(
    "tensormap.copy", "{{\n .reg .b64 a, b;\n" + _COPY + "\n}}", (_buffer(), Descriptor("desc")),
    order=("buf", "desc"), need=Requirement((9, 0), (8, 0)),
    tlx=("cute.nvgpu.cpasync.copy_tensormap",),
    samples=(Sample("tensormap.copy(desc, desc)", "LD.E.128", isa="9.7.9.8 ld; 9.7.9.11 st",
                    ptx=tuple(line for offset in range(0, 128, 16) for line in (
                        f"ld.v2.b64 {{a, b}}, [%rd+{offset}];", f"st.v2.b64 [%rd+{offset}], {{a, b}};"))),),
    doc="""Copy the 128 bytes of ``desc`` (a by-value :class:`numba_tma.TensorMap` or a descriptor in a
    ``uint8`` device array) into ``buf`` (a 128-byte-aligned ``uint8`` array, shared or global), to
    edit it there.

    Example::

        buf = cuda.shared.array(128, numba.uint8, alignment=128)
        tensormap.copy(buf, desc)
    """,
    refusals=(Refusal('tensormap.copy(smem, desc)',
                      "tensormap.copy: argument 'buf' must be"),),
).intrinsic()


def _check_value(name, lo, hi, multiple, what):
    """``check`` and ``debug`` hooks of a replaced field whose values have a range (``lo``..``hi``)
    and an alignment (``multiple``): a constant outside is refused at compile time, a run-time
    value traps in debug mode."""
    rule = f"must be {lo} to {hi}" + (f", a multiple of {multiple}" if multiple else "") + f" ({what})"

    def check(value, **_):
        v = literal(value)
        if isinstance(v, int) and multiple and v % multiple:
            raise reject(f"tensormap.{name}", "value", rule, v)

    def run_time(d, tys, args):
        value = d.int64(args["value"], tys["value"])
        if multiple:
            debug.check_multiple(d, f"tensormap.{name}", "value", value, 1, multiple, what)
        debug.check_range(d, f"tensormap.{name}", "value", value, lo, hi, what)
    return rule, check, run_time


def _field(name, field, value_bits, indexed, doc, line, immediate=None, limits=None, multiple=None, what="", last=4,
           refusals=(), example="(buf, 1, n_rows)"):
    """``tensormap.replace`` of one field; ``immediate=(lo, hi)``: the PTX takes the value only as
    a constant (the enumerated fields); ``limits`` / ``multiple``: the values the tensormap can
    hold (``what`` says why); ``last``: the highest dimension index ``i``; ``line``: the PTX of its
    assembly row (``i = 1``, the value ``out[1]`` or the lowest immediate), by hand from PTX ISA
    9.1 section 9.7.9.28; ``example``: the arguments of the docs' example call."""
    ptx_type = f"b{value_bits}"
    check = run_time = None
    if immediate:
        value = Const("value", *immediate)
    else:
        rule, check, run_time = _check_value(name, *limits, multiple, what)
        value = Int("value", bits=value_bits, lo=limits[0], hi=limits[1], rule=rule)
    operands = [_buffer()] + ([Const("i", 0, last)] if indexed else []) + [value]
    ordinal = "{i}, " if indexed else ""
    call = f"tensormap.{name}(desc, {'1, ' if indexed else ''}{immediate[0] if immediate else 'out[1]'})"
    return PtxOp(
        f"tensormap.{name}", f"tensormap.replace.tile.{field}.b1024.{ptx_type} [{{buf}}], {ordinal}{{value}};",
        tuple(operands), need=SM90A, check=check, debug=run_time,
        tlx=(f"cuda::ptx::tensormap_replace_{field}", "cute tensormap_replace"),
        samples=(Sample(call, "ST.E", ptx=line, isa="9.7.9.28 tensormap.replace"),),   # a read-modify-write of the bits
        refusals=refusals,
        doc=doc + ("" if immediate else f"""  ``value`` {value.rule}: a constant outside is
    refused at compile time, a run-time one traps in debug mode.""") + """

    Example::

        tensormap.""" + name + example + """
    """,
    ).intrinsic()


replace_global_address = _field("replace_global_address", "global_address", 64, False,
                                """Set the descriptor's global address (16-byte aligned; 32 for interleaved maps).""",
                                "tensormap.replace.tile.global_address.b1024.b64 [%rd], %rd;",
                                limits=(0, (1 << 64) - 16), multiple=16, what="TMA addresses are 16-byte aligned",
                                refusals=(Refusal('tensormap.replace_global_address(desc, 8)',
                      "tensormap.replace_global_address: argument 'value'"),),
                                example="(buf, addresses[cuda.blockIdx.x])     # addresses: a uint64 array")
replace_rank = _field("replace_rank", "rank", 32, False, """Set the descriptor's rank: ``value`` is the
    rank minus one, as the PTX ISA's ``.rank`` field takes it (measured: ``tests/test_gpu_sync_tensormap.py``).""",
                      "tensormap.replace.tile.rank.b1024.b32 [%rd], %r;",
                      limits=(0, 4), what="rank - 1, for ranks 1 to 5",
                      refusals=(Refusal('tensormap.replace_rank(desc, 5)',
                      "tensormap.replace_rank: argument 'value'"),), example="(buf, 1)     # a 2-D map")
replace_box_dim = _field("replace_box_dim", "box_dim", 32, True, """Set box dimension ``i`` (innermost
    first) to ``value`` elements.""", "tensormap.replace.tile.box_dim.b1024.b32 [%rd], 1, %r;",
                         limits=(1, 256), what="elements per box dimension",
                         refusals=(Refusal('tensormap.replace_box_dim(desc, 1, 257)',
                      "tensormap.replace_box_dim: argument 'value' must be 1 to 256 (elements per box dimension)"),
              Refusal('tensormap.replace_box_dim(desc, out[0], 8)',
                      "tensormap.replace_box_dim: argument 'i' must be a compile-time integer constant", constant_only=IMMEDIATE),))
replace_global_dim = _field("replace_global_dim", "global_dim", 32, True, """Set tensor dimension ``i``
    (innermost first) to ``value`` elements.  A store through the edited map may write past a
    dimension 0 that is not whole 16-byte chunks: debug mode traps it (``tma.store``).""",
                            "tensormap.replace.tile.global_dim.b1024.b32 [%rd], 1, %r;",
                            limits=(1, (1 << 32) - 1), what="elements; a 32-bit field",
                            refusals=(Refusal('tensormap.replace_global_dim(desc, 5, 64)',
                      "tensormap.replace_global_dim: argument 'i' must be in [0, 4]"),))
replace_global_stride = _field("replace_global_stride", "global_stride", 64, True, """Set global stride
    ``i`` (0 to 3: the driver's ``globalStrides[i]``, the byte stride of dimension ``i + 1``) to
    ``value`` bytes.""", "tensormap.replace.tile.global_stride.b1024.b64 [%rd], 1, %rd;",
                               limits=(16, (1 << 40) - 16), multiple=16, what="bytes, below 2**40", last=3,
                               refusals=(Refusal('tensormap.replace_global_stride(desc, 0, 24)',
                      "tensormap.replace_global_stride: argument 'value'"),))
replace_element_stride = _field("replace_element_stride", "element_stride", 32, True, """Set element
    stride ``i`` (innermost first) to ``value``.""", "tensormap.replace.tile.element_stride.b1024.b32 [%rd], 1, %r;",
                                limits=(1, 8), what="elements",
                                refusals=(Refusal('tensormap.replace_element_stride(desc, 1, 9)',
                      "tensormap.replace_element_stride: argument 'value' must be 1 to 8 (elements)"),))
replace_elemtype = _field("replace_elemtype", "elemtype", 32, False, """Set the element type (the PTX
    ISA's ``.elemtype`` code: the descriptor's type field, see ``numba_tma.descriptors.enums.TYPE_INFO``).""",
                          "tensormap.replace.tile.elemtype.b1024.b32 [%rd], 0;", immediate=(0, 15),
                          refusals=(Refusal('tensormap.replace_elemtype(desc, 16)',
                      "tensormap.replace_elemtype: argument 'value' must be in [0, 15]"),),
                          example="(buf, 10)     # bfloat16")
replace_interleave = _field("replace_interleave", "interleave_layout", 32, False, """Set the interleave
    layout (0 none, 1 16 bytes, 2 32 bytes).""", "tensormap.replace.tile.interleave_layout.b1024.b32 [%rd], 0;",
                            immediate=(0, 2), refusals=(Refusal('tensormap.replace_interleave(desc, 3)',
                      "tensormap.replace_interleave: argument 'value' must be in [0, 2]"),), example="(buf, 0)")
replace_swizzle = _field("replace_swizzle", "swizzle_mode", 32, False, """Set the swizzle mode (PTX ISA
    encoding: 0 none, 1 32B, 2 64B, 3 128B).""", "tensormap.replace.tile.swizzle_mode.b1024.b32 [%rd], 0;",
                         immediate=(0, 3), refusals=(Refusal('tensormap.replace_swizzle(desc, 4)',
                      "tensormap.replace_swizzle: argument 'value' must be in [0, 3]"),), example="(buf, 3)     # 128B")
replace_fill_mode = _field("replace_fill_mode", "fill_mode", 32, False, """Set the out-of-bounds fill
    mode (0 zeros, 1 NaN).""", "tensormap.replace.tile.fill_mode.b1024.b32 [%rd], 0;", immediate=(0, 1),
    refusals=(Refusal('tensormap.replace_fill_mode(desc, 2)',
                      "tensormap.replace_fill_mode: argument 'value' must be in [0, 1]"),), example="(buf, 1)     # NaN")

cp_fenceproxy = PtxOp(
    "tensormap.cp_fenceproxy",
    "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release{scope}.sync.aligned [{dst}], [{src}], 128;",
    (GlobalArray("dst", what="a uint8 device array (the 128-byte descriptor's home)"),
     SharedArray("src", what="a uint8 shared array (the edited descriptor)")),
    qualifiers=(Qualifier("scope", _SCOPES, "gpu"),), need=Requirement((9, 0), (8, 3)),
    tlx=("cuda::ptx::tensormap_cp_fenceproxy",),
    samples=(Sample("tensormap.cp_fenceproxy(desc, cuda.shared.array(128, types.uint8, alignment=128))",
                    "LDS",   # ptxas: shared loads, then STG + MEMBAR (or ATOMG.E.EXCH at gpu scope)
                    ptx="tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
                        "[%rd], [%r], 128;", isa="9.7.13.16 tensormap.cp_fenceproxy"),),
    doc="""Copy an edited descriptor from shared memory to global memory and release it to the
    tensormap proxy at ``scope`` (default ``"gpu"``); all threads of the warp must execute it.
    Consumers then ``fence.proxy_tensormap_acquire(dst, scope)`` before TMA uses ``dst``.

    Example::

        tensormap.cp_fenceproxy(global_desc, buf)
    """,
    refusals=(Refusal("tensormap.cp_fenceproxy(desc, cuda.shared.array(128, types.uint8, alignment=128), scope='block')",
                      "tensormap.cp_fenceproxy: argument 'scope' must be a constant, one of 'cta'"),),
).intrinsic()

__all__ = exported("tensormap")
