"""Capture CUtensorMap golden vectors from the CUDA driver.

Standalone on purpose: it imports only the standard library (and, when
installed, ``cuda.bindings`` for a cross-check), never ``numba_tma``, so it runs
while the package is being edited.  It needs a GPU of compute capability >= 9.0.

Every record is one call of ``cuTensorMapEncodeTiled``, ``cuTensorMapEncodeIm2col``,
``cuTensorMapEncodeIm2colWide`` or ``cuTensorMapReplaceAddress`` with the
parameters in the snake_case names of ``numba_tma.descriptors``, the driver's
``CUresult`` and, on success, the 128 descriptor bytes.  The parameter sets are
random (biased so that most are accepted), single-field sweeps from base cases,
and a full data type x swizzle x interleave x inner-box table.

Example::

    python tests/data/capture_tensormap_golden.py --out tests/data/tensormap_golden.jsonl.gz
"""

import argparse
import ctypes
import ctypes.util
import gzip
import json
import random
import time

ESZ_BITS = [8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 4, 6]
FLOATS = {6, 7, 8, 9, 10, 11, 12}
PACKED16 = {14, 15}
SPAN = {0: 0, 1: 32, 2: 64, 3: 128, 4: 128, 5: 128, 6: 128}
BASE_ADDR = 0x7F3A_0000_0000
TWO32 = 1 << 32
TWO40 = 1 << 40


