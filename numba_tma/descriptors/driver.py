"""The same encoders, backed by the CUDA driver through ``cuda.bindings`` (cross-checks, escape hatch).

Arguments are coerced like the pure encoders (enum, int or string) but not validated here: the
driver decides, and a rejection raises :class:`TensorMapError` too.  ``cuda.bindings`` is
imported on first use; a CUDA context is made current if none is (primary context of device 0).

>>> from numba_tma.descriptors import driver                     # doctest: +SKIP
>>> driver.encode_tiled("float32", ptr, [1024, 512], [4096], [64, 32])  # doctest: +SKIP
b'...'
"""

import ctypes

from .decode import descriptor_bytes
from .enums import DataType, Im2colWideMode, Interleave, L2Promotion, OOBFill, Swizzle, coerce
from .errors import TensorMapError
from .validate import _int


def _driver():
    from cuda.bindings import driver
    return driver


def _ensure_context(drv):
    err, ctx = drv.cuCtxGetCurrent()
    if int(err) == int(drv.CUresult.CUDA_ERROR_NOT_INITIALIZED):
        _check(drv, drv.cuInit(0)[0], "cuInit")
        err, ctx = drv.cuCtxGetCurrent()
    if int(err) == 0 and int(ctx) != 0:
        return
    err, dev = drv.cuDeviceGet(0)
    _check(drv, err, "cuDeviceGet")
    err, ctx = drv.cuDevicePrimaryCtxRetain(dev)
    _check(drv, err, "cuDevicePrimaryCtxRetain")
    _check(drv, drv.cuCtxSetCurrent(ctx)[0], "cuCtxSetCurrent")


def _check(drv, err, function):
    if int(err):
        name = drv.cuGetErrorName(err)[1]
        name = name.decode() if isinstance(name, bytes) else str(err)
        raise TensorMapError(function, name, "the CUDA driver rejected the call")


def _call(function, *args):
    drv = _driver()
    _ensure_context(drv)
    try:
        err, tmap = getattr(drv, function)(*args)
    except (OverflowError, TypeError, ValueError) as exc:  # values the binding cannot pass on
        raise TensorMapError(function, args, f"cuda.bindings refused the arguments: {exc}") from None
    _check(drv, err, function)
    return ctypes.string_at(int(tmap.getPtr()), 128)


def _unsigned(cu_type, name, values):
    """Integers (exactly: no floats or bools) as cuda.bindings' unsigned wrappers, or a
    TensorMapError naming the entry that does not fit."""
    out = []
    for i, v in enumerate(values):
        v = _int(f"{name}[{i}]", v)
        try:
            out.append(cu_type(v))
        except (OverflowError, ValueError):
            raise TensorMapError(f"{name}[{i}]", v, f"does not fit the driver's {cu_type.__name__}") from None
    return out


def _lists(drv, global_dim, global_strides, element_strides):
    u64 = _unsigned(drv.cuuint64_t, "global_dim", global_dim)
    # cuda.bindings passes NULL for an empty list, which the driver rejects even for rank 1.
    strides = _unsigned(drv.cuuint64_t, "global_strides", global_strides) or [drv.cuuint64_t(0)]
    if element_strides is None:
        element_strides = [1] * len(global_dim)
    return u64, strides, _unsigned(drv.cuuint32_t, "element_strides", element_strides)


def _enums(drv, data_type, interleave, swizzle, l2_promotion, oob_fill):
    return (drv.CUtensorMapDataType(coerce(DataType, data_type, "data_type")),
            drv.CUtensorMapInterleave(coerce(Interleave, interleave, "interleave")),
            drv.CUtensorMapSwizzle(coerce(Swizzle, swizzle, "swizzle")),
            drv.CUtensorMapL2promotion(coerce(L2Promotion, l2_promotion, "l2_promotion")),
            drv.CUtensorMapFloatOOBfill(coerce(OOBFill, oob_fill, "oob_fill")))


