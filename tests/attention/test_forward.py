"""numba_tma.attention.forward both ways (under the simulator small, on the GPU larger), against
numpy in float64 on the same bf16 / f16 inputs: causal and not, grouped-query heads, a sequence
ending inside a block, both layouts, each row's log-sum-exp, a given output; its refusals; the
kernel's SASS; and on the GPU against torch's scaled_dot_product_attention (and the custom op)."""

import math
import re

import numba
import numpy as np
import pytest
from numba import cuda

import half_floats
from numba_tma import TensorMap, attention, inspect, ops, testing
from numba_tma.attention import kernels


def reference(q, k, v, causal, scale):
    """(O, lse) in float64 of (batch, heads, seq_q, d) arrays; k and v (batch, heads // group,
    seq_k, d).  Causal: query i sees keys up to i + seq_k - seq_q (bottom-right); a row that sees
    none (or no key at all): O 0, lse -inf."""
    if k.shape[2] == 0:                                # no key at all
        return np.zeros(q.shape), np.full(q.shape[:3], -np.inf)
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = scale * (q @ k.transpose(0, 1, 3, 2))
    if causal:
        seq_q, seq_k = q.shape[2], k.shape[2]
        s = np.where(np.arange(seq_k)[None, :] > np.arange(seq_q)[:, None] + seq_k - seq_q, -np.inf, s)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    p = np.exp(s - m)
    total = p.sum(-1, keepdims=True)
    with np.errstate(divide="ignore"):
        return (p / np.where(total > 0, total, 1)) @ v, (m + np.log(total))[..., 0]


def varlen_reference(q, k, v, cu_q, cu_k, causal, scale):
    """(O (total_q, heads, d), lse (heads, total_q)) of a varlen batch, sequence by sequence."""
    o, lse = np.zeros(q.shape), np.zeros((q.shape[1], q.shape[0]))
    for b in range(len(cu_q) - 1):
        rows, keys = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        o_b, lse_b = reference(*(x[None].transpose(0, 2, 1, 3) for x in (q[rows], k[keys], v[keys])), causal, scale)
        o[rows], lse[:, rows] = o_b[0].transpose(1, 0, 2), lse_b[0]
    return o, lse


@pytest.mark.both_ways
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d, dtype", [(64, "bf16"), (128, "f16")])
def test_forward_matches_numpy(d, dtype, causal, layout):
    if testing.WAY == "simulator":
        if (d, causal, layout) != (64, True, "bshd"):
            pytest.skip("under the simulator d = 64, causal, (batch, seq, heads, d) covers the kernel (seconds "
                        "each; the rest differ in constants and offsets)")
        batch, heads, kv_heads, seq = 1, 1, 1, 200    # 2 query blocks; key blocks 1 and 2, the last one ragged
        # (grouped heads under the simulator: test_varlen_batch_matches_numpy)
    else:
        batch, heads, kv_heads, seq = 2, 6, 2, 1000
    rng = np.random.default_rng(d + causal)
    q = half_floats.bits(2 * rng.standard_normal((batch, heads, seq, d)), dtype)       # (batch, heads, seq, d)
    k, v = (half_floats.bits(2 * rng.standard_normal((batch, kv_heads, seq, d)), dtype) for _ in range(2))
    order = (0, 2, 1, 3) if layout == "bshd" else (0, 1, 2, 3)
    arrays = [cuda.to_device(np.ascontiguousarray(x.transpose(order))) for x in (q, k, v)]
    out = cuda.to_device(np.full(arrays[0].shape, 0xFFFF, np.uint16))
    got, lse = attention.forward(*arrays, causal=causal, out=out, return_lse=True, layout=layout, dtype=dtype,
                                 softmax_scale=0.1)
    want, want_lse = reference(*(half_floats.values(x, dtype) for x in (q, k, v)), causal, 0.1)
    assert got is out
    o = half_floats.values(out.copy_to_host(), dtype).transpose(order)
    assert np.abs(o - want).max() <= 2e-2 * np.abs(want).max()
    np.testing.assert_allclose(lse.copy_to_host(), want_lse, rtol=1e-5, atol=1e-4)


