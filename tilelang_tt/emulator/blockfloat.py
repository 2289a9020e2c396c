"""Block floating point tiles (``Bfp8_b``, ``Bfp4_b``) in numpy: the host's conversion of tensors
stored as ``bfloat8_b`` / ``bfloat4_b`` (the emulator driver) and the model the emulator's C++
unpack and pack (``runtime/formats.cpp``) are tested against, bit for bit.

A tile is its four 16x16 faces; every 16 consecutive values (a face row) share one 8-bit exponent.
Its bytes: the 64 exponents (faces in order, rows in order), then one sign-magnitude datum per
value in the same order, a sign bit above ``mantissa_bits`` magnitude bits whose top bit is worth
2^(exponent - 127) (Bfp8_b: a byte each; Bfp4_b: two a byte, the even value in the low nibble).

Two roundings make datums of floats:

* the host's (:data:`HOST`), tt-metal ``tt_metal/impl/data_format/blockfloat_common.cpp``
  (``convert_u32_to_bfp`` with ``pack_fp32_vec_as_bfp_tiles``, which ttnn uses for
  ``ttnn.bfloat8_b`` tensors): the shared exponent is the largest exponent field of the 16 float32s;
  each significand (hidden bit included, 24 bits) is shifted right by its exponent's distance to
  it, then rounded to ``mantissa_bits`` bits to nearest, ties to even, on the bits left after the
  shift, and saturates at the largest datum; ±0 is the datum 0, and a datum of magnitude 0 has no sign;
* the packer's (:data:`PACKER`), what compute's pack to a block format does, as tt-llk models the
  Wormhole packer (``tt_metal/tt-llk/tests/python_tests/helpers/bfp_format_utils.py`` and
  ``pack.py`` in the 0.81.1 wheel, after the ISA's FormatConversion): the value is truncated to
  bfloat16, its top 6 mantissa bits under the hidden bit make a 7-bit magnitude, shifted right by
  the distance to the shared exponent and rounded half away from zero on the last bit shifted out
  (not rounded when not shifted); Bfp4_b keeps the top 3 of those 7 bits (truncation). A value
  whose exponent field is 0 (zero, or a denormal the packer flushes) packs to the datum 0: the
  model gives every value a hidden bit, which no zero has.

Decoding (:func:`decode`) is tt-metal's ``convert_bfp_to_u32``: the magnitude normalised under
the shared exponent into a float32; a result below float32's normal range is flushed to zero
(tt-metal's host function lets the exponent wrap there; the Tensix unpacker flushes such values,
which tt-llk's golden models note).
"""

from __future__ import annotations

import numpy as np

from tilelang_tt.contract.formats import BLOCK, Format, tile_bytes

TILE = 32
FACE = 16
TILE_VALUES = TILE * TILE
ROWS_PER_TILE = TILE_VALUES // BLOCK  # face rows: the exponents of a tile
HOST = "host"
PACKER = "packer"


