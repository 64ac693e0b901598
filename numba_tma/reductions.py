"""Which element types each reduction takes (PTX ISA, measured on the H200 where noted): one table
per instruction form, read by the ops' typing (``numba_tma.intrinsics``) and by their simulator
twins (``numba_tma.simulator``), which cannot import the intrinsics (no CUDA target there)."""

# cp.reduce.async.bulk shared -> global (``bulk.reduce``), by PTX type of the elements.
BULK_REDUCE_TYPES = {
    "add": ("u32", "s32", "u64", "f32", "f64", "f16"),
    "min": ("u32", "s32", "u64", "s64", "f16"), "max": ("u32", "s32", "u64", "s64", "f16"),
    "inc": ("u32",), "dec": ("u32",),
    "and": ("u32", "s32", "u64", "s64"), "or": ("u32", "s32", "u64", "s64"), "xor": ("u32", "s32", "u64", "s64"),
}

# cp.reduce.async.bulk.tensor (``tma.reduce``), by the map's data type.  Measured on the H200:
# and/or/xor on an INT64 map kill the kernel (CUDA_ERROR_ILLEGAL_INSTRUCTION) while UINT64 works,
# so INT64 is refused for them.
TENSOR_REDUCE_TYPES = {
    "add": ("UINT32", "INT32", "UINT64", "FLOAT32", "FLOAT16", "BFLOAT16"),
    "min": ("UINT32", "INT32", "UINT64", "INT64", "FLOAT16", "BFLOAT16"),
    "max": ("UINT32", "INT32", "UINT64", "INT64", "FLOAT16", "BFLOAT16"),
    "inc": ("UINT32",), "dec": ("UINT32",),
    "and": ("UINT32", "INT32", "UINT64"), "or": ("UINT32", "INT32", "UINT64"), "xor": ("UINT32", "INT32", "UINT64"),
}

# red.async and cp.reduce.async.bulk into shared::cluster (``dsmem.reduce_async`` /
# ``reduce_copy_async``), by PTX type (ptxas 13.5 takes no 64-bit logical ops); "b32": the
# logical ops'.
CLUSTER_REDUCE_TYPES = {"add": ("u32", "s32", "u64"), "min": ("u32", "s32"), "max": ("u32", "s32"), "inc": ("u32",),
                        "dec": ("u32",), "and": ("b32",), "or": ("b32",), "xor": ("b32",)}
