"""TMA: tensor copies between global memory and shared memory (``cp.async.bulk.tensor``).

**Coordinates are innermost-first**, like the driver's ``globalDim``: for a C-ordered 2-D array
``a[row, col]``, ``coords = (col, row)`` — element offsets of the box's first element, not tile
indices.  Coordinates may be negative or run past the tensor: out-of-bounds elements are filled
(zero, or NaN with ``oob_fill``).  ``coords[0]`` times the element size must be a multiple of 16
bytes (measured on the H200: any other value kills the kernel with
``CUDA_ERROR_ILLEGAL_INSTRUCTION``, even when that edge of the box lies outside the tensor); a
constant ``coords[0]`` that breaks it is refused at compile time.

**Descriptors.** ``desc`` is either a :class:`numba_tma.TensorMap` (passed by value as a
``__grid_constant__`` parameter; its mode, rank and element width are checked at compile time) or a
``uint8`` device array holding the 128 bytes (global memory), for which the op first issues
``fence.proxy.tensormap::generic.acquire.sys`` as the PTX memory model requires for a map the host
wrote (under numba-cuda-mlir, ``numba_tma.mlir.map_in_global``'s maps are acquired once per thread
at the kernel's start instead: docs/second_host.md).  ``TensorMap.to_device()``'s array is typed by
the map's layout (read-only) and checked as the by-value map; descriptor bytes of your own in a
plain ``uint8`` array say no layout, and are checked by debug mode and the simulator.

**Element types.** TMA moves bits.  The shared-memory tile may have any dtype of the map's element
width — a bfloat16 or fp16 map fills a ``uint16`` / ``int16`` / ``float16`` tile, an fp8 map a
``uint8`` tile, a TF32 map a ``float32`` one — and the kernel reads the same bytes reinterpreted
(numba-cuda has no shared arrays of bfloat16 or fp8).  Packed sub-byte maps (sm_100) fill a
``uint8`` tile.
"""

from numba.cuda import types

from . import debug
from ._core import (Refusal, REQUIRED, CacheHint, Choice, Int, IntTuple, Multicast, Operand, PtxOp, Qualifier,
                    Requirement, Sample, SharedArray, check_arch, exported, literal, reject)
from .bulk import commit_group, wait_group, wait_group_read
from .mbarrier import barrier
from ..descriptors.edge import overrun_rule
from ..errors import MULTICAST_NEEDS_CLUSTER
from ..descriptors.enums import SWIZZLE_BYTES, SWIZZLE_ROW_MASK, TYPE_INFO, smem_row_bytes
from ..reductions import TENSOR_REDUCE_TYPES
from .tensor_map_type import TensorMapType


class Descriptor(Operand):
    """A TensorMap kernel argument (its parameter address), ``to_device()``'s map (as its map: its
    128 bytes' address, ``tensor_map_type.map_value``) or a uint8 device array (``l``)."""

    annotation = "TensorMap | DeviceArray"

    def check(self, op_name, ty):
        ok = isinstance(ty, TensorMapType) or (isinstance(ty, types.Array) and ty.dtype == types.uint8)
        if not ok:
            raise reject(op_name, self.name,
                         "must be a numba_tma.TensorMap or a uint8 device array holding the 128-byte CUtensorMap", ty)

    def lower(self, host, ty, val):
        return [(host.map_address(val, ty), "l")]


# A descriptor in global memory needs the tensormap acquire fence, which arrived in PTX ISA 8.3.
GLOBAL_DESCRIPTOR = Requirement((9, 0), (8, 3))
_ACQUIRE = "fence.proxy.tensormap::generic.acquire.sys [{desc}], 128;\n"
# im2col offsets are 16, 8 and 5 bits wide for 3-, 4- and 5-D maps (PTX ISA, cp.async.bulk.tensor)
IM2COL_OFFSET_BITS = {3: 16, 4: 8, 5: 5}


def _element_bits(dtype):
    return getattr(dtype, "bitwidth", None)


def _check_desc(op, desc, coords, mode) -> bool:
    """The mode and rank a by-value map imposes on the call; a map in global memory is only known at
    run time (it needs the acquire fence's PTX ISA; one whose type says its layout, ``in_global``, is
    checked as a by-value map too).  Returns whether ``desc``'s type says its layout."""
    if not isinstance(desc, TensorMapType) or desc.in_global:
        check_arch(f"{op} (descriptor in global memory)", GLOBAL_DESCRIPTOR)
    if not isinstance(desc, TensorMapType):
        return False
    if desc.mode != mode:
        raise reject(op, "desc", f"must be {'an' if mode == 'im2col' else 'a'} {mode} map ({desc})", desc.mode)
    if len(coords) != desc.rank:
        raise reject(op, "coords", f"must have {desc.rank} entries (the rank of {desc})", len(coords))
    return True


def _check_map(op, desc, tile_arg, tile, coords, mode):
    """:func:`_check_desc`, then the tile's element width and a constant ``coords[0]``'s alignment."""
    if not _check_desc(op, desc, coords, mode):
        return
    want = max(desc.element_bits, 8)   # packed sub-byte maps fill bytes
    if _element_bits(tile.dtype) != want:
        raise reject(op, tile_arg, f"must have {want}-bit elements like the map ({desc}); any dtype of that width "
                     "is accepted and holds the same bytes", tile)
    first = literal(coords[0])
    if mode == "tiled" and isinstance(first, int) and (first * desc.element_bits) % 128:
        raise reject(op, "coords[0]", f"times the element size ({desc.element_bits // 8} bytes) must be a multiple "
                     "of 16 bytes (the H200 faults otherwise)", first)


