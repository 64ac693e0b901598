"""The MN-major wgmma descriptor's host model (numba_tma.descriptors.matrix), against values
worked out by hand from the PTX ISA's matrix-descriptor fields and CUTLASS's canonical MN-major
128B layout ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))."""

from numba_tma.descriptors import matrix


def test_the_fields_of_an_mn_major_descriptor():
    # a tile at 1024 of (64 K rows, 64 bf16) boxes, 8192 bytes each; from MN element 128 (box 2),
    # K step 2 (rows 32-47): start 1024 + 2 * 8192 + 2 * 16 * 128 = 21504 (>> 4 = 0x540);
    # LBO one box (8192 >> 4 = 0x200 in bits 16-29); SBO 8 rows (1024 >> 4 = 0x40); 128B swizzle (1 << 62)
    assert matrix.encode_mn(1024, 128, 64, 8192, 128, 2) == 0x40000040_02000540


def test_what_one_mma_reads_through_it():
    bits = matrix.encode_mn(1024, 128, 64, 8192, 128, 2)
    offsets = matrix.read_offsets_mn(bits, 1024, 66, 10, 2)
    assert offsets.shape == (66, 20)
    assert offsets[0, :2].tolist() == [20480, 20481]            # element (0, 0): the start, unswizzled (row 0)
    assert offsets[1, 0] == 20482                                # MN is contiguous inside a box
    # element (65, 9): box +1 (8192), K group 1 (1024), row 1 of the atom (128), element 1 (2):
    # 29826, its 16-byte chunk 0 XOR row 1 -> chunk 1: 29842
    assert offsets[65, 18:].tolist() == [29842, 29843]


def test_the_rules():
    assert "16-bit elements" in matrix.mn_layout_rule(_layout("uint8", (64, 128)))
    assert "multiple of 16 K rows" in matrix.mn_layout_rule(_layout("uint16", (40, 64)))
    assert matrix.mn_layout_rule(_layout("uint16", (64, 64))) is None


def _layout(dtype, box):
    from numba_tma import TensorMap
    return TensorMap.numba_type(dtype, box, swizzle="128B")
