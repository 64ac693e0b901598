"""numba_tma.tlx: each TLX name compiles to the numba_tma op it wraps (offsets reversed into
coords), string options pass as constants, and the docs table lists every wrapper."""

import re
from pathlib import Path

import numba
import pytest
from numba import cuda

from numba_tma import OpArgumentError, TensorMap, inspect, tlx

SIG = (TensorMap.numba_type("float32", (64, 32)), numba.int32[::1], numba.float32[::1])


def _ptx(body):
    namespace = {"cuda": cuda, "numba": numba, "tlx": tlx}
    exec("def k(desc, out, g):\n    bars = tlx.alloc_barriers(2, 1)\n"
         "    tile = cuda.shared.array((64, 32), numba.float32, alignment=128)\n    " + body, namespace)
    return inspect.ptx(namespace["k"], SIG)


@pytest.mark.parametrize("body,expected", [
    ("tlx.async_descriptor_load(desc, tile, (out[0], out[1]), bars)",
     r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes \[%r\d+\], "
     r"\[%rd\d+, \{%r(\d+), %r(\d+)\}\]"),
    ("tlx.async_descriptor_load(desc, tile, (0, 0), bars, eviction_policy='evict_first', multicast_targets=3)",
     r"createpolicy\.fractional\.L2::evict_first"),
    ("tlx.async_descriptor_store(desc, tile, (0, 0), store_reduce='add')",
     r"cp\.reduce\.async\.bulk\.tensor\.2d\.global\.shared::cta\.add\.tile"),
    ("tlx.async_descriptor_store(desc, tile, (0, 0))\n    tlx.async_descriptor_store_wait(0)",
     r"cp\.async\.bulk\.wait_group\.read 0"),
    ("tlx.async_descriptor_prefetch_tensor(desc, (0, 32))", r"cp\.async\.bulk\.prefetch\.tensor\.2d"),
    ("tlx.barrier_expect_bytes(bars, 8192)\n    tlx.barrier_wait(bars, 0)",
     r"mbarrier\.arrive\.expect_tx\.shared::cta\.b64 %rd\d+, \[%r\d+\], %r\d+;"),
    ("tlx.barrier_arrive(bars, 1, remote_cta_rank=1)", r"mbarrier\.arrive\.release\.cluster\.shared::cluster"),
    ("tlx.named_barrier_arrive(1, 64)\n    tlx.named_barrier_wait(1, 64)", r"bar\.arrive %r\d+, %r\d+;[\s\S]*bar\.sync %r\d+, %r\d+;"),
    ("tlx.fence('async_shared')\n    tlx.fence('gpu')", r"fence\.proxy\.async\.shared::cta;[\s\S]*fence\.acq_rel\.gpu"),
    ("tlx.fence_mbarrier_init_cluster()\n    tlx.cluster_barrier()", r"barrier\.cluster\.wait"),
    ("out[0] = tlx.cluster_cta_rank() + tlx.cluster_size_1d()", r"%cluster_nctarank"),
    ("tlx.async_remote_shmem_store(tile, (1.0, 2.0), 1, bars)", r"st\.async\.shared::cluster.*\.v2\.b32"),
    ("tlx.async_remote_shmem_copy(tile, tile, 1, bars)", r"cp\.async\.bulk\.shared::cluster\.shared::cta"),
    ("tlx.async_load(g, tile, size=16)\n    tlx.async_load_commit_group()\n    tlx.async_load_wait_group(0)",
     r"cp\.async\.ca\.shared\.global|cp\.async\.cg\.shared\.global"),
])
def test_each_name_emits_its_op(body, expected):
    assert re.search(expected, _ptx(body)), expected


def test_offsets_are_reversed_into_coords():
    """TLX offsets (row, col) = (out[0], 32) become TMA coords {32, row}: 32 is an immediate in the
    first position."""
    ptx = _ptx("tlx.async_descriptor_load(desc, tile, (out[0], 32), bars)")
    line = next(l for l in ptx.splitlines() if "cp.async.bulk.tensor" in l)
    first, second = re.search(r"\{(\S+), (\S+)\}\]", line).groups()
    moved = re.search(rf"mov\.u32\s+{re.escape(first)}, 32;", ptx) or first == "32"
    assert moved and second.startswith("%r"), line


@pytest.mark.parametrize("count,match", [
    ("0", r"tlx.alloc_barriers: argument 'num_barriers' must be a positive integer constant \(it sizes a shared "
          r"array\); got Literal\[int\]\(0\)"),
    ("out[0]", r"argument 'num_barriers' must be a positive integer constant \(it sizes a shared array\); got int32"),
])
def test_alloc_barriers_needs_a_positive_constant(count, match):
    namespace = {"cuda": cuda, "numba": numba, "tlx": tlx}
    exec(f"def k(desc, out, g):\n    bars = tlx.alloc_barriers({count})\n", namespace)
    with pytest.raises(OpArgumentError, match=match):
        inspect.ptx(namespace["k"], SIG)