def _check_multicast_space(multicast, dst_space):
    """The PTX ISA defines multicast only into the cluster's window (``.shared::cluster``)."""
    if dst_space == "cta" and not isinstance(multicast, (types.Omitted, types.NoneType)):
        raise reject("tma.load", "dst_space", MULTICAST_NEEDS_CLUSTER, "'cta'")


def _debug_map_op(op_name, tile_arg):
    """Debug-mode checks of a TMA op (see :mod:`.debug`): the tile's alignment for the map's swizzle
    and its size against the box, ``coords[0]``'s 16-byte rule, a global map's 64-byte alignment."""
    def check(d, tys, args):
        desc_ty, tile_ty = tys["desc"], tys[tile_arg]
        if not isinstance(desc_ty, TensorMapType) or desc_ty.in_global:
            debug.check_aligned(d, op_name, "desc", d.generic_address(args["desc"], desc_ty), 64,
                                "a CUtensorMap in global memory is 64-byte aligned")
        if not isinstance(desc_ty, TensorMapType):   # its layout is only known on the device
            return
        swizzle = SWIZZLE_BYTES.get(desc_ty.swizzle, 0)
        align = 8 * swizzle if swizzle else 128
        tile = args[tile_arg]
        debug.check_aligned(d, op_name, tile_arg, d.shared_address(tile, tile_ty), align,
                            f"a TMA tile with swizzle {desc_ty.swizzle}" if swizzle else "a TMA tile")
        if isinstance(tile_ty, types.Array) and desc_ty.smem_bytes:
            debug.check_at_least(d, op_name, tile_arg, d.array_bytes(tile, tile_ty), desc_ty.smem_bytes,
                                 "the shared memory the map's box spans, desc.smem_bytes")
        if desc_ty.mode == "tiled":
            coords = [d.int64(v, t) for v, t in d.items(args["coords"], tys["coords"])]
            debug.check_multiple(d, op_name, "coords[0]", coords[0], max(desc_ty.element_bits, 8) // 8, 16,
                                 "the H200 faults otherwise")
            debug.check_inside(d, op_name, d.generic_address(args["desc"], desc_ty), coords)
    return check


def _acquire(desc, **_):
    """Template key ``{acquire}``: the tensormap acquire fence a map in global memory needs (none
    in the op's text for a by-value map, or for one whose lowering fences it once, ``fenced_once``)."""
    fenced = isinstance(desc, TensorMapType) and (not desc.in_global or desc.fenced_once)
    return {"acquire": "" if fenced else _ACQUIRE}


def _fields(desc, coords, **_):
    return {"rank": len(coords)} | _acquire(desc)


# The assembly rows' hand-written PTX, from PTX ISA 9.1: the acquire fence the test kernel's map in
# global memory gets first, and the sections of the tensor copies.
_FENCED = "fence.proxy.tensormap::generic.acquire.sys [%rd], 128;"
_FENCE = "9.7.13.4 membar / fence"
_TENSOR = f"{_FENCE}; 9.7.9.27.1.2 cp.async.bulk.tensor"
_TENSOR_REDUCE = f"{_FENCE}; 9.7.9.27.1.3 cp.reduce.async.bulk.tensor"
_TENSOR_PREFETCH = f"{_FENCE}; 9.7.9.27.1.4 cp.async.bulk.prefetch.tensor"


def _regs(n, reg="%r"):
    """``n`` register placeholders (coordinates ``%r``, im2col offsets ``%rs``) for a row's PTX."""
    return ", ".join([reg] * n)


SM100_ARCH = Requirement((10, 0), (8, 6), arch_specific=True)
_DST_SPACE = Qualifier("dst_space", {"cluster": "shared::cluster",
                                     "cta": Choice("shared::cta", Requirement((9, 0), (8, 6)))}, "cluster")
_CTA_GROUP = Qualifier("cta_group", {1: "", 2: Choice(".cta_group::2", SM100_ARCH)}, 1)

