"""AMD async-memory and cross-lane ops (TLX names) for Numba kernels, compiled with llvmlite's
AMDGPU back end for gfx942, gfx950 and gfx1250.
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

from numba_tma.errors import OpArgumentError as AMDArgumentError
from numba_tma.errors import OpError as AMDError
from numba_tma.errors import ArchError as LLVMVersionError
from numba_tma.errors import ArchError as UnsupportedArchError
from numba_tma.amd.kernel import CompiledKernel as CompiledKernel

DeviceArray: TypeAlias = Any   # a device array in global memory (a kernel argument)
LDSArray: TypeAlias = Any   # an AMD LDS array (numba_tma.amd.lds_array, or a slice of one)
TensorDescriptor: TypeAlias = Any   # an AMD TDM descriptor (numba_tma.amd.make_tensor_descriptor)

ARCHS: dict

FEATURES: dict

SCHED_CLASSES: dict

def compile(pyfunc, signature, arch, name=None, max_workgroup_size=None):
    """Compile the Python kernel *pyfunc* for *arch* (``gfx942``, ``gfx950``, ``gfx1250``).

    *signature* gives the argument types (e.g. ``"void(float32[::1], float32[::1])"`` or
    a tuple of Numba types); kernels return nothing.  Returns a :class:`CompiledKernel`
    with ``.asm``, ``.object`` (relocatable ELF) and ``.hsaco()`` (needs ld.lld).
    Ops that *arch* lacks raise :class:`UnsupportedArchError` here, before LLVM runs, and
    so does an unknown arch name; wrong arguments (of ``compile`` or of an op) raise
    :class:`AMDArgumentError`.

    *max_workgroup_size* (an int 1..1024, or None for LLVM's default of 1..1024) promises
    the launch never uses more lanes per workgroup: the kernel gets
    ``"amdgpu-flat-work-group-size"="1,N"``.  LLVM uses it for register budgets.  With N
    at most the wave size (64 on gfx942/gfx950, 32 on gfx1250) a workgroup is one wave:
    :func:`s_barrier` emits only its LDS wait (LLVM would drop the barrier anyway, and
    the convergent barrier would keep it from unrolling loops).  Launching more lanes
    than N is undefined.

    On gfx942/gfx950 the ``vmcnt`` of each ``async_load_wait_group`` is counted in the
    assembly, the kernel's other vector-memory instructions included, per unrolled copy
    (see :mod:`numba_tma.amd.vmcnt`); this takes two code generations.
    """


def compile_ir(module, arch, keep=()):
    """Verify, optimize (O3) and compile *module* (llvmlite.ir.Module or IR text).

    Every defined function not named in *keep* (a tuple of function names) becomes
    internal, so it is inlined into the kernels in *keep* and dropped.
    """


def find_ld_lld():
    """Path of an ld.lld that can link AMDGPU objects, or None.
    """


def link_hsaco(obj):
    """``ld.lld -shared`` the relocatable *obj* into an HSA code object (bytes).
    """


def quad_perm(l0, l1, l2, l3):
    """The DPP control ``quad_perm:[l0,l1,l2,l3]``: lane k of each group of 4 reads lane
    ``lk`` of the group (each 0..3).
    """


def swizzle_quad_perm(l0, l1, l2, l3):
    """``ds_swizzle`` pattern ``swizzle(QUAD_PERM,l0,l1,l2,l3)``: lane k of each group of
    4 reads lane ``lk`` of the group.
    """


def swizzle_bitmask(and_mask, or_mask, xor_mask):
    """``ds_swizzle`` bitmask pattern: within each group of 32 lanes, lane i reads lane
    ``((i & and_mask) | or_mask) ^ xor_mask`` (masks 0..31).
    """


def amd_sched_barrier(mask: int) -> None:
    """``llvm.amdgcn.sched.barrier(mask)``: let only the instruction classes in *mask*
    (see ``SCHED_CLASSES``) be scheduled across this point.  No ISA encoding; verbose
    assembly shows ``; sched_barrier mask(0x...)``.  All archs.

    Example::

        amd.amd_sched_barrier(0)    # nothing crosses

    LLVM::

        llvm.amdgcn.sched.barrier

    Requires gfx942, gfx950, gfx1250; LLVM 15+.

    Also known as: ``tlx.amd_sched_barrier``.
    """


def async_amd_descriptor_load(desc: TensorDescriptor, result: LDSArray, offsets: tuple[int, ...] | None = None, pred: bool | None = None, clamp_bounds: bool = True) -> None:
    """Copy the block at *desc* (moved by *offsets*) into the LDS array *result*
    (``.d2`` for rank <= 2); gfx1250 only.  The calling wave issues the whole block; wait with
    :func:`async_amd_descriptor_wait`.  *offsets* and *pred* are wave-uniform: a
    lane-varying value is taken from the first active lane (``v_readfirstlane``).

    Example::

        amd.async_amd_descriptor_load(desc, tile, offsets=(row, 0))

    LLVM::

        llvm.amdgcn.tensor.load.to.lds
        llvm.amdgcn.tensor.load.to.lds.d2
        -> tensor_load_to_lds

    Requires gfx1250; LLVM 22..22.

    Also known as: ``tlx.async_amd_descriptor_load``.
    """


def async_amd_descriptor_load_fused(members: tuple[tuple[TensorDescriptor, LDSArray, int], ...], cache_modifier: str = '') -> None:
    """One ``tensor_load_to_lds`` for 2-4 ``(desc, dst, warp_used_hint)`` members.

    Each wave takes the member whose hint has its wave id and loads its share of that
    block (split along the outermost dim among the hint's waves).  Hints: constant,
    non-empty, disjoint, axis-aligned.  gfx1250 only.

    Example::

        amd.async_amd_descriptor_load_fused(((da, ta, 0x0F), (db, tb, 0xF0)))

    LLVM::

        llvm.amdgcn.tensor.load.to.lds
        llvm.amdgcn.tensor.load.to.lds.d2
        -> tensor_load_to_lds

    Requires gfx1250; LLVM 22..22.

    Also known as: ``tlx.async_amd_descriptor_load_fused``.
    """


def async_amd_descriptor_store(desc: TensorDescriptor, source: LDSArray, offsets: tuple[int, ...] | None = None, clamp_bounds: bool = True) -> None:
    """Copy the LDS array *source* to the block at *desc* (moved by *offsets*);
    gfx1250 only.

    Example::

        amd.async_amd_descriptor_store(out_desc, tile, offsets=(row, 0))

    LLVM::

        llvm.amdgcn.tensor.store.from.lds
        llvm.amdgcn.tensor.store.from.lds.d2
        -> tensor_store_from_lds

    Requires gfx1250; LLVM 22..22.

    Also known as: ``tlx.async_amd_descriptor_store``.
    """


def async_amd_descriptor_wait(pendings: int = 0) -> None:
    """Wait until at most *pendings* tensor loads/stores of this wave are in flight;
    gfx1250 only.  LLVM moves no LDS access across the wait, nor across a TDM op
    (docs/amd.md, LDS ordering).

    Example::

        amd.async_amd_descriptor_wait(0)

    LLVM::

        llvm.amdgcn.s.wait.tensorcnt
        -> s_wait_tensorcnt

    Requires gfx1250; LLVM 22+.

    Also known as: ``tlx.async_amd_descriptor_wait``.
    """


def async_load(src: DeviceArray, result: LDSArray, mask: bool | None = None, other: int | float | None = None, cache_modifier: str = '', offsets: int = 0, width: int = 4) -> None:
    """Per-lane global -> LDS copy of ``src[offsets]`` (*width* bytes) into *result*.

    TLX's ``async_load(src, result, mask, other, cache_modifier)``, with AMD's two trailing
    keywords: *offsets*, this lane's element offset into *src* (an integer, default 0: pass it
    rather than slicing *src* per lane, which costs a bounds clamp), and *width*.

    gfx942/gfx950: ``global_load_lds_dword`` (``_dwordx4`` for width 16, gfx950 only); gfx1250:
    ``llvm.amdgcn.global.load.async.to.lds.b{8,32,64,128}`` -> ``global_load_async_to_lds_bN``
    (width 1, 4, 8 or 16).  This lane's bytes land at byte ``lane * width``
    of *result* (uniform across the wave; on gfx942/gfx950 it goes to ``M0``, see
    :func:`buffer_load_to_local`).  Masked lanes copy nothing; with *other*
    they store it instead.  A masked ``async_load`` sits behind a branch that a fully
    masked wave skips, so the waits of the kernel become ``vmcnt(0)`` /
    ``s_wait_asynccnt 0``; to keep a pipeline's waits, clamp the offsets instead.

    Example::

        amd.async_load(x, tile[w * 64:], offsets=base + lane)
        amd.async_load_commit_group()

    LLVM::

        llvm.amdgcn.global.load.lds
        llvm.amdgcn.global.load.async.to.lds.b32
        -> global_load_lds_dword, global_load_lds_dwordx4, global_load_async_to_lds_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.

    Also known as: ``tlx.async_load``.
    """


def async_load_commit_group() -> None:
    """Close the current group of LDS-DMA loads (``buffer_load_to_local``/``async_load``).

    LLVM 22 has no ``asyncmark``, so this emits nothing: it records how many DMA
    instructions the group holds for :func:`async_load_wait_group`.  Commit in the
    same straight-line code as the group's DMA ops (not in a branch or loop of its
    own), or the group counts as empty.  All archs.

    Example::

        amd.async_load_commit_group()

    LLVM::

        (no LLVM intrinsic: integer IR only)

    Requires gfx942, gfx950, gfx1250; LLVM 22+.

    Also known as: ``tlx.async_load_commit_group``.
    """


def async_load_wait_group(pendings: int) -> None:
    """Wait until at most *pendings* committed groups are still loading.

    gfx942/gfx950: ``s_waitcnt vmcnt(K)``; gfx1250: ``s_wait_asynccnt K``, where
    K = *pendings* x the smallest group of the kernel (DMA instructions certain to
    issue; 0 if any group is uncertain; on gfx942/gfx950 :func:`numba_tma.amd.compile` counts
    the kernel's other vector-memory instructions too, :mod:`numba_tma.amd.vmcnt`).
    *pendings*: constant 0..63.  LLVM moves no LDS access across the wait, nor across a DMA op
    (docs/amd.md, LDS ordering).

    Example::

        amd.async_load_wait_group(2)    # 3 stages, one DMA per group: s_waitcnt vmcnt(2)

    LLVM::

        llvm.amdgcn.s.waitcnt
        llvm.amdgcn.s.wait.asynccnt
        -> s_waitcnt vmcnt, s_wait_asynccnt

    Requires gfx942, gfx950, gfx1250; LLVM 22+.

    Also known as: ``tlx.async_load_wait_group``.
    """


def barrier_arrive(bar: LDSArray, arrive_count: int = 1) -> None:
    """Arrive on the LDS barrier word ``bar[0]`` (an int64 :func:`lds_array`), once per
    wave (lane 0 of the wave does it).  gfx1250 only; *arrive_count* must be 1 (as TLX on AMD).

    Example::

        amd.barrier_arrive(bar)

    LLVM::

        llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64
        -> ds_atomic_barrier_arrive_rtn_b64

    Requires gfx1250; LLVM 22+.

    Also known as: ``tlx.barrier_arrive``.
    """


def buffer_load_to_local(dest: LDSArray, ptr: DeviceArray, offsets: int, mask: bool | None = None, other: int | float | None = None, cache_modifier: str = '', width: int = 4) -> None:
    """Buffer load straight into LDS.

    This lane reads *width* bytes (4; 4 or 16 on gfx950) at element *offsets* of *ptr* (a global
    array) into ``dest`` (an LDS array) at byte ``lane * width``; *dest* must be the same for the
    whole wave (it goes to ``M0``: compute a wave's region from constants, loop counters and
    :func:`~numba_tma.amd.wave_id`, so ``M0`` is set on the scalar unit; from
    ``workitem_id_x() // 64`` each DMA costs a ``v_readfirstlane``).  Lanes where
    *mask* is False get zeros (branch-free: the DMA always issues), or *other* when
    given (a non-zero *other* puts the DMA behind a branch and makes the waits of the
    kernel ``vmcnt(0)``).  The byte offset ``offsets * itemsize`` is a 32-bit voffset:
    runtime offsets are truncated to 32 bits, constants must fit.  Count it into a
    group with :func:`async_load_commit_group`.

    Example::

        amd.buffer_load_to_local(tile[w * 64:], x, base + lane, mask=lane < n)

    LLVM::

        llvm.amdgcn.make.buffer.rsrc.p8.p1
        llvm.amdgcn.raw.ptr.buffer.load.lds
        -> buffer_load_dword ... offen lds, buffer_load_dwordx4 ... offen lds

    Requires gfx942, gfx950; LLVM 22+.

    Also known as: ``tlx.buffer_load_to_local``.
    """


def dpp(value: int | float, ctrl: str | int, row_mask: int = 15, bank_mask: int = 15, bound_ctrl: bool = False, old: int | float | None = None) -> int | float:
    """Move *value* between lanes with a DPP control: this lane gets the value of the
    lane *ctrl* names, within its row of 16 lanes (or the wave, for wave shifts).

    ISA: ``v_mov_b32_dpp``; LLVM folds it into the VALU op that uses the result where it can
    (``v_add_f32_dpp``).  *ctrl*: constant, in the ISA's syntax or as its encoding:

    * all archs: ``quad_perm:[a,b,c,d]``, ``row_shl:n``, ``row_shr:n``, ``row_ror:n``
      (n 1..15), ``row_mirror``, ``row_half_mirror``;
    * gfx942, gfx950 (GFX9, wave64): ``wave_shl:1``, ``wave_rol:1``, ``wave_shr:1``,
      ``wave_ror:1``, ``row_bcast:15``, ``row_bcast:31``, ``row_newbcast:n`` (1..15);
    * gfx1250 (GFX10+ DPP16, wave32): ``row_share:n``, ``row_xmask:n`` (0..15).

    A lane of a row outside *row_mask* or a bank outside *bank_mask* (4-bit masks) is not
    written and keeps *old* (default: its own *value*); so is a lane whose source is
    invalid (outside the row for ``row_shl``/``row_shr``; rows 0 and 1 for
    ``row_bcast:31``), unless *bound_ctrl*, which gives it 0.  *value*: int32, uint32 or
    float32.  :mod:`numba_tma.amd.lanes_model` models it lane by lane.

    Example::

        left = amd.dpp(x, "row_shr:1", bound_ctrl=True)    # lane 0 of a row gets 0

    LLVM::

        llvm.amdgcn.update.dpp
        -> v_mov_b32_dpp

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def dpp8(value: int | float, selects: tuple[int, ...]) -> int | float:
    """This lane gets *value* of lane ``(lane & ~7) | selects[lane & 7]``: a permutation
    within each group of 8 lanes.

    ISA: ``v_mov_b32_dpp vdst, vsrc dpp8:[s0,...,s7]``.  gfx1250 only (DPP8 is a GFX10+
    encoding).  *selects*: a constant tuple of 8 lanes 0..7.  *value*: int32, uint32 or
    float32.

    Example::

        r = amd.dpp8(x, (7, 6, 5, 4, 3, 2, 1, 0))    # reverse each 8 lanes

    LLVM::

        llvm.amdgcn.mov.dpp8
        -> v_mov_b32_dpp dpp8

    Requires gfx1250; LLVM 22+.
    """


def ds_bpermute(value: int | float, src_lane: int) -> int | float:
    """Gather: this lane gets *value* of lane *src_lane* (modulo the wave size).

    ISA: ``ds_bpermute_b32``, which takes the byte address ``4 * src_lane`` (emitted here) and
    reads no LDS memory; it waits on ``lgkmcnt``.  All archs.  *value*: int32, uint32 or
    float32; *src_lane*: an integer, per lane.

    Example::

        right = amd.ds_bpermute(x, lane + 1)    # lane 63 reads lane 0

    LLVM::

        llvm.amdgcn.ds.bpermute
        -> ds_bpermute_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def ds_permute(value: int | float, dst_lane: int) -> int | float:
    """Scatter: this lane's *value* goes to lane *dst_lane* (modulo the wave size); when
    several lanes send to one lane the highest-numbered sender wins (the ISA's
    pseudocode; its prose leaves it to "standard LDS arbitration rules"), and a lane that
    receives nothing gets 0.

    ISA: ``ds_permute_b32``, byte address ``4 * dst_lane``; no LDS memory is touched.  All
    archs.

    Example::

        y = amd.ds_permute(x, 63 - lane)    # reverse the wave

    LLVM::

        llvm.amdgcn.ds.permute
        -> ds_permute_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def ds_swizzle(value: int | float, pattern: int | str) -> int | float:
    """This lane gets *value* of the lane that the constant *pattern* names.

    ISA: ``ds_swizzle_b32 vdst, vsrc offset:pattern``; no LDS memory is touched; waits on
    ``lgkmcnt``.  All archs.  *pattern*: a 16-bit offset in quad-perm mode
    (``swizzle_quad_perm(l0, l1, l2, l3)``: lane k of each 4 reads lane lk) or bitmask mode
    (``swizzle_bitmask(and_mask, or_mask, xor_mask)``: in each 32 lanes, lane i reads
    ``((i & and) | or) ^ xor``), or LLVM's text for one, e.g. ``"swizzle(SWAP,16)"``,
    ``"swizzle(BROADCAST,8,0)"``, ``"swizzle(REVERSE,4)"``, ``'swizzle(BITMASK_PERM,"01pi0")'``.
    The FFT and rotate modes are refused.

    Example::

        other_half = amd.ds_swizzle(x, "swizzle(SWAP,16)")

    LLVM::

        llvm.amdgcn.ds.swizzle
        -> ds_swizzle_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def lane_id() -> int:
    """This lane's index within its wave (0..63 on gfx942/gfx950, 0..31 on gfx1250).

    ISA: ``v_mbcnt_lo_u32_b32`` / ``v_mbcnt_hi_u32_b32`` (lo only on wave32).  All archs.

    Example::

        partner = amd.ds_bpermute(x, amd.lane_id() ^ 1)

    LLVM::

        llvm.amdgcn.mbcnt.lo
        llvm.amdgcn.mbcnt.hi
        -> v_mbcnt_lo_u32_b32, v_mbcnt_hi_u32_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def lds_array(shape: int | tuple[int, ...], dtype: type) -> LDSArray:
    """A C-contiguous array in LDS (``addrspace(3)``), like ``cuda.shared.array``.

    *shape*: a positive int or a tuple of them, constants.  *dtype*: a scalar dtype.
    Arrays above the largest LDS of any arch (320 KiB) are refused here; the arch's
    own limit is checked by :func:`numba_tma.amd.compile`.  Its type is an
    :class:`~numba_tma.amd.lds.LDSArray`, which its slices and views keep, so the ops
    check that their LDS arguments are in LDS and large enough.  It emits no instruction:
    an ``addrspace(3)`` global that the kernel's LDS size counts.

    Example::

        tile = amd.lds_array(1024, numba.float32)

    LLVM::

        (no LLVM intrinsic: integer IR only)

    Requires gfx942, gfx950, gfx1250; LLVM 15+.
    """


def make_tensor_descriptor(array: DeviceArray, block_shape: tuple[int, ...], pad_interval: int = 0, pad_amount: int = 0) -> TensorDescriptor:
    """TDM descriptor (groups 0-3) of a C-contiguous global *array*, copied in blocks of
    *block_shape* (constant tuple).  *pad_interval*/*pad_amount* (elements) pad the LDS
    copy.  Pure SALU integer code, no instruction of its own; gfx1250 only.

    Example::

        desc = amd.make_tensor_descriptor(x, (64, 64))

    LLVM::

        (no LLVM intrinsic: integer IR only)

    Requires gfx1250; LLVM 22..22.

    Also known as: ``tlx.make_tensor_descriptor``.
    """


def permlane16(value: int | float, sel_lo: int, sel_hi: int, fi: bool = False, bound_ctrl: bool = False) -> int | float:
    """Lane k of each row of 16 gets *value* of lane ``sel[k]`` of the same row, ``sel[k]``
    being nibble k of the 64-bit ``sel_hi:sel_lo`` (lanes 0-7 from *sel_lo*).

    ISA: ``v_permlane16_b32 vdst, vsrc, sel_lo, sel_hi``.  gfx1250 only.  *sel_lo*, *sel_hi*:
    wave-uniform 32-bit integers (constants are checked).  *fi* (fetch inactive) and
    *bound_ctrl*: constant bools, as the ISA's.

    Example::

        r = amd.permlane16(x, 0x89ABCDEF, 0x01234567)    # reverse each row: lane 0 reads 15

    LLVM::

        llvm.amdgcn.permlane16
        -> v_permlane16_b32

    Requires gfx1250; LLVM 22+.
    """


def permlane16_swap(a: int | float, b: int | float) -> tuple[int | float, int | float]:
    """Swap rows between two values: the odd rows (lanes 16-31, 48-63) of *a* trade places with
    the even rows (lanes 0-15, 32-47) of *b*; returns the new ``(a, b)``.

    ISA: ``v_permlane16_swap_b32``.  gfx950, gfx1250.

    Example::

        lo, hi = amd.permlane16_swap(x, x)    # lo: rows 0,0,2,2 of x; hi: rows 1,1,3,3

    LLVM::

        llvm.amdgcn.permlane16.swap
        -> v_permlane16_swap_b32

    Requires gfx950, gfx1250; LLVM 22+.
    """


def permlane32_swap(a: int | float, b: int | float) -> tuple[int | float, int | float]:
    """Swap half waves between two values: lanes 32-63 of *a* trade places with lanes 0-31 of
    *b*; returns the new ``(a, b)``.

    ISA: ``v_permlane32_swap_b32``.  gfx950 only (wave64).

    Example::

        lo, hi = amd.permlane32_swap(x, x)    # lo: lanes 0-31 twice; hi: 32-63 twice

    LLVM::

        llvm.amdgcn.permlane32.swap
        -> v_permlane32_swap_b32

    Requires gfx950; LLVM 22+.
    """


def permlanex16(value: int | float, sel_lo: int, sel_hi: int, fi: bool = False, bound_ctrl: bool = False) -> int | float:
    """As :func:`permlane16`, but lane k of each row reads lane ``sel[k]`` of the *other* row of
    its pair (row 0 reads row 1, row 1 reads row 0).

    ISA: ``v_permlanex16_b32``.  gfx1250 only.

    Example::

        other = amd.permlanex16(x, 0x76543210, 0xFEDCBA98)    # lane i gets lane i ^ 16

    LLVM::

        llvm.amdgcn.permlanex16
        -> v_permlanex16_b32

    Requires gfx1250; LLVM 22+.
    """


def readfirstlane(value: int | float) -> int | float:
    """The value of the wave's lowest active lane, in every lane: wave-uniform.

    ISA: ``v_readfirstlane_b32`` (two for a 64-bit value).  All archs.  *value*: int32,
    uint32, float32 or their 64-bit types.  The result is in an SGPR, so LLVM treats what is
    computed from it as uniform: an LDS address passed through it sets ``M0`` with a plain
    ``s_mov`` instead of a ``v_readfirstlane`` before each LDS DMA (docs/amd.md, M0 once per
    wave).

    Example::

        base = amd.readfirstlane(numba.int32(slot * 256))

    LLVM::

        llvm.amdgcn.readfirstlane
        -> v_readfirstlane_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def readlane(value: int | float, lane: int) -> int | float:
    """The value of lane *lane* of the wave, in every lane: wave-uniform.

    ISA: ``v_readlane_b32``.  All archs.  *lane*: a constant below the wave size (64 on
    gfx942/gfx950, 32 on gfx1250; checked), or a wave-uniform integer (a lane-varying one is
    taken from the first active lane).

    Example::

        total = amd.readlane(partial, 63)

    LLVM::

        llvm.amdgcn.readlane
        -> v_readlane_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def row_reduce(value: int | float, op: str, width: int = 16) -> int | float:
    """Reduce *value* over each aligned group of *width* lanes (lanes ``g*width`` to
    ``g*width + width - 1``); every lane of the group gets the group's result.

    *op*: ``"sum"``, ``"max"`` or ``"min"`` (constant); *value*: int32, uint32 (unsigned
    max/min) or float32 (``max``/``min`` are IEEE maxNum/minNum: a NaN is ignored unless
    all are NaN; a float sum's rounding follows the pairing order below, and every lane of
    a group gets the same bits).  *width*: constant 2, 4, 8, 16, 32, or 64 on gfx942 and
    gfx950 (the whole wave: see :func:`wave_reduce`).

    ISA, per halving of the group: one DPP op folded into the VALU op
    (``v_add_f32_dpp v, v, v row_mirror``, then ``row_half_mirror``,
    ``quad_perm:[1,0,3,2]``, ``quad_perm:[2,3,0,1]``: 4 instructions for 16 lanes, where
    Triton's lowering of ``tl.sum`` spends 5); width 32 adds ``ds_swizzle`` SWAP 16
    (gfx942), ``v_permlane16_swap_b32`` (gfx950) or ``v_permlanex16_b32`` (gfx1250);
    width 64 adds ``row_bcast:15``, ``row_bcast:31`` and ``v_readlane_b32`` 63.  All
    archs.  The plan is :func:`numba_tma.amd.lanes.reduction_plan`.

    Example::

        s = amd.row_reduce(x, "sum", 16)    # the sum of each row of 16 lanes

    LLVM::

        llvm.amdgcn.update.dpp
        -> v_add_f32_dpp, v_max_f32_dpp

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def s_barrier() -> None:
    """Workgroup barrier that orders LDS: this wave's LDS reads and writes complete
    before any wave of the workgroup passes it.

    * gfx942/gfx950: ``s_waitcnt lgkmcnt(0)`` then ``s_barrier`` (LLVM merges the wait into a
      preceding ``s_waitcnt``, e.g. ``s_waitcnt vmcnt(2) lgkmcnt(0)``).
    * gfx1250: ``fence syncscope("workgroup") release`` / ``acquire`` narrowed to LDS
      (``!mmra amdgpu-synchronize-as local``) around ``llvm.amdgcn.s.barrier`` ->
      ``s_wait_dscnt 0x0`` (left out when no LDS access is pending), then
      ``s_barrier_signal -1`` + ``s_barrier_wait -1``.

    So "write LDS, barrier, another wave reads" and "read a slot, barrier, DMA refills
    it" are safe.  It waits neither for global memory nor for LDS DMA (vmcnt,
    asynccnt, tensorcnt): wait for a DMA with its wait op first.  In a kernel compiled
    with ``max_workgroup_size`` at most the wave size only the LDS wait is emitted:
    ``llvm.amdgcn.s.barrier`` is convergent, which keeps LLVM from unrolling the loop
    around it, and LLVM drops it in a one-wave workgroup anyway.

    Example::

        amd.async_load_wait_group(1)
        amd.s_barrier()

    LLVM::

        llvm.amdgcn.s.waitcnt
        llvm.amdgcn.s.barrier
        -> s_waitcnt lgkmcnt(0), s_barrier, s_barrier_signal -1, s_barrier_wait -1

    Requires gfx942, gfx950, gfx1250; LLVM 15+.
    """


def s_setprio(priority: int) -> None:
    """Set this wave's instruction-issue priority.  *priority*: constant 0 (lowest, the
    default) .. 3 (highest); it holds until the next ``s_setprio``.  Used to let MFMA-issuing
    waves go ahead of memory-issuing ones (ping-pong schedules).  All archs.

    Example::

        amd.s_setprio(1)
        ...                     # the MFMAs to hurry
        amd.s_setprio(0)

    LLVM::

        llvm.amdgcn.s.setprio
        -> s_setprio

    Requires gfx942, gfx950, gfx1250; LLVM 15+.
    """


def sched_group_barrier(mask: int, size: int, sync_id: int) -> None:
    """``llvm.amdgcn.sched.group.barrier(mask, size, sync_id)``: ask the scheduler for
    a group of *size* instructions of class *mask*.  Shows as
    ``; sched_group_barrier mask(...) size(...) SyncID(...)``.  All archs.

    Example::

        amd.sched_group_barrier(0x8, 1, 0)    # one MFMA

    LLVM::

        llvm.amdgcn.sched.group.barrier

    Requires gfx942, gfx950, gfx1250; LLVM 15+.
    """


def update_tensor_descriptor(desc: TensorDescriptor, add_offsets: tuple[int, ...] | None = None, set_bounds: tuple[int, ...] | None = None, pred: bool | None = None, clamp_bounds: bool = True) -> TensorDescriptor:
    """A moved / re-bounded / re-predicated copy of *desc*: integer IR on the descriptor
    groups, no instruction of its own (gfx1250 only).  *add_offsets* and *set_bounds*
    are tuples of ints (row-major); with *clamp_bounds* the bounds shrink by the offsets.
    The descriptor is wave-uniform (SGPRs): a lane-varying *pred*, offset or bound is
    taken from the wave's first active lane (``v_readfirstlane``), not checked.

    Example::

        desc = amd.update_tensor_descriptor(desc, add_offsets=(64, 0))

    LLVM::

        (no LLVM intrinsic: integer IR only)

    Requires gfx1250; LLVM 22..22.
    """


def wave_id() -> int:
    """This wave's index in its (1-D) workgroup, wave-uniform: ``workitem_id_x() //
    wave_size`` as LLVM knows to be the same in every lane of the wave.

    ISA: ``v_readfirstlane_b32`` of the quotient, once per kernel (LLVM hoists it), with an
    ``llvm.assume`` of its range (below ``ceil(max_workgroup_size / wave_size)`` of
    :func:`numba_tma.amd.compile`, or 1024 lanes).  All archs.  Use it for each wave's LDS
    region: an LDS-DMA destination computed from it (with constants and loop counters) is an
    SGPR, so ``M0`` is set on the scalar unit, and a slice of it is bounded, so Numba's slice
    clamp folds away.  ``workitem_id_x() // 64`` gives the same number, but LLVM sees it as
    lane-varying and moves every DMA's LDS address to ``M0`` with a ``v_readfirstlane_b32`` of
    its own.

    Example::

        mine = ring[amd.wave_id() * 2048:]

    LLVM::

        llvm.amdgcn.workitem.id.x
        llvm.amdgcn.readfirstlane.i32
        llvm.assume
        -> v_readfirstlane_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def wave_reduce(value: int | float, op: str) -> int | float:
    """Reduce *value* over the whole wave (64 lanes on gfx942/gfx950, 32 on gfx1250);
    the result is wave-uniform (an SGPR) and the same in every lane.

    *op*: ``"sum"``, ``"max"`` or ``"min"``; *value*: int32, uint32 or float32, as
    :func:`row_reduce`.  ISA: the 16-lane DPP steps of :func:`row_reduce`, then on
    gfx942/gfx950 ``row_bcast:15`` / ``row_bcast:31`` folded into the op and
    ``v_readlane_b32 s, v, 63`` (Triton's full-wave lowering), on gfx1250
    ``v_permlanex16_b32`` and ``v_readlane_b32 s, v, 31``.  All archs.

    Example::

        total = amd.wave_reduce(partial, "max")

    LLVM::

        llvm.amdgcn.update.dpp
        llvm.amdgcn.readlane
        -> v_max_f32_dpp, v_readlane_b32

    Requires gfx942, gfx950, gfx1250; LLVM 22+.
    """


def workgroup_id_x() -> int:
    """The workgroup's x index in the grid (``blockIdx.x``), in an SGPR.  All archs.

    Example::

        block = amd.workgroup_id_x()

    LLVM::

        llvm.amdgcn.workgroup.id.x

    Requires gfx942, gfx950, gfx1250; LLVM 15+.
    """


def workitem_id_x() -> int:
    """This lane's x index in its workgroup (``threadIdx.x``): VGPR v0 at kernel entry (gfx9),
    or its low 10 bits (gfx1250, where the ids are packed).  All archs.

    Example::

        lane = amd.workitem_id_x()

    LLVM::

        llvm.amdgcn.workitem.id.x

    Requires gfx942, gfx950, gfx1250; LLVM 15+.
    """