def quantize(values: np.ndarray, fmt: Format, rounding: str = HOST) -> tuple[np.ndarray, np.ndarray]:
    """(shared exponents ``(..., )``, datums ``(..., 16)``) of float32 ``values`` of shape ``(..., 16)``."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.int64)
    width = fmt.mantissa_bits
    if rounding == HOST:
        exponent = (bits >> 23) & 0xFF
        shared = exponent.max(axis=-1)
        significand = ((1 << 23) | (bits & 0x7FFFFF)) >> np.minimum(shared[..., None] - exponent, 63)
        shift = 24 - width
        rest = significand & ((1 << shift) - 1)
        magnitude = significand >> shift
        tie = 1 << (shift - 1)
        magnitude += (rest > tie) | ((rest == tie) & (magnitude & 1 == 1))
        magnitude = np.minimum(magnitude, (1 << width) - 1)
        magnitude = np.where((bits & 0x7FFFFFFF) == 0, 0, magnitude)
        sign = bits >> 31
    elif rounding == PACKER:
        bf16 = bits >> 16  # truncated to bfloat16
        exponent = (bf16 >> 7) & 0xFF
        shared = exponent.max(axis=-1)
        seven = ((bf16 & 0x7F) >> 1) | 0x40
        delta = shared[..., None] - exponent
        guard = np.where(delta > 0, (seven >> np.clip(delta - 1, 0, 63)) & 1, 0)
        magnitude = (seven >> np.minimum(delta, 63)) + guard  # at most 0x40: no carry out of 7 bits
        magnitude = np.where(exponent == 0, 0, magnitude) >> (7 - width)
        sign = (bf16 >> 15) & 1
    else:
        raise ValueError(f"rounding {rounding!r} is not {HOST!r} or {PACKER!r}")
    datums = np.where(magnitude == 0, 0, (sign << width) | magnitude)
    return shared.astype(np.uint8), datums.astype(np.uint8)


def decode(exponents: np.ndarray, datums: np.ndarray, fmt: Format) -> np.ndarray:
    """float32 values ``(..., 16)`` of shared ``exponents`` ``(...)`` and their ``datums``."""
    width = fmt.mantissa_bits
    datums = datums.astype(np.int64)
    magnitude = datums & ((1 << width) - 1)
    sign = (datums >> width) & 1
    top = np.floor(np.log2(np.maximum(magnitude, 1))).astype(np.int64)  # the leading one's bit
    below = (width - 1) - top
    exponent = exponents.astype(np.int64)[..., None] - below
    fraction = (magnitude << (below + 1)) & ((1 << width) - 1)
    bits = (sign << 31) | np.where((magnitude == 0) | (exponent < 1), 0,
                                   (exponent << 23) | (fraction << (23 - width)))
    return bits.astype(np.uint32).view(np.float32)


def encode_tiles(tiles: np.ndarray, fmt: Format, rounding: str = HOST) -> np.ndarray:
    """The bytes ``(n, tile_bytes)`` of ``n`` tiles given as ``(n, 1024)`` float32 values in face order."""
    exponents, datums = quantize(tiles.reshape(-1, ROWS_PER_TILE, BLOCK), fmt, rounding)
    datums = datums.reshape(len(tiles), TILE_VALUES)
    if fmt.datum_bits == 4:
        datums = datums[:, 0::2] | (datums[:, 1::2] << 4)
    out = np.concatenate([exponents, datums], axis=1)
    assert out.shape[1] == tile_bytes(fmt, TILE_VALUES)
    return out


def decode_tiles(raw: np.ndarray, fmt: Format) -> np.ndarray:
    """float32 ``(n, 1024)`` in face order of the bytes of ``n`` tiles (``(n, tile_bytes)`` or flat)."""
    raw = np.asarray(raw, dtype=np.uint8).reshape(-1, tile_bytes(fmt, TILE_VALUES))
    exponents, packed = raw[:, :ROWS_PER_TILE], raw[:, ROWS_PER_TILE:]
    if fmt.datum_bits == 4:
        packed = np.stack([packed & 0xF, packed >> 4], axis=-1).reshape(len(raw), TILE_VALUES)
    return decode(exponents, packed.reshape(len(raw), ROWS_PER_TILE, BLOCK), fmt).reshape(len(raw), TILE_VALUES)


def tilize(matrices: np.ndarray) -> np.ndarray:
    """``(batch, rows, cols)`` -> ``(tiles, 1024)`` in face order: each matrix padded with zeros to
    whole tiles, tiles row-major per matrix, matrices one after another (main.cpp's tilize)."""
    batch, rows, cols = matrices.shape
    tr, tc = -(-rows // TILE), -(-cols // TILE)
    padded = np.zeros((batch, tr * TILE, tc * TILE), dtype=matrices.dtype)
    padded[:, :rows, :cols] = matrices
    faces = padded.reshape(batch, tr, 2, FACE, tc, 2, FACE)  # tile row, face row, row, tile col, face col, col
    return faces.transpose(0, 1, 4, 2, 5, 3, 6).reshape(-1, TILE_VALUES)


def untilize(tiles: np.ndarray, batch: int, rows: int, cols: int) -> np.ndarray:
    """Inverse of :func:`tilize`: ``(batch, rows, cols)`` without the padding."""
    tr, tc = -(-rows // TILE), -(-cols // TILE)
    faces = tiles.reshape(batch, tr, tc, 2, 2, FACE, FACE)
    return faces.transpose(0, 1, 3, 5, 2, 4, 6).reshape(batch, tr * TILE, tc * TILE)[:, :rows, :cols]
