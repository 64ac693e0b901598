"""``numba_tma.tcgen05`` under the simulator: refused.  The simulator models sm_90 hardware (no
tensor memory, no fifth-generation tensor cores); each twin, after the declaration's argument rules
have run (so a bad argument is refused as the compiled op refuses it), raises a
:class:`SimulatorError` naming the op.  tcgen05 kernels are checked by their assembly for sm_100a
(``tests/test_assembles.py``), not run here.
"""

from __future__ import annotations

from .state import RUNNING, SimulatorError


def _not_simulated(*_):
    raise SimulatorError(f"numba_tma simulator: {RUNNING.op}: tcgen05 (Blackwell tensor memory and MMA, sm_100a) is "
                         "not simulated: the simulator models sm_90 hardware; compile for sm_100a to check it "
                         "(numba_tma.inspect.compile)")


def alloc(dst, ncols, cta_group):
    _not_simulated()


def dealloc(taddr, ncols, cta_group):
    _not_simulated()


def relinquish_alloc_permit(cta_group):
    _not_simulated()


def descriptor(tile, desc, k, row):
    _not_simulated()


def idesc(m, n, dtype, trans_a, trans_b, negate_a, negate_b, cta_group):
    _not_simulated()


def mma(d_tmem, a_desc, b_desc, idesc, enable_input_d, kind, cta_group):
    _not_simulated()


def mma_tmem_a(d_tmem, a_tmem, b_desc, idesc, enable_input_d, kind, cta_group):
    _not_simulated()


def commit(bar, multicast, cta_group):
    _not_simulated()


def ld(taddr, num, shape):
    _not_simulated()


def st(taddr, values, shape):
    _not_simulated()


def wait_ld():
    _not_simulated()


def wait_st():
    _not_simulated()


def cp(taddr, sdesc, shape, cta_group):
    _not_simulated()


def fence_before_thread_sync():
    _not_simulated()


def fence_after_thread_sync():
    _not_simulated()
