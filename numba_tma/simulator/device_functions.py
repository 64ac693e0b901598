"""Device functions under the simulator: numba-cuda's (``cuda.jit(device=True)``: the running
thread's ``cuda`` swapped in around each call) and numba_tma's own helpers that read nothing of
``cuda``, called as plain Python (:class:`DeviceFunction`)."""


class DeviceFunction:
    """One of numba_tma's own device functions that reads nothing of ``cuda`` (:func:`reads_cuda`),
    called as the plain Python function it is: numba-cuda's simulator device function swaps the
    module's ``cuda`` for the running thread's around every call, most of a small helper's time
    (a GEMM epilogue runs one per element)."""

    _device = True

    def __init__(self, fn):
        self.py_func = fn
        self.__name__, self.__doc__, self.__wrapped__ = fn.__name__, fn.__doc__, fn

    def __call__(self, *args):
        return self.py_func(*args)


def reads_cuda(fn) -> bool:
    """Whether ``fn``'s code names ``cuda`` (a global, an attribute, an import; nested code too) or
    its closure holds the ``numba.cuda`` module: then it needs the simulator's swap."""
    from numba import cuda

    codes, names = [fn.__code__], set()
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, type(fn.__code__)))
    cells = []
    for cell in fn.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:          # (a cell not filled yet)
            continue
    return "cuda" in names or any(fn.__globals__.get(n) is cuda for n in names) or any(c is cuda for c in cells)


def is_device_function(fn) -> bool:
    """Whether ``fn`` is a device function here: one of numba_tma's (:class:`DeviceFunction`) or
    numba-cuda's simulator's (``_device`` and ``py_func``)."""
    return isinstance(fn, DeviceFunction) or (bool(getattr(fn, "_device", False)) and hasattr(fn, "py_func"))
