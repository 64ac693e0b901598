"""Editing tensor maps on the device (sm_90a): copy a descriptor into a buffer, replace its fields,
and publish it to the TMA unit — so one kernel can retarget a descriptor per problem (a grouped
GEMM walking tensors of different shapes and addresses).
"""
# Generated from the op declarations by `python -m numba_tma.docgen`; do not edit by hand.

from typing import Any, Literal, TypeAlias

from numba_tma import TensorMap

SharedArray: TypeAlias = Any   # a cuda.shared.array (or numba_tma.at(array, i)); its element 0 is used
DeviceArray: TypeAlias = Any   # a device array in global memory (a kernel argument)

def copy(buf: DeviceArray, desc: TensorMap | DeviceArray) -> None:
    """Copy the 128 bytes of ``desc`` (a by-value :class:`numba_tma.TensorMap` or a descriptor in a
    ``uint8`` device array) into ``buf`` (a 128-byte-aligned ``uint8`` array, shared or global), to
    edit it there.

    Example::

        buf = cuda.shared.array(128, numba.uint8, alignment=128)
        tensormap.copy(buf, desc)

    PTX::

        {
        .reg .b64 a, b;
        ld.v2.b64 {a, b}, [desc+0];
        st.v2.b64 [buf+0], {a, b};
        ld.v2.b64 {a, b}, [desc+16];
        st.v2.b64 [buf+16], {a, b};
        ld.v2.b64 {a, b}, [desc+32];
        st.v2.b64 [buf+32], {a, b};
        ld.v2.b64 {a, b}, [desc+48];
        st.v2.b64 [buf+48], {a, b};
        ld.v2.b64 {a, b}, [desc+64];
        st.v2.b64 [buf+64], {a, b};
        ld.v2.b64 {a, b}, [desc+80];
        st.v2.b64 [buf+80], {a, b};
        ld.v2.b64 {a, b}, [desc+96];
        st.v2.b64 [buf+96], {a, b};
        ld.v2.b64 {a, b}, [desc+112];
        st.v2.b64 [buf+112], {a, b};
        }

    Requires sm_90 or newer, PTX ISA 8.0.

    Also known as: ``cute.nvgpu.cpasync.copy_tensormap``.
    """


def cp_fenceproxy(dst: DeviceArray, src: SharedArray, scope: Literal['cta', 'cluster', 'gpu', 'sys'] = 'gpu') -> None:
    """Copy an edited descriptor from shared memory to global memory and release it to the
    tensormap proxy at ``scope`` (default ``"gpu"``); all threads of the warp must execute it.
    Consumers then ``fence.proxy_tensormap_acquire(dst, scope)`` before TMA uses ``dst``.

    Example::

        tensormap.cp_fenceproxy(global_desc, buf)

    PTX::

        tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [dst], [src], 128;

    Requires sm_90 or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_cp_fenceproxy``.
    """


def replace_box_dim(buf: DeviceArray, i: int, value: int) -> None:
    """Set box dimension ``i`` (innermost
    first) to ``value`` elements.  ``value`` must be 1 to 256 (elements per box dimension): a constant outside is
    refused at compile time, a run-time one traps in debug mode.

    Example::

        tensormap.replace_box_dim(buf, 1, n_rows)

    PTX::

        tensormap.replace.tile.box_dim.b1024.b32 [buf], i, value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_box_dim``, ``cute tensormap_replace``.
    """


def replace_element_stride(buf: DeviceArray, i: int, value: int) -> None:
    """Set element
    stride ``i`` (innermost first) to ``value``.  ``value`` must be 1 to 8 (elements): a constant outside is
    refused at compile time, a run-time one traps in debug mode.

    Example::

        tensormap.replace_element_stride(buf, 1, n_rows)

    PTX::

        tensormap.replace.tile.element_stride.b1024.b32 [buf], i, value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_element_stride``, ``cute tensormap_replace``.
    """


