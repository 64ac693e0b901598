"""The epilogue's arguments of a GEMM call (``bias``, ``activation``, ``epilogue``,
``epilogue_args``, ``beta`` with ``c``, ``residual``, ``a_scale``, ``b_scale``), each checked and
made what the composed epilogue (:mod:`.epilogues`) reads: 2-D device arrays and how an element
(r, c) indexes each, numbers."""

import numbers

import numpy as np

from ..arrays import operand
from ..ops import BACKEND
from . import epilogues


def side(x, name, stream, bits_as, caller="matmul"):
    """An epilogue array's operand; raw uint16 bits read as ``bits_as`` (the inputs' 16-bit type,
    bf16 for fp8 inputs)."""
    try:
        return operand(x, name, stream=stream, caller=caller)
    except TypeError:
        return operand(x, name, dtype=bits_as, stream=stream, caller=caller)


def vector(op_name, x, length, axis, stream, bits_as, *, allow_one=False):
    """An epilogue vector argument as ``(2-D device array, index)``: ``axis`` 0 a column (M, 1)
    read ``[r, 0]``, 1 a row (1, N) read ``[0, c]``; 1-D arrays of ``length`` or (with
    ``allow_one``) one number ``[0, 0]``."""
    op = side(x, op_name, stream, bits_as)
    want = (length, 1) if axis == 0 else (1, length)
    shape = op.shape
    if allow_one and int(np.prod(shape)) == 1:
        return op.viewed((1, 1), (0, 0)).device_array, "0, 0", op
    if len(shape) == 1 and shape[0] == length:
        view = op.viewed(want, (op.strides[0], 0) if axis == 0 else (0, op.strides[0])).device_array
    elif tuple(shape) == want:
        view = op.device_array
    else:
        raise ValueError(f"matmul: argument {op_name!r} must have shape ({length},) or {want}"
                         f"{' or hold one number' if allow_one else ''}; got {tuple(shape)}")
    return view, ("r, 0" if axis == 0 else "0, c"), op


def _matrix(op_name, x, m, n, stream, bits_as):
    op = side(x, op_name, stream, bits_as)
    if tuple(op.shape) != (m, n):
        raise ValueError(f"matmul: argument {op_name!r} must have the output's shape ({m}, {n}); got {tuple(op.shape)}")
    return op


def _storage(op):
    return op.dtype if op.dtype in ("f16", "f32") else "bf16" if op.dtype == "bf16" else None


def _epilogue_operand(op_name, op):
    kind = _storage(op)
    if kind is None:
        raise TypeError(f"matmul: argument {op_name!r} must hold bf16, f16 or f32 values; got {op.dtype}")
    return kind


def epilogue_of(m, n, stream, bits_as, *, bias, activation, epilogue, epilogue_args, beta, c, residual, a_scale, b_scale):
    """(:class:`.epilogues.Epilogue`, its ``args`` tuple, the per-tensor factor folded into the
    kernel's scale) of the keyword arguments, each checked."""
    factor = 1.0
    steps, arrays = {}, {}
    for name, value, axis in (("a_scale", a_scale, 0), ("b_scale", b_scale, 1)):
        if value is None:
            continue
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            factor *= float(value)
            continue
        view, index, op = vector(name, value, m if axis == 0 else n, axis, stream, bits_as, allow_one=True)
        steps[name], arrays[name] = (_epilogue_operand(name, op), index), view
    if beta != 0:
        if c is None:
            raise ValueError(f"matmul: argument 'c' is needed with beta={beta} (beta * c is added)")
        op = _matrix("c", c, m, n, stream, bits_as)
        steps["c"], arrays["c"] = (_epilogue_operand("c", op), "r, c"), op.device_array
    if bias is not None:
        op = side(bias, "bias", stream, bits_as)
        if len(op.shape) == 2 and tuple(op.shape) == (m, 1) and (m, 1) != (1, n):
            view, index, _ = vector("bias", bias, m, 0, stream, bits_as)
        else:
            if not (len(op.shape) == 1 and op.shape[0] == n or tuple(op.shape) == (1, n)):
                raise ValueError(f"matmul: argument 'bias' must have shape ({n},) or (1, {n}) (a column's bias) "
                                 f"or ({m}, 1) (a row's); got {tuple(op.shape)}")
            view, index, _ = vector("bias", bias, n, 1, stream, bits_as)
        steps["bias"], arrays["bias"] = (_epilogue_operand("bias", op), index), view
    if activation is not None and activation not in epilogues.ACTIVATIONS:
        raise ValueError(f"matmul: argument 'activation' must be None or one of {', '.join(epilogues.ACTIVATIONS)}; "
                         f"got {activation!r}")
    if residual is not None:
        op = _matrix("residual", residual, m, n, stream, bits_as)
        steps["residual"], arrays["residual"] = (_epilogue_operand("residual", op), "r, c"), op.device_array
    if not isinstance(epilogue_args, tuple):
        raise TypeError(f"matmul: argument 'epilogue_args' must be a tuple; got {type(epilogue_args).__name__}")
    if epilogue is not None:
        if not BACKEND.is_device_function(epilogue):
            raise TypeError("matmul: argument 'epilogue' must be a device function (@cuda.jit(device=True)) "
                            f"(value, row, col, *epilogue_args) -> value; got {epilogue!r}")
    elif epilogue_args:
        raise ValueError("matmul: argument 'epilogue_args' is given without an 'epilogue' function to take it")
    user_args = tuple(operand(a, "epilogue_args").device_array if hasattr(a, "__cuda_array_interface__") or
                      hasattr(a, "data_ptr") else a for a in epilogue_args)
    e = epilogues.Epilogue(activation=activation, user=epilogue, user_args=len(user_args), **steps)
    args = epilogues.arguments(e, m, n, beta=beta, user_args=user_args, **arrays)
    return e, args, factor
