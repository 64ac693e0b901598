"""A :class:`numba_tma.SharedMemoryPlan`'s pieces carved out of a numba-cuda-mlir kernel's dynamic
shared memory, as under numba-cuda: a named tuple of shared arrays of compile-time shapes at the
plan's offsets from the buffer's start rounded up to the plan's largest alignment (``memref.view``
of the bytes ``cuda.shared.array(0, ...)`` gives).  Launch with ``plan.nbytes`` of dynamic shared
memory (``kernel[grid, block, stream, plan.nbytes]``).

``plan.carver()`` (numba-cuda's intrinsic, which says its ``plan``) is typed in numba-cuda-mlir
kernels as this host's :func:`carver` of that plan, built the first time a kernel of this host
calls it (:func:`register_twin`): one ``carve = plan.carver()`` serves both hosts."""

from collections import namedtuple

from ..intrinsics.hosts.mlir_adapter import (NamedTuple, arith, dynamic_shared_bytes, intrinsic, ir, lowering_utilities, memref,
                                       mlir_types, refresh, register_twin, register_typeof)
from ..intrinsics.hosts.mlir_host import shared_address, to_mlir
from ..intrinsics.refs import at
from ..shared_memory import DYNAMIC_BASE_ALIGN, SharedMemoryPlanError

__all__ = ["carver"]


def carver(plan):
    """This host's intrinsic returning ``plan``'s pieces as a named tuple of shared arrays (fields in
    the order they were added), which ``plan.carver()``'s object is typed as in numba-cuda-mlir
    kernels; call it once at the top of the kernel.

    Example::

        # fragment: plan the caller's SharedMemoryPlan (docs/second_host.md)
        carve = plan.carver()         # the same object for both hosts

        @cuda.jit(chip="sm_90a")
        def kernel(desc, out):
            smem = carve()            # smem.ring, smem.full: shared arrays
    """
    layout = plan.layout
    if not layout:
        raise SharedMemoryPlanError("the plan is empty: add pieces with array() or barriers() first")
    align = max(a for _, _, _, a in layout.values())
    arrays = [mlir_types.Array(to_mlir(dtype), len(shape), "C") for _, shape, dtype, _ in layout.values()]
    result = NamedTuple(arrays, namedtuple("SharedPieces", tuple(layout)))

    def carve(typingctx):
        def codegen(builder, target, args, kwargs):
            raw, space = dynamic_shared_bytes(builder)
            index = ir.IndexType.get()
            start = arith.index_cast(index, shared_address(raw))
            pad = arith.andi(arith.subi(lowering_utilities.constant(0, index), start),
                             lowering_utilities.constant(align - 1, index)) if align > DYNAMIC_BASE_ALIGN else \
                lowering_utilities.constant(0, index)
            views = []
            for (offset, shape, dtype, _), array in zip(layout.values(), arrays):
                element = lowering_utilities.get_storage_type(to_mlir(dtype))
                view_type = ir.MemRefType.get(list(shape), element, memory_space=space)
                shift = arith.addi(pad, lowering_utilities.constant(offset, index))
                views.append(memref.view(view_type, raw, shift, []))
            builder.store_var(target, tuple(views))

        return result(), codegen

    carve = intrinsic(carve, "carve")
    refresh()
    return carve


def _carver_of(numba_cuda_intrinsic_object):
    """The type of ``plan.carver()``'s object (numba-cuda's intrinsic) in numba-cuda-mlir kernels:
    this host's carver of its plan; ``None`` for another intrinsic (typed by its registration)."""
    plan = getattr(numba_cuda_intrinsic_object, "plan", None)
    return None if plan is None else register_twin(numba_cuda_intrinsic_object, carver(plan))


register_typeof(type(at), _carver_of)   # the class of numba-cuda's intrinsics (numba_tma.at's)