@pytest.mark.both_ways
@pytest.mark.parametrize("call, error, message", [
    (lambda q, k: attention.forward(q, k, k, dtype="bf16", layout="bsdh"), ValueError,
     r"argument 'layout' must be 'bshd' \(batch, seq, heads, d\) or 'bhsd'"),
    (lambda q, k: attention.forward(q[0], k, k, dtype="bf16"), ValueError,
     r"argument 'q' must be 4-D, \(batch, seq, heads, d\); got shape \(8, 4, 64\)"),
    (lambda q, k: attention.forward(q, *[cuda.to_device(np.zeros((2, 8, 2, 64), np.uint16))] * 2, dtype="bf16"),
     ValueError,
     r"argument 'k' must be \(1, 8, 2, 64\): q's batch and d"),
    (lambda q, k: attention.forward(q[..., :32], k[..., :32], k[..., :32], dtype="bf16"), ValueError,
     "argument 'q' must be contiguous"),
    (lambda q, k: attention.forward(q, q[:, :, :3], q[:, :, :3], dtype="bf16"), ValueError,
     "argument 'k' must be contiguous"),
    (lambda q, k: attention.forward(*[cuda.to_device(np.zeros((1, 8, 4, 64), np.uint8))] * 3, dtype="e4m3"), TypeError,
     "arguments 'q', 'k' and 'v' must hold bf16 or f16, all one; got 'q' e4m3"),
    (lambda q, k: attention.forward(q, k, k, dtype="bf16", out=k), ValueError,
     r"argument 'out' must be contiguous of q's shape \(1, 8, 4, 64\)"),
    (lambda q, k: attention.forward(q, k, k, dtype="bf16", blocks=0), ValueError,
     r"argument 'blocks' must be None \(a block a query tile\) or an int >= 1 \(blocks looping over the tiles\); "
     r"got 0"),
])
def test_refusals_name_the_argument_and_the_rule(call, error, message):
    q = cuda.to_device(np.zeros((1, 8, 4, 64), np.uint16))
    k = cuda.to_device(np.zeros((1, 8, 2, 64), np.uint16))
    with pytest.raises(error, match=message):
        call(q, k)


@pytest.mark.both_ways
def test_heads_and_head_dimensions_without_a_kernel_are_refused():
    q = cuda.to_device(np.zeros((1, 8, 3, 64), np.uint16))
    with pytest.raises(ValueError, match="k's 2 heads must divide q's 3"):
        attention.forward(q, *[cuda.to_device(np.zeros((1, 8, 2, 64), np.uint16))] * 2, dtype="bf16")
    q96 = cuda.to_device(np.zeros((1, 8, 2, 96), np.uint16))
    with pytest.raises(ValueError, match=r"the head dimension d=96 must be one of \(64, 128, 256\)"):
        attention.forward(q96, q96, q96, dtype="bf16")


@pytest.mark.both_ways
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_head_dimension_256_matches_numpy(causal):
    """d 256: Q, K and V four 64-column boxes each, 64-key blocks, O 128 registers a thread; under
    the simulator causal only, one head, 100 queries and keys (two key blocks, the last of 36 keys
    and on the diagonal); on the GPU grouped heads, 1000 queries and 1300 keys (bottom-right), both."""
    if testing.WAY == "simulator" and not causal:
        pytest.skip("under the simulator causal covers the kernel (the mask and a ragged last block besides)")
    batch, heads, kv_heads, seq_q, seq_k = (1, 1, 1, 100, 100) if testing.WAY == "simulator" else (2, 4, 2, 1000, 1300)
    rng = np.random.default_rng(256 + causal)
    q = half_floats.bits(rng.standard_normal((batch, seq_q, heads, 256)), "bf16")
    k, v = (half_floats.bits(rng.standard_normal((batch, seq_k, kv_heads, 256)), "bf16") for _ in range(2))
    got, lse = attention.forward(*(cuda.to_device(x) for x in (q, k, v)), causal=causal, return_lse=True, dtype="bf16")
    want, want_lse = reference(*(half_floats.values(x, "bf16").transpose(0, 2, 1, 3) for x in (q, k, v)), causal,
                               1 / 16)
    o = half_floats.values(got.copy_to_host(), "bf16").transpose(0, 2, 1, 3)
    assert np.abs(o - want).max() <= 2e-2 * np.abs(want).max()
    np.testing.assert_allclose(lse.copy_to_host(), want_lse, rtol=1e-5, atol=1e-4)


