"""Element types: the one table of the dtypes every stage supports, and bfloat16 rounding.

A dtype is named as TileLang, TVM and torch name it; the table gives its tt-metal
``tt::DataFormat`` (plan ``data_format``, CB formats in ``main.cpp``) and that enumerator's value
(the CB formats of the device's ``chlkc_descriptors.h``), the bytes of one element,
how one element is stored in DRAM and in the emulator's ``.bin`` files (a numpy dtype string:
bfloat16 as its 16-bit pattern) and the ``ttnn.DataType`` it is on the device path. float16 is
not among them: ttnn has no float16 tensors.

Block floating point (``BLOCK_FORMATS``: ``bfloat8_b``, ``bfloat4_b``) is a way to store a float
tensor, not a dtype a kernel computes in: tt-metal's ``Bfp8_b`` / ``Bfp4_b`` tiles hold one shared
8-bit exponent per 16 consecutive values of a face row, then sign-magnitude datums (1 + 7 or
1 + 3 bits). A tile is stored as its four 16x16 faces: 64 exponent bytes first (faces in order,
rows in order), then the datums in the same order (tt-metal
``tt_metal/impl/data_format/blockfloat_common.cpp``, ``pack_fp32_vec_as_bfp_tiles``). Page sizes
come from :func:`tile_bytes`, never from ``element_bytes`` (which a block format does not have).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    dtype: str  # TileLang / TVM / torch dtype name
    data_format: str  # tt::DataFormat enumerator
    code: int  # its value (hw/inc/internal/tt-1xx/<arch>/tensix_types.h)
    element_bytes: int
    storage: str  # numpy dtype string of one stored element (little-endian); a block format: its bytes
    ttnn: str  # ttnn.DataType attribute
    mantissa_bits: int = 0  # block floating point: magnitude bits of a datum (a sign bit above them)

    @property
    def block(self) -> bool:
        """Block floating point: a tile is shared exponents and datums, no element has bytes of its own."""
        return self.mantissa_bits > 0

    @property
    def datum_bits(self) -> int:
        return self.mantissa_bits + 1 if self.block else 8 * self.element_bytes


FORMATS: dict[str, Format] = {f.dtype: f for f in (
    Format("bfloat16", "Float16_b", 5, 2, "<u2", "bfloat16"),
    Format("float32", "Float32", 0, 4, "<f4", "float32"),
    Format("int32", "Int32", 8, 4, "<i4", "int32"),
    Format("uint32", "UInt32", 24, 4, "<u4", "uint32"),
    Format("uint16", "UInt16", 9, 2, "<u2", "uint16"),
    # masks: a byte per element; the reader reads them, compute does not
    Format("uint8", "UInt8", 30, 1, "|u1", "uint8"),
)}

# Block floating point, by ttnn's name (ttnn.bfloat8_b): a storage of bfloat16 / float32 tensors
# (BufferLayout(dtype=...)). tt::DataFormat values from tensix_types.h: Bfp8_b = 6, Bfp4_b = 7.
BLOCK = 16  # values sharing one exponent: a face row
BLOCK_FORMATS: dict[str, Format] = {f.dtype: f for f in (
    Format("bfloat8_b", "Bfp8_b", 6, 0, "|u1", "bfloat8_b", mantissa_bits=7),
    Format("bfloat4_b", "Bfp4_b", 7, 0, "|u1", "bfloat4_b", mantissa_bits=3),
)}
# the dtypes a tensor stored in a block format may have (the kernel sees it in its dtype)
BLOCK_STORABLE = ("bfloat16", "float32")


def tile_bytes(fmt: Format, elements: int) -> int:
    """Bytes of a tile of ``elements`` values (a page of tiled tensors and CBs): tt-metal's
    ``tile_size(DataFormat)``; a block format holds one exponent byte per :data:`BLOCK` values
    and its datums (Bfp8_b 32x32: 64 + 1024 = 1088 bytes, Bfp4_b: 64 + 512 = 576)."""
    if fmt.block:
        return elements // BLOCK + elements * fmt.datum_bits // 8
    return elements * fmt.element_bytes


# dtypes stored as another's format: a bool tensor is its bytes, 0 or 1 (the plan says uint8)
STORED_AS = {"bool": "uint8"}

# The same table keyed by tt::DataFormat name (CB formats carry no dtype).
BY_DATA_FORMAT: dict[str, Format] = {f.data_format: f for f in (*FORMATS.values(), *BLOCK_FORMATS.values())}

# dtype -> (tt::DataFormat, bytes per element): the compiler's view of the table.
DATA_FORMATS: dict[str, tuple[str, int]] = {f.dtype: (f.data_format, f.element_bytes) for f in FORMATS.values()} | {
    dtype: (FORMATS[stored].data_format, FORMATS[stored].element_bytes) for dtype, stored in STORED_AS.items()}

BFLOAT16_QUIET_NAN = 0x7FC0


def bfloat16_round(float32_bits):
    """The bfloat16 bit pattern nearest to the float32 with bit pattern ``float32_bits``, ties to
    even. ``float32_bits`` is an ``int`` or an array of unsigned integers wider than 32 bits (numpy
    ``uint64``): only ``+``, ``>>`` and ``&`` are used. NaN inputs are the caller's to map to
    :data:`BFLOAT16_QUIET_NAN` (rounding may carry a NaN's payload into infinity)."""
    return (float32_bits + 0x7FFF + ((float32_bits >> 16) & 1)) >> 16


def float_to_bfloat16_bits(value: float) -> int:
    """bfloat16 bit pattern of ``value`` (rounded as a float32 first), round to nearest even."""
    if math.isnan(value):
        return BFLOAT16_QUIET_NAN
    return bfloat16_round(struct.unpack("<I", struct.pack("<f", value))[0])


def bfloat16_bits_to_float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
