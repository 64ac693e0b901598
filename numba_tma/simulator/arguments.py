"""A twin's arguments, checked by its op's declaration: the same signature, defaults and
``OpArgumentError`` messages as the compiled op.

Each Python value is given the Numba type the compiled path would see if the value were a
compile-time constant (``3`` -> ``Literal[int](3)``, ``"add"`` -> ``Literal[str](add)``, a numpy
array -> ``Array(dtype, ndim, layout)``, a ``TensorMap`` -> its map type, ``TensorMap.to_device()``'s
array -> the map it holds, as the compiled ops see it) and the declaration's rules run on those
types.  So a Python value is a constant here: a rule that refuses a run-time value where the PTX
needs an immediate (a qualifier, ``Const``) cannot fire for it under the simulator, which runs with
the values themselves; every other rule refuses the same calls with the same text.  A numpy scalar
(a kernel argument ``np.int32(5)``, ``numba.int32(x)``, an array's element) keeps its type, as in
compiled code (``np.int32`` -> ``int32``, not a constant), so a tuple of four ``np.int32`` is an
int32 accumulator fragment (:func:`bind_and_check` hands the twin a :class:`.wgmma.Fragment` for
it).  The architecture check has no counterpart (the simulator has no target).
"""

from __future__ import annotations

import numpy as np

from ..descriptors.tensor_map import TensorMap
from . import numba_sim, wgmma
from .barriers import StateToken

_CHECKED: set = set()     # (op name, argument keys) already found acceptable
_TYPES: dict = {}         # numpy dtype -> Numba type


def _numba():
    from numba.cuda import types

    return types, numba_sim.from_dtype


def _key(value):
    """What the checks can depend on, hashable; ``None`` when the value has no such key."""
    kind = type(value)
    if kind in (int, bool, str, float, StateToken) or value is None:
        return kind, value
    if kind is wgmma.Fragment:
        return "fragment", value.dtype, len(value)
    if kind is wgmma.MatrixDescriptor:
        return ("descriptor",)
    if kind is tuple:
        first = type(value[0]) if value else None
        if first in _REGISTER_TYPES and all(type(v) is first for v in value):   # (a fragment's registers)
            return "registers", first, len(value)
        keys = tuple(map(_key, value))
        return None if None in keys else ("tuple", keys)
    if isinstance(value, np.generic):
        return "scalar", value.dtype.str
    if isinstance(value, np.ndarray):
        return "array", value.dtype.str, value.ndim, value.flags.c_contiguous
    if isinstance(value, TensorMap):
        return "map", value.layout
    typed = numba_sim.numba_type_of(value)
    return None if typed is None else ("typed", typed)


_REGISTER_TYPES = frozenset({np.float32, np.int32, np.uint32})   # a tuple of one of them: a fragment's registers


def value_type(value):
    """The Numba type the compiled op would be given for ``value`` as a constant (a numpy scalar:
    a variable of its dtype)."""
    types, _ = _numba()
    if value is None:
        return types.none
    if isinstance(value, wgmma.Fragment):          # an accumulator: its registers' type
        return types.UniTuple(getattr(types, value.dtype), len(value))
    if isinstance(value, wgmma.MatrixDescriptor):
        return types.uint64
    if type(value) in (bool, int, str):
        return types.literal(value)
    if isinstance(value, StateToken):
        from ..intrinsics.mbarrier import TOKEN      # imported already, by the package (its declarations)

        return TOKEN
    if isinstance(value, (np.number, np.bool_)):   # np.float64 too (a float, but typed as its dtype)
        return _scalar_type(value.dtype)
    if isinstance(value, float):
        return types.float64
    if isinstance(value, tuple):
        return types.Tuple([value_type(v) for v in value])
    if isinstance(value, TensorMap):
        return value._numba_type_
    typed = numba_sim.numba_type_of(value)          # TensorMap.to_device()'s (MapInGlobalArray): its map
    if typed is not None:
        return typed.map
    array = numba_sim.host_array_or_none(value)     # a numpy array, or a simulator device array's
    if array is not None:
        return types.Array(_scalar_type(array.dtype), array.ndim, "C" if array.flags.c_contiguous else "A")
    return types.pyobject


def _scalar_type(dtype):
    """The Numba type of a numpy dtype."""
    found = _TYPES.get(dtype)
    if found is None:
        found = _TYPES[dtype] = _numba()[1](dtype)
    return found


_POSITIONAL: dict = {}    # op name -> (parameter names, their defaults, how many have none)
_PARAMETERS: dict = {}    # op name -> ((parameter name, its default), ...) in the declaration's order


def _bind(op, args, kwargs) -> dict:
    """``op.bind(args, kwargs)``; where the parameters are all positional-or-keyword (as most ops'
    are), bound without ``inspect``; anything else (an unknown or repeated keyword, a missing
    argument) goes to ``op.bind`` for its error."""
    shape = _POSITIONAL.get(op.name)
    if shape is None:
        parameters = op.signature.parameters.values()
        names = tuple(p.name for p in parameters)
        defaults = tuple(p.default for p in parameters)
        simple = all(p.kind == p.POSITIONAL_OR_KEYWORD for p in parameters)
        shape = _POSITIONAL[op.name] = (names, defaults, sum(d is p.empty for d, p in zip(defaults, parameters))) \
            if simple else ()
    if shape and len(args) <= len(shape[0]):
        given = dict(zip(shape[0], args))
        if all(k in shape[0] and k not in given for k in kwargs):     # (keywords: each a parameter, once)
            given.update(kwargs)
            if all(name in given for name in shape[0][:shape[2]]):   # (the ones without defaults come first)
                return given
    return op.bind(args, kwargs)


def bind_and_check(op, args, kwargs) -> list:
    """The call's arguments in the declaration's order, defaults filled in, after the op's rules
    accepted them (raises ``OpArgumentError`` as the compiled op does)."""
    given = _bind(op, args, kwargs)
    parameters = _PARAMETERS.get(op.name)
    if parameters is None:
        parameters = _PARAMETERS[op.name] = tuple((n, p.default) for n, p in op.signature.parameters.items())
    values = [given.get(name, default) for name, default in parameters]
    key = (op.name, tuple(given), tuple(map(_key, values)))
    if None in key[2] or key not in _CHECKED:
        types, _ = _numba()
        tys = {name: value_type(v) if name in given else types.Omitted(v)
               for name, v in zip(op.signature.parameters, values)}
        op.check_types(tys)
        if None not in key[2]:
            _CHECKED.add(key)
    for i in _fragment_positions(op):
        value = values[i]
        if type(value) is tuple:     # accepted as a fragment: registers of one numpy type (np.int32, np.float32)
            values[i] = wgmma.Fragment([v.item() for v in value], str(value[0].dtype))
    return values


_FRAGMENTS: dict = {}     # op name -> the positions of its accumulator-fragment operands


def _fragment_positions(op) -> tuple:
    found = _FRAGMENTS.get(op.name)
    if found is None:
        from ..intrinsics._core import Fragment      # imported already, by the package (its declarations)

        names = [o.name for o in op.operands if isinstance(o, Fragment)]
        found = _FRAGMENTS[op.name] = tuple(i for i, name in enumerate(op.signature.parameters) if name in names)
    return found