def replace_elemtype(buf: DeviceArray, value: int) -> None:
    """Set the element type (the PTX
    ISA's ``.elemtype`` code: the descriptor's type field, see ``numba_tma.descriptors.enums.TYPE_INFO``).

    Example::

        tensormap.replace_elemtype(buf, 10)     # bfloat16

    PTX::

        tensormap.replace.tile.elemtype.b1024.b32 [buf], value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_elemtype``, ``cute tensormap_replace``.
    """


def replace_fill_mode(buf: DeviceArray, value: int) -> None:
    """Set the out-of-bounds fill
    mode (0 zeros, 1 NaN).

    Example::

        tensormap.replace_fill_mode(buf, 1)     # NaN

    PTX::

        tensormap.replace.tile.fill_mode.b1024.b32 [buf], value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_fill_mode``, ``cute tensormap_replace``.
    """


def replace_global_address(buf: DeviceArray, value: int) -> None:
    """Set the descriptor's global address (16-byte aligned; 32 for interleaved maps).  ``value`` must be 0 to 18446744073709551600, a multiple of 16 (TMA addresses are 16-byte aligned): a constant outside is
    refused at compile time, a run-time one traps in debug mode.

    Example::

        tensormap.replace_global_address(buf, addresses[cuda.blockIdx.x])     # addresses: a uint64 array

    PTX::

        tensormap.replace.tile.global_address.b1024.b64 [buf], value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_global_address``, ``cute tensormap_replace``.
    """


def replace_global_dim(buf: DeviceArray, i: int, value: int) -> None:
    """Set tensor dimension ``i``
    (innermost first) to ``value`` elements.  A store through the edited map may write past a
    dimension 0 that is not whole 16-byte chunks: debug mode traps it (``tma.store``).  ``value`` must be 1 to 4294967295 (elements; a 32-bit field): a constant outside is
    refused at compile time, a run-time one traps in debug mode.

    Example::

        tensormap.replace_global_dim(buf, 1, n_rows)

    PTX::

        tensormap.replace.tile.global_dim.b1024.b32 [buf], i, value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_global_dim``, ``cute tensormap_replace``.
    """


def replace_global_stride(buf: DeviceArray, i: int, value: int) -> None:
    """Set global stride
    ``i`` (0 to 3: the driver's ``globalStrides[i]``, the byte stride of dimension ``i + 1``) to
    ``value`` bytes.  ``value`` must be 16 to 1099511627760, a multiple of 16 (bytes, below 2**40): a constant outside is
    refused at compile time, a run-time one traps in debug mode.

    Example::

        tensormap.replace_global_stride(buf, 1, n_rows)

    PTX::

        tensormap.replace.tile.global_stride.b1024.b64 [buf], i, value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_global_stride``, ``cute tensormap_replace``.
    """


def replace_interleave(buf: DeviceArray, value: int) -> None:
    """Set the interleave
    layout (0 none, 1 16 bytes, 2 32 bytes).

    Example::

        tensormap.replace_interleave(buf, 0)

    PTX::

        tensormap.replace.tile.interleave_layout.b1024.b32 [buf], value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_interleave_layout``, ``cute tensormap_replace``.
    """


def replace_rank(buf: DeviceArray, value: int) -> None:
    """Set the descriptor's rank: ``value`` is the
    rank minus one, as the PTX ISA's ``.rank`` field takes it (measured: ``tests/test_gpu_sync_tensormap.py``).  ``value`` must be 0 to 4 (rank - 1, for ranks 1 to 5): a constant outside is
    refused at compile time, a run-time one traps in debug mode.

    Example::

        tensormap.replace_rank(buf, 1)     # a 2-D map

    PTX::

        tensormap.replace.tile.rank.b1024.b32 [buf], value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_rank``, ``cute tensormap_replace``.
    """


def replace_swizzle(buf: DeviceArray, value: int) -> None:
    """Set the swizzle mode (PTX ISA
    encoding: 0 none, 1 32B, 2 64B, 3 128B).

    Example::

        tensormap.replace_swizzle(buf, 3)     # 128B

    PTX::

        tensormap.replace.tile.swizzle_mode.b1024.b32 [buf], value;

    Requires sm_90a or newer, PTX ISA 8.3.

    Also known as: ``cuda::ptx::tensormap_replace_swizzle_mode``, ``cute tensormap_replace``.
    """
