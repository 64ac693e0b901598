"""Fused epilogues: what :func:`numba_tma.gemm.matmul` does to each element of the product before it
is stored, composed into one device function that the kernel applies to its accumulator fragment
(``wgmma.map``), compiled once per combination and cached.

The order, element (row, col) of the M x N output (pseudo-code)::

    # fragment: the steps in order, pseudo-code (acc: the accumulator's element)

    value = acc * scale                      # alpha and per-tensor scales, folded into one number
    value *= a_scale[row] * b_scale[col]     # fp8 row / column scales
    value += beta * c[row, col]
    value += bias[col]  (or bias[row])
    value = activation(value)                # relu, gelu (erf), gelu_tanh, silu
    value += residual[row, col]
    value = epilogue(value, row, col, *epilogue_args)

The user's function only ever sees rows and columns of the output, so it may index its own arrays
with them; the library's steps run on the whole tile, reading at the nearest row and column inside
(the values past the edge are never stored).
"""

import dataclasses
import functools
import math

import numba
import numpy as np
from numba.cuda import libdevice, types

from ..ops import BACKEND

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")


def _bf16_value(bits):
    """A bfloat16 held as its bits (uint16) as float32 (run as Python: the simulator)."""
    return np.array([int(bits) << 16], np.uint32).view(np.float32)[0]


def _compiled_bf16_value():
    @BACKEND.device_function
    def bf16_value(bits):
        return libdevice.int_as_float(types.int32(types.int32(bits) << 16))
    return bf16_value


bf16_value = BACKEND.twin(_bf16_value, _compiled_bf16_value)
"""A bfloat16 held as its bits (uint16) as float32, in a kernel."""


@BACKEND.device_function
def relu(v):
    return max(v, types.float32(0))


@BACKEND.device_function
def gelu(v):
    return types.float32(0.5) * v * (types.float32(1) + math.erf(v * types.float32(0.7071067811865476)))


def _sigmoid(z):
    """1 / (1 + exp(-z)) in float32 (run as Python: the simulator)."""
    with np.errstate(over="ignore"):
        return np.float32(1) / (np.float32(1) + np.exp(-np.float32(z)))


def _compiled_sigmoid():
    @BACKEND.device_function
    def sigmoid(z):
        # ex2.approx and div.approx (rcp.approx): branch-free, no subroutine call (an IEEE
        # division is one, which would make ptxas serialise the kernel's wgmmas); relative error a
        # few units in the last place, plus |z| x 2**-24 from exp's argument (exp(-z) overflows to
        # inf for z < -88: the sigmoid is then 0, as it should be)
        return libdevice.fast_fdividef(types.float32(1), types.float32(1) + libdevice.fast_expf(-z))
    return sigmoid


sigmoid = BACKEND.twin(_sigmoid, _compiled_sigmoid)
"""1 / (1 + exp(-z)) in float32, in a kernel: branch-free, without a division's subroutine call."""


@BACKEND.device_function
def gelu_tanh(v):
    # 0.5 v (1 + tanh(y)) = v sigmoid(2 y): no cancellation where tanh(y) nears -1, no branch
    y2 = v * (types.float32(1.5957691216057308) + types.float32(0.0713548162726) * v * v)
    return v * sigmoid(y2)


@BACKEND.device_function
def silu(v):
    return v * sigmoid(v)


@dataclasses.dataclass(frozen=True)
class Epilogue:
    """One combination of fused steps (the cache key of :func:`compose`).  Each array step is None
    (absent) or ``(storage, index)``: the storage of its 2-D array (``"bf16"`` bits, ``"f16"`` or
    ``"f32"``) and how an element (``r``, ``c``) indexes it (``"r, c"``; a column vector
    ``"r, 0"``, a row ``"0, c"``, one number ``"0, 0"``); ``user`` the user's device function and
    ``user_args`` how many arguments it takes after ``(value, row, col)``."""
    a_scale: tuple = None
    b_scale: tuple = None
    c: tuple = None
    bias: tuple = None
    activation: str = None
    residual: tuple = None
    user: object = None
    user_args: int = 0

    def empty(self):
        return self == Epilogue()

    def steps(self):
        """The steps in words, for ``explain``."""
        words = []
        if self.a_scale or self.b_scale:
            words.append("x " + " x ".join(f"{w}[{on[1]}]" for w, on in (("a_scale", self.a_scale),
                                                                           ("b_scale", self.b_scale)) if on))
        if self.c:
            words.append("+ beta * c")
        if self.bias:
            words.append(f"+ bias[{self.bias[1]}]")
        if self.activation:
            words.append(self.activation)
        if self.residual:
            words.append("+ residual")
        if self.user is not None:
            words.append(f"{getattr(self.user, '__name__', 'epilogue')}(value, row, col, ...)")
        return ", then ".join(words)


