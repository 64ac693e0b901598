"""Launch limits under the simulator: every launch path (``numba_tma.launch``, a ``cluster_kernel``'s
``k[grid, block, stream, shared_mem]``, numba's own syntax, a map among the arguments) is refused as
an H200 refuses it, and the kernel's static shared arrays are held to the GPU's 48 KB; a multicast
naming a block outside the cluster is reported at the op."""

from test_simulator import simulate

SETUP = """
from numba_tma import LaunchError, cluster
from numba_tma.simulator import SimulatorError

def refused(run, error=LaunchError):
    try:
        run()
    except error as exc:
        print("refused:", exc)
    else:
        print("ran")

@cuda.jit
def k(out):
    if cuda.threadIdx.x + cuda.threadIdx.y + cuda.blockIdx.x == 0:
        out[0] += 1
"""


def test_every_launch_path_refuses_what_an_h200_refuses():
    out = simulate(setup=SETUP, body="""
        out = np.zeros(1, np.int32)
        desc = TensorMap.tiled(cuda.to_device(np.zeros((8, 32), np.float32)), (8, 32))

        @cuda.jit
        def with_map(desc, out):
            out[0] = 1

        tiny = numba_tma.cluster_kernel(cluster=(2, 1, 1))(k)
        refused(lambda: k[1, 2048](out))                                # numba's own syntax
        refused(lambda: with_map[1, (32, 64)](desc, out))               # ... with a map among the arguments
        refused(lambda: k[1, (1, 1, 128)](out))
        refused(lambda: k[(1, 65536), 32](out))
        refused(lambda: numba_tma.launch(k, 1, 2048, out))              # numba_tma.launch
        refused(lambda: numba_tma.launch(k, (2, 65536), 32, out, cluster=(2, 1, 1)))
        refused(lambda: numba_tma.launch(k, 32, 32, out, cluster=(32, 1, 1)))
        refused(lambda: numba_tma.launch(k, 1, 32, out, shared_mem=232449))
        refused(lambda: tiny[2, 2048](out))                             # a cluster_kernel
        refused(lambda: tiny[2, 32, 0, 300_000](out))
        assert out[0] == 0, out                                         # nothing ran
        refused(lambda: k[1, 1024, 0, 49152](out))                      # the largest of each: they run
        refused(lambda: numba_tma.launch(k, 2, (16, 64), out, cluster=(2, 1, 1), shared_mem=232448))
        print("ran", out[0])
    """)
    lines = [line for line in out.splitlines() if line.startswith(("refused", "ran"))]
    h200 = "the simulated device (an H200) allows at most"
    expected = [
        f"refused: block=(2048, 1, 1): 2048 threads per block; {h200} 1024",
        f"refused: block=(32, 64, 1): 2048 threads per block; {h200} 1024",
        f"refused: block=(1, 1, 128): 128 threads in z; {h200} 64 in z",
        f"refused: grid=(1, 65536, 1): 65536 blocks in y; {h200} 65535 in y",
        f"refused: block=(2048, 1, 1): 2048 threads per block; {h200} 1024",
        f"refused: grid=(2, 65536, 1): 65536 blocks in y; {h200} 65535 in y",
        f"refused: cluster=(32, 1, 1): 32 blocks per cluster; {h200} 16 (8 portably",
        f"refused: shared_mem=232449: 232449 bytes of dynamic shared memory per block; {h200} 232448 bytes",
        f"refused: block=(2048, 1, 1): 2048 threads per block; {h200} 1024",
        f"refused: shared_mem=300000: 300000 bytes of dynamic shared memory per block; {h200} 232448 bytes",
        "ran", "ran", "ran 2",
    ]
    assert len(lines) == len(expected), out
    for line, start in zip(lines, expected):
        assert line.startswith(start), (line, start)


def test_numbas_own_launch_takes_above_48_kb_only_once_opted_in():
    """As on the GPU: numba's launch does not opt a kernel in above 48 KB of dynamic shared memory;
    numba_tma.launch does, and the kernel keeps it (the driver keeps the attribute)."""
    out = simulate(setup=SETUP, body="""
        out = np.zeros(1, np.int32)
        refused(lambda: k[1, 32, 0, 100_000](out))
        refused(lambda: numba_tma.launch(k, 1, 32, out, shared_mem=100_000))
        refused(lambda: k[1, 32, 0, 100_000](out))
        refused(lambda: k[1, 32, 0, 100_001](out))
    """)
    lines = [line for line in out.splitlines() if line.startswith(("refused", "ran"))]
    assert lines[0].startswith("refused: shared_mem=100000: 100000 bytes of dynamic shared memory per block; without "
                               "the opt-in the simulated device (an H200) allows at most 49152 per block"), out
    assert "numba's own launch does not opt in: launch with numba_tma.launch(..., shared_mem=100000)" in lines[0]
    assert lines[1:3] == ["ran", "ran"], out
    assert lines[3].startswith("refused: shared_mem=100001"), out


