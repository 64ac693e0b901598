"""What a kernel argument of numba_tma's asks of numba-cuda's compiler and launcher, recorded
here for :mod:`.compiler` (hooks 1 and 2), which does it: importable without the compiler (the
declarations register here under numba-cuda's CUDA simulator too, where nothing compiles).

1. **Kernel parameters passed by value** (``__grid_constant__``): lowering cannot tell a kernel's
   parameter from a device function's, so the data model only records the argument
   (:func:`request_grid_constant`); :mod:`.compiler` marks it when ``nvvm.set_cuda_kernel`` is called.
2. **Launching a by-value argument**: a registered Numba type supplies the object cuda.core's
   parameter packer passes by value (:func:`register_by_value`); :mod:`.compiler` hands it to
   numba-cuda's ``_Kernel._prepare_args``.
"""

from __future__ import annotations

import weakref

PENDING = weakref.WeakKeyDictionary()   # ir.Argument -> the byval attributes to give it in a kernel
BY_VALUE = {}   # Numba type class -> function(python value, position) -> object cuda.core passes by value
_BY_VALUE_RESETS = []   # what drops a thread's by-value objects made in another CUDA context
# cuda.core's refusals, at a launch, of a TensorMapDescriptor made in another context or on another device
OTHER_CONTEXT = ("was created in a different CUDA context", "but current device is")


def request_grid_constant(argument, attributes) -> None:
    """Mark ``argument`` (an ``ir.Argument``) ``byval`` (with ``attributes``) and ``grid_constant``
    if its function turns out to be a kernel entry point; a device function keeps a plain pointer."""
    PENDING[argument] = attributes


def register_by_value(type_class, to_argument, reset=None) -> None:
    """Launch arguments typed as ``type_class`` are passed as ``to_argument(value, position)``,
    ``position`` the index of the kernel parameter it becomes (the launch's parameters so far).
    ``reset()`` drops what ``to_argument`` keeps for this thread, when cuda.core refuses a kept
    object made in another CUDA context (another device): the launch is then made again, once."""
    BY_VALUE[type_class] = to_argument
    if reset is not None:
        _BY_VALUE_RESETS.append(reset)


def launched_again(error, launch):
    """``launch()`` made again if ``error`` is cuda.core's refusal of a by-value object kept from
    another CUDA context (after the registered resets); else ``error`` raised."""
    if not (isinstance(error, RuntimeError) and any(words in str(error) for words in OTHER_CONTEXT) and
            _BY_VALUE_RESETS):
        raise error
    for reset in _BY_VALUE_RESETS:
        reset()
    return launch()
