"""What the names a doc example uses but does not define stand for when tests/test_doc_examples.py
compiles it: kernel parameters (with their Numba types) and kernel-local lines.  One table for
every NVIDIA op page (a name means the same thing on every page), with the few names an op family
uses for something else (``acc``, ``a``, ``b``: an accumulator or operand of that family's MMA);
one for the AMD pages (``AMD_*``), whose kernels ``numba_tma.amd.compile`` compiles."""

import numba

from numba_tma import TensorMap

F32_2D = numba.float32[:, ::1]

# kernel parameters: name -> Numba type
PARAMS = {
    "desc": TensorMap.numba_type("float32", (64, 64)),
    "desc_a": TensorMap.numba_type("bfloat16", (64, 64), swizzle="128B"),
    "desc_b": TensorMap.numba_type("bfloat16", (64, 64), swizzle="128B"),
    "desc_c": TensorMap.numba_type("bfloat16", (64, 64), swizzle="128B"),
    "desc_s": TensorMap.numba_type("uint8", (128, 128), swizzle="128B"),
    "a": F32_2D,
    "out": F32_2D,
    "bias": F32_2D,
    "out_bf16": numba.uint16[:, ::1],
    "out_f16": numba.types.float16[:, ::1],
    "desc_c16": TensorMap.numba_type("float16", (64, 64), swizzle="128B"),
    "out_i32": numba.int32[:, ::1],
    "totals": numba.float32[::1],
    "data": numba.float32[::1],
    "flag": numba.int32[::1],
    "global_desc": numba.uint8[::1],
    "addresses": numba.uint64[::1],
}

# kernel-local lines: name -> the line defining it (a line may use the names above it)
LOCALS = {
    "STAGES": "STAGES = 2",
    "tx": "tx = cuda.threadIdx.x",
    "ty": "ty = cuda.threadIdx.y",
    "i": "i = cuda.threadIdx.x",
    "lane": "lane = cuda.threadIdx.x % 32",
    "warp": "warp = cuda.threadIdx.x // 32",
    "warpgroup": "warpgroup = cuda.threadIdx.x // 128",
    "half": "half = cuda.threadIdx.x // 128",
    "x": "x = cuda.blockIdx.x * 64",
    "y": "y = cuda.blockIdx.y * 64",
    "x0": "x0 = cuda.blockIdx.x * 64",
    "y0": "y0 = cuda.blockIdx.y * 64",
    "row": "row = cuda.blockIdx.y",
    "col": "col = cuda.threadIdx.x * 4",
    "row0": "row0 = cuda.blockIdx.y * 64",
    "col0": "col0 = cuda.blockIdx.x * 64",
    "n": "n = cuda.gridDim.x * 64",
    "n_rows": "n_rows = cuda.gridDim.y * 64",
    "c0": "c0 = cuda.threadIdx.x * 8",
    "w0": "w0 = cuda.blockIdx.x",
    "h0": "h0 = cuda.blockIdx.y",
    "n0": "n0 = cuda.blockIdx.z",
    "dw": "dw = cuda.threadIdx.y % 3",
    "dh": "dh = cuda.threadIdx.z % 3",
    "r": "r = cuda.threadIdx.x // 64",
    "c": "c = cuda.threadIdx.x % 64",
    "r0": "r0 = cuda.blockIdx.x * 4",
    "r1": "r1 = r0 + 1",
    "r2": "r2 = r0 + 2",
    "r3": "r3 = r0 + 3",
    "coords": "coords = (cuda.blockIdx.x * 64, cuda.blockIdx.y * 64)",
    "s": "s = cuda.blockIdx.z % 2",
    "slot": "slot = cuda.blockIdx.z % 2",
    "k": "k = cuda.blockIdx.z % 2",
    "kk": "kk = cuda.blockIdx.z % 4",
    "phase": "phase = cuda.blockIdx.z & 1",
    "rank": "rank = cluster.ctarank()",
    "producer_rank": "producer_rank = cluster.ctarank() ^ 1",
    "owner": "owner = cuda.threadIdx.x % 2",
    "bucket": "bucket = cuda.threadIdx.x % 16",
    "value": "value = numba.float32(cuda.threadIdx.x)",
    "v": "v = numba.float32(cuda.threadIdx.x)",
    "s0": "s0 = numba.float32(cuda.threadIdx.x)",
    "s1": "s1 = s0 + 1",
    "s2": "s2 = s0 + 2",
    "s3": "s3 = s0 + 3",
    "a0": "a0 = numba.uint32(cuda.threadIdx.x)",
    "a1": "a1 = a0 + 1",
    "a2": "a2 = a0 + 2",
    "a3": "a3 = a0 + 3",
    "c01": "c01 = numba.uint32(cuda.threadIdx.x)",
    "c23": "c23 = c01 + 1",
    "c45": "c45 = c01 + 2",
    "c67": "c67 = c01 + 3",
    "scale_a": "scale_a = numba.float32(0.5)",
    "scale_b": "scale_b = numba.float32(2.0)",
    "scale_log2e": "scale_log2e = numba.float32(0.18)",
    "m0": "m0 = numba.float32(1.0)",
    "m1": "m1 = numba.float32(2.0)",
    "alpha0": "alpha0 = numba.float32(0.5)",
    "alpha1": "alpha1 = numba.float32(0.25)",
    "bars": "bars = cuda.shared.array(4, numba.uint64)",
    "bar": "bar = cuda.shared.array(1, numba.uint64)",
    "full": "full = cuda.shared.array(2, numba.uint64)",
    "empty": "empty = cuda.shared.array(2, numba.uint64)",
    "done": "done = cuda.shared.array(1, numba.uint64)",
    "tile": "tile = cuda.shared.array((64, 64), numba.float32, alignment=1024)",
    "buf": "buf = cuda.shared.array(1024, numba.float32, alignment=128)",
    "partial": "partial = cuda.shared.array((64, 64), numba.float32, alignment=128)",
    "ring": "ring = cuda.shared.array((2, 64, 64), numba.float32, alignment=1024)",
    "inbox": "inbox = cuda.shared.array(64, numba.float32, alignment=16)",
    "counts": "counts = cuda.shared.array(16, numba.uint32)",
    "rows_tile": "rows_tile = cuda.shared.array((4, 64), numba.float32, alignment=128)",
    "tile_a": "tile_a = cuda.shared.array((16, 16), numba.uint16, alignment=128)",
    "tile_c": "tile_c = cuda.shared.array((16, 16), numba.uint16, alignment=128)",
    "block": "block = cuda.shared.array((64, 32), numba.float32, alignment=128)",
    "tile_b": "tile_b = cuda.shared.array((8, 16), numba.uint16, alignment=128)",
    "tiles_a": "tiles_a = cuda.shared.array((2, 64 * 64), numba.uint16, alignment=1024)",
    "tiles_b": "tiles_b = cuda.shared.array((2, 64 * 64), numba.uint16, alignment=1024)",
    "tiles_c": "tiles_c = cuda.shared.array((8, 64 * 64), numba.uint16, alignment=1024)",
    "scales": "scales = cuda.shared.array((2, 128 * 16), numba.uint8, alignment=1024)",
    "tmem": "tmem = cuda.shared.array(1, numba.uint32)",
    "edited": "edited = cuda.shared.array(128, numba.uint8, alignment=128)",
}