load = PtxOp(
    "tma.load",
    "{acquire}cp.async.bulk.tensor.{rank}d.{dst_space}.global.tile.mbarrier::complete_tx::bytes{multicast}{cta_group}"
    "{cache_hint} [{dst}], [{desc}, {{{coords}}}], [{bar}]{mask}{policy};",
    (Descriptor("desc"), SharedArray("dst", what="a shared array (the tile)", contiguous=True),
     IntTuple("coords", (1, 2, 3, 4, 5)), barrier(), CacheHint(), Multicast()),
    qualifiers=(_DST_SPACE, _CTA_GROUP),
    check=lambda desc, dst, coords, multicast, dst_space, **_: (
        _check_map("tma.load", desc, "dst", dst, coords, "tiled"), _check_multicast_space(multicast, dst_space)),
    debug=_debug_map_op("tma.load", "dst"),
    fields=lambda cc, desc, coords, **_: _fields(desc, coords),
    doc_fields={"rank": 2, "acquire": _ACQUIRE},
    tlx=("tlx.async_descriptor_load", "cute.nvgpu.cpasync.CopyBulkTensorTileG2SOp", "cuda::ptx::cp_async_bulk_tensor"),
    samples=tuple(Sample(f"tma.load(desc, smem, {tuple(range(r))}, bar)", f"UTMALDG.{r}D", {"rank": r}, isa=_TENSOR,
                         ptx=(_FENCED, f"cp.async.bulk.tensor.{r}d.shared::cluster.global.tile.mbarrier::complete_tx"
                                       f"::bytes [%r], [%rd, {{{_regs(r)}}}], [%r];"))
                  for r in range(1, 6)) + (
        Sample("tma.load(desc, smem, (0, 0), bar, cache_hint=out[1])", "UTMALDG.2D", {"rank": 2}, isa=_TENSOR,
               ptx=(_FENCED, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                             ".L2::cache_hint [%r], [%rd, {%r, %r}], [%r], %rd;")),
        Sample("tma.load(desc, smem, (0, 0), bar, multicast=out[1])", "UTMALDG.2D.MULTICAST", {"rank": 2},
               only={"dst_space": "cluster"}, isa=_TENSOR,
               ptx=(_FENCED, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                             ".multicast::cluster [%r], [%rd, {%r, %r}], [%r], %rs;"))),
    doc="""Copy one box of a tensor from global memory into shared memory with TMA (tile mode).

    ``desc``: a :class:`numba_tma.TensorMap` (by value) or the 128 bytes in a ``uint8`` device array
    (that form needs PTX ISA 8.3 for its ``fence.proxy.tensormap`` acquire, shown first below;
    ``desc.to_device()``'s is typed by the map's layout and checked as the by-value map).
    ``dst``: C-contiguous shared array receiving the box, of any dtype of the map's element width
    (its element 0 is the box's first element; TMA needs it 128-byte aligned:
    ``cuda.shared.array(shape, dtype, alignment=128)``, 1024 for 128B swizzle).  Its byte size is
    not checked: make it at least ``desc.box_bytes``.
    ``coords``: int32 element offsets, **innermost dimension first** (for a C-ordered 2-D array
    ``a[row, col]``: ``(col, row)``); its length is the tensor map's rank.  ``coords[0]`` times the
    element size must be a multiple of 16 bytes.
    ``bar``: the mbarrier (uint64 shared array, element 0) that receives the byte count.
    ``cache_hint``: an L2 policy from ``cache.policy(...)``.  ``multicast``: a 16-bit mask of the
    cluster's CTAs (bit ``r`` for rank ``r``) whose shared memory also receives the box, at the same
    offset, each signalling its own barrier at ``bar``'s offset (a constant mask outside 16 bits is
    refused; masks for the usual shapes: ``numba_tma.cluster.mask_*``).  ``dst_space="cta"`` names the
    destination in the CTA's own window (PTX ISA 8.6); ``cta_group=2`` (sm_100a) lets either CTA
    of a pair signal the barrier.
    Issue from one thread, after ``mbarrier.arrive_expect_tx(bar, desc.box_bytes)``.

    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (x0, y0), bars)
        mbarrier.wait(bars, 0)
    """,
    refusals=(Refusal('tma.load(desc, smem, (0, 0, 0), bar)',
                      "tma.load: argument 'coords' must have 2 entries", desc=('float32', (8, 32), 'none')),
              Refusal('tma.load(desc, smem, (2, 0), bar)',
                      "tma.load: argument 'coords[0]' times the element size (4 bytes) must be a multiple of 16 bytes", desc=('float32', (8, 32), 'none')),
              Refusal("tma.load(desc, smem, (0, 0), bar, multicast=3, dst_space='cta')",
                      "tma.load: argument 'dst_space' must be 'cluster' with multicast", desc=('float32', (8, 32), 'none')),),
).intrinsic()


def _offsets():
    """im2col filter-tap offsets: 16-bit registers; their width by rank is checked in the op."""
    return IntTuple("offsets", (1, 2, 3), bits=16, range=(-(1 << 31), (1 << 31) - 1))


def _check_offsets(op, coords, offsets):
    if len(offsets) != len(coords) - 2:
        raise reject(op, "offsets", f"must have len(coords) - 2 = {len(coords) - 2} entries "
                     "(one per spatial dimension)", len(offsets))
    bits = IM2COL_OFFSET_BITS[len(coords)]
    for i, t in enumerate(offsets):
        value = literal(t)
        if isinstance(value, int) and not 0 <= value < (1 << bits):
            raise reject(op, f"offsets[{i}]", f"must be in [0, {(1 << bits) - 1}] for a "
                         f"{len(coords)}-D map ({bits}-bit offsets)", value)


def _check_load_im2col(desc, dst, coords, offsets, **_):
    _check_map("tma.load_im2col", desc, "dst", dst, coords, "im2col")
    _check_offsets("tma.load_im2col", coords, offsets)