def encode_tiled(data_type, global_address, global_dim, global_strides, box_dim, element_strides=None,
                 interleave="none", swizzle="none", l2_promotion="none", oob_fill="none"):
    """``cuTensorMapEncodeTiled`` through the driver; same signature as the pure encoder.

    >>> driver.encode_tiled("uint8", ptr, [256], [], [16])  # doctest: +SKIP
    """
    drv = _driver()
    dims, strides, estr = _lists(drv, global_dim, global_strides, element_strides)
    dt, il, sw, l2, oob = _enums(drv, data_type, interleave, swizzle, l2_promotion, oob_fill)
    return _call("cuTensorMapEncodeTiled", dt, len(dims), _int("global_address", global_address), dims, strides,
                 _unsigned(drv.cuuint32_t, "box_dim", box_dim), estr, il, sw, l2, oob)


def encode_im2col(data_type, global_address, global_dim, global_strides, pixel_box_lower_corner,
                  pixel_box_upper_corner, channels_per_pixel, pixels_per_column, element_strides=None,
                  interleave="none", swizzle="none", l2_promotion="none", oob_fill="none"):
    """``cuTensorMapEncodeIm2col`` through the driver; same signature as the pure encoder.

    >>> driver.encode_im2col("float16", ptr, [64, 16, 2], [128, 2048], [-1], [0], 64, 16)  # doctest: +SKIP
    """
    drv = _driver()
    dims, strides, estr = _lists(drv, global_dim, global_strides, element_strides)
    dt, il, sw, l2, oob = _enums(drv, data_type, interleave, swizzle, l2_promotion, oob_fill)
    return _call("cuTensorMapEncodeIm2col", dt, len(dims), _int("global_address", global_address), dims, strides,
                 [_int(f"pixel_box_lower_corner[{i}]", v) for i, v in enumerate(pixel_box_lower_corner)],
                 [_int(f"pixel_box_upper_corner[{i}]", v) for i, v in enumerate(pixel_box_upper_corner)],
                 _int("channels_per_pixel", channels_per_pixel), _int("pixels_per_column", pixels_per_column),
                 estr, il, sw, l2, oob)


def encode_im2col_wide(data_type, global_address, global_dim, global_strides, pixel_box_lower_corner_width,
                       pixel_box_upper_corner_width, channels_per_pixel, pixels_per_column,
                       element_strides=None, interleave="none", mode="W", swizzle="128B",
                       l2_promotion="none", oob_fill="none"):
    """``cuTensorMapEncodeIm2colWide`` through the driver; same signature as the pure encoder.

    >>> driver.encode_im2col_wide("float16", ptr, [64, 16, 2], [128, 2048], -1, 0, 64, 16)  # doctest: +SKIP
    """
    drv = _driver()
    dims, strides, estr = _lists(drv, global_dim, global_strides, element_strides)
    dt, il, sw, l2, oob = _enums(drv, data_type, interleave, swizzle, l2_promotion, oob_fill)
    wide = drv.CUtensorMapIm2ColWideMode(coerce(Im2colWideMode, mode, "mode"))
    return _call("cuTensorMapEncodeIm2colWide", dt, len(dims), _int("global_address", global_address), dims,
                 strides, _int("pixel_box_lower_corner_width", pixel_box_lower_corner_width),
                 _int("pixel_box_upper_corner_width", pixel_box_upper_corner_width),
                 _int("channels_per_pixel", channels_per_pixel), _int("pixels_per_column", pixels_per_column),
                 estr, il, wide, sw, l2, oob)


def replace_address(desc, global_address):
    """``cuTensorMapReplaceAddress`` through the driver: ``desc`` with a new address.

    >>> driver.replace_address(desc, new_ptr)  # doctest: +SKIP
    """
    drv = _driver()
    _ensure_context(drv)
    desc = descriptor_bytes(desc)
    tmap = drv.CUtensorMap()
    ctypes.memmove(int(tmap.getPtr()), desc, 128)
    try:
        err = drv.cuTensorMapReplaceAddress(tmap, _int("global_address", global_address))[0]
    except (OverflowError, TypeError) as exc:
        raise TensorMapError("global_address", global_address, f"cuda.bindings refused it: {exc}") from None
    _check(drv, err, "cuTensorMapReplaceAddress")
    return ctypes.string_at(int(tmap.getPtr()), 128)
