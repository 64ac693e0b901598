"""Each diagnostic the simulator gives where the GPU hangs, faults or silently misbehaves: a
deliberately broken kernel, and the message it must raise (naming block, thread, op and barrier)."""

import functools

import pytest

from test_simulator import simulate

RUN = """
def run(kernel, *args, grid=1, block=1):
    try:
        kernel[grid, block](*args)
    except Exception as exc:
        print("raised", exc)
    else:
        print("no error")
src = cuda.to_device(np.arange(32 * 32, dtype=np.float32).reshape(32, 32))
desc = TensorMap.tiled(src, (8, 32))            # 1 KiB boxes
"""


def test_a_wait_that_can_never_complete_reports_the_barrier():
    out = simulate(setup=RUN, body="""
        @cuda.jit
        def forgot_the_load(desc):
            bars = cuda.shared.array(1, numba.uint64)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
                mbarrier.arrive_expect_tx(bars, 4096)      # ... and no copy delivers the bytes
            cuda.syncthreads()
            mbarrier.wait(bars, 0)
        run(forgot_the_load, desc, block=4)
    """)
    assert "deadlock in block (0, 0, 0): every thread is blocked and no async copy is in flight" in out
    assert "mbarrier.wait(parity 0) on barrier bars[0] (allocated at kernel.py:" in out
    assert "expects 1 arrivals per phase, 1 arrived; expects 4096 bytes, 0 delivered" in out


def test_a_deadlock_between_syncthreads_and_a_wait_names_both():
    out = simulate(setup=RUN, body="""
        @cuda.jit
        def waits_for_a_thread_stuck_in_syncthreads(desc):
            bars = cuda.shared.array(1, numba.uint64)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 2)
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                mbarrier.arrive(bars)
                mbarrier.wait(bars, 0)     # thread 1's arrival never comes:
            else:
                cuda.syncthreads()         # it waits for thread 0 at a block barrier
                mbarrier.arrive(bars)
        run(waits_for_a_thread_stuck_in_syncthreads, desc, block=2)
    """)
    assert "thread (0, 0, 0): mbarrier.wait(parity 0) on barrier bars[0]" in out
    assert "expects 2 arrivals per phase, 1 arrived" in out and "thread (1, 0, 0): cuda.syncthreads()" in out


def test_barrier_misuse():
    out = simulate(setup=RUN, body="""
        @cuda.jit
        def too_few_bytes_expected(desc):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            mbarrier.arrive_expect_tx(bars, 512)
            tma.load(desc, tile, (0, 0), bars)
            mbarrier.wait(bars, 0)

        @cuda.jit
        def never_initialised(desc):
            bars = cuda.shared.array(2, numba.uint64)
            mbarrier.init(bars, 1)
            mbarrier.arrive(bars[1:])

        @cuda.jit
        def arrives_too_often(desc):
            bars = cuda.shared.array(1, numba.uint64)
            mbarrier.init(bars, 1)
            mbarrier.arrive(bars, count=2)
        run(too_few_bytes_expected, desc)
        run(never_initialised, desc)
        run(arrives_too_often, desc)
    """)
    assert "the transaction count of bars[0] (allocated at" in out and "went negative: tma.load issued by thread " \
        "(0, 0, 0) of block (0, 0, 0) delivered 1024 bytes" in out and "expects 512 bytes, 1024 delivered" in out
    assert "mbarrier.arrive on bars[1] (allocated at" in out and "not an initialised mbarrier of this block" in out
    assert "mbarrier.arrive arrives 2 times on barrier bars[0]" in out


_BAD_TMA = {
    "global": "tma.load: dst must be a shared array (cuda.shared.array); got an array outside shared memory",
    "unaligned": "tma.load: dst tile[0] (allocated at kernel.py:{line}) is only 4-byte aligned; TMA needs 128-byte",
    "swizzle": "is only 128-byte aligned; TMA needs 1024-byte alignment for SWIZZLE_128B",
    "small": "holds 512 bytes, smaller than the box (1024 bytes of shared memory)",
    "coords": "tma.load: argument 'coords[0]' times the element size (4 bytes) must be a multiple of 16 bytes",
    "store": "tma.store: coords (0, -1) start before the tensor",
}