load_im2col = PtxOp(
    "tma.load_im2col",
    "{acquire}cp.async.bulk.tensor.{rank}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes{multicast}"
    "{cache_hint} [{dst}], [{desc}, {{{coords}}}], [{bar}], {{{offsets}}}{mask}{policy};",
    (Descriptor("desc"), SharedArray("dst", what="a shared array (the pixels x channels block)", contiguous=True),
     IntTuple("coords", (3, 4, 5)),
     _offsets(), barrier(), CacheHint(), Multicast()),
    check=_check_load_im2col, debug=_debug_map_op("tma.load_im2col", "dst"),
    fields=lambda cc, desc, coords, **_: _fields(desc, coords),
    doc_fields={"rank": 4, "acquire": "", "coords": "c, w, h, n", "offsets": "ow, oh"},
    tlx=("tlx.async_descriptor_load (im2col)", "cute.nvgpu.cpasync.CopyBulkTensorIm2ColG2SOp",
         "cuda::ptx::cp_async_bulk_tensor (im2col)"),
    samples=tuple(Sample(f"tma.load_im2col(desc, smem, {tuple(range(r))}, {tuple(range(1, r - 1))}, bar)",
                         f"UTMALDG.{r}D.IM2COL", {"rank": r}, isa=_TENSOR,
                         ptx=(_FENCED, f"cp.async.bulk.tensor.{r}d.shared::cluster.global.im2col.mbarrier::complete_tx"
                                       f"::bytes [%r], [%rd, {{{_regs(r)}}}], [%r], {{{_regs(r - 2, '%rs')}}};"))
                  for r in range(3, 6)),
    doc="""Gather ``pixels_per_column`` pixels x ``channels_per_pixel`` channels of an N(D)(H)WC tensor
    into shared memory (im2col mode, for convolutions), from a :meth:`TensorMap.im2col` map.

    ``desc``, ``dst`` and ``bar`` as for :func:`load`.  ``coords`` (3-5 entries: C, W, (H, (D,)) N)
    give the first pixel; ``offsets`` (one per spatial dimension, W first) shift the filter tap
    inside the pixel box: each is 16 bits wide for a 3-D map, 8 bits for 4-D and 5 bits for 5-D
    (constants outside are refused at compile time).  The first pixel must lie inside the
    bounding box, ``lower corner <= coordinate <= size - 1 + upper corner`` in each spatial
    dimension: on the H200 a start outside it ends the kernel with an illegal instruction (the
    simulator reports it).

    Example::

        tma.load_im2col(desc, block, (c0, w0, h0, n0), (dw, dh), bars)
    """,
    refusals=(Refusal('tma.load_im2col(desc, smem, (0, 1, 2), (1,), bar)',
                      "tma.load_im2col: argument 'desc' must be an im2col map", desc=('float32', (8, 32), 'none')),),
).intrinsic()



# -- shared -> global ------------------------------------------------------------------------------

_STORE_MODE = {"tiled": "tile", "im2col": "im2col_no_offs"}
ALLOW_OVERRUN = Qualifier("allow_overrun", {False: "", True: ""}, False)
NO_OPT_IN = {"allow_overrun": False}     # the assembly rows: the opt-in changes no PTX


def _element_bits_of(d, desc_address):
    """A map's element width in bits, read from its type field (bits 71-74; the TF32 bit does not
    change the width)."""
    code = d.and_(d.lshr(debug.load_u32(d, desc_address, 8), 7), 0xF)
    bits = d.const(0, 32)
    for info in TYPE_INFO.values():
        bits = d.select(d.icmp_unsigned("==", code, info.code), d.const(info.bits, 32), bits)
    return bits


def _debug_edge(op_name, coord_arg):
    """Debug mode, descriptor bytes in a plain ``uint8`` array (their geometry is only known on the
    device, and may have been edited there; a map whose type says its layout was checked at compile
    time): trap before a store whose box crosses the end of a row that is not a multiple of 16
    bytes, unless the call opted in (``allow_overrun=True``)."""
    def check(d, tys, args):
        if isinstance(tys["desc"], TensorMapType) or literal(tys["allow_overrun"]):
            return
        address = d.generic_address(args["desc"], tys["desc"])
        first = d.items(args[coord_arg], tys[coord_arg])[0] if coord_arg == "coords" else \
            (args[coord_arg], tys[coord_arg])
        first = d.int64(*first)
        width = d.zext(d.add(debug.load_u32(d, address, 32), 1), 64)
        box = d.lshr(debug.load_u32(d, address, 52), 24)     # byte 55
        end = d.add(first, d.zext(d.add(box, 1), 64))
        row_bits = d.mul(width, d.zext(_element_bits_of(d, address), 64))
        ragged = d.icmp_unsigned("!=", d.and_(row_bits, 127), 0)
        crosses = d.icmp_signed(">", end, width)
        debug.fail_if(d, d.and_(ragged, crosses), op_name,
                      f"{coord_arg}{'[0]' if coord_arg == 'coords' else ''} = %lld: the box ends at element %lld, past "
                      "the end of the row (%lld elements, %lld bits: not a multiple of 16 bytes); the store would "
                      "write outside the tensor up to the next 16-byte boundary — pad the array's last dimension, "
                      "or pass allow_overrun=True", [first, end, width, row_bits])
    return check


def _debug_store(op_name, coord_arg):
    """Debug mode for a store-like op: the map checks of :func:`_debug_map_op` (tiled/im2col
    stores), then the 16-byte edge of a map in global memory."""
    tile = _debug_map_op(op_name, "src") if coord_arg == "coords" else None
    edge = _debug_edge(op_name, coord_arg)

    def check(d, tys, args):
        if tile is not None:
            tile(d, tys, args)
        edge(d, tys, args)
    return check


def _store_fields(desc, coords, **_):
    """The rank, the acquire fence of a global-memory map and the store mode (a by-value map's own;
    tile for a map in global memory, whose mode is only known at run time)."""
    mode = desc.mode if isinstance(desc, TensorMapType) else "tiled"
    return _fields(desc, coords) | {"mode": _STORE_MODE[mode]}


def _check_edge(op, desc, allow_overrun):
    """A map whose type says its layout (by value, or ``to_device()``'s) with rows ending short of
    16 bytes: a store crossing a row's end writes past it, so the store is refused unless the map
    or the call opted in (descriptor bytes in a plain ``uint8`` array are checked by debug mode,
    :func:`_debug_edge`, and the simulator)."""
    if isinstance(desc, TensorMapType) and desc.store_overrun and not allow_overrun:
        raise reject(op, "desc", overrun_rule(str(desc), desc.dtype, desc.element_bits, desc.store_overrun,
                                              desc.rank, desc.mode), desc)


