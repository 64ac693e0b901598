"""The debug-mode switch (``NUMBA_TMA_DEBUG=1`` or :class:`debug`); what it emits is in
:mod:`numba_tma.intrinsics.debug`.  Kept apart from the intrinsics so that importing it needs no
CUDA target (the simulator imports numba_tma without one)."""

from __future__ import annotations

import contextlib
import os


class _State:
    on = os.environ.get("NUMBA_TMA_DEBUG", "0") not in ("", "0")
    timeout_ms = float(os.environ.get("NUMBA_TMA_DEBUG_TIMEOUT_MS", "2000"))


STATE = _State()


class debug(contextlib.ContextDecorator):
    """Turn debug mode on (or off with ``on=False``) for kernels compiled from now on; as a context
    manager, only for those compiled inside it.

    Example::

        # fragment: the caller's kernel and its arguments
        numba_tma.debug()                         # or: with numba_tma.debug(timeout_ms=500): ...
        kernel[grid, block](desc, out)            # compiled with the checks
    """

    def __init__(self, on: bool = True, timeout_ms: float | None = None):
        if timeout_ms is not None and not timeout_ms > 0:
            raise ValueError(f"timeout_ms={timeout_ms!r}: must be a positive number of milliseconds")
        self._saved = STATE.on, STATE.timeout_ms
        STATE.on = bool(on)
        if timeout_ms is not None:
            STATE.timeout_ms = float(timeout_ms)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        STATE.on, STATE.timeout_ms = self._saved
        return False


def key() -> tuple:
    """What compiled code depends on (for caches of compiled kernels)."""
    return (STATE.on, STATE.timeout_ms) if STATE.on else (False,)


def timeout_ns() -> int:
    return int(STATE.timeout_ms * 1e6)
