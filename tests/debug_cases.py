"""Deliberately broken kernels, one per silent mistake, run by tests/test_gpu_debug.py in a child
process with NUMBA_TMA_DEBUG=1 (each ends the process with a trap):

    NUMBA_TMA_DEBUG=1 python tests/debug_cases.py wrong_expect_tx
"""

import sys

import numba
import numpy as np
from numba import cuda

from numba_tma import TensorMap, at, bulk, fence, mbarrier, tensormap, tma, wgmma

BOX = (8, 32)


@cuda.jit
def copy(desc, out, case):
    """A tile copy with one mistake, chosen by ``case``."""
    bars = cuda.shared.array(2, numba.uint64)
    tile = cuda.shared.array(2 * 8 * 32, numba.float32, alignment=1024)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        if case == 0:                                   # expects 16 bytes more than the box brings
            mbarrier.arrive_expect_tx(bars, desc.box_bytes + 16)
            tma.load(desc, tile, (0, 0), bars)
        elif case == 1:                                 # 128B swizzle into a 128-aligned tile
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, at(tile, 32), (0, 0), bars)
        elif case == 2:                                 # the destination is a global array
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, out, (0, 0), bars)
        elif case == 3:                                 # smaller than the box
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile[:64], (0, 0), bars)
        elif case == 4:                                 # coords[0] * 4 bytes not a multiple of 16
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (cuda.blockDim.x - 126, 0), bars)
        elif case == 5:                                 # an mbarrier in global memory
            mbarrier.arrive_expect_tx(out.view(np.uint64), desc.box_bytes)
        elif case == 6:                                 # (row, col) = (0, 96) for an innermost-first map
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (0, 96), bars)
        elif case == 7:                                 # a local array as the destination
            local = cuda.local.array(256, numba.float32)
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, local, (0, 0), bars)
            out[0] = local[cuda.threadIdx.x]
        elif case == 8:                                 # a slice at a 4-byte offset
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile[1:], (0, 0), bars)
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = tile[cuda.threadIdx.x]


CASES = {"wrong_expect_tx": 0, "swizzle_alignment": 1, "global_destination": 2, "small_destination": 3,
         "coords_alignment": 4, "global_barrier": 5, "row_col_order": 6, "local_destination": 7, "slice_offset": 8}


@cuda.jit
def copy_global_desc(desc_bytes, out):
    """A map in global memory read at an offset that is not 64-byte aligned."""
    bars = cuda.shared.array(1, numba.uint64)
    tile = cuda.shared.array(8 * 32, numba.float32, alignment=1024)
    if cuda.threadIdx.x == 0:
        mbarrier.init(bars, 1)
        fence.mbarrier_init()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        mbarrier.arrive_expect_tx(bars, 1024)
        tma.load(desc_bytes[64:], tile, (0, 0), bars)     # the 128 bytes start at byte 64 + 8
    mbarrier.wait(bars, 0)
    out[cuda.threadIdx.x] = tile[cuda.threadIdx.x]


@cuda.jit
def store_past_edge(desc_bytes, edit, allow):
    """A (8, 16) float32 box stored at columns 48..63 of a map in global memory whose rows are 59
    wide (``edit``: the map is 64 wide and the kernel narrows it to 59 on the device first)."""
    tile = cuda.shared.array((8, 16), numba.float32, alignment=128)
    buf = cuda.shared.array(128, numba.uint8, alignment=128)
    tile[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16] = 1.0
    if edit and cuda.threadIdx.x < 32:
        if cuda.threadIdx.x == 0:
            tensormap.copy(buf, desc_bytes)
            tensormap.replace_global_dim(buf, 0, 59)
        cuda.syncwarp()
        tensormap.cp_fenceproxy(desc_bytes, buf)
        fence.proxy_tensormap_acquire(desc_bytes)
    fence.proxy_async()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        if allow:
            tma.store(desc_bytes, tile, (48, 0), allow_overrun=True)
        else:
            tma.store(desc_bytes, tile, (48, 0))
        tma.commit_group()
        tma.wait_group(0)