# what a name stands for in one op family's examples, where it differs from LOCALS
FAMILY_LOCALS = {
    "STAGES": "STAGES = 2",
    "wgmma": {
        "acc": "acc = wgmma.zeros(128)",
        "acc_i32": "acc_i32 = wgmma.zeros(64, numba.int32)",
        "a": "a = wgmma.descriptor(tiles_a, desc_a, 0, 0)",
        "b": "b = wgmma.descriptor(tiles_b, desc_b, 0, 0)",
        "part": "part = wgmma.zeros(64)",
        "total": "total = wgmma.zeros(64)",
        "o": "o = wgmma.zeros(64)",
        "p": "p = wgmma.zeros(64)",
        "scores": "scores = wgmma.zeros(64)",
    },
    "mma": {
        "acc": "acc = mma.zeros()",
        "a": "a = mma.ldmatrix(tile_a, 4)",
        "b": "b = mma.ldmatrix(tile_b, 2)",
    },
    "tcgen05": {
        "a": "a = tcgen05.descriptor(tiles_a, desc_a, 0, 0)",
        "b": "b = tcgen05.descriptor(tiles_b, desc_b, 0, 0)",
    },
    "tensormap": {
        "buf": "buf = cuda.shared.array(128, numba.uint8, alignment=128)",
    },
    "dsmem": {
        "totals": "totals = cuda.shared.array(1024, numba.uint32, alignment=128)",
        "partial": "partial = cuda.shared.array(1024, numba.uint32, alignment=128)",
        "a": "a = numba.float32(1.0)",
        "b": "b = numba.float32(2.0)",
        "c": "c = numba.float32(3.0)",
        "d": "d = numba.float32(4.0)",
        "r": "r = cluster.ctarank() ^ 1",
    },
}

# the map an op's examples name ``desc`` where that op takes a map of another kind
OP_PARAMS = {
    "tma.load_im2col": {"desc": TensorMap.numba_type("float32", (64, 32), mode="im2col", rank=4)},
    "tma.prefetch_im2col": {"desc": TensorMap.numba_type("float32", (64, 32), mode="im2col", rank=4)},
    "tma.gather4": {"desc": TensorMap.numba_type("float32", (1, 64))},
    "tma.scatter4": {"desc": TensorMap.numba_type("float32", (1, 64))},
}


# the AMD pages (family "amd.<part>": docs/ops/amd/<part>.md)
AMD_PARAMS = {
    "x": numba.float32[::1],
    "y": numba.float32[::1],
    "n": numba.int32,
}

AMD_LOCALS = {
    "STAGES": "STAGES = 2",
    "lane": "lane = amd.workitem_id_x()",
    "w": "w = amd.wave_id()",
    "base": "base = w * 64",
    "row": "row = amd.workgroup_id_x() * 64",
    "tile": "tile = amd.lds_array(4096, numba.float32)",
    "ring": "ring = amd.lds_array(8192, numba.float32)",
    "bar": "bar = amd.lds_array(1, numba.int64)",
}

AMD_FAMILY = {
    "amd.lanes": ({}, {
        "x": "x = numba.int32(lane)",
        "partial": "partial = numba.int32(lane)",
        "slot": "slot = lane // 16",
    }),
    "amd.tensor_descriptors": ({"x": numba.float32[:, ::1], "y": numba.float32[:, ::1]}, {
        "desc": "desc = amd.make_tensor_descriptor(x, (64, 64))",
        "out_desc": "out_desc = amd.make_tensor_descriptor(y, (64, 64))",
        "da": "da = amd.make_tensor_descriptor(x, (64, 64))",
        "db": "db = amd.make_tensor_descriptor(y, (64, 64))",
        "ta": "ta = tile",
        "tb": "tb = tile",
    }),
}
