"""Everything numba-tma takes from numba-cuda-mlir, in one place (its second host, issue 25).

numba-cuda-mlir 0.6 documents only part of its extension API; what numba-tma also relies on is
named here, once, and ``tests/test_mlir_host.py`` checks each of these names and behaviours, so a
numba-cuda-mlir that changes one fails there, loudly, instead of miscompiling:

* ``numba_cuda_mlir.numba_cuda.extending._intrinsic(target="cuda", prefer_literal=True)`` — the
  public ``numba_cuda_mlir.extending.intrinsic`` takes no options, and ops need literal types;
* ``builder.targetoptions["chip"]`` — the only place the compilation target is known (at lowering;
  typing has none);
* ``gpu.printf``, which numba-cuda-mlir's pipeline lowers to a ``vprintf`` call (its own ``print``
  does so; debug mode's messages, ``mlir_emitter``), on sm_90's LLVM 7 path too;
* ``numba_cuda_mlir.tools._cached_cc`` — every compile asks the driver for the host's compute
  capability, so compiling with no GPU needs it set (:func:`compiling_for`);
* ``numba_cuda_mlir.models.register_model`` (the data models numba-cuda-mlir lowers with) and
  ``numba_cuda_mlir.numba_cuda.datamodel.models.PrimitiveModel``: the 32-bit model of
  ``numba_tma.at``'s shared address (:func:`register_address_type`);
* ``numba_cuda_mlir.models.ArrayModel``, taken by the exact type class
  (``ContextAwareDataModelManager.lookup``): the model of a ``types.Array`` subclass, the map in
  global memory whose type carries its layout (:func:`register_array_model`);
* ``numba_cuda_mlir.models.ByValPointerTypeModel`` and a type's ``__numba_cuda_mlir_attributes__``
  (``llvm.byval``, ``llvm.align``, ``nvvm.grid_constant``: what ``mlir_lowering`` puts on the
  kernel parameter; its own ``types.CUTensorMap`` is built so): a by-value ``TensorMap``
  parameter (:func:`by_value_type`, :func:`by_value_attributes`);
* ``MLIRLower._request_dynamic_shared_memory`` and ``_get_shared_address_space`` (what
  ``cuda.shared.array(0, ...)`` lowers through): the dynamic shared buffer as bytes, for the
  ``SharedMemoryPlan`` carve (:func:`dynamic_shared_bytes`), whose result is a
  ``numba_cuda_mlir.numba_cuda.types.NamedTuple`` (not in the public ``types``);
* ``MLIRLower.mlir_gpu_module`` and ``get_mlir_type`` (what ``cuda.shared.array`` of a constant
  shape lowers through: a ``memref.global`` in the workgroup address space): ``tlx.alloc_barriers``'
  barriers (:func:`static_shared_array`);
* ``numba_cuda_mlir.models.StructModel`` (a struct value is an LLVM literal struct: built with
  ``llvm.insertvalue``), ``numba_cuda_mlir.extending.make_attribute_wrapper``, ``typeof_impl``
  (a ``singledispatch``: a class registered there is typed so, before its ``_numba_type_``, which is
  numba-cuda's), ``overload_method`` with ``inline="always"`` for a receiver that holds nothing (a
  value of a data-less type cannot be a function parameter: ``none`` does not legalize): the
  pipeline's types (:func:`register_struct`, :func:`overload_method`);
* ``lowering_utilities.memref_descriptor_type`` and ``builtin.unrealized_conversion_cast`` between a
  memref and that LLVM struct (allocated pointer, aligned pointer, offset, sizes, strides), as
  numba-cuda-mlir's own lowering builds memrefs from pointers: another block's shared array
  (``cluster.map_shared``, :func:`with_base_address`);
* device functions inlined by LLVM (``forceinline``), not in Numba IR (``inline="always"``): there
  numba-cuda-mlir 0.6 loses a closure's free variable that is one of its own functions
  (``NameError``) and fails on an inlined call of nothing inside an ``@overload``'s body
  (``AssertionError: Stack allocated var``), docs/numba_cuda_mlir_defects.md items 6 and 7
  (:func:`device_function`);
* a dispatcher's ``typeof_pyval``, ``get_shared_mem_per_block(signature)`` and
  ``get_max_threads_per_block(signature)``: a refused launch's explanation (:func:`kernel_figures`);
* keyword arguments: numba-cuda-mlir re-types an intrinsic call at lowering with the keyword
  types appended to the positional ones (``mlir_lowering.lower_call_expr_assign``), which binds
  them to the wrong parameters when an optional one before them was left out;
  :func:`intrinsic` answers that folded call from the typing of the real one.

Importing this module imports numba-cuda-mlir (an optional dependency: the ``mlir`` extra).
"""

