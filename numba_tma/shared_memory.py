"""Plan one dynamic shared-memory buffer: typed, aligned pieces (TMA tiles, S-stage rings,
mbarriers) carved out of it inside a kernel, and the byte total to launch with.

Example::

    # fragment: a sketch: STAGES, grid, block, desc and out are the caller's
    plan = SharedMemoryPlan()
    plan.array("ring", (STAGES, 128, 64), numba.float16, swizzle="128B")   # 1024-byte aligned
    plan.barriers("full", STAGES)
    plan.barriers("empty", STAGES)
    carve = plan.carver()

    @cuda.jit
    def kernel(desc, out):
        smem = carve()                # smem.ring, smem.full, smem.empty: ordinary shared arrays
        ...

    numba_tma.launch(kernel, grid, block, desc, out, shared_mem=plan.nbytes)

Numba's static shared arrays stop at 48 KB and cannot be over-aligned past what
``cuda.shared.array(alignment=)`` allows; dynamic shared memory can hold what the device allows
(227 KB on an H200), and ``carve()`` gives it compile-time shapes (no per-access bounds
arithmetic).  The dynamic buffer's start is only guaranteed 16-byte aligned, so when a piece asks
for more, ``carve()`` rounds the start up at run time (two instructions) and ``nbytes`` includes the
slack that may need.
"""

from __future__ import annotations

from collections import namedtuple

import numba
from llvmlite import ir
from numba.core import cgutils
from numba.cuda import types
from numba.cuda.extending import intrinsic

from .descriptors.enums import SWIZZLE_BYTES, Swizzle, coerce
from .descriptors.errors import TensorMapError
from .errors import SharedMemoryPlanError
from .numba_cuda.internals import nvvm
from .ops import BACKEND

DYNAMIC_BASE_ALIGN = 16   # what CUDA guarantees for the start of dynamic shared memory
TMA_TILE_ALIGN = 128      # a TMA box in shared memory without swizzle (or 32B / 64B swizzle)
MAX_SHARED_BYTES = 232448  # the largest opt-in dynamic shared memory per block of any GPU (sm_90, sm_100: 227 KiB)
_I32 = ir.IntType(32)


def _swizzle_align(name, swizzle) -> int:
    """The alignment a TMA tile with this swizzle mode needs: the 8 rows its pattern spans (256, 512
    or 1024 bytes for 32B, 64B, 128B), 128 without swizzle."""
    try:
        mode = coerce(Swizzle, swizzle, "swizzle")
    except TensorMapError as exc:
        raise SharedMemoryPlanError(f"{name}: {exc}") from None
    return TMA_TILE_ALIGN if SWIZZLE_BYTES[mode.name] == 0 else 8 * SWIZZLE_BYTES[mode.name]


