"""Debug mode on the GPU: each silent mistake of the users' issue, in a kernel that would hang,
fault or write out of bounds, ends with a message naming the op, the argument and the rule
(run in a child process: a trap leaves the CUDA context unusable)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

CASES = Path(__file__).with_name("debug_cases.py")


@pytest.mark.parametrize("case,message", [
    ("wrong_expect_tx", "mbarrier.wait: timed out after 300 ms waiting for phase parity 0 of the mbarrier"),
    ("swizzle_alignment", "tma.load: argument 'dst' at 0x"),
    ("global_destination", "tma.load: argument 'dst' is not in shared memory"),
    ("small_destination", "tma.load: argument 'dst' holds 256 bytes, fewer than 1024"),
    ("coords_alignment", "tma.load: coords[0] = 2: times 4 bytes it must be a multiple of 16"),
    ("global_barrier", "mbarrier.arrive_expect_tx: argument 'bar' is not in shared memory"),
    ("row_col_order", "tma.load: coords[1] = 96 is past the tensor's last index 63 along dimension 1"),
    ("local_destination", "tma.load: argument 'dst' is not in shared memory"),
    ("slice_offset", "is not 1024-byte aligned (a TMA tile with swizzle SWIZZLE_128B)"),
    ("descriptor_offset", "tma.load: argument 'desc' at 0x"),
    ("store_edge_global", "tma.store: coords[0] = 48: the box ends at element 64, past the end of the row (59 "
                          "elements, 1888 bits: not a multiple of 16 bytes)"),
    ("bulk_past_array", "bulk.store: argument 'dst' holds 256 bytes, fewer than nbytes = 512 (the copy would run "
                        "past the array)"),
    ("bulk_size", "bulk.store: nbytes = 40: times 1 bytes it must be a multiple of 16 (a bulk copy moves whole 16-byte "
                  "chunks)"),
    ("store_edge_edited", "tma.store: coords[0] = 48: the box ends at element 64, past the end of the row (59 "
                          "elements"),
    ("wgmma_tile_alignment", "is not 1024-byte aligned (the 8-row swizzle atom of a wgmma operand tile with swizzle "
                             "SWIZZLE_128B)"),
    ("wgmma_k", "wgmma.descriptor: k = 4: must be in [0, 4): a K step of 32 bytes inside the 128-byte swizzle span "
                "of the map (a wider K is the next tile)"),
    ("wgmma_row_multiple", "wgmma.descriptor: row = 4: must be a multiple of 8 (the 8-row swizzle atom)"),
    ("wgmma_row_outside", "wgmma.descriptor: row = 128: must be below the tile's 128 rows of 128 bytes (the "
                          "descriptor would start past the tile)"),
    ("store_shared_small", "wgmma.store_shared_bf16: argument 'tile' holds 8192 bytes, fewer than 16384 (the 2 "
                           "boxes of 8192 bytes it writes)"),
    ("store_shared_alignment", "wgmma.store_shared_bf16: argument 'tile' at 0x"),
])
def test_each_mistake_ends_with_its_message(case, message):
    env = dict(os.environ, NUMBA_TMA_DEBUG="1", NUMBA_TMA_DEBUG_TIMEOUT_MS="300")
    start = time.perf_counter()
    run = subprocess.run([sys.executable, str(CASES), case], env=env, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    assert run.returncode != 0 and "finished without an error" not in run.stdout
    assert message in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    assert "block (0, 0, 0) thread (0, 0, 0)" in run.stdout
    print(f"{case}: ended in {elapsed:.1f} s (process start and compile included)")


@pytest.mark.parametrize("route", ["global", "edited"])
def test_a_store_opted_in_past_the_edge_writes_to_the_next_16_bytes(route):
    """The routes of the trap above, opted in: the H200 writes column 59, the first past the edge
    (up to 60 elements = 240 bytes, the next 16-byte boundary), and leaves 60..63."""
    env = dict(os.environ, NUMBA_TMA_DEBUG="1")
    run = subprocess.run([sys.executable, str(CASES), f"store_edge_{route}_allowed"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "row 0, columns 56..63: [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]" in run.stdout, run.stdout
