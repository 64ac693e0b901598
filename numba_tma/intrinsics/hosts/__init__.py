"""The host compilers an op is emitted through, each a small adapter of the one emission path
(``PtxOp.emit`` in ``numba_tma/intrinsics/_core.py``):

* :mod:`.host`: what a host gives the emission path (``Host``: its operand lowerings' primitives,
  its inline asm, its result packing), on the debug checks' ``Emitter``;
* :mod:`.llvm_host` with :mod:`.llvm_emitter`: numba-cuda (llvmlite), ``build_intrinsic``;
* :mod:`.mlir_host` with :mod:`.mlir_emitter` and :mod:`.mlir_adapter` (the one module naming
  numba-cuda-mlir's internals): numba-cuda-mlir, the ``mlir`` extra, ``build_mlir_intrinsic``.

Nothing is imported here: the mlir modules import numba-cuda-mlir, which only that extra installs.
"""