@pytest.mark.both_ways
def test_explain_says_what_a_call_runs_without_running_it(monkeypatch):
    """explain: the tiles, the keys a block and why, the registers' split, the launch (one block a
    tile, or a persistent one), nothing launched."""
    from numba_tma.attention import call

    monkeypatch.setattr(call, "launch", lambda *args, **kw: pytest.fail("explain launched the kernel"))
    q = cuda.to_device(np.zeros((2, 300, 4, 128), np.uint16))              # (batch, seq, heads, d)
    k = cuda.to_device(np.zeros((2, 500, 2, 128), np.uint16))
    full = attention.explain(q, k, k, dtype="bf16")
    assert full.splitlines()[0] == ("attention.forward: full attention, bf16, d 128, 4 query heads on 2 K/V heads, "
                                    "batch 2, 300 queries, 500 keys, layout bshd")
    for words in ("24 query tiles of 128 rows (batch x heads x 3 blocks)",
                  "176 keys a block: FlashAttention-3's H100 tile at d 128 without a causal mask",
                  "a producer warpgroup (setmaxnreg 24) and two consumer warpgroups (setmaxnreg 240)",
                  "24 blocks: one a tile"):
        assert words in full, full
    causal = attention.explain(q, k, k, dtype="bf16", causal=True, blocks=3)
    for words in ("the tiles with the most keys first", "128 keys a block: a square tile",
                  "(setmaxnreg 40)", "(setmaxnreg 232)", "3 blocks: block b taking tiles b, b + 3, ... (blocks=3: a "
                  "persistent launch)"):
        assert words in causal, causal


@pytest.mark.both_ways
def test_blocks_of_176_keys_with_more_keys_than_queries_match_numpy(monkeypatch):
    """The 176-key blocks of d 128 without a mask (11 K steps of P V; a last key block of 124
    keys, masked past the sequence's end) on 100 queries and 300 keys; under the simulator at d 64
    (the rule swapped for 176 there: cheaper to simulate, the same code), on the GPU at d 128."""
    from numba_tma.attention import call

    d = 64 if testing.WAY == "simulator" else 128
    if d == 64:
        monkeypatch.setattr(call, "keys_per_block", lambda d, causal: 176)
    assert call.keys_per_block(d, False) == 176
    rng = np.random.default_rng(176)
    q = half_floats.bits(rng.standard_normal((1, 100, 1, d)), "bf16")            # (batch, seq, heads, d)
    k, v = (half_floats.bits(rng.standard_normal((1, 300, 1, d)), "bf16") for _ in range(2))
    got, lse = attention.forward(*(cuda.to_device(x) for x in (q, k, v)), return_lse=True, dtype="bf16")
    want, want_lse = reference(*(half_floats.values(x, "bf16").transpose(0, 2, 1, 3) for x in (q, k, v)), False,
                               1 / math.sqrt(d))
    o = half_floats.values(got.copy_to_host(), "bf16").transpose(0, 2, 1, 3)
    assert np.abs(o - want).max() <= 2e-2 * np.abs(want).max()
    np.testing.assert_allclose(lse.copy_to_host(), want_lse, rtol=1e-5, atol=1e-4)


