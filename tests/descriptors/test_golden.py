"""The pure encoder against the driver's golden captures: accept/reject, bytes, decode round trip."""

import collections

from golden import PURE, replay

from numba_tma.descriptors import TensorMapError, decode

DRIVER_VERSION = 13000     # the layout and rules below are pinned to this driver on sm_90


def _replay_all(golden):
    """Counter of outcomes per (kind, outcome) and the first few mismatches."""
    stats, bad = collections.Counter(), []
    for _, records in golden:
        for rec in records:
            try:
                ours = replay(rec["kind"], rec["params"], PURE)
            except TensorMapError as exc:
                ours, err = None, exc
            accepted = rec["rc"] == 0
            if (ours is not None) != accepted:
                bad.append((rec, ours is not None, err if ours is None else None))
                stats[rec["kind"], "accept/reject mismatch"] += 1
            elif accepted and ours.hex() != rec["desc"]:
                bad.append((rec, "bytes", None))
                stats[rec["kind"], "byte mismatch"] += 1
            else:
                stats[rec["kind"], "accepted" if accepted else "rejected"] += 1
    return stats, bad


def test_captures_are_pinned_and_large(golden):
    total, fractions = 0, []
    for header, records in golden:
        assert header["driver_version"] == DRIVER_VERSION and header["cc"] == [9, 0]
        total += len(records)
        rnd = [r for r in records if r["origin"] == "random" and r["kind"] != "replace_address"]
        fractions.append(sum(r["rc"] == 0 for r in rnd) / len(rnd))
    assert total >= 3500
    assert {r["kind"] for _, recs in golden for r in recs} == {"tiled", "im2col", "im2col_wide",
                                                              "replace_address"}
    assert max(fractions) >= 0.6    # one capture is biased to mostly valid parameter sets


def test_accept_reject_and_bytes_match_driver(golden):
    stats, bad = _replay_all(golden)
    detail = "\n".join(f"{rec['kind']} rc={rec['rc']} ours={what} err={err} params={rec['params']}"
                       for rec, what, err in bad[:5])
    assert not bad, f"{len(bad)} disagreements, e.g.\n{detail}\n{dict(stats)}"


def test_decode_round_trip_on_accepted(golden):
    for _, records in golden:
        for rec in records:
            if rec["rc"] or rec["kind"] == "replace_address":
                continue
            desc = bytes.fromhex(rec["desc"])
            fields = decode(desc)
            assert fields.encode() == desc
            assert not any(fields.residual), f"unexplained bits in {rec['params']}"
            p = rec["params"]
            assert fields.global_address == p["global_address"]
            assert fields.global_dim == tuple(p["global_dim"][:p["rank"]])
            assert fields.global_strides == tuple(p["global_strides"][:p["rank"] - 1])
            assert int(fields.data_type) == p["data_type"]


def test_large_tensor_bit_never_set_by_driver_13_0(golden):
    """qword 1 bit 21: driver 13.0 leaves it clear on sm_90 for every size captured."""
    for _, records in golden:
        for rec in records:
            if rec["rc"] == 0:
                assert not decode(bytes.fromhex(rec["desc"])).large_tensor