from __future__ import annotations

import contextlib
import itertools

from numba_cuda_mlir import cuda, extending, lowering_utilities, tools
from numba_cuda_mlir import types as mlir_types
from numba_cuda_mlir._mlir import ir
from numba_cuda_mlir._mlir.dialects import arith, builtin, gpu, llvm, memref, nvvm, scf
from numba_cuda_mlir.models import ArrayModel, ByValPointerTypeModel, StructModel, register_model
from numba_cuda_mlir.numba_cuda.datamodel.models import PrimitiveModel
from numba_cuda_mlir.numba_cuda.extending import _intrinsic
from numba_cuda_mlir.numba_cuda.typeconv import Conversion
from numba_cuda_mlir.numba_cuda.typing.templates import builtin_registry
from numba_cuda_mlir.numba_cuda.types import NamedTuple

__all__ = ["Conversion", "NamedTuple", "arith", "gpu", "by_value_attributes", "by_value_type", "compiling_for", "cuda", "device_function",
           "dynamic_shared_bytes", "intrinsic", "ir", "is_kernel", "kernel_ptx", "llvm", "lowering_utilities", "memref", "mlir_types",
           "nvvm", "overload", "overload_attribute", "overload_method", "refresh", "register_address_type", "register_array_model",
           "register_empty", "register_integer_type", "register_like", "register_twin", "register_struct", "register_typeof", "scf", "struct_value", "target_chip",
           "with_base_address"]


def intrinsic(typer, name: str):
    """``typer(typingctx, *args, **kwargs) -> (signature, codegen)`` as a numba-cuda-mlir
    intrinsic named ``name`` with literal argument types.  A call typed with keywords is cached
    under the types numba-cuda-mlir re-types it with at lowering (positional, then the keywords'
    in their order); that folded call is answered from the cache.  Calls of the same folded types
    (positional, or with other keywords) are told apart at lowering, where numba-cuda-mlir passes
    each call its own keywords: the answer's codegen is the typing of the call with those keyword
    names (all such typings must give one result type)."""
    keyword_calls = {}   # folded argument types -> {keyword names: the typing of that call}

    def typer_with_keywords(typingctx, *args, **kwargs):
        if kwargs:
            typed = typer(typingctx, *args, **kwargs)
            keyword_calls.setdefault(args + tuple(kwargs.values()), {})[tuple(kwargs)] = typed
            return typed
        by_names = dict(keyword_calls.get(args, {}))
        if not by_names:
            return typer(typingctx, *args)
        try:
            by_names[()] = typer(typingctx, *args)     # a positional call of these types as well
        except Exception:   # noqa: BLE001 - there is none: only the folded keyword calls
            pass
        answers = [typed for typed in by_names.values() if typed is not None]
        if len(answers) == 1:
            return answers[0]
        if len({typed[0].return_type for typed in answers}) > 1:
            raise NotImplementedError(f"numba_tma: {name}: calls of one argument types with different keywords "
                                      "give different results; numba-cuda-mlir 0.6 folds keywords into positions at "
                                      "lowering, so they cannot be told apart (docs/numba_cuda_mlir_defects.md)")

        def by_keywords(builder, target, call_args, call_kwargs):
            return by_names[tuple(k for k, _ in call_kwargs)][1](builder, target, call_args, call_kwargs)

        return answers[0][0], by_keywords

    typer_with_keywords.__signature__ = getattr(typer, "__signature__", None)
    typer_with_keywords.__name__ = typer_with_keywords.__qualname__ = name
    return _intrinsic(target="cuda", prefer_literal=True)(typer_with_keywords)


class _AddressModel(PrimitiveModel):
    """A value held as a 32-bit integer (a shared-window address)."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntegerType.get_signless(32))


def register_address_type(type_class):
    """Lower values of the numba-cuda-mlir type class ``type_class`` as 32-bit integers."""
    register_model(type_class)(_AddressModel)
    return type_class


class _IntegerModel(PrimitiveModel):
    """A value held as an integer of its type's ``bitwidth``."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntegerType.get_signless(fe_type.bitwidth))


def register_integer_type(type_class):
    """Lower values of ``type_class`` (a subclass of ``types.Integer``) as integers of their width:
    numba-cuda-mlir takes a type's data model by its exact class."""
    register_model(type_class)(_IntegerModel)
    return type_class


class _ByteModel(PrimitiveModel):
    """A value that holds nothing (all in its type), as one byte."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntegerType.get_signless(8))


def register_array_model(type_class):
    """Lower values of ``type_class`` (a subclass of ``types.Array``) as arrays: numba-cuda-mlir
    takes a type's data model by its exact class."""
    register_model(type_class)(ArrayModel)
    return type_class