def _check_store(op, desc, src, coords, allow_overrun):
    _check_map(op, desc, "src", src, coords, desc.mode if isinstance(desc, TensorMapType) else "tiled")
    _check_edge(op, desc, allow_overrun)
    first = literal(coords[0])
    if isinstance(first, int) and first < 0:
        raise reject(op, "coords[0]", "must not be negative: a box that starts before the tensor kills a TMA store "
                     "(CUDA_ERROR_ILLEGAL_INSTRUCTION on the H200); boxes past the far edge are clipped", first)


_STORE_DOC = """
    ``desc``: a :class:`numba_tma.TensorMap` (by value; tiled or im2col, the mode is the map's) or
    the 128 bytes of a tiled map in a ``uint8`` device array (``desc.to_device()``: checked as the
    map; bytes of your own: checked on the device).  ``src``: the C-contiguous shared
    array holding the box (any dtype of the map's element width), written with ordinary stores and
    then made visible to TMA with ``fence.proxy_async()`` + ``cuda.syncthreads()``.  ``coords``:
    the box's first element, innermost first; parts of the box past the tensor's far edges are
    not written, but a box must not start *before* the tensor (negative coordinates kill the
    kernel on the H200 with ``CUDA_ERROR_ILLEGAL_INSTRUCTION``, measured for ranks 1-5; a constant
    negative ``coords[0]`` is refused at compile time).
    **The 16-byte edge**: along dimension 0 the write goes on past the tensor's end to the next
    16-byte boundary of each row it crosses (measured on the H200: a float32 tensor 59 wide gets
    element 59 written; 62 wide, 62 and 63).  A map whose rows are not whole 16-byte chunks
    (``desc.store_overrun > 0``), by value or ``desc.to_device()``, is refused at compile time unless
    it was built with ``allow_store_overrun=True`` or the call passes ``allow_overrun=True`` (the
    bytes are yours); descriptor bytes of your own in a plain ``uint8`` array are checked by debug
    mode and the simulator (``docs/troubleshooting.md``).
    Completes through the bulk async-groups: ``commit_group()``, then ``wait_group_read(n)`` before
    reusing ``src`` or ``wait_group(n)`` before reading the result.
"""

