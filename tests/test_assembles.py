"""Every op assembles for each architecture it claims, to the instruction (no GPU needed).

For each op: the PTX contains the exact instruction, nvJitLink turns it into a cubin for sm_90a and
sm_100a, and the SASS contains the opcode the hardware runs.
"""

import numba
import pytest
from numba import cuda

from numba_tma import inspect, mbarrier

import kernels

ARCHS = ["sm_90a", "sm_100a"]

# (kernel, signature, exact PTX text, SASS opcode)
CASES = {
    "mbarrier.init": (kernels.mbarrier_init, kernels.U64_OUT,
                      "mbarrier.init.shared::cta.b64 [%r", "SYNCS.EXCH.64"),
    "mbarrier.arrive": (kernels.mbarrier_arrive, kernels.U64_OUT,
                        "mbarrier.arrive.shared::cta.b64 _, [%r", "SYNCS.ARRIVE.TRANS64.A1T0"),
    "mbarrier.arrive_expect_tx": (kernels.mbarrier_arrive_expect_tx, kernels.U64_OUT,
                                  "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r", "SYNCS.ARRIVE.TRANS64"),
    "mbarrier.try_wait": (kernels.mbarrier_try_wait, kernels.U64_OUT,
                          "mbarrier.try_wait.parity.shared::cta.b64 p, [%r", "SYNCS.PHASECHK.TRANS64.TRYWAIT"),
    "mbarrier.test_wait": (kernels.mbarrier_test_wait, kernels.U64_OUT,
                           "mbarrier.test_wait.parity.shared::cta.b64 p, [%r", "SYNCS.PHASECHK.TRANS64"),
    "mbarrier.wait": (kernels.mbarrier_wait, kernels.U64_OUT,
                      "mbarrier.try_wait.parity.shared::cta.b64 p, [%r", "SYNCS.PHASECHK.TRANS64.TRYWAIT"),
    "fence.proxy_async": (kernels.fence_proxy_async, kernels.U64_OUT,
                          "fence.proxy.async.shared::cta;", "FENCE.VIEW.ASYNC.S"),
}
for _rank in range(1, 6):
    CASES[f"tma.load.{_rank}d"] = (
        kernels.tma_load_kernel(_rank), kernels.TMA_SIG,
        f"cp.async.bulk.tensor.{_rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r",
        f"UTMALDG.{_rank}D",
    )
for _rank in range(3, 6):
    CASES[f"tma.load_im2col.{_rank}d"] = (
        kernels.tma_load_im2col_kernel(_rank), kernels.TMA_SIG,
        f"cp.async.bulk.tensor.{_rank}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r",
        f"UTMALDG.{_rank}D.IM2COL",
    )


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_assembles_to_its_instruction(name, arch):
    kernel, sig, ptx_text, opcode = CASES[name]
    out = inspect.compile(kernel, sig, arch)
    assert f".target {arch}" in out.ptx
    assert ptx_text in out.ptx
    assert out.cubin[:4] == b"\x7fELF"
    assert opcode in out.opcodes(), sorted(out.opcodes())


@pytest.mark.parametrize("arch", ARCHS)
def test_tma_load_acquires_the_global_descriptor(arch):
    """A map in global memory needs the tensormap acquire fence; it becomes UTMACCTL.IV."""
    out = inspect.compile(kernels.tma_load_kernel(2), kernels.TMA_SIG, arch)
    fence_at = out.ptx.index("fence.proxy.tensormap::generic.acquire.sys [%rd")
    assert fence_at < out.ptx.index("cp.async.bulk.tensor.2d")
    assert "UTMACCTL.IV" in out.opcodes()


@pytest.mark.parametrize("arch", ARCHS)
def test_fence_mbarrier_init_assembles(arch):
    """``fence.mbarrier_init`` is in the PTX and assembles; ptxas emits no SASS instruction for it
    on sm_90a/sm_100a (the opcode set is the same with and without the fence), so only the PTX
    and a successful assembly can be checked."""
    out = inspect.compile(kernels.fence_mbarrier_init, kernels.U64_OUT, arch)
    assert "fence.mbarrier_init.release.cluster;" in out.ptx
    assert "SYNCS.EXCH.64" in out.opcodes()


def test_wait_loop_labels_are_unique():
    """Two waits in one kernel get distinct labels (``${:uid}``), so the loops stay distinct even
    where NVVM inlines them into one scope."""

    def two_waits(out):
        bars = cuda.shared.array(2, numba.uint64)
        mbarrier.wait(bars, 0)
        mbarrier.wait(bars[1:], 1)

    out = inspect.compile(two_waits, kernels.U64_OUT, "sm_90a")
    labels = {line.strip().rstrip(":") for line in out.ptx.splitlines() if line.strip().startswith("numba_tma_wait_")
              and line.strip().endswith(":")}
    assert len(labels) == 2
    assert out.opcodes() >= {"SYNCS.PHASECHK.TRANS64.TRYWAIT"}