def _load(step, i):
    kind, index = step
    expr = f"args[{i}][{index.replace('r', 'rr').replace('c', 'cc')}]"
    return {"bf16": f"bf16_value({expr})", "f16": f"f32({expr})", "f32": expr}[kind]


@functools.lru_cache(maxsize=None)
def compose(e: Epilogue):
    """The device function ``(value, row, col, args) -> value`` of ``e``, where ``args`` is the
    tuple :func:`arguments` orders: ``(rows, cols, beta, a_scale, b_scale, c, bias, residual,
    *user_args)``, the absent ones left out.

    The library's steps run on every element, branch-free: an element past the output's edge
    reads its arrays at the nearest row and column inside (never past their ends; its value is
    not stored), so that the loads of one column's bias are shared and nothing branches.  The
    user's function runs only inside the output."""
    names = ["rows", "cols"] + [n for n, on in (("beta", e.c), ("a_scale", e.a_scale), ("b_scale", e.b_scale),
                                                 ("c", e.c), ("bias", e.bias), ("residual", e.residual)) if on]
    where = {n: i for i, n in enumerate(names)}
    lines = ["def epilogue(v, r, c, args):",
             "    rr = min(u32(r), u32(args[0] - 1))",     # (unsigned indices: no negative-index wraparound)
             "    cc = min(u32(c), u32(args[1] - 1))"]
    steps = (("a_scale", "v * {}"), ("b_scale", "v * {}"), ("c", "v + args[{beta}] * {}"), ("bias", "v + {}"),
             ("activation", "{activation}(v)"), ("residual", "v + {}"))
    for name, template in steps:
        if getattr(e, name):
            value = "" if name == "activation" else _load(getattr(e, name), where[name])
            lines.append("    v = " + template.format(value, beta=where.get("beta"), activation=e.activation))
    if e.user is not None:
        extra = "".join(f", args[{len(names) + i}]" for i in range(e.user_args))
        lines += ["    if r < args[0] and c < args[1]:", f"        v = f32(user(v, r, c{extra}))"]
    lines.append("    return v")
    scope = {"f32": types.float32, "u32": types.uint32, "bf16_value": bf16_value, "relu": relu, "gelu": gelu,
             "gelu_tanh": gelu_tanh, "silu": silu, "user": inlined(e.user) if e.user is not None else None}
    exec(compile("\n".join(lines), f"<numba_tma.gemm epilogue {e}>", "exec"), scope)   # noqa: S102 - our own source
    return BACKEND.device_function(scope["epilogue"])


def _compiled_inlined():
    from ..intrinsics.wgmma import inlined
    return inlined


inlined = BACKEND.twin(lambda fn: fn, _compiled_inlined)
"""The user's device function as the composed epilogue calls it: where kernels are compiled,
``wgmma.map``'s forceinline twin of it (its own options kept; a subroutine call in the kernel would
make ptxas serialise its wgmmas), itself where it runs as Python."""


def arguments(e: Epilogue, rows, cols, *, beta=0.0, a_scale=None, b_scale=None, c=None, bias=None, residual=None,
              user_args=()):
    """The ``args`` tuple the composed function of ``e`` reads (device arrays, numbers)."""
    present = [(numba.float32(beta), e.c), (a_scale, e.a_scale), (b_scale, e.b_scale), (c, e.c), (bias, e.bias),
               (residual, e.residual)]
    return (numba.int64(rows), numba.int64(cols), *(value for value, on in present if on), *user_args)