@functools.cache
def _bad_tma_reports() -> dict:
    """Each bad operand's report, from one simulator child (the case a kernel argument)."""
    out = simulate(setup=RUN, body=f"""
        swizzled = TensorMap.tiled(src, (8, 32), swizzle="128B")
        @cuda.jit
        def kernel(desc, swizzled, out, case):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((8, 32), numba.float32)
            aligned = cuda.shared.array((8, 32), numba.float32, alignment=128)
            small = cuda.shared.array((4, 32), numba.float32, alignment=128)
            mbarrier.init(bars, 1)
            if case == "global":
                tma.load(desc, out, (0, 0), bars)
            elif case == "unaligned":
                tma.load(desc, tile, (0, 0), bars)
            elif case == "swizzle":
                tma.load(swizzled, aligned, (0, 0), bars)
            elif case == "small":
                tma.load(desc, small, (0, 0), bars)
            elif case == "coords":
                tma.load(desc, aligned, (2, 0), bars)
            else:
                tma.store(desc, aligned, (0, -1))
        for case in {sorted(_BAD_TMA)!r}:
            print("===", case)
            run(kernel, desc, swizzled, np.zeros((8, 32), np.float32), case)
    """)
    return dict(chunk.split("\n", 1) for chunk in out.split("=== ")[1:])


@pytest.mark.parametrize("case", sorted(_BAD_TMA))
def test_bad_tma_operands(case):
    out = _bad_tma_reports()[case]
    assert _BAD_TMA[case].format(line=22) in out, out


def test_an_im2col_start_outside_the_bounding_box_is_reported():
    """On the H200 such a load ends the kernel with an illegal instruction (14 of 14 starts outside
    the box, in W or H, before or past it; tests/test_gpu_simulator_identity.py keeps starts inside)."""
    out = simulate(setup=RUN, body="""
        image = cuda.to_device(np.zeros((1, 6, 6, 8), np.float32))
        columns = TensorMap.im2col(image, [0, 0], [-1, -1], 8, 4)        # H and W boxes: [0, 4]
        @cuda.jit
        def past_the_box(columns, h, w):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((4, 8), numba.float32, alignment=128)
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            mbarrier.arrive_expect_tx(bars, columns.box_bytes)
            tma.load_im2col(columns, tile, (0, w, h, 0), (0, 0), bars)
            mbarrier.wait(bars, 0)
        run(past_the_box, columns, 5, 0)
        run(past_the_box, columns, 0, -1)
        run(past_the_box, columns, 4, 4)
    """)
    assert "tma.load_im2col: coords[2]=5 (the first pixel's H) lies outside the bounding box [0, 4]" in out
    assert "coords[1]=-1 (the first pixel's W) lies outside the bounding box [0, 4]" in out
    assert "CUDA_ERROR_ILLEGAL_INSTRUCTION" in out and out.strip().endswith("no error")


def test_reading_a_tile_before_waiting_is_reported():
    out = simulate(setup=RUN, body="""
        @cuda.jit
        def reads_too_early(desc, out):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
            mbarrier.arrive_expect_tx(bars, 1024)
            tma.load(desc, tile, (0, 8), bars)
            out[0] = tile[1, 2]                # no mbarrier.wait first
        run(reads_too_early, desc, np.zeros(1, np.float32))
    """)
    assert "thread (0, 0, 0) of block (0, 0, 0) reads tile[34] (allocated at kernel.py:" in out
    assert "while the tma.load issued by thread (0, 0, 0) of block (0, 0, 0) that writes it is still in flight" in out