@pytest.mark.both_ways
@pytest.mark.parametrize("keywords, error, message", [
    (dict(cu_seqlens_q=(0, 4, 8)), ValueError,
     "arguments 'cu_seqlens_q' and 'cu_seqlens_k' go together .* got cu_seqlens_k=None"),
    (dict(cu_seqlens_q=(0, 8), cu_seqlens_k=(0, 6), layout="bhsd"), ValueError,
     r"argument 'layout' must be 'bshd' with cu_seqlens_q and cu_seqlens_k \(a varlen batch is \(total, heads, d\)\)"),
    (dict(cu_seqlens_q=np.array([0, 8], np.float32), cu_seqlens_k=(0, 6)), ValueError,
     r"argument 'cu_seqlens_q' must be a contiguous 1-D int32 array of batch \+ 1 >= 2 entries .*; got f32 \(2,\)"),
    (dict(cu_seqlens_q=(0, 5, 4, 8), cu_seqlens_k=(0, 2, 4, 6)), ValueError,
     r"argument 'cu_seqlens_q' must rise from 0 \(never falling\) to 8, the rows of 'q'; got \[0, 5, 4, 8\]"),
    (dict(cu_seqlens_q=(0, 8), cu_seqlens_k=(0, 7)), ValueError,
     r"argument 'cu_seqlens_k' must rise from 0 \(never falling\) to 6, the rows of 'k'"),
    (dict(cu_seqlens_q=(0, 4, 8), cu_seqlens_k=(0, 6)), ValueError,
     r"arguments 'cu_seqlens_q' and 'cu_seqlens_k' must have one length \(batch \+ 1\); got 3 and 2"),
])
def test_varlen_refusals_name_the_argument_and_the_rule(keywords, error, message):
    q = cuda.to_device(np.zeros((8, 4, 64), np.uint16))              # (total, heads, d)
    k = cuda.to_device(np.zeros((6, 2, 64), np.uint16))
    ends = {name: cuda.to_device(np.asarray(x, np.int32 if isinstance(x, tuple) else None))
            for name, x in keywords.items() if name != "layout"}
    with pytest.raises(error, match=message):
        attention.forward(q, k, k, dtype="bf16", **{**keywords, **ends})
    with pytest.raises(ValueError, match=r"argument 'q' must be 3-D, \(total, heads, d\); got shape \(1, 8, 4, 64\)"):
        attention.forward(q.reshape(1, 8, 4, 64), k, k, dtype="bf16", cu_seqlens_q=cuda.to_device(np.array([0, 8], np.int32)),
                          cu_seqlens_k=cuda.to_device(np.array([0, 6], np.int32)))


@pytest.mark.both_ways
def test_varlen_batch_matches_numpy():
    """A varlen batch, causal, q and k of unequal lengths in each sequence: sequence 0 has 100
    queries and 20 keys (bottom-right: its first 80 rows see no key: 0 and lse -inf), sequence 1
    3 queries and 100 keys, sequence 2 130 queries and no key at all (no key block: its rows 0 and
    lse -inf; its 130 rows make two query blocks a head, the second past the other sequences'
    ends: those tiles skipped); grouped heads (2 query heads on 1 K/V head).  The 12 tiles taken
    by 2 blocks, 6 each (a persistent launch: ``blocks=2``; each block's tiles one after another
    through the same rings, the skipped and the keyless ones among them).  On the GPU also
    non-causal and d 128, one tile a block and 5 blocks."""
    cu_q, cu_k = np.array([0, 100, 103, 233], np.int32), np.array([0, 20, 120, 120], np.int32)
    no_key = np.r_[0:80, 103:233]                       # (causal: the rows that see no key)
    cases = [(64, "bf16", True, 2)] if testing.WAY == "simulator" else [(64, "bf16", True, 2), (128, "f16", False, None),
                                                                        (128, "bf16", True, 5)]
    for d, dtype, causal, blocks in cases:
        rng = np.random.default_rng(d)
        q = half_floats.bits(rng.standard_normal((233, 2, d)), dtype)
        k, v = (half_floats.bits(rng.standard_normal((120, 1, d)), dtype) for _ in range(2))
        out = cuda.to_device(np.full(q.shape, 0xFFFF, np.uint16))
        got, lse = attention.forward(*(cuda.to_device(x) for x in (q, k, v)), causal=causal, out=out,
                                     cu_seqlens_q=cuda.to_device(cu_q), cu_seqlens_k=cuda.to_device(cu_k),
                                     return_lse=True, dtype=dtype, softmax_scale=0.2, blocks=blocks)
        want, want_lse = varlen_reference(*(half_floats.values(x, dtype) for x in (q, k, v)), cu_q, cu_k, causal, 0.2)
        o = half_floats.values(out.copy_to_host(), dtype)
        assert np.abs(o - want).max() <= 2e-2 * np.abs(want).max(), (d, dtype, causal)
        assert lse.shape == (2, 233)
        np.testing.assert_allclose(lse.copy_to_host(), want_lse, rtol=1e-5, atol=1e-4)
        rows = no_key if causal else np.r_[103:233]
        assert np.all(o[rows] == 0) and np.all(np.isneginf(lse.copy_to_host()[:, rows]))


