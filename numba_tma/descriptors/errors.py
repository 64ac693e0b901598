"""The one exception type of :mod:`numba_tma.descriptors`."""


class TensorMapError(ValueError):
    """A tensor-map parameter the CUDA driver would reject (or one this encoder cannot express).

    ``argument`` names the parameter (with an index for array entries), ``value`` is what was
    passed and ``rule`` says which requirement it breaks.

    >>> try:
    ...     raise TensorMapError("box_dim[0]", 0, "must be in [1, 256]")
    ... except ValueError as e:
    ...     print(e)
    box_dim[0]=0: must be in [1, 256]
    """

    def __init__(self, argument, value, rule):
        self.argument, self.value, self.rule = argument, value, rule
        super().__init__(f"{argument}={value!r}: {rule}")