def test_a_wait_on_the_wrong_barrier_is_reported_under_every_seed():
    """Waiting on barrier 0 but reading the tile barrier 1 tracks: a wait delivers only the copies
    of its own barrier (completions held back to the latest legal moment), so the read is reported
    in every run, whatever the seed."""
    body = """
        @cuda.jit
        def waits_on_the_wrong_barrier(desc, out):
            bars = cuda.shared.array(2, numba.uint64)
            tiles = cuda.shared.array((2, 8, 32), numba.float32, alignment=128)
            mbarrier.init(bars, 1)
            mbarrier.init(bars[1:], 1)
            fence.mbarrier_init()
            for s in range(2):
                mbarrier.arrive_expect_tx(bars[s:], 1024)
                tma.load(desc, tiles[s], (0, 8 * s), bars[s:])
            mbarrier.wait(bars, 0)
            out[0] = tiles[1, 0, 0]            # should have waited on bars[1]
        for seed in range(8):
            numba_tma.simulator.scheduler.SEED = seed
            run(waits_on_the_wrong_barrier, desc, np.zeros(1, np.float32))
    """
    assert simulate(body.replace("numba_tma.simulator.scheduler.SEED = seed", "pass"), setup=RUN).count("no error") == 0
    out = simulate(body, setup=RUN)
    assert out.count("reads tiles[256]") == 8 and "still in flight" in out and "no error" not in out, out


def test_an_mma_reading_rows_past_the_boxes_loaded_is_refused():
    """Operand A of a wgmma reads 64 rows; a map whose box has 32 rows fills half of them with one
    load: on the GPU the other 32 rows are whatever the tile held (a wrong answer, no fault).  Two
    loads (one per box, into consecutive boxes of the tile) fill them all."""
    out = simulate(setup=RUN + "from numba_tma import wgmma\n", body="""
        @cuda.jit
        def half_loaded(desc_a, desc_b, out, loads):
            ta = cuda.shared.array(64 * 64, numba.uint16, alignment=1024)
            tb = cuda.shared.array(8 * 64, numba.uint16, alignment=1024)
            bars = cuda.shared.array(1, numba.uint64)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
                fence.mbarrier_init()
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(bars, loads * desc_a.box_bytes + desc_b.box_bytes)
                for i in range(loads):
                    tma.load(desc_a, ta[i * 32 * 64:], (0, 32 * i), bars)
                tma.load(desc_b, tb, (0, 0), bars)
            mbarrier.wait(bars, 0)
            acc = wgmma.fence(wgmma.zeros(4))
            acc = wgmma.mma_async(acc, wgmma.descriptor(ta, desc_a, 0, 0), wgmma.descriptor(tb, desc_b, 0, 0), 0)
            wgmma.commit_group()
            acc = wgmma.wait_group(0, acc)
            wgmma.store(acc, out, 0, 0)

        ones = cuda.to_device(np.full((64, 64), 0x3F80, np.uint16))        # bf16 1.0
        desc_a = TensorMap.tiled(ones, (32, 64), swizzle="128B", data_type="bfloat16")
        desc_b = TensorMap.tiled(ones, (8, 64), swizzle="128B", data_type="bfloat16")
        out = cuda.to_device(np.zeros((64, 8), np.float32))
        run(half_loaded, desc_a, desc_b, out, 1, block=128)
        run(half_loaded, desc_a, desc_b, out, 2, block=128)
        print("sums", np.unique(out.copy_to_host()))
    """)
    assert ("wgmma.mma_async: operand 'a' reads 64 rows (operand A: 64, operand B: N = 8) of ta[0] (allocated at "
            "kernel.py:") in out, out
    assert ("from row 0 (wgmma.descriptor(tile, desc, k, row=0)), but rows 32-63 hold no bytes a copy delivered: the "
            "map's box has 32 rows") in out, out
    assert "Missing step: load every row the MMA reads (a map whose box has 64 rows, or one tma.load per box" in out
    assert out.count("no error") == 1 and "sums [16.]" in out, out