def _key_loop(sass):
    """The SASS of the consumers' loop over key blocks: the innermost backward branch whose body
    holds a turn at the tensor cores and a wait for all but the last MMA group (the tile loop
    around it holds them too)."""
    addresses = {int(a, 16): i for i, a in ((m.start(), m.group(1)) for m in re.finditer(r"/\*([0-9a-f]{4,})\*/", sass))}
    loops = []
    for branch in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\d+ )?BRA (0x[0-9a-f]+)", sass):
        here, target = int(branch.group(1), 16), int(branch.group(2), 16)
        body = sass[addresses.get(target, branch.start()):branch.start()] if target < here else ""
        if "BAR.SYNC.DEFER_BLOCKING R" in body and "DEPBAR.LE gsb0, 0x1" in body:
            loops.append(body)
    assert loops, "no key loop found"
    return min(loops, key=len)


@pytest.mark.skipif(ops.SIMULATOR, reason="compiles (numba-cuda's compiler, not the simulator)")
@pytest.mark.parametrize("d, causal, dtype", [(64, False, "bf16"), (128, True, "f16"), (128, False, "bf16"),
                                            (256, False, "bf16")])
def test_the_kernel_keeps_p_in_registers_and_its_mmas_unserialised(d, causal, dtype):
    """The kernel as ptxas sees it: S = Q K^T (d / 16 HGMMAs of 64 x bn, bn the keys a block)
    and P V from registers (bn / 16 of 64 x d, P's A operand a_fragment's packs), each written
    twice (block 0's S before the loop, the last P V after it), no subroutine call (ptxas would
    serialise every wgmma), no shared-memory staging of P, no local memory in the loop (d 128 and
    176 keys: the most registers live, within the consumers' 240 of setmaxnreg; d 256: a few scalar
    loads), one fence per product, and in the loop S of the next block
    issued before this P V and waited for alone (``DEPBAR.LE gsb0, 0x1``: the softmax runs under
    the P V), the P V after it; the MMAs issued in the warpgroup's turn (ping-pong)."""
    bn = kernels.keys_per_block(d, causal)
    kernel, _ = kernels.build(d, causal, dtype, bn)
    element = "bfloat16" if dtype == "bf16" else "float16"
    maps = [TensorMap.numba_type(element, (box, 64), swizzle="128B") for box in (128, bn, bn)]
    sig = (*maps, numba.uint16[:, :], numba.float32[:], numba.int32[:], numba.int32[:], *[numba.int64] * 6,
           numba.float32)
    sass = inspect.compile(kernel, sig, "sm_90a").sass
    kind = r"\.F32" + (r"\.BF16" if dtype == "bf16" else r"\b")
    scores = re.findall(rf"HGMMA\.64x{bn}x16{kind} R\d+, gdesc", sass)                # both operands from shared
    products = re.findall(rf"HGMMA\.64x{d}x16{kind} R\d+, R\d+, gdesc", sass)         # A from registers
    assert (len(scores), len(products)) == (2 * d // 16, 2 * bn // 16), sorted(set(re.findall(r"HGMMA\S*", sass)))
    assert "CALL" not in sass and "STS" not in sass
    # local memory: none at all with 128 keys at d 64 and 128; at 176 keys and at d 256 (the most
    # registers live, within the consumers' 240 of setmaxnreg) a few scalars, a tile's facts around
    # the key loop and at most two registers spilled around a turn in it — never a fragment
    loop = _key_loop(sass)
    assert len(re.findall(r"\b(STL|LDL)", loop)) <= (0 if bn == 128 and d < 256 else 4), \
        re.findall(r"\b(?:STL|LDL)\S*", loop)
    assert (bn == 176 or d == 256) or ("STL" not in sass and "LDL" not in sass)
    # the order of turns (T: waiting at its named barrier, G: arriving at the other's), fences (A),
    # S's MMAs (S: both operands from shared memory), P V's (P: A from registers) and waits (W1:
    # all but the last group done, W0: all), runs of one written once
    events = []
    for line in sass.splitlines():
        found = re.search(r"BAR\.SYNC\.DEFER_BLOCKING R|BAR\.ARV|WARPGROUP\.ARRIVE|HGMMA\S* R\d+, (gdesc|R\d+)|"
                          r"DEPBAR\.LE gsb0, 0x([01])", line)
        if found:
            event = ("T" if "BAR.SYNC" in line else "G" if "BAR.ARV" in line else "A" if "ARRIVE" in line
                     else "W" + found.group(2) if "DEPBAR" in line else "S" if found.group(1) == "gdesc" else "P")
            if not events or events[-1] != event:
                events.append(event)
    assert events == ["G",                                  # the first consumer's first turn
                      "T", "A", "S", "G", "W0",             # block 0's S, waited for
                      "T", "A", "S", "A", "P", "G", "W1",   # the loop: S of block i, then P V of i - 1 in
                      "W0",                                 # one turn, S waited for alone
                      "A", "P", "W0"], events               # the last P V


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
def test_torch_tensors_against_scaled_dot_product_attention(causal):
    torch = pytest.importorskip("torch")
    q, k, v = (torch.randn((2, 8, 777, 128), device="cuda", dtype=torch.bfloat16) for _ in range(3))
    got = attention.forward(q, k, v, causal=causal, layout="bhsd")
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    assert got.dtype == torch.bfloat16 and got.shape == q.shape
    assert float((got.float() - want).abs().max() / want.abs().max()) <= 2e-2
    assert math.isfinite(float(got.float().sum()))
    assert torch.equal(torch.ops.numba_tma.attention_forward(q, k, v, causal, None, "bhsd"), got)   # the custom op


@pytest.mark.gpu
def test_a_varlen_batch_of_torch_tensors_against_sdpa_sequence_by_sequence():
    """cu_seqlens as torch int32 tensors, causal with unequal lengths (bottom-right), through the
    call and the custom op, against SDPA in float32 on each sequence (its mask written out)."""
    torch = pytest.importorskip("torch")
    lens_q, lens_k = [300, 1, 129, 640], [500, 77, 129, 600]
    cu_q, cu_k = (torch.tensor([0, *np.cumsum(x)], dtype=torch.int32, device="cuda") for x in (lens_q, lens_k))
    q = torch.randn((sum(lens_q), 8, 128), device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn((sum(lens_k), 2, 128), device="cuda", dtype=torch.bfloat16) for _ in range(2))
    got = attention.forward(q, k, v, causal=True, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
    assert torch.equal(torch.ops.numba_tma.attention_forward(q, k, v, True, None, "bshd", cu_q, cu_k), got)
    for b in range(len(lens_q)):
        rows, keys = slice(int(cu_q[b]), int(cu_q[b + 1])), slice(int(cu_k[b]), int(cu_k[b + 1]))
        qb, kb, vb = (x.float().transpose(0, 1) for x in (q[rows], k[keys].repeat_interleave(4, 1),
                                                          v[keys].repeat_interleave(4, 1)))
        seen = torch.arange(lens_k[b], device="cuda")[None, :] <= torch.arange(lens_q[b], device="cuda")[:, None] + \
            lens_k[b] - lens_q[b]
        want = torch.nn.functional.scaled_dot_product_attention(qb, kb, vb, attn_mask=seen).transpose(0, 1)
        some = seen.any(1)                  # (a row that sees no key: SDPA's NaN, ours 0)
        assert bool((got[rows][~some] == 0).all())
        assert float((got[rows][some].float() - want[some]).abs().max() / want[some].abs().max()) <= 2e-2, b