store = PtxOp(
    "tma.store",
    "{acquire}cp.async.bulk.tensor.{rank}d.global.shared::cta.{mode}.bulk_group{cache_hint}"
    " [{desc}, {{{coords}}}], [{src}]{policy};",
    (Descriptor("desc"), SharedArray("src", what="a shared array (the box)", contiguous=True),
     IntTuple("coords", (1, 2, 3, 4, 5)), CacheHint()),
    qualifiers=(ALLOW_OVERRUN,),
    check=lambda desc, src, coords, allow_overrun, **_: _check_store("tma.store", desc, src, coords, allow_overrun),
    debug=_debug_store("tma.store", "coords"),
    fields=lambda cc, **tys: _store_fields(**tys),
    doc_fields={"rank": 2, "acquire": "", "mode": "tile"},
    tlx=("tlx.async_descriptor_store", "cute.nvgpu.cpasync.CopyBulkTensorTileS2GOp",
         "cuda::ptx::cp_async_bulk_tensor (global <- shared::cta)"),
    samples=tuple(Sample(f"tma.store(desc, smem, {tuple(range(r))})", f"UTMASTG.{r}D", {"rank": r}, NO_OPT_IN,
                         isa=_TENSOR, ptx=(_FENCED, f"cp.async.bulk.tensor.{r}d.global.shared::cta.tile.bulk_group"
                                                    f" [%rd, {{{_regs(r)}}}], [%r];"))
                  for r in range(1, 6)) + (
        Sample("tma.store(desc, smem, (0, 0), cache_hint=out[1])", "UTMASTG.2D", {"rank": 2}, NO_OPT_IN, isa=_TENSOR,
               ptx=(_FENCED, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint"
                             " [%rd, {%r, %r}], [%r], %rd;")),
        Sample("tma.store(desc, smem, (0, 0))", "UTMASTG.2D", {"rank": 2}, {"allow_overrun": True}, isa=_TENSOR,
               ptx=(_FENCED, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd, {%r, %r}], [%r];"))),
    doc="""Copy one box from shared memory to a tensor in global memory with TMA.
    """ + _STORE_DOC + """
    Example::

        tile[ty, tx] = value
        fence.proxy_async()
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            tma.store(desc, tile, (x0, y0))
            tma.commit_group()
            tma.wait_group(0)
    """,
    refusals=(Refusal('tma.store(desc, smem, (0, 0), allow_overrun=1)',
                      "tma.store: argument 'allow_overrun' must be a constant, one of False, True", desc=('float32', (8, 32), 'none')),
              Refusal('tma.store(desc, bar, (0, 0))',
                      "tma.store: argument 'src' must have 32-bit elements like the map", desc=('float32', (8, 32), 'none')),),
).intrinsic()

def _check_reduce(desc, src, coords, op, allow_overrun, **_):
    _check_store("tma.reduce", desc, src, coords, allow_overrun)
    if isinstance(desc, TensorMapType) and desc.data_type not in TENSOR_REDUCE_TYPES[op]:
        allowed = ", ".join(t.lower() for t in TENSOR_REDUCE_TYPES[op])
        raise reject("tma.reduce", "op", f"{op!r} cannot reduce a {desc.data_type.lower()} map ({desc}); it takes "
                     f"{allowed}", op)


reduce = PtxOp(
    "tma.reduce",
    "{acquire}cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.{op}.{mode}.bulk_group{cache_hint}"
    " [{desc}, {{{coords}}}], [{src}]{policy};",
    (Descriptor("desc"), SharedArray("src", what="a shared array (the box)", contiguous=True),
     IntTuple("coords", (1, 2, 3, 4, 5)), CacheHint()),
    qualifiers=(Qualifier("op", {o: o for o in TENSOR_REDUCE_TYPES}, REQUIRED), ALLOW_OVERRUN),
    order=("desc", "src", "coords", "op", "cache_hint", "allow_overrun"),
    check=_check_reduce, debug=_debug_store("tma.reduce", "coords"),
    fields=lambda cc, desc, src, coords, **_: _store_fields(desc, coords),
    doc_fields={"rank": 2, "acquire": "", "mode": "tile"},
    tlx=("tlx.async_descriptor_store(store_reduce=...)", "cute.nvgpu.cpasync.CopyReduceBulkTensorTileS2GOp",
         "cuda::ptx::cp_reduce_async_bulk_tensor"),
    samples=tuple(Sample(f"tma.reduce(desc, smem, {tuple(range(r))})", f"UTMAREDG.{r}D", {"rank": r}, NO_OPT_IN,
                         isa=_TENSOR_REDUCE,   # op="add": a required qualifier's first value
                         ptx=(_FENCED, f"cp.reduce.async.bulk.tensor.{r}d.global.shared::cta.add.tile.bulk_group"
                                       f" [%rd, {{{_regs(r)}}}], [%r];"))
                  for r in (1, 2, 5)),
    doc="""Reduce one box of shared memory into a tensor in global memory with TMA: each element of
    the tensor becomes ``op(element, box element)``, atomically per element.  ``op``: ``add``,
    ``min``, ``max``, ``inc``, ``dec``, ``and``, ``or``, ``xor``; the map's data type must be one
    the op takes (PTX ISA: add on u32/s32/u64/f32/f16/bf16, min/max on u32/s32/u64/s64/f16/bf16,
    inc/dec on u32, and/or/xor on u32/s32/u64 — s64 kills the kernel on the H200), checked at
    compile time for a by-value map.
    """ + _STORE_DOC + """
    Example::

        tma.reduce(desc, partial, (x0, y0), "add")
        tma.commit_group()
    """,
    refusals=(Refusal("tma.reduce(desc, smem, (0, 0), op='mul')",
                      "tma.reduce: argument 'op' must be a constant, one of 'add'", desc=('float32', (8, 32), 'none')),),
).intrinsic()


# -- prefetch ------------------------------------------------------------------------------------

prefetch = PtxOp(
    "tma.prefetch",
    "{acquire}cp.async.bulk.prefetch.tensor.{rank}d.L2.global.tile{cache_hint} [{desc}, {{{coords}}}]{policy};",
    (Descriptor("desc"), IntTuple("coords", (1, 2, 3, 4, 5)), CacheHint()),
    check=lambda desc, coords, **_: _check_desc("tma.prefetch", desc, coords, "tiled"),
    fields=lambda cc, desc, coords, **_: _fields(desc, coords),
    doc_fields={"rank": 2, "acquire": ""},
    tlx=("tlx.async_descriptor_prefetch_tensor", "cute.prefetch"),
    samples=tuple(Sample(f"tma.prefetch(desc, {tuple(range(r))})", f"UTMAPF.L2.{r}D", {"rank": r},
                         isa=_TENSOR_PREFETCH,
                         ptx=(_FENCED, f"cp.async.bulk.prefetch.tensor.{r}d.L2.global.tile [%rd, {{{_regs(r)}}}];"))
                  for r in (1, 2, 5)),
    doc="""Prefetch the box at ``coords`` of a tiled map into L2 (no shared memory, no barrier).

    Example::

        tma.prefetch(desc, (x0 + 64, y0))       # the next tile
    """,
    refusals=(Refusal('tma.prefetch(desc, (0,))',
                      "tma.prefetch: argument 'coords' must have 2 entries", desc=('float32', (8, 32), 'none')),),
).intrinsic()


def _check_prefetch_im2col(desc, coords, offsets, **_):
    _check_desc("tma.prefetch_im2col", desc, coords, "im2col")
    _check_offsets("tma.prefetch_im2col", coords, offsets)


prefetch_im2col = PtxOp(
    "tma.prefetch_im2col",
    "{acquire}cp.async.bulk.prefetch.tensor.{rank}d.L2.global.im2col{cache_hint} [{desc}, {{{coords}}}],"
    " {{{offsets}}}{policy};",
    (Descriptor("desc"), IntTuple("coords", (3, 4, 5)), _offsets(), CacheHint()),
    check=_check_prefetch_im2col,
    fields=lambda cc, desc, coords, **_: _fields(desc, coords),
    doc_fields={"rank": 4, "acquire": "", "coords": "c, w, h, n", "offsets": "ow, oh"},
    tlx=("tlx.async_descriptor_prefetch_tensor (im2col)",),
    samples=tuple(Sample(f"tma.prefetch_im2col(desc, {tuple(range(r))}, {tuple(range(1, r - 1))})",
                         f"UTMAPF.L2.{r}D.IM2COL", {"rank": r}, isa=_TENSOR_PREFETCH,
                         ptx=(_FENCED, f"cp.async.bulk.prefetch.tensor.{r}d.L2.global.im2col [%rd, {{{_regs(r)}}}],"
                                       f" {{{_regs(r - 2, '%rs')}}};"))
                  for r in (3, 5)),
    doc="""Prefetch the pixels an im2col load at ``coords`` / ``offsets`` would gather into L2.

    Example::

        tma.prefetch_im2col(desc, (c0, w0, h0, n0), (dw, dh))
    """,
    refusals=(Refusal('tma.prefetch_im2col(desc, (0, 1, 2), (1,))',
                      "tma.prefetch_im2col: argument 'desc' must be an im2col map", desc=('float32', (8, 32), 'none')),),
).intrinsic()

prefetch_descriptor = PtxOp(
    "tma.prefetch_descriptor", "prefetch.tensormap [{desc}];", (Descriptor("desc"),),
    tlx=("tl.prefetch(..., tensormap=True)", "cute.nvgpu.cpasync.prefetch_descriptor",
         "cuda::ptx::prefetch_tensormap"),
    samples=(Sample("tma.prefetch_descriptor(desc)", "UTMACCTL.PF", ptx="prefetch.tensormap [%rd];",
                    isa="9.7.9.15 prefetch, prefetchu"),),
    doc="""Prefetch the descriptor itself (its 128 bytes) into the cache TMA reads it from; issue it
    early in the kernel, before the first copy.

    Example::

        if cuda.threadIdx.x == 0:
            tma.prefetch_descriptor(desc)
    """,
    refusals=(Refusal('tma.prefetch_descriptor(smem)',
                      "tma.prefetch_descriptor: argument 'desc' must be"),),
).intrinsic()


# -- sm_100: four rows at once -------------------------------------------------------------------

def _check_four_rows(op, desc, tile_arg, tile, allow_overrun=False):
    _check_edge(op, desc, allow_overrun)
    if not isinstance(desc, TensorMapType):
        check_arch(f"{op} (descriptor in global memory)", GLOBAL_DESCRIPTOR)
        return
    if desc.mode != "tiled" or desc.rank != 2 or desc.box[0] != 1:
        raise reject(op, "desc", "must be a tiled 2-D map whose box is one row (box=(1, columns))", desc)
    _check_map(op, desc, tile_arg, tile, (None, None), "tiled")


_FOUR_ROWS_DOC = """
    ``desc``: a tiled 2-D map whose box is one row, ``(1, columns)`` (``numba_tma.descriptors.
    check_gather4`` checks a descriptor on the host).  ``col``: the first column; ``rows``: four row
    indices (any order, any rows).
"""

gather4 = PtxOp(
    "tma.gather4",
    "{acquire}cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes"
    " [{dst}], [{desc}, {{{col}, {rows}}}], [{bar}];",
    (Descriptor("desc"), SharedArray("dst", what="a shared array (four rows)", contiguous=True), Int("col", signed=True),
     IntTuple("rows", (4,)), barrier()),
    need=SM100_ARCH,
    check=lambda desc, dst, **_: _check_four_rows("tma.gather4", desc, "dst", dst),
    fields=lambda cc, **tys: _acquire(**tys),
    doc_fields={"acquire": "", "rows": "r0, r1, r2, r3"},
    tlx=("tl descriptor.gather", "cuda::ptx::cp_async_bulk_tensor_tile_gather4"),
    samples=(Sample("tma.gather4(desc, smem, 0, (0, 5, 9, 2), bar)", "UTMALDG.2D.GATHER4", isa=_TENSOR,
                    ptx=(_FENCED, "cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx"
                                  "::bytes [%r], [%rd, {%r, %r, %r, %r, %r}], [%r];")),),
    doc="""Load four rows of a 2-D tensor (one box-width each) into shared memory, one after the other.
    """ + _FOUR_ROWS_DOC + """
    Example::

        mbarrier.arrive_expect_tx(bars, 4 * desc.box_bytes)
        tma.gather4(desc, rows_tile, col0, (r0, r1, r2, r3), bars)
    """,
    refusals=(Refusal('tma.gather4(desc, smem, 0, (0, 5, 9), bar)',
                      "tma.gather4: argument 'rows' must have 4 entries"),),
).intrinsic()

scatter4 = PtxOp(
    "tma.scatter4",
    "{acquire}cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [{desc}, {{{col}, {rows}}}],"
    " [{src}];",
    (Descriptor("desc"), SharedArray("src", what="a shared array (four rows)", contiguous=True), Int("col", signed=True),
     IntTuple("rows", (4,))),
    qualifiers=(ALLOW_OVERRUN,), need=SM100_ARCH,
    check=lambda desc, src, allow_overrun, **_: _check_four_rows("tma.scatter4", desc, "src", src, allow_overrun),
    debug=_debug_store("tma.scatter4", "col"),
    fields=lambda cc, **tys: _acquire(**tys),
    doc_fields={"acquire": "", "rows": "r0, r1, r2, r3"},
    tlx=("tl descriptor.scatter", "cuda::ptx::cp_async_bulk_tensor_tile_scatter4"),
    samples=(Sample("tma.scatter4(desc, smem, 0, (0, 5, 9, 2))", "UTMASTG.2D.SCATTER4", only=NO_OPT_IN, isa=_TENSOR,
                    ptx=(_FENCED, "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group"
                                  " [%rd, {%r, %r, %r, %r, %r}], [%r];")),),
    doc="""Store four rows of shared memory to four rows of a 2-D tensor; completes through the bulk
    async-groups.  The 16-byte edge and its opt-in (``allow_overrun``) are as for :func:`store`
    (assumed: the H200 has no scatter4 to measure it on).
    """ + _FOUR_ROWS_DOC + """
    Example::

        tma.scatter4(desc, rows_tile, col0, (r0, r1, r2, r3))
        tma.commit_group()
    """,
    refusals=(Refusal('tma.scatter4(desc, smem, 0, (0, 5, 9, 2, 1))',
                      "tma.scatter4: argument 'rows' must have 4 entries"),),
).intrinsic()

# -- swizzled shared-memory layouts ---------------------------------------------------------------

def _check_swizzled_index(desc, r, c, **_):
    if not isinstance(desc, TensorMapType):
        raise reject("tma.swizzled_index", "desc", "must be a numba_tma.TensorMap (its swizzle and box are "
                     "compile-time facts of its type)", desc)
    if desc.swizzle not in SWIZZLE_BYTES or desc.mode != "tiled" or desc.element_bits < 8:
        raise reject("tma.swizzled_index", "desc", "must be a tiled map of 8-bit or wider elements with swizzle "
                     "none, 32B, 64B or 128B", desc)
    # r (unsigned) may run past one box: a tile of several boxes stacked row after row keeps the
    # pattern (a box spans whole swizzle repeats); c names a column of the box's rows, nothing else
    column = literal(c)
    if isinstance(column, int) and not 0 <= column < desc.box[-1]:
        raise reject("tma.swizzled_index", "c", f"must be 0 to {desc.box[-1] - 1} (the box's innermost extent, "
                     f"of {desc})", column)


def _swizzle_fields(cc, desc, **_):
    size = desc.element_bits // 8
    span = SWIZZLE_BYTES[desc.swizzle]
    return {"row": smem_row_bytes(desc.box[-1] * size, span) // size, "shift": size.bit_length() - 1,
            "mask": SWIZZLE_ROW_MASK[span]}


_ARITHMETIC = "9.7.1.4 mad; 9.7.8.8 shl; 9.7.8.9 shr; 9.7.8.1 and; 9.7.8.3 xor"

swizzled_index = PtxOp(
    "tma.swizzled_index",
    "{{\n .reg .b32 o, t;\n mad.lo.u32 o, {r}, {row}, {c};\n shl.b32 o, o, {shift};\n shr.u32 t, o, 7;\n"
    " and.b32 t, t, {mask};\n shl.b32 t, t, 4;\n xor.b32 o, o, t;\n shr.u32 {out}, o, {shift};\n}}",
    (Descriptor("desc"), Int("r"), Int("c")),
    need=Requirement((8, 0), (7, 0)), returns=types.uint32, memory=False,
    check=_check_swizzled_index, fields=_swizzle_fields,
    doc_fields={"row": "span / element bytes (box[-1] without swizzle)", "shift": "log2(element bytes)",
                "mask": "0|1|3|7"},
    tlx=("cute.make_swizzle / Swizzle<B, 4, 3>",),
    samples=(Sample("out[0] = tma.swizzled_index(desc, out[1], out[2])", "LOP3.LUT",   # 2-byte elements, 128B
                    {"row": 64, "shift": 1, "mask": 7}, desc=("uint16", (64, 64), "128B"), isa=_ARITHMETIC,
                    ptx=("mad.lo.u32 o, %r, 64, %r;", "shl.b32 o, o, 1;", "shr.u32 t, o, 7;", "and.b32 t, t, 7;",
                         "shl.b32 t, t, 4;", "xor.b32 o, o, t;", "shr.u32 %r, o, 1;")),
             Sample("out[0] = tma.swizzled_index(desc, out[1], out[2])", "LOP3.LUT",   # 4-byte elements, 32B
                    {"row": 8, "shift": 2, "mask": 1}, desc=("float32", (16, 8), "32B"), isa=_ARITHMETIC,
                    ptx=("mad.lo.u32 o, %r, 8, %r;", "shl.b32 o, o, 2;", "shr.u32 t, o, 7;", "and.b32 t, t, 1;",
                         "shl.b32 t, t, 4;", "xor.b32 o, o, t;", "shr.u32 %r, o, 2;")),
             Sample("out[0] = tma.swizzled_index(desc, out[1], out[2])", "LOP3.LUT",   # 16-byte rows, 128 apart
                    {"row": 64, "shift": 1, "mask": 7}, desc=("uint16", (8, 8), "128B"), isa=_ARITHMETIC,
                    ptx=("mad.lo.u32 o, %r, 64, %r;", "shl.b32 o, o, 1;", "shr.u32 t, o, 7;", "and.b32 t, t, 7;",
                         "shl.b32 t, t, 4;", "xor.b32 o, o, t;", "shr.u32 %r, o, 1;"))),
    doc="""Where element ``(r, c)`` of a box lands in the shared-memory tile TMA fills (or reads, for a
    store) with the map's swizzle: the flat element index into the tile.  ``c`` is the innermost
    index (0 to ``box[-1] - 1``), ``r`` the outer indices flattened (``r = i0`` for a 2-D box; for
    3-D ``r = i0 * box[1] + i1``).  With a swizzle, rows lie the swizzle span apart (32, 64 or 128
    bytes, even when the box row is narrower: measured on the H200) and the 16-byte chunk of each
    byte offset is XORed with bits 7-9 of that offset (32B: one bit, 64B: two, 128B: three; 128B
    swizzle tiles must be 1024-byte aligned, 64B 512, 32B 256); without swizzle it is
    ``r * box[-1] + c``.  Compiles to integer
    arithmetic that ptxas folds for constant indices.

    Example::

        tile = cuda.shared.array(64 * 64, numba.uint16, alignment=1024)    # bf16, 128B swizzle
        v = tile[tma.swizzled_index(desc, r, c)]
    """,
    refusals=(Refusal('out[0] = tma.swizzled_index(desc, 0, 64)',
                      "tma.swizzled_index: argument 'c' must be 0 to 63", desc=('uint16', (64, 64), '128B')),
              Refusal('out[0] = tma.swizzled_index(desc, 0, 0)',
                      "tma.swizzled_index: argument 'desc' must be a numba_tma.TensorMap"),),
).intrinsic()

ALIASES = ("commit_group", "wait_group", "wait_group_read")   # the bulk async-groups, as numba_tma.bulk.*
__all__ = exported("tma") + list(ALIASES)