class Driver:
    """ctypes front to libcuda: full control of array lengths and padding."""

    def __init__(self):
        self.lib = ctypes.CDLL(ctypes.util.find_library("cuda") or "libcuda.so.1")
        self._check(self.lib.cuInit(0), "cuInit")
        ver = ctypes.c_int()
        self._check(self.lib.cuDriverGetVersion(ctypes.byref(ver)), "cuDriverGetVersion")
        self.version = ver.value
        dev = ctypes.c_int()
        self._check(self.lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        name = ctypes.create_string_buffer(256)
        self.lib.cuDeviceGetName(name, 256, dev)
        self.device = name.value.decode()
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)
        self.lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)
        self.cc = [major.value, minor.value]
        ctx = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        self._check(self.lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        self._raw = (ctypes.c_uint8 * 512)()
        self.map = (ctypes.addressof(self._raw) + 127) & ~127
        u32p, u64p, ip = (ctypes.POINTER(t) for t in (ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32))
        vp, i, u32 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32
        self.lib.cuTensorMapEncodeTiled.argtypes = [vp, i, u32, vp, u64p, u64p, u32p, u32p, i, i, i, i]
        self.lib.cuTensorMapEncodeIm2col.argtypes = [vp, i, u32, vp, u64p, u64p, ip, ip, u32, u32, u32p,
                                                     i, i, i, i]
        self.has_wide = hasattr(self.lib, "cuTensorMapEncodeIm2colWide")
        if self.has_wide:
            self.lib.cuTensorMapEncodeIm2colWide.argtypes = [vp, i, u32, vp, u64p, u64p, i, i, u32, u32,
                                                             u32p, i, i, i, i, i]
        self.lib.cuTensorMapReplaceAddress.argtypes = [vp, vp]

    @staticmethod
    def _check(rc, what):
        if rc:
            raise RuntimeError(f"{what} failed with CUresult {rc}")

    @staticmethod
    def _arr(ctype, values, n=8):
        vals = list(values) + [0] * (n - len(values))
        return (ctype * n)(*vals)

    def _call(self, fn, args, fill=0xA5):
        ctypes.memset(self.map, fill, 128)
        rc = fn(self.map, *args)
        return rc, ctypes.string_at(self.map, 128)

    def _twice(self, fn, args):
        """Encode with two different pre-fills: bytes the driver leaves alone differ."""
        rc, b0 = self._call(fn, args, 0x00)
        if rc:
            return rc, None, None
        _, b1 = self._call(fn, args, 0xFF)
        unwritten = bytes(x ^ y for x, y in zip(b0, b1))
        return rc, b0, (unwritten.hex() if any(unwritten) else None)

    def tiled(self, p):
        u32a, u64a = (lambda v: self._arr(ctypes.c_uint32, v)), (lambda v: self._arr(ctypes.c_uint64, v))
        args = (p["data_type"], p["rank"], p["global_address"], u64a(p["global_dim"]),
                u64a(p["global_strides"]), u32a(p["box_dim"]), u32a(p["element_strides"]),
                p["interleave"], p["swizzle"], p["l2_promotion"], p["oob_fill"])
        return self._twice(self.lib.cuTensorMapEncodeTiled, args)

    def im2col(self, p):
        u32a, u64a = (lambda v: self._arr(ctypes.c_uint32, v)), (lambda v: self._arr(ctypes.c_uint64, v))
        i32a = lambda v: self._arr(ctypes.c_int32, v)  # noqa: E731
        args = (p["data_type"], p["rank"], p["global_address"], u64a(p["global_dim"]),
                u64a(p["global_strides"]), i32a(p["pixel_box_lower_corner"]),
                i32a(p["pixel_box_upper_corner"]), p["channels_per_pixel"], p["pixels_per_column"],
                u32a(p["element_strides"]), p["interleave"], p["swizzle"], p["l2_promotion"], p["oob_fill"])
        return self._twice(self.lib.cuTensorMapEncodeIm2col, args)

    def im2col_wide(self, p):
        u32a, u64a = (lambda v: self._arr(ctypes.c_uint32, v)), (lambda v: self._arr(ctypes.c_uint64, v))
        args = (p["data_type"], p["rank"], p["global_address"], u64a(p["global_dim"]),
                u64a(p["global_strides"]), p["pixel_box_lower_corner_width"],
                p["pixel_box_upper_corner_width"], p["channels_per_pixel"], p["pixels_per_column"],
                u32a(p["element_strides"]), p["interleave"], p["mode"], p["swizzle"], p["l2_promotion"],
                p["oob_fill"])
        return self._twice(self.lib.cuTensorMapEncodeIm2colWide, args)

    def replace(self, desc, address):
        ctypes.memmove(self.map, desc, 128)
        rc = self.lib.cuTensorMapReplaceAddress(self.map, address)
        return rc, ctypes.string_at(self.map, 128)


def bindings_cross_check(kind, p):
    """Encode through cuda.bindings with rank-length lists; returns (rc, bytes) or ('exc', text)."""
    from cuda.bindings import driver as d
    u64 = lambda v: [d.cuuint64_t(x) for x in v]  # noqa: E731
    u32 = lambda v: [d.cuuint32_t(x) for x in v]  # noqa: E731
    r = p["rank"]
    try:
        if kind == "tiled":
            err, tmap = d.cuTensorMapEncodeTiled(
                p["data_type"], r, p["global_address"], u64(p["global_dim"][:r]),
                u64(p["global_strides"][:max(r - 1, 0)]), u32(p["box_dim"][:r]),
                u32(p["element_strides"][:r]), p["interleave"], p["swizzle"], p["l2_promotion"], p["oob_fill"])
        elif kind == "im2col":
            nc = max(r - 2, 0)
            err, tmap = d.cuTensorMapEncodeIm2col(
                p["data_type"], r, p["global_address"], u64(p["global_dim"][:r]),
                u64(p["global_strides"][:max(r - 1, 0)]), p["pixel_box_lower_corner"][:nc],
                p["pixel_box_upper_corner"][:nc], p["channels_per_pixel"], p["pixels_per_column"],
                u32(p["element_strides"][:r]), p["interleave"], p["swizzle"], p["l2_promotion"], p["oob_fill"])
        else:
            err, tmap = d.cuTensorMapEncodeIm2colWide(
                p["data_type"], r, p["global_address"], u64(p["global_dim"][:r]),
                u64(p["global_strides"][:max(r - 1, 0)]), p["pixel_box_lower_corner_width"],
                p["pixel_box_upper_corner_width"], p["channels_per_pixel"], p["pixels_per_column"],
                u32(p["element_strides"][:r]), p["interleave"], p["mode"], p["swizzle"], p["l2_promotion"],
                p["oob_fill"])
    except Exception as exc:  # the binding refuses some values before the driver sees them
        return "exc", f"{type(exc).__name__}: {exc}"[:200]
    if int(err):
        return int(err), None
    return 0, ctypes.string_at(int(tmap.getPtr()), 128).hex()


# ---------------------------------------------------------------- generators

def loguni(rng, lo, hi):
    """Log-uniform integer in [lo, hi]."""
    import math
    return min(hi, max(lo, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1))))))


