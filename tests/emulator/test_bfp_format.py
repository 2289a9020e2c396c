"""Block floating point tiles: the numpy model (tilelang_tt/emulator/blockfloat.py) against tiles
worked out by hand from tt-metal's rules, and the emulator's C++ unpack / pack (runtime/formats.cpp)
bit for bit against the model."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from tilelang_tt.contract.formats import BLOCK_FORMATS, tile_bytes
from tilelang_tt.emulator import blockfloat as bf

from .device_harness import CXX, EMU, INCLUDES

BFP8, BFP4 = BLOCK_FORMATS["bfloat8_b"], BLOCK_FORMATS["bfloat4_b"]


def _row(*values: float) -> np.ndarray:
    """One block: ``values`` then zeros up to 16."""
    return np.array([*values, *[0.0] * (16 - len(values))], dtype=np.float32)


def test_the_tile_sizes_are_tt_metal_s():
    assert (tile_bytes(BFP8, 1024), tile_bytes(BFP4, 1024)) == (1088, 576)
    assert (BFP8.code, BFP4.code) == (6, 7)  # tt::DataFormat (tensix_types.h)


def test_the_shared_exponent_is_the_largest_and_smaller_values_shift_right():
    # 3.0 = 1.1b x 2^1: exponent field 128, datum 0b1100000; 1.0 is one binade below: 0b0100000
    exponents, datums = bf.quantize(_row(3.0, 1.0, 0.5, -0.75, 1.5), BFP8)
    assert exponents == 128
    assert list(datums[:6]) == [0x60, 0x20, 0x10, 0x80 | 0x18, 0x30, 0]
    np.testing.assert_array_equal(bf.decode(exponents, datums, BFP8), _row(3.0, 1.0, 0.5, -0.75, 1.5))


def test_the_host_rounds_to_nearest_even_and_the_packer_half_away_from_zero():
    # with 3.0 in the block the step is 2^(1 - 6) = 1/32: 1 + 1/64 and 1 + 3/64 are ties
    row = _row(3.0, 1 + 1 / 64, 1 + 3 / 64, 1 + 1 / 64 + 2**-20, 1 + 1 / 128)
    _, host = bf.quantize(row, BFP8, bf.HOST)
    assert list(host[1:5]) == [32, 34, 33, 32]  # ties to even; above the tie up; below it down
    _, packer = bf.quantize(row, BFP8, bf.PACKER)
    # the packer sees bfloat16 (1 + 2^-20 truncated away) and rounds on the last bit shifted out
    assert list(packer[1:5]) == [33, 34, 33, 32]


def test_the_host_saturates_and_the_sign_of_a_zero_magnitude_is_dropped():
    below_two = np.nextafter(np.float32(2), np.float32(0))
    exponents, datums = bf.quantize(_row(below_two, -(2.0**-8), -0.0), BFP8)
    assert exponents == 127
    assert list(datums[:3]) == [0x7F, 0, 0]  # 127, not 128; -2^-8 rounds to 0 (no 0x80); -0.0 is 0


def test_a_block_of_zeros_and_a_wide_range_where_small_values_flush():
    exponents, datums = bf.quantize(np.zeros(16, np.float32), BFP8)
    assert exponents == 0 and not datums.any()
    row = _row(1e4, 1e-3, -1.0, 300.0)
    decoded = bf.decode(*bf.quantize(row, BFP8), BFP8)
    # 1e4 = 1.22 x 2^13: the step is 2^(13 - 6) = 128; 1e-3 and -1 flush, 300 rounds to 256
    np.testing.assert_array_equal(decoded[:4], [9984.0, 0.0, 0.0, 256.0])


def test_bfloat4_b_keeps_three_magnitude_bits_two_datums_a_byte():
    tile = np.zeros((1, 1024), np.float32)
    tile[0, :3] = [1.0, -0.5, 0.875]  # face 0, row 0
    raw = bf.encode_tiles(tile, BFP4)
    assert raw.shape == (1, 576)
    assert raw[0, 0] == 127 and not raw[0, 1:64].any()  # exponents: block 0 holds 1.0; the others zero
    # datums 4 (1.0), 0b1010 (-0.5), 0b0100 (0.875 = 0b0.111: 3.5 steps of 1/4, ties to even 4)
    assert list(raw[0, 64:66]) == [0xA4, 0x04]
    np.testing.assert_array_equal(bf.decode_tiles(raw, BFP4)[0, :3], [1.0, -0.5, 1.0])
    _, packer = bf.quantize(tile[0, :16], BFP4, bf.PACKER)
    assert list(packer[:3]) == [4, 0b1010, 3]  # the packer truncates: 0.875 is 0b0111000 in 7 bits, 0b011 in 3


def test_tilize_lays_matrices_out_as_tt_metal_tiles_of_faces():
    matrix = np.arange(40 * 33, dtype=np.float32).reshape(1, 40, 33)
    tiles = bf.tilize(matrix)
    assert tiles.shape == (4, 1024)
    assert tiles[0, 256] == matrix[0, 0, 16]  # face 1 starts at column 16
    assert tiles[0, 512] == matrix[0, 16, 0]  # face 2 at row 16
    assert tiles[1, 0] == matrix[0, 0, 32] and tiles[1, 1] == 0  # padding is zero
    np.testing.assert_array_equal(bf.untilize(tiles, 1, 40, 33), matrix)


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("format-harness") / "format_harness"
    subprocess.run([*CXX, *INCLUDES, str(Path(__file__).with_name("format_harness.cpp")),
                    str(EMU / "runtime" / "formats.cpp"), "-o", str(exe)], check=True, capture_output=True, text=True)
    return exe


def _run(harness: Path, tmp_path: Path, fmt, verb: str, data: np.ndarray) -> bytes:
    (tmp_path / "in.bin").write_bytes(data.tobytes())
    subprocess.run([str(harness), fmt.data_format, verb, str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
    return (tmp_path / "out.bin").read_bytes()


def _random_tiles(rng, n: int) -> np.ndarray:
    """Row-major float32 tiles: magnitudes over 2^-140 .. 2^40 (denormals too), ties, zeros, infinities."""
    values = (rng.standard_normal((n, 1024)) * 2.0 ** rng.integers(-140, 40, (n, 1024))).astype(np.float32)
    values[0, :64] = 0.0
    values[1, :16] = 1 + 1 / 64
    values[1, 16] = np.inf
    values[2] = np.round(values[2] * 8) / 8
    return values


@pytest.mark.parametrize("fmt", [BFP8, BFP4], ids=lambda f: f.data_format)
def test_the_emulator_packs_as_the_packer_model_bit_for_bit(harness, tmp_path, fmt):
    tiles = _random_tiles(np.random.default_rng(1), 8)
    got = np.frombuffer(_run(harness, tmp_path, fmt, "pack", tiles), np.uint8).reshape(8, -1)
    faces = bf.tilize(tiles.reshape(8, 32, 32))
    np.testing.assert_array_equal(got, bf.encode_tiles(faces, fmt, bf.PACKER))


@pytest.mark.parametrize("fmt", [BFP8, BFP4], ids=lambda f: f.data_format)
def test_the_emulator_unpacks_as_the_model_bit_for_bit(harness, tmp_path, fmt):
    raw = np.random.default_rng(2).integers(0, 256, (8, tile_bytes(fmt, 1024)), dtype=np.uint8)
    raw[0, :64] = np.arange(64)  # small shared exponents: results below float32's normal range flush
    got = np.frombuffer(_run(harness, tmp_path, fmt, "unpack", raw), np.uint32).reshape(8, 32, 32)
    expected = bf.untilize(bf.decode_tiles(raw, fmt), 8, 32, 32).view(np.uint32)
    np.testing.assert_array_equal(got, expected)
