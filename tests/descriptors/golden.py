"""Golden CUtensorMap captures (tests/data/tensormap_golden_*.jsonl.gz) and how to replay them."""

import gzip
import json
import pathlib

from numba_tma.descriptors import encode_im2col, encode_im2col_wide, encode_tiled, replace_address

DATA = pathlib.Path(__file__).resolve().parent.parent / "data"
GOLDEN_FILES = sorted(DATA.glob("tensormap_golden_*.jsonl.gz"))


def load(path):
    """(header, records) of one capture file."""
    with gzip.open(path, "rt") as f:
        lines = [json.loads(line) for line in f]
    return lines[0], lines[1:]


def _take(values, n):
    # The capture passed 8-entry zero-padded arrays, so the driver saw these values.
    return (list(values) + [0] * 8)[:max(n, 0)]


def replay(kind, p, api):
    """Call ``api``'s encoder for one captured record (``api``: the descriptors package or its driver)."""
    if kind == "replace_address":
        return api.replace_address(bytes.fromhex(p["desc"]), p["global_address"])
    r = p["rank"]
    common = dict(data_type=p["data_type"], global_address=p["global_address"],
                  global_dim=_take(p["global_dim"], r), global_strides=_take(p["global_strides"], r - 1),
                  element_strides=_take(p["element_strides"], r), interleave=p["interleave"],
                  swizzle=p["swizzle"], l2_promotion=p["l2_promotion"], oob_fill=p["oob_fill"])
    if kind == "tiled":
        return api.encode_tiled(box_dim=_take(p["box_dim"], r), **common)
    if kind == "im2col":
        return api.encode_im2col(pixel_box_lower_corner=_take(p["pixel_box_lower_corner"], r - 2),
                                 pixel_box_upper_corner=_take(p["pixel_box_upper_corner"], r - 2),
                                 channels_per_pixel=p["channels_per_pixel"],
                                 pixels_per_column=p["pixels_per_column"], **common)
    return api.encode_im2col_wide(pixel_box_lower_corner_width=p["pixel_box_lower_corner_width"],
                                  pixel_box_upper_corner_width=p["pixel_box_upper_corner_width"],
                                  channels_per_pixel=p["channels_per_pixel"],
                                  pixels_per_column=p["pixels_per_column"], mode=p["mode"], **common)


class _Pure:
    encode_tiled = staticmethod(encode_tiled)
    encode_im2col = staticmethod(encode_im2col)
    encode_im2col_wide = staticmethod(encode_im2col_wide)
    replace_address = staticmethod(replace_address)


PURE = _Pure()