class SharedMemoryPlan:
    """An ordered list of named pieces of one dynamic shared buffer; see the module docstring."""

    def __init__(self):
        self._pieces: list[tuple[str, tuple, object, int, int]] = []   # name, shape, dtype, offset, align
        self._end = 0
        self._align = DYNAMIC_BASE_ALIGN

    def array(self, name: str, shape, dtype, align: int | None = None, swizzle=None) -> "SharedMemoryPlan":
        """Add a C-contiguous ``shape`` array of ``dtype`` (a Numba type).  ``align``: bytes, a power
        of two (default: 128, a TMA tile; the element's own alignment if larger); ``swizzle`` (a TMA
        map's mode, ``"32B"``/``"64B"``/``"128B"``) raises it to the 256/512/1024 bytes those tiles need.
        A leading dimension makes an S-stage ring: ``shape=(S, rows, cols)``, stage ``s`` is
        ``ring[s]`` (or ``at(ring, s)``); with a swizzle, keep each stage a multiple of the alignment."""
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise SharedMemoryPlanError(f"name={name!r}: must be a Python identifier not starting with '_'")
        if any(p[0] == name for p in self._pieces):
            raise SharedMemoryPlanError(f"name={name!r}: already in this plan")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if not shape or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in shape):
            raise SharedMemoryPlanError(f"{name}: shape={shape!r} must be a positive integer or a tuple of them")
        if not isinstance(dtype, (types.Integer, types.Float)):
            raise SharedMemoryPlanError(f"{name}: dtype={dtype!r} must be a Numba integer or float type "
                                        "(numba.float16, numba.uint64, ...)")
        if align is not None and (not isinstance(align, int) or isinstance(align, bool) or align < 1
                                  or align & (align - 1)):
            raise SharedMemoryPlanError(f"{name}: align={align!r} must be a power of two (bytes)")
        itemsize = dtype.bitwidth // 8
        wanted = max(TMA_TILE_ALIGN if align is None else align, itemsize)
        if swizzle is not None:
            wanted = max(wanted, _swizzle_align(name, swizzle))
        offset = -(-self._end // wanted) * wanted
        nbytes = itemsize
        for d in shape:
            nbytes *= d
        if swizzle is not None and len(shape) > 2 and (nbytes // shape[0]) % wanted:   # (S, rows, cols): a ring
            stage = nbytes // shape[0]
            raise SharedMemoryPlanError(
                f"{name}: shape={shape!r}: each stage ({stage} bytes) must be a multiple of {wanted} bytes, the "
                f"alignment swizzle={swizzle!r} tiles need, or stage 1 onwards is misaligned — pad the stage to "
                f"{-(-stage // wanted) * wanted} bytes")
        if offset + nbytes + (max(self._align, wanted) - DYNAMIC_BASE_ALIGN) > MAX_SHARED_BYTES:
            raise SharedMemoryPlanError(
                f"{name}: shape={shape!r} brings the plan to {offset + nbytes} bytes (plus alignment slack), more "
                f"than any GPU's shared memory per block ({MAX_SHARED_BYTES} bytes, 227 KiB: H100/H200/B200)")
        self._pieces.append((name, shape, dtype, offset, wanted))
        self._end = offset + nbytes
        self._align = max(self._align, wanted)
        return self

    def barriers(self, name: str, count: int) -> "SharedMemoryPlan":
        """Add ``count`` mbarriers (a ``uint64`` array, 8-byte aligned)."""
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise SharedMemoryPlanError(f"{name}: count={count!r} must be a positive integer")
        return self.array(name, (count,), numba.uint64, align=8)

    def pipeline(self, name: str, pipeline) -> "SharedMemoryPlan":
        """Add the mbarriers of a :mod:`numba_tma.pipeline` ring (``pipeline.barrier_count``
        uint64: its ``full`` then its ``empty`` barriers); in the kernel ``pipeline.create(smem.name)``."""
        count = getattr(pipeline, "barrier_count", None)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise SharedMemoryPlanError(f"{name}: pipeline={pipeline!r} must be a numba_tma.pipeline.TmaPipeline or "
                                        "AsyncPipeline (a TmaStorePipeline needs no barriers)")
        return self.barriers(name, count)

    @property
    def nbytes(self) -> int:
        """The dynamic shared memory to launch with (``shared_mem=``): every piece, plus the slack
        for rounding the buffer's start up to the largest alignment asked for."""
        return self._end + (self._align - DYNAMIC_BASE_ALIGN)

    @property
    def layout(self) -> dict:
        """``{name: (offset from the aligned start, shape, dtype, alignment)}``."""
        return {name: (offset, shape, dtype, align) for name, shape, dtype, offset, align in self._pieces}

    def __repr__(self):
        rows = ", ".join(f"{n}@{o}:{s}{d}" for n, s, d, o, _ in self._pieces)
        return f"SharedMemoryPlan({rows}; nbytes={self.nbytes})"

    def carver(self):
        """A device function returning the pieces as a named tuple of shared arrays (fields in the
        order they were added); call it once at the top of the kernel."""
        if not self._pieces:
            raise SharedMemoryPlanError("the plan is empty: add pieces with array() or barriers() first")
        pieces = tuple(self._pieces)
        align = self._align
        fields = namedtuple("SharedPieces", [p[0] for p in pieces])
        return BACKEND.carver(pieces, align, fields, self.nbytes, lambda: _compiled_carver(self, pieces, align, fields))


def _compiled_carver(plan, pieces, align, fields):
    """``plan``'s pieces as Numba arrays over the dynamic shared buffer (an intrinsic: no code but
    the start's rounding)."""
    arrays = [types.Array(dtype, len(shape), "C") for _, shape, dtype, _, _ in pieces]
    result = types.NamedTuple(arrays, fields)

    @intrinsic
    def carve(typingctx):
        def codegen(context, builder, sig, args):
            start = _aligned_dynamic_start(builder, align)
            values = [_view(context, builder, aryty, builder.add(start, ir.Constant(_I32, offset)), shape)
                      for aryty, (_, shape, _, offset, _) in zip(arrays, pieces)]
            return context.make_tuple(builder, result, values)

        return result(), codegen

    carve.plan = plan   # what it carves: numba-cuda-mlir kernels call the same object (numba_tma.mlir.shared)
    return carve


def _aligned_dynamic_start(builder, align: int) -> ir.Value:
    """The 32-bit shared-window address of the dynamic shared buffer, rounded up to ``align``."""
    module = builder.module
    name = "numba_tma_dynamic_shared"
    base = module.globals.get(name)
    if base is None:
        base = cgutils.add_global_variable(module, ir.ArrayType(ir.IntType(8), 0), name, nvvm.ADDRSPACE_SHARED)
        base.linkage = "external"
        base.align = DYNAMIC_BASE_ALIGN
    start = builder.ptrtoint(base, _I32)
    if align > DYNAMIC_BASE_ALIGN:
        start = builder.and_(builder.add(start, ir.Constant(_I32, align - 1)), ir.Constant(_I32, -align))
    return start


def _view(context, builder, aryty, address, shape):
    """A C-contiguous Numba array of ``shape`` over the shared address ``address``."""
    dtype = context.get_data_type(aryty.dtype)
    itemsize = aryty.dtype.bitwidth // 8
    shared = builder.inttoptr(address, ir.PointerType(dtype, nvvm.ADDRSPACE_SHARED))
    data = builder.addrspacecast(shared, ir.PointerType(dtype))
    strides, stride = [], itemsize
    for d in reversed(shape):
        strides.insert(0, stride)
        stride *= d
    ary = context.make_array(aryty)(context, builder)
    context.populate_array(ary, data=data, shape=[context.get_constant(types.intp, d) for d in shape],
                           strides=[context.get_constant(types.intp, s) for s in strides],
                           itemsize=context.get_constant(types.intp, itemsize), meminfo=None)
    return ary._getvalue()