def static_shared_array(builder, count: int, element_type, alignment: int, result_type):
    """``count`` elements of ``element_type`` in the block's static shared memory, as
    ``cuda.shared.array`` lowers them (a ``memref.global`` in the workgroup address space of the
    kernel's GPU module, ``builder.mlir_gpu_module``; its name numba-tma's own), returned as the
    generic memref of the Numba type ``result_type`` (``builder.get_mlir_type``): a value a
    function can return, unlike the workgroup memref (docs/numba_cuda_mlir_defects.md, item 9)."""
    space = ir.Attribute.parse("#gpu.address_space<workgroup>")
    shared = ir.MemRefType.get([count], element_type, memory_space=space)
    name = f"numba_tma_static_shared_{next(_SHARED_NAMES)}"
    with ir.InsertionPoint(builder.mlir_gpu_module.bodyRegion.blocks[0]):
        memref.global_(name, shared, sym_visibility="private", alignment=alignment)
    generic = memref.memory_space_cast(dest=ir.MemRefType.get([count], element_type),
                                       source=memref.get_global(shared, name))
    return memref.cast(builder.get_mlir_type(result_type), generic)


_SHARED_NAMES = itertools.count()


def with_base_address(array, address_of):
    """``array`` (a memref) in the generic address space with its data at ``address_of(base)``
    instead (``base``: the 64-bit generic address of its aligned pointer; the offset, sizes and
    strides kept): through the LLVM descriptor numba-cuda-mlir lowers a memref to
    (``lowering_utilities.memref_descriptor_type``: allocated pointer, aligned pointer, offset,
    sizes, strides), cast back as its own lowering builds memrefs."""
    shape = ir.MemRefType(array.type)
    generic = ir.MemRefType.get(shape.shape, shape.element_type, shape.layout)
    if shape.memory_space is not None:
        array = memref.memory_space_cast(dest=generic, source=array)
    descriptor = builtin.unrealized_conversion_cast([lowering_utilities.memref_descriptor_type(shape.rank)], [array])
    i64, pointer_type = ir.IntegerType.get_signless(64), llvm.PointerType.get()
    base = llvm.ptrtoint(i64, llvm.extractvalue(pointer_type, descriptor, [1]))
    pointer = llvm.inttoptr(pointer_type, address_of(base))
    for field in (0, 1):
        descriptor = llvm.insertvalue(descriptor, pointer, [field])
    return builtin.unrealized_conversion_cast([generic], [descriptor])


def register_empty(type_class):
    """Lower values of ``type_class`` as one byte that holds nothing."""
    register_model(type_class)(_ByteModel)
    return type_class


def register_like(type_class, member: str):
    """Lower a value of ``type_class`` as the value of its type's attribute ``member`` (a type):
    the same MLIR value (a ring is its barrier array's memref)."""
    class _Like(PrimitiveModel):
        def __init__(self, dmm, fe_type):
            inner = dmm.lookup(getattr(fe_type, member))
            super().__init__(dmm, fe_type, inner.get_value_type())

    register_model(type_class)(_Like)
    return type_class


def register_struct(type_class, members, attributes=()):
    """Lower ``type_class`` as a struct of ``members`` (``[(name, numba-cuda-mlir type)]``); each
    of ``attributes`` reads its member of that name."""
    class _Struct(StructModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, members)

    register_model(type_class)(_Struct)
    for name in attributes:
        extending.make_attribute_wrapper(type_class, name, name)
    return type_class


def struct_value(fields, field_types):
    """A literal struct of the MLIR values ``fields`` (of ``field_types``), as ``StructModel`` holds one."""
    value = llvm.UndefOp(llvm.StructType.get_literal(list(field_types))).result
    for i, field in enumerate(fields):
        value = llvm.insertvalue(value, field, [i])
    return value


def register_twin(obj, twin):
    """Type ``obj`` (numba-cuda's intrinsic of an op or helper: what ``numba_tma.<family>`` holds) in
    numba-cuda-mlir kernels as this host's ``twin`` of it is typed (the same ``types.Function``, in
    the registry that holds it), so a kernel calls the same object on both hosts; returns that type."""
    for registry in (builtin_registry, extending.typing_registry):
        for value, ty in registry.globals:
            if value is twin:
                registry.register_global(obj, ty)
                return ty
    raise LookupError(f"numba_tma: {twin!r} is not typed by numba-cuda-mlir")


