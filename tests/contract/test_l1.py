"""tilelang_tt.contract.l1: each core's L1 as tt-metal 0.81.1 and the emulator allocate it. The
expected numbers are worked out by hand from the arch facts (wormhole_b0: 1464 KiB of L1, the
unreserved base at 0x19d70, 8x8 worker cores; blackhole: 1536 KiB, 0x1b480, 13x10) and the 16-byte
L1 alignment. tests/compiler/test_l1_model.py checks the same model against the emulator."""

import pytest

from tilelang_tt.contract.buffers import LayoutDesc, MemoryLayout, MemorySpace
from tilelang_tt.contract.l1 import CircularBuffer, L1Buffer, cores_in_ranges, from_layout, l1_use

WH_L1, WH_BASE = 1464 * 1024, 0x19D70
WH_AVAILABLE = WH_L1 - WH_BASE  # 1393296
BH_L1, BH_BASE = 1536 * 1024, 0x1B480

# 5x6 pages of 40 B (48 B aligned) in 2x4-page blocks: 3x2 = 6 shards over 4 cores, two slots each
BLOCKS = L1Buffer("X", 40, 30, "block_sharded", (5, 6), (2, 4), (2, 2))
# 8x2 tiles, one row of tiles per core of an 8x1 grid
ROWS = L1Buffer("Y", 2048, 16, "height_sharded", (8, 2), (1, 2), (8, 1))


def test_circular_buffers_go_up_from_the_unreserved_base_each_at_the_dram_alignment():
    cbs = [CircularBuffer(40, 3), CircularBuffer(2048, 2), CircularBuffer(24, 5)]
    (core,) = l1_use("wormhole_b0", {(2, 3): cbs}, []).cores
    # the first CB at the next 32-byte boundary (the base is 16 past one); 120 B, padded to 128; 4096 B; 120 B
    assert (core.core, core.reserved, core.cbs, core.buffers, core.capacity) == (
        (2, 3), WH_BASE, 16 + 128 + 4096 + 120, 0, WH_L1)
    assert core.used == WH_BASE + 4360 and core.free == WH_L1 - WH_BASE - 4360 and core.fits
    assert core.available == WH_AVAILABLE and core.allocated == 4360


def test_sharded_buffers_take_the_most_shards_any_core_holds_on_every_core():
    assert (BLOCKS.num_shards, BLOCKS.pages_per_core("wormhole_b0"), BLOCKS.bytes_per_core("wormhole_b0")) == (6, 16, 768)
    assert BLOCKS.cores("wormhole_b0") == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert (ROWS.pages_per_core("wormhole_b0"), ROWS.bytes_per_core("wormhole_b0")) == (2, 4096)
    odd = L1Buffer("Z", 100, 9, "width_sharded", (3, 3), (3, 1), (3, 1))  # 100 B pages take 112 B
    assert odd.bytes_per_core("blackhole") == 3 * 112


def test_interleaved_buffers_spread_their_pages_over_one_bank_per_worker_core():
    buf = L1Buffer("I", 1000, 100)
    assert buf.aligned_page_size("wormhole_b0") == buf.aligned_page_size("blackhole") == 1008
    assert (buf.pages_per_core("wormhole_b0"), buf.bytes_per_core("wormhole_b0")) == (2, 2016)  # 64 banks
    assert (buf.pages_per_core("blackhole"), buf.bytes_per_core("blackhole")) == (1, 1008)  # 130 banks
    use = l1_use("blackhole", {}, [buf])
    assert len(use.cores) == 130 and {c.buffers for c in use.cores} == {1008}
    assert use.buffers[0].address == BH_L1 - 1008 and use.fits


def test_l1_buffers_go_down_from_the_end_of_l1_with_the_same_addresses_on_every_core():
    use = l1_use("wormhole_b0", {(5, 5): [CircularBuffer(2048, 2)]}, [BLOCKS, ROWS])
    assert [(p.buffer.name, p.address, p.size) for p in use.buffers] == [("X", WH_L1 - 768, 768),
                                                                          ("Y", WH_L1 - 768 - 4096, 4096)]
    # the cores holding X (2x2), Y (8x1) and the CB core, row-major; every one has both buffers' region
    assert [c.core for c in use.cores] == [(x, 0) for x in range(8)] + [(0, 1), (1, 1), (5, 5)]
    assert {c.buffers for c in use.cores} == {768 + 4096}
    assert [c.cbs for c in use.cores] == [0] * 10 + [16 + 4096]  # the CB at the DRAM alignment past the base
    assert use.worst.core == (5, 5) and use.fits and use.unplaced is None


