"""A stand-in ``torch`` module that records ``torch.library.custom_op`` registrations (PyTorch
itself is not needed): the torch custom ops of numba_tma.gemm and numba_tma.attention are checked
against it."""

import sys
import types


class Tensor:
    """What a fake implementation reads of a tensor: its shape and dtype; ``new_empty`` as torch's."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    def new_empty(self, shape, dtype):
        return Tensor(shape, dtype)


def install(monkeypatch):
    """The stand-in as ``sys.modules["torch"]`` (for the test): dtypes as strings, and
    ``library.custom_op`` recording each op (``.registered``: name -> op with its function,
    ``mutates_args``, schema and fake)."""
    fake = types.ModuleType("torch")
    fake.bfloat16, fake.float16, fake.float32 = "bf16", "f16", "f32"
    fake.float8_e4m3fn, fake.float8_e5m2 = "e4m3", "e5m2"
    fake.registered = {}

    class Op:
        def __init__(self, name, impl, mutates_args, schema):
            self.name, self.impl, self.mutates_args, self.schema, self.fake = name, impl, mutates_args, schema, None

        def register_fake(self, fn):
            self.fake = fn

    def custom_op(name, fn, /, *, mutates_args, schema=None):
        fake.registered[name] = Op(name, fn, mutates_args, schema)
        return fake.registered[name]

    fake.library = types.SimpleNamespace(custom_op=custom_op)
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake
