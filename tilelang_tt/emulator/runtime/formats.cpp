// Tile data formats: face-ordered L1 tiles <-> row-major fp32 (the DST register layout).
// A DST word is a float; 32-bit integer datums (Int32, UInt32) are their raw bits in it, as the
// unpacker moves them straight to a 32-bit DST and the packer writes them back unchanged.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "internal.hpp"

namespace emu {

uint32_t tile_size_bytes(DataFormat fmt) {
  switch (fmt) {
    case DataFormat::Float32:
    case DataFormat::UInt32:
    case DataFormat::Int32: return 4096;
    case DataFormat::Float16_b:
    case DataFormat::UInt16: return 2048;
    case DataFormat::UInt8: return 1024;
    case DataFormat::Bfp8_b: return 1088;  // tt-metal tile_size: 64 exponents + 1024 datums
    case DataFormat::Bfp4_b: return 576;   // 64 exponents + 512 bytes of 4-bit datums
  }
  throw EmulatorError("unknown data format");
}

const char* data_format_name(DataFormat fmt) {
  switch (fmt) {
    case DataFormat::Float32: return "Float32";
    case DataFormat::Float16_b: return "Float16_b";
    case DataFormat::Bfp8_b: return "Bfp8_b";
    case DataFormat::Bfp4_b: return "Bfp4_b";
    case DataFormat::UInt32: return "UInt32";
    case DataFormat::Int32: return "Int32";
    case DataFormat::UInt16: return "UInt16";
    case DataFormat::UInt8: return "UInt8";
  }
  return "?";
}

uint32_t face_index(uint32_t r, uint32_t c) {
  return ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15);
}

namespace {
struct FaceOrder {
  std::array<uint16_t, kTileHW> to_face{};  // row-major index -> face-order index
  FaceOrder() {
    for (uint32_t r = 0; r < 32; ++r)
      for (uint32_t c = 0; c < 32; ++c) to_face[r * 32 + c] = static_cast<uint16_t>(face_index(r, c));
  }
};
const FaceOrder kOrder;

// Block floating point (Bfp8_b, Bfp4_b): 64 shared exponents, one per 16-value face row (faces in
// order, rows in order), then one sign-magnitude datum per value in the same order (Bfp8_b: a byte
// each; Bfp4_b: two a byte, the even value in the low nibble). The numpy model of the format,
// tilelang_tt/emulator/blockfloat.py, says where each rule comes from; these are the same rules,
// tested bit for bit against it (tests/emulator/test_bfp_format.py).
uint32_t mantissa_bits(DataFormat fmt) { return fmt == DataFormat::Bfp8_b ? 7 : 3; }

uint8_t datum_at(const uint8_t* datums, DataFormat fmt, uint32_t i) {
  return fmt == DataFormat::Bfp8_b ? datums[i] : static_cast<uint8_t>((datums[i / 2] >> (4 * (i % 2))) & 0xf);
}

// Unpack: the magnitude normalised under the shared exponent (tt-metal convert_bfp_to_u32); a
// result below float32's normal range is flushed to a signed zero.
void unpack_bfp(const uint8_t* src, DataFormat fmt, float* face_ordered) {
  const uint32_t width = mantissa_bits(fmt);
  for (uint32_t i = 0; i < kTileHW; ++i) {
    const uint32_t datum = datum_at(src + 64, fmt, i);
    const uint32_t magnitude = datum & ((1u << width) - 1);
    uint32_t bits = (datum >> width & 1u) << 31;
    if (magnitude != 0) {
      const int below = static_cast<int>(width) - 1 - (31 - std::countl_zero(magnitude));
      const int exponent = static_cast<int>(src[i / 16]) - below;
      const uint32_t fraction = (magnitude << (below + 1)) & ((1u << width) - 1);
      if (exponent >= 1) bits |= static_cast<uint32_t>(exponent) << 23 | fraction << (23 - width);
    }
    face_ordered[i] = std::bit_cast<float>(bits);
  }
}

// Pack, as the packer does (tt-llk's model): each value truncated to bfloat16, a 7-bit magnitude of
// the hidden bit and the top 6 mantissa bits, shifted right to the row's largest exponent and
// rounded half away from zero on the last bit shifted out; Bfp4_b keeps its top 3 bits. A value of
// exponent field 0 (zero, a flushed denormal) is the datum 0; a datum of magnitude 0 has no sign.
void pack_bfp(const float* face_ordered, DataFormat fmt, uint8_t* dst) {
  const uint32_t width = mantissa_bits(fmt);
  uint8_t* datums = dst + 64;
  std::memset(datums, 0, tile_size_bytes(fmt) - 64);
  for (uint32_t row = 0; row < 64; ++row) {
    uint32_t bf16[16], shared = 0;
    for (int i = 0; i < 16; ++i) {
      bf16[i] = std::bit_cast<uint32_t>(face_ordered[row * 16 + i]) >> 16;
      shared = std::max(shared, bf16[i] >> 7 & 0xffu);
    }
    dst[row] = static_cast<uint8_t>(shared);
    for (uint32_t i = 0; i < 16; ++i) {
      const uint32_t exponent = bf16[i] >> 7 & 0xffu, delta = shared - exponent;
      const uint32_t seven = (bf16[i] & 0x7fu) >> 1 | 0x40u;
      const uint32_t guard = delta > 0 && delta <= 32 ? seven >> (delta - 1) & 1u : 0u;
      uint32_t magnitude = exponent == 0 ? 0 : ((delta < 32 ? seven >> delta : 0u) + guard) >> (7 - width);
      const uint32_t datum = magnitude == 0 ? 0 : (bf16[i] >> 15 & 1u) << width | magnitude;
      const uint32_t at = row * 16 + i;
      if (fmt == DataFormat::Bfp8_b)
        datums[at] = static_cast<uint8_t>(datum);
      else
        datums[at / 2] |= static_cast<uint8_t>(datum << (4 * (at % 2)));
    }
  }
}
}  // namespace

uint16_t float_to_bf16_rne(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  const uint32_t bias = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + bias) >> 16);
}

float bf16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

float round_to_bf16(float f) { return bf16_to_float(float_to_bf16_rne(f)); }

static bool is_block_format(DataFormat fmt) { return fmt == DataFormat::Bfp8_b || fmt == DataFormat::Bfp4_b; }

uint32_t datum_size_bytes(DataFormat fmt) { return is_block_format(fmt) ? 0 : tile_size_bytes(fmt) / kTileHW; }

void load_datums(const uint8_t* src, DataFormat fmt, uint32_t n, float* out) {
  switch (fmt) {
    case DataFormat::Float32: {
      const float* s = reinterpret_cast<const float*>(src);
      std::copy(s, s + n, out);
      return;
    }
    case DataFormat::Float16_b: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (uint32_t i = 0; i < n; ++i) out[i] = bf16_to_float(s[i]);
      return;
    }
    case DataFormat::UInt16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (uint32_t i = 0; i < n; ++i) out[i] = static_cast<float>(s[i]);
      return;
    }
    case DataFormat::UInt8: {
      for (uint32_t i = 0; i < n; ++i) out[i] = static_cast<float>(src[i]);
      return;
    }
    case DataFormat::UInt32:
    case DataFormat::Int32:  // bit copies: DST holds the two's-complement word
      std::memcpy(out, src, size_t(n) * 4);
      return;
    case DataFormat::Bfp8_b:
    case DataFormat::Bfp4_b: break;
  }
  throw EmulatorError(std::string("load_datums: ") + data_format_name(fmt) + " is stored in tiles only");
}

void store_datums(const float* in, uint32_t n, DataFormat fmt, uint8_t* dst) {
  switch (fmt) {
    case DataFormat::Float32: {
      std::copy(in, in + n, reinterpret_cast<float*>(dst));
      return;
    }
    case DataFormat::Float16_b: {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      for (uint32_t i = 0; i < n; ++i) d[i] = float_to_bf16_rne(in[i]);
      return;
    }
    case DataFormat::UInt16: {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      for (uint32_t i = 0; i < n; ++i) d[i] = static_cast<uint16_t>(std::lrint(in[i]));
      return;
    }
    case DataFormat::UInt8: {
      for (uint32_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(std::lrint(in[i]));
      return;
    }
    case DataFormat::UInt32:
    case DataFormat::Int32:  // bit copies of the DST words
      std::memcpy(dst, in, size_t(n) * 4);
      return;
    case DataFormat::Bfp8_b:
    case DataFormat::Bfp4_b: break;
  }
  throw EmulatorError(std::string("store_datums: ") + data_format_name(fmt) + " is stored in tiles only");
}

void unpack_tile(const uint8_t* src, DataFormat fmt, float* out) {
  float face_ordered[kTileHW];
  if (is_block_format(fmt))
    unpack_bfp(src, fmt, face_ordered);
  else
    load_datums(src, fmt, kTileHW, face_ordered);
  const auto& idx = kOrder.to_face;
  for (uint32_t i = 0; i < kTileHW; ++i) out[i] = face_ordered[idx[i]];
}

void pack_tile_data(const float* in, DataFormat fmt, uint8_t* dst) {
  float face_ordered[kTileHW];
  const auto& idx = kOrder.to_face;
  for (uint32_t i = 0; i < kTileHW; ++i) face_ordered[idx[i]] = in[i];
  if (is_block_format(fmt))
    pack_bfp(face_ordered, fmt, dst);
  else
    store_datums(face_ordered, kTileHW, fmt, dst);
}

}  // namespace emu
