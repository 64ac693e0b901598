"""``numba_tma.descriptors.driver`` (cuda.bindings) reproduces the golden captures on the GPU."""

import collections

import pytest
from golden import GOLDEN_FILES, load, replay

from numba_tma.descriptors import TensorMapError, encode_tiled

pytestmark = pytest.mark.gpu


def test_driver_backend_reproduces_captures():
    from numba_tma.descriptors import driver
    stats, bad = collections.Counter(), []
    for path in GOLDEN_FILES:
        _, records = load(path)
        for rec in records[::5]:
            try:
                out = replay(rec["kind"], rec["params"], driver)
            except TensorMapError:
                out = None
            same = (out is None) == (rec["rc"] != 0) and (out is None or out.hex() == rec["desc"])
            stats[rec["kind"], same] += 1
            if not same:
                bad.append(rec)
    assert not bad, f"{len(bad)} differ, e.g. {bad[:3]}; {dict(stats)}"


def test_driver_rejection_is_a_tensor_map_error():
    from numba_tma.descriptors import driver
    with pytest.raises(TensorMapError, match="cuTensorMapEncodeTiled"):
        driver.encode_tiled("float32", 0x7F0000000000, [64, 64], [256], [3, 8])
    ours = encode_tiled("float32", 0x7F0000000000, [64, 64], [256], [16, 8], swizzle="64B")
    assert driver.encode_tiled("float32", 0x7F0000000000, [64, 64], [256], [16, 8], swizzle="64B") == ours