def test_static_shared_arrays_above_48_kb_are_refused_as_ptxas_refuses_them():
    out = simulate(setup=SETUP, body="""
        @cuda.jit
        def one_big(out):
            big = cuda.shared.array(12289, numba.float32)           # 49156 bytes
            big[0] = 1

        @cuda.jit
        def two(out):
            a = cuda.shared.array(6144, numba.float32)              # 24576 bytes
            b = cuda.shared.array(6145, numba.float32)              # 24580: 49156 in all
            a[0] = b[0] = 1

        @cuda.jit
        def at_the_limit(out):
            a = cuda.shared.array(12288, numba.float32)             # 49152 bytes
            a[0] = 1
            out[0] = 7

        @cuda.jit
        def with_dynamic(out):
            a = cuda.shared.array(2048, numba.float32)              # 8 KB static
            d = cuda.shared.array(0, numba.uint8)
            a[0] = 1

        out = np.zeros(1, np.int32)
        refused(lambda: one_big[1, 32](out), SimulatorError)
        refused(lambda: numba_tma.launch(two, 1, 32, out), SimulatorError)
        refused(lambda: at_the_limit[1, 32](out), SimulatorError)
        refused(lambda: numba_tma.launch(with_dynamic, 1, 32, out, shared_mem=232448 - 8192))
        refused(lambda: numba_tma.launch(with_dynamic, 1, 32, out, shared_mem=232448 - 8191))
        print("out", out[0])
    """)
    lines = [line for line in out.splitlines() if line.startswith(("refused", "ran", "out"))]
    rule = ("bytes; at most 49152 bytes of shared memory per block can be static (ptxas refuses the kernel on the "
            "GPU): declare the rest as dynamic shared memory")
    assert "numba_tma simulator: cuda.shared.array(12289, float32) at kernel.py:" in lines[0], out
    assert f"the kernel's static shared arrays take 49156 {rule}" in lines[0], out
    assert "numba_tma simulator: cuda.shared.array(6145, float32) at kernel.py:" in lines[1], out
    assert f"the kernel's static shared arrays take 49156 {rule}" in lines[1], out
    assert lines[2:4] == ["ran", "ran"], out
    assert lines[4].startswith("refused: ") and ("shared_mem=224257: 224257 bytes of dynamic shared memory per block; the "
                               "simulated device (an H200) allows at most 232448 bytes of shared memory per block "
                               "(dynamic and static together, with the opt-in), of which the kernel's static shared "
                               "arrays take 8192") in lines[4], out
    assert lines[5] == "out 7", out


def test_a_multicast_naming_a_block_outside_the_cluster_is_reported_at_the_op():
    out = simulate(setup=SETUP, body="""
        src = cuda.to_device(np.zeros((8, 32), np.float32))
        desc = TensorMap.tiled(src, (8, 32))

        @cuda.jit
        def k(desc, src, mask, bulk_copy):
            bars = cuda.shared.array(1, numba.uint64)
            tile = cuda.shared.array((8, 32), numba.float32, alignment=128)
            if cuda.threadIdx.x == 0:
                mbarrier.init(bars, 1)
                fence.mbarrier_init()
            cluster.sync()
            if cuda.threadIdx.x == 0:
                mbarrier.arrive_expect_tx(bars, 8 * 32 * 4)
                if bulk_copy:
                    bulk.load(tile, src, 8 * 32 * 4, bars, multicast=mask)
                elif mask != 0b11 or cluster.ctarank() == 0:     # a valid mask: one block multicasts to both
                    tma.load(desc, tile, (0, 0), bars, multicast=mask)
            mbarrier.wait(bars, 0)
            cluster.sync()

        flat = src.reshape(-1)
        refused(lambda: numba_tma.launch(k, 2, 32, desc, flat, 0b100, False, cluster=(2, 1, 1)), SimulatorError)
        refused(lambda: numba_tma.launch(k, 2, 32, desc, flat, 0b110, True, cluster=(2, 1, 1)), SimulatorError)
        refused(lambda: k[1, 32](desc, flat, 0b10, False), SimulatorError)     # numba's own launch: a cluster of 1
        refused(lambda: numba_tma.launch(k, 2, 32, desc, flat, 0b11, False, cluster=(2, 1, 1)), SimulatorError)
    """)
    lines = [line for line in out.splitlines() if line.startswith(("refused", "ran"))]
    assert len(lines) == 4, out
    assert "tma.load: multicast=0x4 must name blocks of this cluster of 2 (bits 0-1, at least one)" in lines[0], out
    assert "bulk.load: multicast=0x6 must name blocks of this cluster of 2 (bits 0-1, at least one)" in lines[1], out
    assert "tma.load: multicast=0x2 must name blocks of this cluster of 1 (bits 0-0, at least one)" in lines[2], out
    assert lines[3] == "ran", out
