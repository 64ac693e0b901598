"""Issue 19.3: the row-sum and transpose kernels of ``examples/amd_lanes.py`` beside the
same kernels compiled by Triton's AMD back end (``tests/amd/gluon_lanes.py``).

Both steady-state loops are read with :func:`numba_tma.amd.asm_loops.steady_state`;
instructions are counted per tile (one DMA instruction for the row sum, 16 for the
transpose).  Nothing here runs on hardware; the counts are static.
"""
import importlib.util
import pathlib
import re

import numpy as np
import pytest

from numba_tma.amd import lanes
from numba_tma.amd import lanes_model as model
from numba_tma.amd.asm_loops import loops, steady_state

pytest.importorskip("triton", minversion="3.9", reason="Triton 3.9 (pip install "
                    "numba-tma[amd-reference]) is the reference back end of these tests")
import gluon_lanes  # noqa: E402  (needs Triton)

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "amd_lanes.py"
ARCHS = ("gfx942", "gfx950")
#: numba-tma may spend at most this much more per tile than Triton (as issue 11.4)
TOLERANCE = 1.10


def _example():
    spec = importlib.util.spec_from_file_location("amd_lanes", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example():
    return _example()


@pytest.fixture(scope="module")
def row_sums(example):
    """arch -> (numba-tma with row_reduce, numba-tma through LDS, Triton) loops."""
    return {arch: (steady_state(example.build_row_sum(arch, "row_reduce").asm),
                   steady_state(example.build_row_sum(arch, "lds").asm),
                   steady_state(gluon_lanes.compile_row_sum(arch))) for arch in ARCHS}


@pytest.fixture(scope="module")
def transposes(example):
    """arch -> (numba-tma with wave_id, numba-tma with workitem_id_x() // 64, Triton)."""
    return {arch: (steady_state(example.build_transpose(arch, "wave_id").asm),
                   steady_state(example.build_transpose(arch, "tid").asm),
                   steady_state(gluon_lanes.compile_transpose(arch))) for arch in ARCHS}


def _count(loop, pattern):
    return sum(1 for line in loop.instructions if re.match(pattern, line))


# -- row sums ---------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHS)
def test_row_sum_per_tile_within_tolerance_of_triton(row_sums, arch):
    ours, through_lds, triton = row_sums[arch]
    assert ours.per_tile <= TOLERANCE * triton.per_tile, (ours.per_tile, triton.per_tile)
    assert ours.per_tile < through_lds.per_tile


@pytest.mark.parametrize("arch", ARCHS)
def test_row_sum_reads_the_tile_once_and_sums_across_lanes(row_sums, example, arch):
    """One LDS read per lane and tile (as Triton's), the row sum in DPP adds; the LDS
    version reads each row's 16 floats in one lane."""
    ours, through_lds, triton = row_sums[arch]
    reads = r"ds_read\w* "
    assert _count(ours, reads) / ours.tiles == _count(triton, reads) / triton.tiles == 1
    assert _count(through_lds, reads) / through_lds.tiles > 1
    lanes_per_row, _ = example.row_shape(arch)
    halvings = {16: 4, 4: 2}[lanes_per_row]
    dpp = r"v_\w+_dpp "
    assert _count(ours, dpp) / ours.tiles == halvings
    assert _count(triton, dpp) / triton.tiles >= halvings  # Triton's shuffles: 5 for 16 lanes
    assert not _count(ours, r"ds_(write|store)")


@pytest.mark.parametrize("arch", ARCHS)
def test_row_sum_model_sums_each_row(example, arch):
    """The kernel's lane arithmetic on the numpy lane model: lane l adds its floats
    ``l * per_lane ...``, the row_reduce plan of its arch combines the row's lanes, and the
    first lane of each row holds that row's sum (numpy's, to float32 rounding)."""
    lanes_per_row, rows = example.row_shape(arch)
    per_lane = example.COLS // lanes_per_row
    x = np.random.default_rng(3).standard_normal(rows * example.COLS).astype(np.float32)
    acc = x.reshape(64, per_lane).sum(axis=1, dtype=np.float32)
    total = model.run_plan(lanes.reduction_plan(arch, lanes_per_row), acc, "sum")
    stored = total[::lanes_per_row]
    np.testing.assert_allclose(stored, example.row_sum_reference(x), rtol=1e-5, atol=1e-5)


# -- transpose: M0 on the scalar unit ---------------------------------------------------

_M0_SALU = r"s_\w+ m0, "


@pytest.mark.parametrize("arch", ARCHS)
def test_transpose_with_wave_id_sets_m0_on_the_scalar_unit(transposes, arch):
    """wave_id(): no v_readfirstlane in the loop, each DMA's M0 is one scalar op;
    workitem_id_x() // 64: each of the 16 DMA of a tile moves its LDS address to M0 with a
    v_readfirstlane of its own (the issue's figure)."""
    uniform, lane_varying, triton = transposes[arch]
    assert uniform.tiles == lane_varying.tiles == triton.tiles == 16
    assert _count(uniform, r"v_readfirstlane") == 0
    assert _count(uniform, _M0_SALU) == 16
    assert _count(lane_varying, r"v_readfirstlane_b32 ") == 16
    assert _count(triton, r"v_readfirstlane") == 0


@pytest.mark.parametrize("arch", ARCHS)
def test_transpose_per_tile_within_tolerance_of_triton(transposes, arch):
    uniform, lane_varying, triton = transposes[arch]
    assert len(uniform.instructions) <= TOLERANCE * len(triton.instructions)
    assert len(uniform.instructions) < len(lane_varying.instructions)


# -- loops read off the listing ---------------------------------------------------------

def test_steady_state_counts_a_loop_block_laid_out_after_the_back_branch():
    """Triton's row-sum loop branches around its masked store (``s_cbranch_execz`` back to
    the latch) and lays the store out after that branch; the loop includes it.  Read as
    "label to first back branch", it did not (76 of 82 instructions on gfx942)."""
    loop = steady_state(gluon_lanes.compile_row_sum("gfx942"))
    assert _count(loop, r"global_store_dword ") == loop.tiles == 2


def test_a_forward_branch_returning_is_no_loop(example):
    """The lane-varying transpose clamps each slice out of line and jumps back: one loop,
    not one per clamp."""
    found = loops(example.build_transpose("gfx942", "tid").asm)
    assert len(found) == 1 and found[0].tiles == 16