def test_a_program_fits_to_the_byte():
    """A last CB of 1-byte pages ending exactly at the lowest L1 buffer fits; one byte more does not."""
    pages = WH_AVAILABLE - 4096 - 16 - 128  # below Y: 16 B to the DRAM alignment, a 120-byte CB padded to 128, the filler
    fits = l1_use("wormhole_b0", {(0, 0): [CircularBuffer(40, 3), CircularBuffer(1, pages)]}, [ROWS])
    assert fits.fits and fits.worst.free == 0 and fits.core((0, 0)).cbs == 16 + 128 + pages
    over = l1_use("wormhole_b0", {(0, 0): [CircularBuffer(40, 3), CircularBuffer(1, pages + 1)]}, [ROWS])
    assert not over.fits and over.unplaced is None
    assert over.worst.core == (0, 0) and over.worst.free == -1
    assert [c.core for c in over.cores if not c.fits] == [(0, 0)]  # the other holders of Y have no CBs
    assert str(over.worst) == f"CBs {16 + 128 + pages + 1} bytes + L1 buffers 4096 bytes > {WH_AVAILABLE} bytes " \
                              "available on core (0, 0)"
    assert str(fits.worst).endswith(f"<= {WH_AVAILABLE} bytes available on core (0, 0)")


def test_l1_buffers_that_do_not_fit_even_without_circular_buffers():
    whole = L1Buffer("W", 16, WH_AVAILABLE // 16, "height_sharded", (WH_AVAILABLE // 16, 1), (WH_AVAILABLE // 16, 1),
                     (1, 1))
    alone = l1_use("wormhole_b0", {}, [whole])
    assert alone.fits and alone.buffers[0].address == WH_BASE and alone.worst.free == 0
    big = L1Buffer("B", 2048, 700, "height_sharded", (700, 1), (700, 1), (1, 1))  # 1400 KiB on core (0, 0)
    use = l1_use("wormhole_b0", {}, [ROWS, big, BLOCKS])
    assert not use.fits and use.unplaced.buffer is big
    assert use.unplaced.address == WH_L1 - 4096 - 700 * 2048 < WH_BASE


def test_from_layout_reads_the_tensor_as_a_matrix_of_tiles():
    """A tt.layout_desc entry or a plan buffer: batches stack along the rows of the tile grid."""
    assert from_layout(LayoutDesc("A", (64, 64), "bfloat16")) is None
    sharded = LayoutDesc("A", (2, 128, 64), "float32", MemorySpace.L1, MemoryLayout.HEIGHT_SHARDED,
                         shard_grid=(4, 1), shard_shape=(64, 64))
    assert from_layout(sharded) == L1Buffer("A", 4096, 16, "height_sharded", (8, 2), (2, 2), (4, 1))
    assert from_layout(LayoutDesc("v", (96,), "bfloat16", MemorySpace.L1)) == L1Buffer("v", 2048, 3)


def test_cores_in_ranges_row_major_per_range_without_repeats():
    ranges = [((0, 0), (1, 1)), ((3, 0), (3, 0)), ((1, 1), (2, 1))]
    assert cores_in_ranges(ranges) == [(0, 0), (1, 0), (0, 1), (1, 1), (3, 0), (2, 1)]


@pytest.mark.parametrize("make, message", [
    (lambda: L1Buffer("A", 2048, 15, "height_sharded", (8, 2), (1, 2), (8, 1)), "has 15 pages, but its tensor_pages"),
    (lambda: L1Buffer("A", 2048, 16, "diagonal_sharded", (8, 2), (1, 2), (8, 1)), "has layout 'diagonal_sharded'"),
    (lambda: L1Buffer("A", 2048, 16, "interleaved", (8, 2)), "interleaved L1 buffer `A` has tensor_pages"),
    (lambda: L1Buffer("A", 2048, 16, "block_sharded", (8, 2), (1, 2)), "needs tensor_pages, shard_pages and shard_grid"),
    (lambda: L1Buffer("A", 0, 16), "needs a positive page size"),
    (lambda: CircularBuffer(2048, 0), "needs a positive page size and page count"),
    (lambda: l1_use("wormhole_b0", {(8, 0): [CircularBuffer(2048, 1)]}, []), r"cores \[\(8, 0\)\] are outside"),
])
def test_bad_input_is_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_rank1_column_is_its_n_by_1_view():
    """A rank-1 tensor InferTTLayout laid out as a column: 256 values are 8 tiles down, sharded by
    rows over 2 cores (4 tiles each); read as the row (1, 256) it would be 8 tiles across."""
    layout = LayoutDesc("Mean", (256,), "float32", MemorySpace.L1, MemoryLayout.HEIGHT_SHARDED, shard_grid=(2, 1),
                        shard_shape=(128, 32), column=True)
    buffer = from_layout(layout)
    assert (buffer.tensor_pages, buffer.shard_pages, buffer.num_pages) == ((8, 1), (4, 1), 8)