def register_typeof(python_class, typer):
    """Type the values of ``python_class`` by ``typer(value)`` in numba-cuda-mlir kernels."""
    extending.typeof_impl.register(python_class)(lambda value, context: typer(value))


def overload_method(type_class, name: str, inline: bool = False):
    """``numba_cuda_mlir.extending.overload_method`` with literal argument types; ``inline``: its
    body inlined into the caller (so a receiver that holds nothing is never a parameter)."""
    return extending.overload_method(type_class, name, typing_registry=extending.typing_registry, prefer_literal=True,
                                     inline="always" if inline else "never")


def overload(fn, forceinline: bool = False, inline: bool = False):
    """``numba_cuda_mlir.extending.overload`` of ``fn`` with literal argument types; its body a
    device function inlined by LLVM (``forceinline``) or into the caller's Numba IR (``inline``)."""
    return extending.overload(fn, jit_options={"forceinline": True} if forceinline else {}, prefer_literal=True,
                              inline="always" if inline else "never", typing_registry=extending.typing_registry)


def is_kernel(obj) -> bool:
    """Whether ``obj`` is a numba-cuda-mlir ``cuda.jit`` kernel (its dispatcher)."""
    from numba_cuda_mlir.numba_cuda.dispatcher import Dispatcher

    return isinstance(obj, Dispatcher)


def kernel_figures(kernel, args) -> tuple:
    """``(static shared bytes, most threads per block)`` of the compiled ``kernel`` (a numba-cuda-mlir
    dispatcher) that ``args`` select: its public ``get_shared_mem_per_block`` /
    ``get_max_threads_per_block`` of the signature its ``typeof_pyval`` gives them (the driver's
    function attributes)."""
    signature = tuple(kernel.typeof_pyval(a) for a in args)
    return kernel.get_shared_mem_per_block(signature), kernel.get_max_threads_per_block(signature)


def device_function(fn):
    """``fn`` as a numba-cuda-mlir device function inlined into its caller by LLVM (not in Numba IR,
    where 0.6 drops closures' free variables: docs/numba_cuda_mlir_defects.md, items 6 and 7)."""
    return cuda.jit(device=True, inline="never", forceinline=True)(fn)


def overload_attribute(type_class, name: str):
    """``numba_cuda_mlir.extending.overload_attribute`` in its own typing and lowering registries."""
    return extending.overload_attribute(type_class, name, typing_registry=extending.typing_registry,
                                        lowering_registry=extending.lowering_registry)


def by_value_type(type_class):
    """Lower values of the numba-cuda-mlir type class ``type_class`` (a subclass of
    ``types.byval_ptr``) as numba-cuda-mlir's by-value pointers."""
    register_model(type_class)(ByValPointerTypeModel)
    return type_class


def by_value_attributes(align: int) -> dict:
    """The parameter attributes of a ``__grid_constant__`` map passed by value: 128 bytes of
    ``types.CUTensorMapStorage`` aligned to ``align`` bytes (a type's ``__numba_cuda_mlir_attributes__``)."""
    return {"llvm.byval": mlir_types.CUTensorMapStorage, "llvm.align": align, "nvvm.grid_constant": True}


def dynamic_shared_bytes(builder):
    """The block's dynamic shared memory as a ``memref<?xi8>`` in the shared address space (as
    ``cuda.shared.array(0, types.uint8)`` lowers), and that address space."""
    space = builder._get_shared_address_space()
    i8 = ir.IntegerType.get_signless(8)
    return builder._request_dynamic_shared_memory(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], i8,
                                                                    memory_space=space)), space


def target_chip(builder) -> str:
    """The architecture a lowering ``builder`` compiles for (``"sm_90a"``)."""
    return builder.targetoptions["chip"]


@contextlib.contextmanager
def compiling_for(cc):
    """Compile for compute capability ``cc`` with no GPU: numba-cuda-mlir's cached host compute
    capability is ``cc[:2]`` inside, and what it was after."""
    saved = tools._cached_cc
    tools._cached_cc = tuple(cc[:2])
    try:
        yield
    finally:
        tools._cached_cc = saved


def kernel_ptx(pyfunc, sig, cc, chip: str, **options) -> str:
    """The PTX of ``pyfunc`` as a numba-cuda-mlir kernel for ``chip`` (``"sm_90a"``, compute
    capability ``cc``) with argument types ``sig``, compiled with no GPU."""
    with compiling_for(cc):
        ptx, _ = cuda.compile_ptx(cuda.jit(chip=chip, **options)(pyfunc), sig, device=False)
    return ptx


def refresh() -> None:
    """Make intrinsics defined after numba-cuda-mlir's typing context was built visible to it."""
    extending.refresh_registries()