def rand_dim(rng):
    r = rng.random()
    if r < 0.45:
        return loguni(rng, 1, 300)
    if r < 0.8:
        return loguni(rng, 1, 1 << 16)
    if r < 0.96:
        return loguni(rng, 1, TWO32)
    return rng.choice([TWO32, TWO32 - 1, 1 << 31, (1 << 31) + 1, TWO32 + 1, 1 << 33])


def rand_address(rng, align):
    r = rng.random()
    base = BASE_ADDR + rng.randrange(1 << 20) * 256
    if r < 0.8:
        return base
    if r < 0.93:
        return base + rng.choice([16, 32, 48, 64, 96, 128]) // align * align
    if r < 0.97:
        return base + rng.choice([1, 2, 4, 8, 16, 24, 40])
    return rng.choice([0, 16, 1 << 47, (1 << 48) - 256, 1 << 56, (1 << 63), (1 << 64) - 256, 0x1234_5670])


def byte_size(dt, n):
    return (n * ESZ_BITS[dt] + 7) // 8


def rand_strides(rng, dt, dims, align):
    """rank-1 strides in bytes: mostly padded-dense, sometimes random / extreme."""
    rank = len(dims)
    r = rng.random()
    out = []
    if r < 0.7:
        s = byte_size(dt, dims[0])
        for i in range(1, rank):
            s = -(-s // align) * align + align * rng.choice([0, 0, 0, 1, 2, 7])
            if s >= TWO40:
                s = loguni(rng, 1, (TWO40 - 1) // align) * align
            out.append(s)
            s *= dims[i]
    elif r < 0.9:
        out = [loguni(rng, 1, (TWO40 - 1) // align) * align for _ in range(rank - 1)]
    else:
        out = [rng.choice([TWO40 - align, TWO40 - 16, TWO40, TWO40 + 16, 1 << 39, 1 << 36, TWO32,
                           TWO32 + 16, 16, align * 3]) for _ in range(rank - 1)]
    return out


def pick_swizzle(rng, dt):
    if rng.random() < 0.03 or dt in PACKED16:
        return rng.choice([0, 3, 4, 5, 6])
    return rng.choice([0, 0, 1, 2, 3, 3])


def inner_elems(rng, dt, il, sw, limit=256):
    """An inner box / channel count: mostly a multiple of 16 bytes within the swizzle span."""
    bits = ESZ_BITS[dt]
    if dt in PACKED16 and rng.random() < 0.85:
        return 128
    span = SPAN[sw] if il == 0 and SPAN[sw] else 256 * 8
    choices = [b for b in (16, 32, 48, 64, 80, 96, 112, 128, 192, 256, 512, 1024, 2048) if b <= span]
    nbytes = rng.choice(choices)
    if rng.random() < 0.05:
        nbytes = rng.choice([8, 24, 4, 2, 1, 40])
    return max(1, min(limit, nbytes * 8 // bits))


def oob_for(rng, dt):
    return 1 if (dt in FLOATS and rng.random() < 0.4) or rng.random() < 0.02 else 0


def common(rng, rank, interleave_ok=True):
    dt = rng.randrange(16) if rng.random() < 0.05 else rng.randrange(13)
    il = rng.choice([0, 0, 0, 0, 0, 0, 1, 2]) if interleave_ok else 0
    sw = pick_swizzle(rng, dt)
    align = 32 if (il == 2 or dt in PACKED16) else 16
    dims = [rand_dim(rng) for _ in range(rank)]
    if dt in PACKED16:
        dims[0] = max(1, dims[0] // 128) * 128
    elif dt == 13:
        dims[0] = max(1, dims[0] // 2) * 2
    return dict(data_type=dt, rank=rank, global_address=rand_address(rng, align), global_dim=dims,
                global_strides=rand_strides(rng, dt, dims, align),
                element_strides=[rng.randint(1, 8) if rng.random() < 0.3 else 1 for _ in range(rank)],
                interleave=il, swizzle=sw, l2_promotion=rng.randrange(4), oob_fill=oob_for(rng, dt))


def box_bytes(p):
    n = ESZ_BITS[p["data_type"]]
    for b, e in zip(p["box_dim"], p["element_strides"]):
        n *= b // e
    return n // 8


def gen_tiled(rng):
    rank = rng.randint(1, 5)
    p = common(rng, rank, interleave_ok=rank >= 3 or rng.random() < 0.05)
    box = [inner_elems(rng, p["data_type"], p["interleave"], p["swizzle"])]
    box += [rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256, rng.randint(1, 256)]) for _ in range(rank - 1)]
    p["box_dim"] = box
    while rank > 1 and box_bytes(p) > MAX_BOX_BYTES and rng.random() < 0.9:
        i = max(range(1, rank), key=lambda k: box[k])
        box[i] = max(1, box[i] // 2)
    return p


CORNER_RANGE = {3: 32768, 4: 128, 5: 16}
MAX_BOX_BYTES = 229376


def gen_corners(rng, rank):
    lim = CORNER_RANGE.get(rank, 16)
    n = max(rank - 2, 0)
    if rng.random() < 0.75:
        lower = [rng.choice([0, 0, -1, -2, 1]) for _ in range(n)]
        return lower, [rng.choice([0, 0, 1, -1, 2]) for _ in range(n)]
    pick = lambda: rng.choice([0, 0, -1, 1, rng.randint(-lim, lim - 1), -lim, lim - 1])  # noqa: E731
    return [pick() for _ in range(n)], [pick() for _ in range(n)]


def gen_im2col(rng):
    rank = rng.choice([3, 4, 5])
    p = common(rng, rank)
    lo, up = gen_corners(rng, rank)
    p.update(pixel_box_lower_corner=lo, pixel_box_upper_corner=up,
             channels_per_pixel=inner_elems(rng, p["data_type"], p["interleave"], p["swizzle"]),
             pixels_per_column=rng.choice([1, 2, 8, 32, 64, 128, 256, 512, 1024, rng.randint(1, 1024)]))
    while p["channels_per_pixel"] * p["pixels_per_column"] * ESZ_BITS[p["data_type"]] // 8 > MAX_BOX_BYTES \
            and rng.random() < 0.9:
        p["pixels_per_column"] //= 2
    return p


def gen_wide(rng):
    rank = rng.choice([3, 4, 5])
    p = common(rng, rank)
    p["swizzle"] = rng.choice([2, 3, 2, 3, 0, 1, 4])
    lim = CORNER_RANGE[rank] if rng.random() < 0.7 else 32768
    pick = lambda: rng.choice([0, -1, 1, rng.randint(-lim, lim - 1), -lim, lim - 1])  # noqa: E731
    p.update(pixel_box_lower_corner_width=pick(), pixel_box_upper_corner_width=pick(),
             channels_per_pixel=inner_elems(rng, p["data_type"], p["interleave"], p["swizzle"]),
             pixels_per_column=rng.choice([1, 32, 128, 256, rng.randint(1, 1024)]),
             mode=rng.choice([0, 1]))
    return p


MUTATIONS = [
    ("data_type", lambda rng, v: rng.choice([16, 17, 31, 255, -1])),
    ("rank", lambda rng, v: rng.choice([0, 6, 7])),
    ("interleave", lambda rng, v: rng.choice([3, 4, -1])),
    ("swizzle", lambda rng, v: rng.choice([7, 8, -1])),
    ("l2_promotion", lambda rng, v: rng.choice([4, 5, -1])),
    ("oob_fill", lambda rng, v: rng.choice([2, 3, -1])),
    ("global_address", lambda rng, v: v + rng.choice([1, 4, 8, 24])),
    ("global_dim", lambda rng, v: [rng.choice([0, TWO32 + 1, 1 << 40]) if i == rng.randrange(len(v)) else x
                                   for i, x in enumerate(v)]),
    ("global_strides", lambda rng, v: [x + rng.choice([8, 4, 1, TWO40]) if i == 0 else x
                                       for i, x in enumerate(v)]),
    ("element_strides", lambda rng, v: [rng.choice([0, 9, 16]) if i == rng.randrange(len(v)) else x
                                        for i, x in enumerate(v)]),
    ("box_dim", lambda rng, v: [rng.choice([0, 257, 512]) if i == rng.randrange(len(v)) else x
                                for i, x in enumerate(v)]),
    ("channels_per_pixel", lambda rng, v: rng.choice([0, 257, 512])),
    ("pixels_per_column", lambda rng, v: rng.choice([0, 1025, 2048])),
    ("pixel_box_lower_corner", lambda rng, v: [rng.choice([-40000, 40000, 200, -200, 16, -17]) for _ in v]),
    ("pixel_box_upper_corner", lambda rng, v: [rng.choice([-40000, 40000, 200, -200, 16, -17]) for _ in v]),
    ("pixel_box_lower_corner_width", lambda rng, v: rng.choice([-32769, 32768, 100000])),
    ("mode", lambda rng, v: rng.choice([2, 3, -1])),
]


def mutate(rng, p):
    names = [m for m in MUTATIONS if m[0] in p and (m[0] != "global_strides" or p["global_strides"])]
    name, fn = rng.choice(names)
    p[name] = fn(rng, p[name])
    return p


# ---------------------------------------------------------------- sweeps

def base_tiled():
    dims = [64, 33, 17, 9, 5]
    strides, s = [], 64 * 4
    for d in dims[1:]:
        strides.append(s)
        s *= d
    return dict(data_type=7, rank=5, global_address=BASE_ADDR, global_dim=dims, global_strides=strides,
                box_dim=[16, 8, 4, 2, 1], element_strides=[1, 1, 1, 1, 1], interleave=0, swizzle=0,
                l2_promotion=2, oob_fill=0)


def base_im2col():
    dims = [64, 16, 16, 8, 2]
    strides, s = [], 64 * 2
    for d in dims[1:]:
        strides.append(s)
        s *= d
    return dict(data_type=6, rank=5, global_address=BASE_ADDR, global_dim=dims, global_strides=strides,
                pixel_box_lower_corner=[-1, -1, -1], pixel_box_upper_corner=[0, 0, 0],
                channels_per_pixel=32, pixels_per_column=64, element_strides=[1, 1, 1, 1, 1],
                interleave=0, swizzle=0, l2_promotion=2, oob_fill=0)


def with_(p, **kw):
    q = json.loads(json.dumps(p))
    q.update(kw)
    return q


def set_at(v, i, x):
    v = list(v)
    v[i] = x
    return v


DIM_VALUES = [1, 2, 3, 7, 255, 256, 257, 65535, 65536, (1 << 31) - 1, 1 << 31, TWO32 - 1, TWO32, TWO32 + 1]
STRIDE_VALUES = [0, 8, 16, 24, 32, 48, 256, 4096, 4104, TWO32, TWO32 + 16, 1 << 36, (1 << 36) + 16,
                 TWO40 - 16, TWO40, TWO40 + 16, 1 << 41]


def sweeps_tiled(rng):
    b = base_tiled()
    out = []
    for i in range(5):
        out += [with_(b, global_dim=set_at(b["global_dim"], i, v)) for v in DIM_VALUES]
        out += [with_(b, box_dim=set_at(b["box_dim"], i, v)) for v in [0, 1, 2, 3, 4, 5, 17, 64, 128, 255, 256,
                                                                       257]]
        out += [with_(b, element_strides=set_at(b["element_strides"], i, v)) for v in range(10)]
    for i in range(4):
        out += [with_(b, global_strides=set_at(b["global_strides"], i, v)) for v in STRIDE_VALUES]
    # data type x swizzle x interleave x inner-box bytes table (rank 3 and 5)
    for dt in range(16):
        for sw in range(7):
            for il in range(3):
                for nbytes in (4, 8, 16, 32, 48, 64, 96, 128, 256):
                    box0 = max(1, nbytes * 8 // ESZ_BITS[dt])
                    dims = [1024, 64, 16]
                    s1 = byte_size(dt, 1024)
                    out.append(dict(b, data_type=dt, rank=3, global_dim=dims, global_strides=[s1, s1 * 64],
                                    box_dim=[box0, 4, 2], element_strides=[1, 1, 1], interleave=il, swizzle=sw))
    for dt in range(16):
        for l2 in range(4):
            for oob in range(2):
                out.append(with_(b, data_type=dt, l2_promotion=l2, oob_fill=oob, box_dim=[
                    max(1, 64 * 8 // ESZ_BITS[dt]) if dt not in PACKED16 else 128, 8, 4, 2, 1],
                    global_dim=[1024, 33, 17, 9, 5], global_strides=[
                        byte_size(dt, 1024) * k for k in (1, 33, 33 * 17, 33 * 17 * 9)]))
    for off in (0, 1, 2, 4, 8, 16, 24, 32, 48, 64, 128, 256):
        for dt, il in ((7, 0), (7, 1), (7, 2), (14, 0), (15, 0), (13, 0)):
            q = with_(b, global_address=BASE_ADDR + off, data_type=dt, interleave=il, swizzle=1 if il == 2 else 0)
            if dt >= 13:
                q.update(global_dim=[1024, 33, 17, 9, 5], box_dim=[128, 8, 4, 2, 1],
                         global_strides=[512 * k for k in (1, 33, 33 * 17, 33 * 17 * 9)])
            out.append(q)
    for k in range(40, 64):
        for addr in (1 << k, (1 << k) + 16, (1 << (k + 1)) - 16):
            out.append(with_(b, global_address=addr))
    out += sweeps_box_limit(rng)
    # element strides vs box, all ranks, interleave on and off
    for il in (0, 1):
        for e in range(1, 9):
            for bx in (1, 3, 7, 8, 9, 16, 17, 255, 256):
                out.append(with_(b, interleave=il, box_dim=[16, bx, 4, 2, 1], element_strides=[e, e, 1, 2, 1]))
                out.append(with_(b, interleave=il, box_dim=[bx if il else 16, 4, 4, 2, 1],
                                 element_strides=[e, 1, 1, 1, 1]))
    for rank in range(1, 6):
        for il in range(3):
            q = with_(b, rank=rank, interleave=il, swizzle=1 if il == 2 else 0)
            q["global_dim"] = q["global_dim"][:rank]
            q["global_strides"] = q["global_strides"][:rank - 1]
            q["box_dim"] = q["box_dim"][:rank]
            q["element_strides"] = q["element_strides"][:rank]
            out.append(q)
    out += sweeps_size(rng)
    return out


def sweeps_box_limit(rng):
    """Boxes whose shared-memory size straddles the driver's limit (229376 < limit <= 245760)."""
    out, seen = [], set()
    for b0 in range(16, 257, 16):
        for b1 in range(1, 257):
            b2 = -(-229000 // (b0 * b1))
            for b2 in (b2, b2 + 1, b2 + 3):
                size = b0 * b1 * b2
                if b2 <= 256 and 229000 < size <= 245760 and size not in seen and rng.random() < 0.5:
                    seen.add(size)
                    out.append(dict(data_type=0, rank=3, global_address=BASE_ADDR, global_dim=[256, 256, 256],
                                    global_strides=[256, 65536], box_dim=[b0, b1, b2], element_strides=[1, 1, 1],
                                    interleave=0, swizzle=0, l2_promotion=2, oob_fill=0))
    return out


def sweeps_size(rng):
    """Cases around the 4 KiB / 128 KiB footprint thresholds (the bit-21 rule)."""
    out = []
    for dt in (0, 1, 7, 8, 13, 14, 15):
        for target in (4096, 1 << 17, 1 << 20):
            for delta in (-32, -16, 0, 16, 32):
                n = (target + delta) * 8 // ESZ_BITS[dt]
                if dt in PACKED16:
                    n = max(128, n // 128 * 128)
                box0 = 128 if dt in PACKED16 else max(1, 16 * 8 // ESZ_BITS[dt])
                out.append(dict(data_type=dt, rank=1, global_address=BASE_ADDR, global_dim=[n],
                                global_strides=[], box_dim=[box0], element_strides=[1], interleave=0,
                                swizzle=0, l2_promotion=2, oob_fill=0))
    for _ in range(1500):
        dt = rng.choice([0, 1, 7, 8, 13])
        rank = rng.randint(2, 5)
        dims = [loguni(rng, 1, 512) for _ in range(rank)]
        if dt == 13:
            dims[0] = max(2, dims[0] // 2 * 2)
        strides, s = [], byte_size(dt, dims[0])
        for i in range(1, rank):
            s = -(-s // 16) * 16 + 16 * rng.choice([0, 0, 1, 3, 64, 1000])
            if rng.random() < 0.1:
                s = 16 * loguni(rng, 1, 1 << 14)
            strides.append(s)
            s *= dims[i]
        box = [max(1, 16 * 8 // ESZ_BITS[dt])] + [rng.choice([1, 2, 4, 8]) for _ in range(rank - 1)]
        out.append(dict(data_type=dt, rank=rank, global_address=BASE_ADDR + 16 * rng.randrange(4096),
                        global_dim=dims, global_strides=strides, box_dim=box,
                        element_strides=[rng.choice([1, 1, 2]) for _ in range(rank)], interleave=0,
                        swizzle=0, l2_promotion=2, oob_fill=0))
    return out


def sweeps_im2col(rng):
    b = base_im2col()
    out = []
    for i in range(3):
        for v in range(-18, 18):
            out.append(with_(b, pixel_box_lower_corner=set_at(b["pixel_box_lower_corner"], i, v)))
            out.append(with_(b, pixel_box_upper_corner=set_at(b["pixel_box_upper_corner"], i, v)))
    for rank, lim in ((3, 32768), (4, 128)):
        vals = sorted({-lim - 1, -lim, -lim + 1, -1000, -129, -128, -127, -17, -16, -1, 0, 1, 15, 16, 127, 128,
                       1000, lim - 1, lim})
        q = with_(b, rank=rank)
        q["global_dim"], q["global_strides"] = q["global_dim"][:rank], q["global_strides"][:rank - 1]
        q["element_strides"] = q["element_strides"][:rank]
        n = rank - 2
        q["pixel_box_lower_corner"], q["pixel_box_upper_corner"] = [-1] * n, [0] * n
        for i in range(n):
            for v in vals:
                out.append(with_(q, pixel_box_lower_corner=set_at(q["pixel_box_lower_corner"], i, v)))
                out.append(with_(q, pixel_box_upper_corner=set_at(q["pixel_box_upper_corner"], i, v)))
    for v in (0, 1, 2, 3, 4, 8, 16, 24, 32, 33, 64, 100, 128, 255, 256, 257):
        out.append(with_(b, channels_per_pixel=v))
        out.append(with_(b, channels_per_pixel=v, global_dim=[512, 16, 16, 8, 2],
                         global_strides=[1024, 16384, 262144, 2097152]))
    for v in (0, 1, 2, 3, 7, 64, 127, 128, 129, 255, 256, 511, 512, 1000, 1023, 1024, 1025):
        out.append(with_(b, pixels_per_column=v))
    for v in range(880, 965, 2):  # channels * pixels * 1 byte around the box-size limit
        out.append(with_(b, data_type=0, channels_per_pixel=256, pixels_per_column=v,
                         global_strides=[64 * k for k in (1, 16, 256, 2048)]))
    for i in range(5):
        out += [with_(b, element_strides=set_at(b["element_strides"], i, v)) for v in range(10)]
        out += [with_(b, global_dim=set_at(b["global_dim"], i, v)) for v in DIM_VALUES]
    for dt in range(16):
        for sw in range(7):
            for il in range(3):
                for nbytes in (16, 32, 64, 128, 256):
                    cpp = max(1, nbytes * 8 // ESZ_BITS[dt])
                    out.append(with_(b, data_type=dt, swizzle=sw, interleave=il, channels_per_pixel=cpp,
                                     global_dim=[1024, 16, 16, 8, 2],
                                     global_strides=[byte_size(dt, 1024) * k for k in (1, 16, 256, 2048)]))
    return out


def sweeps_wide(rng):
    b = base_im2col()
    del b["pixel_box_lower_corner"], b["pixel_box_upper_corner"]
    b.update(pixel_box_lower_corner_width=-1, pixel_box_upper_corner_width=0, mode=0, swizzle=3)
    out = []
    for sw in range(7):
        for mode in range(2):
            for rank in (3, 4, 5):
                q = with_(b, swizzle=sw, mode=mode, rank=rank)
                q["global_dim"], q["global_strides"] = q["global_dim"][:rank], q["global_strides"][:rank - 1]
                q["element_strides"] = q["element_strides"][:rank]
                out.append(q)
    return out


# ---------------------------------------------------------------- main

def run(args):
    rng = random.Random(args.seed)
    drv = Driver()
    try:  # the cross-check through cuda.bindings is optional
        from importlib.metadata import version
        import cuda.bindings.driver  # noqa: F401
        bind_ver = version("cuda-bindings")
    except Exception:
        bind_ver = None
    header = dict(driver_version=drv.version, device=drv.device, cc=drv.cc, cuda_bindings=bind_ver,
                  seed=args.seed, has_wide=drv.has_wide, time=time.strftime("%Y-%m-%dT%H:%M:%S"))
    print("capture:", header, flush=True)

    cases = []
    for kind, gen, n in (("tiled", gen_tiled, args.tiled), ("im2col", gen_im2col, args.im2col),
                         ("im2col_wide", gen_wide, args.wide)):
        for _ in range(n):
            p = gen(rng)
            if rng.random() < args.mutate:
                p = mutate(rng, p)
            cases.append((kind, "random", p))
    cases += [("tiled", "sweep", p) for p in sweeps_tiled(rng)]
    cases += [("im2col", "sweep", p) for p in sweeps_im2col(rng)]
    cases += [("im2col_wide", "sweep", p) for p in sweeps_wide(rng)]

    fns = {"tiled": drv.tiled, "im2col": drv.im2col, "im2col_wide": drv.im2col_wide}
    records, stats, t0, ok_descs = [], {}, time.perf_counter(), []
    n_cross = {"tiled": 0, "im2col": 0, "im2col_wide": 0}
    for kind, origin, p in cases:
        if kind == "im2col_wide" and not drv.has_wide:
            continue
        rc, desc, unwritten = fns[kind](p)
        rec = dict(kind=kind, origin=origin, params=p, rc=rc)
        if desc is not None:
            rec["desc"] = desc.hex()
            ok_descs.append((p, desc))
        if unwritten:
            rec["unwritten"] = unwritten
        if bind_ver and n_cross[kind] < args.cross:
            n_cross[kind] += 1
            brc, bdesc = bindings_cross_check(kind, p)
            rec["bindings"] = [brc, bdesc == rec.get("desc") if brc == 0 else bdesc]
        records.append(rec)
        key = (kind, "ok" if rc == 0 else f"rc{rc}")
        stats[key] = stats.get(key, 0) + 1
    # cuTensorMapReplaceAddress on accepted descriptors
    for p, desc in rng.sample(ok_descs, min(args.replace, len(ok_descs))):
        new = rng.choice([BASE_ADDR + 4096, BASE_ADDR + 16, BASE_ADDR + 32, BASE_ADDR + 48, BASE_ADDR + 8,
                          BASE_ADDR + 1, 0, 1 << rng.randint(47, 63), (1 << rng.randint(48, 64)) - 32])
        rc, out = drv.replace(desc, new)
        records.append(dict(kind="replace_address", origin="random", params=dict(desc=desc.hex(),
                            global_address=new), rc=rc, desc=out.hex()))
        key = ("replace_address", "ok" if rc == 0 else f"rc{rc}")
        stats[key] = stats.get(key, 0) + 1
    elapsed = time.perf_counter() - t0
    header["stats"] = {f"{k}:{v}": n for (k, v), n in sorted(stats.items())}
    header["count"] = len(records)
    with gzip.open(args.out, "wt", compresslevel=9) as f:
        f.write(json.dumps(header) + "\n")
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"capture: {len(records)} records in {elapsed:.2f} s -> {args.out}", flush=True)
    print("capture:", json.dumps(header["stats"], indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="tensormap_golden.jsonl.gz")
    ap.add_argument("--seed", type=int, default=20261)
    ap.add_argument("--tiled", type=int, default=10000)
    ap.add_argument("--im2col", type=int, default=4500)
    ap.add_argument("--wide", type=int, default=900)
    ap.add_argument("--mutate", type=float, default=0.12, help="fraction of random cases with one bad field")
    ap.add_argument("--cross", type=int, default=400, help="cases per kind re-encoded through cuda.bindings")
    ap.add_argument("--replace", type=int, default=600)
    run(ap.parse_args())


if __name__ == "__main__":
    main()
