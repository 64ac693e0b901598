"""numba-cuda 0.30's internal names the declarations and the compiled helpers type and lower
with, re-exported: the one list of them (``tests/test_numba_cuda_hooks.py`` checks each is still
there, of the kind used).

Imported by the declarations (``numba_tma.intrinsics``), the pipeline's Numba types and the
shared-memory carver; under numba-cuda's CUDA simulator the declarations import them with the
device stubs lent (:func:`numba_tma.simulator.numba_sim.lent_device_stubs`), which numba-cuda's
typing modules key their templates on.
"""

from numba.cuda import nvvmutils                                  # noqa: F401  sregs, the shared window's cast
from numba.cuda.core.targetconfig import ConfigStack              # noqa: F401  the compilation's flags (its target)
from numba.cuda.cudadecl import register_attr                     # noqa: F401  attribute templates of the CUDA target
from numba.cuda.cudadrv import nvvm                               # noqa: F401  address spaces, the IR's target
from numba.cuda.cudaimpl import lower_attr, lower_constant        # noqa: F401  the CUDA target's lowering registry
from numba.cuda.extending import _intrinsic                       # noqa: F401  an intrinsic with its own options
from numba.cuda.typeconv import Conversion                        # noqa: F401  a cast's kind (safe, unsafe)
from numba.cuda.typing.templates import AttributeTemplate         # noqa: F401  typing of a type's attributes

__all__ = ["AttributeTemplate", "ConfigStack", "Conversion", "_intrinsic", "lower_attr",
           "lower_constant", "nvvm", "nvvmutils", "register_attr"]