@cuda.jit
def bulk_store(dst, nbytes):
    """A bulk store of a run-time ``nbytes`` from a 1 KiB shared buffer into ``dst``."""
    buf = cuda.shared.array(256, numba.float32, alignment=128)
    buf[cuda.threadIdx.x] = 2.0
    fence.proxy_async()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        bulk.store(dst, buf, nbytes)
        bulk.commit_group()
        bulk.wait_group(0)


@cuda.jit
def wgmma_tile(desc, out, case, value):
    """A wgmma descriptor or epilogue store with one mistake, chosen by ``case``, at a run-time
    ``value`` (only a debug-mode check can see it), in thread 0."""
    big = cuda.shared.array(2 * 64 * 64, numba.uint16, alignment=1024)
    if cuda.threadIdx.x == 0:
        if case == 0:                                   # a tile 128 bytes into a 1024-aligned array
            out[0] = wgmma.descriptor(big[value:], desc, 0, 0)
        elif case == 1:                                 # K step 4 of a 128-byte span
            out[0] = wgmma.descriptor(big, desc, value, 0)
        elif case == 2:                                 # a row offset inside the 8-row atom, or past the tile
            out[0] = wgmma.descriptor(big, desc, 0, value)
        elif case == 3:                                 # two boxes (16 KiB) into 8 KiB
            wgmma.store_shared_bf16(wgmma.zeros(64), big[:value], desc, 0, 2)
        elif case == 4:                                 # boxes into a 128-aligned tile
            wgmma.store_shared_bf16(wgmma.zeros(64), big[value:], desc, 0, 2)
    cuda.syncthreads()
    out[1] = big[cuda.threadIdx.x]


WGMMA_CASES = {"wgmma_tile_alignment": (0, 64), "wgmma_k": (1, 4), "wgmma_row_multiple": (2, 4),
               "wgmma_row_outside": (2, 128), "store_shared_small": (3, 4096), "store_shared_alignment": (4, 64)}


def store_edge(name):
    """The store-edge routes only the device knows (descriptor bytes of one's own in a plain uint8
    array: ``desc.to_device()``'s array is typed by the map and refused at compile time): prints the
    columns 56..63 of row 0 after the store (59 is the first past the edge) when no trap stopped it."""
    width = 64 if "edited" in name else 59
    buf = cuda.to_device(np.zeros((8, 64), np.float32))
    desc = TensorMap.tiled(buf[:, :width], (8, 16))
    store_past_edge[1, 128](cuda.to_device(np.frombuffer(desc.bytes, np.uint8)), "edited" in name,
                            name.endswith("allowed"))
    cuda.synchronize()
    print("row 0, columns 56..63:", buf.copy_to_host()[0, 56:].tolist())


def main(name):
    if name.startswith("store_edge"):
        store_edge(name)
        print("finished without an error")
        return
    if name.startswith("bulk_"):                 # 512 bytes: past a 256-byte destination; 40: not whole chunks
        bulk_store[1, 256](cuda.to_device(np.zeros(64, np.float32)), 512 if name == "bulk_past_array" else 40)
        cuda.synchronize()
        print("finished without an error")
        return
    if name in WGMMA_CASES:
        desc = TensorMap.tiled(cuda.to_device(np.zeros((64, 64), np.uint16)), (64, 64), swizzle="128B")
        wgmma_tile[1, 128](desc, cuda.to_device(np.zeros(2, np.uint64)), *WGMMA_CASES[name])
        cuda.synchronize()
        print("finished without an error")
        return
    host = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    desc = TensorMap.tiled(cuda.to_device(host), BOX, swizzle="128B")
    out = cuda.to_device(np.zeros(1024, np.float32))
    if name == "descriptor_offset":
        raw = np.zeros(256, np.uint8)
        raw[72:200] = np.frombuffer(desc.bytes, np.uint8)
        copy_global_desc[1, 128](cuda.to_device(raw)[8:], out)
    else:
        copy[1, 128](desc, out, CASES[name])
    cuda.synchronize()
    print("finished without an error")


if __name__ == "__main__":
    main(sys.argv[1])
