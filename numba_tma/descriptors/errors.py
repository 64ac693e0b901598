"""The one exception type of :mod:`numba_tma.descriptors`."""


class TensorMapError(ValueError):
    """A tensor-map parameter the CUDA driver would reject (or one this encoder cannot express).

    ``argument`` names the parameter and ``index`` the entry of an array parameter (None for a
    scalar, or the array as a whole); ``value`` is what was passed, ``note`` (optional) says
    what the value is, and ``rule`` which requirement it breaks.  The encoders name the driver's
    parameters (innermost dimension first); :class:`numba_tma.TensorMap` restates the same
    errors in its own arguments (the array's order) and says what to change.

    >>> try:
    ...     raise TensorMapError("box_dim", 0, "must be in [1, 256]", index=1)
    ... except ValueError as e:
    ...     print(e)
    box_dim[1]=0: must be in [1, 256]
    >>> print(TensorMapError("box", 512, "must be in [1, 256]", index=0, note="(dimension 0 of the array, rows)"))
    box[0]=512 (dimension 0 of the array, rows): must be in [1, 256]
    """

    def __init__(self, argument, value, rule, index=None, note=None):
        self.argument, self.index, self.value, self.note, self.rule = argument, index, value, note, rule
        name = argument if index is None else f"{argument}[{index}]"
        super().__init__(f"{name}={value!r}{'' if note is None else ' ' + note}: {rule}")