def test_every_wrapper_is_in_the_docs_table():
    page = Path(__file__).parents[1].joinpath("docs", "tlx.md").read_text()
    for name in tlx.__all__:
        assert re.search(rf"`(tlx\.)?{name}[(`]", page), name


@pytest.mark.parametrize("call,expected", [
    ("tlx.async_load(g, tile, size=16)", r"cp\.async\.ca\.shared\.global \[%r\d+\], \[%rd\d+\], 16;"),
    ("tlx.async_load(g, tile, cache_modifier='.cg')", r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16;"),
    ("tlx.async_load(g, tile, cache_modifier='.ca', size=8)", r"cp\.async\.ca\.shared\.global \[%r\d+\], \[%rd\d+\], 8;"),
    # mask: the src-size operand (size, or 0: no byte read, the destination zero-filled)
    ("tlx.async_load(g[out[0]:], tile, mask=out[0] < 30, other=0)",
     r"cp\.async\.ca\.shared\.global \[%r\d+\], \[%rd\d+\], 16, %r\d+;"),
    ("tlx.async_load(g, tile, out[0] < 30, None, '.cg')", r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16, %r\d+;"),
])
def test_async_load_takes_tlx_options(call, expected):
    """TLX's order (src, result, mask, other, cache_modifier), NVIDIA's size last."""
    assert re.search(expected, _ptx(call)), expected


# constants TLX users write that cp.async cannot take, refused compiled and simulated alike
ASYNC_LOAD_CONSTANTS = [
    # the third argument is the mask: 12 there is not a size (it once compiled to a 16-byte copy)
    ("tlx.async_load(g, tile, 12)",
     r"tlx.async_load: argument 'mask' must be None or a boolean \(a comparison such as col < n\), not an "
     r"integer: the third argument is the mask; the size is the keyword size= \(4, 8 or 16\); got 12$"),
    ("tlx.async_load(g, tile, size=12)",
     r"tlx.async_load: argument 'size' must be a constant, 4, 8 or 16 \(the bytes one cp.async copies\); got 12$"),
]


@pytest.mark.parametrize("call,match", [
    ("tlx.async_load(g, tile, mask=out[0] < 30, other=1)",
     r"tlx.async_load: argument 'other' must be None or the integer constant 0 \(cp.async zero-fills .*; got 1$"),
    ("tlx.async_load(g, tile, mask=out[0] < 30, other=g[0])",
     r"argument 'other' must be None or the integer constant 0 .*; got float32$"),
    ("tlx.async_load(g, tile, cache_modifier='.cv')",
     r"tlx.async_load: argument 'cache_modifier' must be a constant, one of '', '.ca', '.cg' .*; got '.cv'$"),
    ("tlx.async_load(g, tile, cache_modifier='.cg', size=8)",
     r"tlx.async_load: argument 'size' must be 16 with cache_modifier='.cg' .*; got 8$"),
] + ASYNC_LOAD_CONSTANTS)
def test_async_load_refuses_what_cp_async_cannot_do(call, match):
    with pytest.raises(OpArgumentError, match=match):
        _ptx(call)


def test_the_simulator_refuses_the_same_async_load_constants():
    from test_simulator import simulate

    out = simulate(f"""
        from numba_tma import OpArgumentError, tlx

        for call in {[call for call, _ in ASYNC_LOAD_CONSTANTS]!r}:
            namespace = dict(cuda=cuda, numba=numba, tlx=tlx)
            exec("def k(g, out):\\n    tile = cuda.shared.array(64, numba.float32, alignment=16)\\n    " + call,
                 namespace)
            try:
                cuda.jit(namespace["k"])[1, 1](np.zeros(64, np.float32), np.zeros(1, np.int32))
                print("RAN", call)
            except OpArgumentError as exc:
                print("REFUSED", exc)
    """)
    refused = [line[len("REFUSED "):] for line in out.splitlines() if line.startswith("REFUSED ")]
    assert len(refused) == len(ASYNC_LOAD_CONSTANTS), out
    for got, (_, match) in zip(refused, ASYNC_LOAD_CONSTANTS):
        assert re.search(match, got), got


def test_async_load_mask_zero_fills_under_the_simulator():
    from test_simulator import simulate

    out = simulate("""
        from numba_tma import tlx

        @cuda.jit
        def k(g, out):
            tile = cuda.shared.array(64, numba.float32, alignment=16)
            i = cuda.threadIdx.x
            tlx.async_load(g[i * 4:], tile[i * 4:], mask=i < 8, other=0, cache_modifier=".cg")
            tlx.async_load_commit_group()
            tlx.async_load_wait_group(0)
            cuda.syncthreads()
            for j in range(4):
                out[i * 4 + j] = tile[i * 4 + j]

        g = np.arange(1, 65, dtype=np.float32)
        out = np.full(64, -1, np.float32)
        k[1, 16](g, out)
        assert np.array_equal(out[:32], g[:32]) and not out[32:].any(), out
        print("masked ok")
    """)
    assert "masked ok" in out
