"""numba-cuda, as numba_tma uses it: every internal name of numba-cuda's compiler and launcher
numba_tma uses, and every hook into them, lives in this package and nowhere else; every other
module imports them from here.  ``tests/test_numba_cuda_hooks.py`` checks each name and each behaviour a
hook assumes, and fails with a clear message when a numba-cuda release moves one
(``tests/test_simulator_hooks.py`` does the same for the simulator's adapter,
:mod:`numba_tma.simulator.numba_sim`, which names numba-cuda's *simulator* internals).

The modules:

* :mod:`.internals` — numba-cuda's internal names the declarations type and lower with
  (``_intrinsic``, ``ConfigStack``, ``register_attr``, ``lower_attr``, ``lower_constant``,
  ``AttributeTemplate``, ``Conversion``, ``nvvm``, ``nvvmutils``), re-exported;
* :mod:`.kernel_arguments` — what a kernel argument asks of the compiler and the launcher (hooks
  1 and 2, recorded; importable under the simulator);
* :mod:`.compiler` — hooks 1, 3 and 8 and :func:`.compiler.install`; :mod:`.launching` — hooks 2,
  5 and 7; :mod:`.linked_codes` — hook 4; :mod:`.device_arrays` — hooks 9 and 10 (these four
  import numba-cuda's compiler: the GPU backend, :mod:`numba_tma.gpu`, imports them);
  :mod:`.whole_program` — hook 8's rule and refusal (importable under the simulator);
* :mod:`.cuda_core` — cuda.core's private ``_tensor_map`` and ``_kernel_arg_handler``.

numba-cuda has no extension point for any of the hooks; each wraps one internal name and says what
it replaces:

1. **Kernel parameters passed by value** (``__grid_constant__``).  A by-value TensorMap must be a
   ``byval`` pointer parameter listed in the kernel's ``grid_constant`` annotation; a device
   function taking the same type must receive a plain pointer (``byval`` there is a local copy).
   Lowering cannot tell the two apart, so the data model only *records* the argument
   (:func:`.kernel_arguments.request_grid_constant`) and the marking happens in
   ``nvvm.set_cuda_kernel``, which numba-cuda's ``kernel_fixup`` calls for kernel entry points only.
2. **Launching a by-value argument.**  numba-cuda's launcher (``_Kernel._prepare_args``) knows no
   128-byte by-value argument; the hook lets a registered Numba type supply the object cuda.core's
   parameter packer passes by value (:func:`.kernel_arguments.register_by_value`), given the
   argument's position among the launch's kernel parameters.
3. **The compilation target of kernels and device functions.**  numba-cuda compiles a JIT kernel for
   ``get_current_device().compute_capability`` (``(9, 0)``) while its code generator later targets
   ``sm_90a``, and compiles device functions for the current device even inside a kernel compiled
   for another target (or with no GPU at all).  The hook makes that lookup return the target
   actually used: the enclosing compilation's when a kernel is being compiled, else the device's
   with the ``a`` suffix numba-cuda's code generator adds from compute capability 9.0.
4. **Everything a kernel links, with no GPU** (for :mod:`numba_tma.inspect`).  numba-cuda's public
   ``compile_all`` compiles the CUDA C++ sources a kernel links (its fp16/bf16 shims) through
   cuda.core's ``Program``, which needs the driver library.  :func:`.linked_codes.kernel_codes`
   takes the same code library and compiles those sources with NVRTC directly, with numba-cuda's
   include paths.
5. **Launching with options numba's launch syntax lacks** (clusters, more than 48 KB of dynamic
   shared memory): :func:`.launching.prepared_launch` picks the overload (compiling it if new), and
   prepares arguments, exactly as numba-cuda's own launch does (its C dispatcher's ``_cuda_call``,
   which types arguments from a cache of type fingerprints; ``_Kernel._prepare_args``, write-backs),
   and hands back the ``CUkernel``; :func:`.launching.argument_types` and
   :func:`.launching.prepared_args` are its two halves, for a CUDA graph's node re-pointed at new
   arguments of the types it was captured with (:mod:`numba_tma.gpu.graphs`);
   :func:`.launching.prepared_pieces` says where each argument's parameters start, and
   :data:`.launching.ARRAY_DATA` where an array's data address lies among its own (checked against
   the array when a launch is prepared), for :func:`numba_tma.prepare_launch`, which replaces only
   the maps' and arrays' addresses of a prepared launch (``tests/test_launch_on_a_stand_in_gpu.py``).
6. **The op declarations under numba-cuda's CUDA simulator** (``NUMBA_ENABLE_CUDASIM=1``), which
   puts its own ``dispatcher``, ``compiler`` and ``cudadrv`` in place of numba-cuda's: nothing
   compiles there, so hooks 1-5 and 7-10 are not installed (the simulator's backend never imports
   :mod:`.compiler`, :mod:`.launching`, :mod:`.linked_codes` or :mod:`.device_arrays`).  The
   declarations import numba-cuda's typing modules, which read device stubs (``cuda.shared``...) the
   simulator's ``numba.cuda`` lacks: the simulator's adapter lends them numba-cuda's own for that
   import (``numba_tma.simulator.numba_sim.lent_device_stubs``, guarded by
   ``tests/test_simulator_inspect.py``).
7. **A kernel's constant multicast masks, and numba's own launch** (``_Kernel.launch``).  Each
   multicast op given a constant mask (and each ``cluster.mask_*`` helper with constant arguments)
   leaves a comment in the LLVM IR it lowers to (``intrinsics._core. mark_constant_multicast``);
   :func:`.launching.constant_multicast_masks` reads them from the code library's IR strings
   (``CUDACodeLibrary.llvm_strs``: the kernel's module and every device function's it links, kept by
   numba-cuda's disk cache too), once per compiled kernel.  ``_Kernel.launch`` (numba's
   ``kernel[grid, block, stream, shared_mem]``) is wrapped to refuse a kernel whose masks need a
   cluster (numba's launch has none: one dictionary lookup per launch) and, when the driver refuses
   a launch, to say which limit it broke (:mod:`numba_tma.launch_limits`; nothing runs on a launch
   that works).
8. **Kernels calling ``setmaxnreg`` linked whole-program** (``CUDACodeLibrary.get_cubin``).
   numba-cuda links PTX with nvJitLink, which runs ptxas on it as relocatable code, and ptxas then
   drops ``setmaxnreg`` ("C7504 ... ignored to maintain compatibility across compilation units").
   numba-cuda's own LTO link (its ``lto=True``: the kernel and every CUDA source it links as LTO-IR,
   nvJitLink ``-lto``) compiles the whole program at once, and there ptxas keeps it when it knows
   the register count at entry (the kernel's ``launch_bounds=(threads, min_blocks)``, or
   ``max_registers`` without launch bounds).  The hook links each kernel whose code
   (:func:`.whole_program.uses_setmaxnreg`) has the instruction that way, and refuses the cubin
   where ptxas still dropped it (:func:`.whole_program.refuse_ignored_setmaxnreg`);
   :func:`.linked_codes.kernel_codes` gives such a kernel's codes as LTO-IR for
   :mod:`numba_tma.inspect`.  Other kernels link as before.
9. **A numba-cuda device array's interface, cheaply** (:func:`.device_arrays.device_array_view`).
   ``DeviceNDArray. __cuda_array_interface__`` builds a dictionary and tests contiguity on every
   call (~1 us on the GPU host); ``TensorMap.tiled`` / ``with_array`` on an array seen before read
   the same facts from the attributes that property reads (``dtype``, ``shape``, ``strides``,
   ``gpu_data``).
10. **A device array of a Numba type of numba_tma's choosing**
    (:func:`.device_arrays.typed_device_array`): ``TensorMap.to_device()``'s array is typed by the
    map's layout.  numba-cuda types a device array from its ``_numba_type_`` (``typeof`` and the C
    dispatcher's fallback, which computes no fingerprint for a device array) and launches any
    argument typed ``types.Array`` as the array it is (``_Kernel._prepare_args``); a
    ``DeviceNDArray`` subclass over the same memory (``gpu_data``) answers ``_numba_type_`` with the
    type given, its views (slices, reshapes: made as ``type(self)(...)``) with numba-cuda's own.
"""

from numba.cuda.core import config   # noqa: F401  numba-cuda's configuration (ENABLE_CUDASIM: numba_tma.ops reads it)

SUPPORTED = "0.30"   # the numba-cuda minor this package was verified against
