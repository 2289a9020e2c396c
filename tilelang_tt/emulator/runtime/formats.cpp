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
    case DataFormat::Bfp8_b: return 1088;
  }
  throw EmulatorError("unknown data format");
}

const char* data_format_name(DataFormat fmt) {
  switch (fmt) {
    case DataFormat::Float32: return "Float32";
    case DataFormat::Float16_b: return "Float16_b";
    case DataFormat::Bfp8_b: return "Bfp8_b";
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

// Bfp8_b: 64 shared exponents (one per 16-element face row, faces in order), then 1024
// sign-magnitude bytes (sign bit + 7-bit mantissa including the hidden bit) in face order.
void unpack_bfp8(const uint8_t* src, float* face_ordered) {
  const uint8_t* mant = src + 64;
  for (uint32_t i = 0; i < kTileHW; ++i) {
    const int exp = src[i / 16];
    const uint8_t m = mant[i];
    const float mag = std::ldexp(static_cast<float>(m & 0x7f), exp - 127 - 6);
    face_ordered[i] = (m & 0x80) ? -mag : mag;
  }
}

void pack_bfp8(const float* face_ordered, uint8_t* dst) {
  uint8_t* mant = dst + 64;
  for (uint32_t row = 0; row < 64; ++row) {
    const float* v = face_ordered + row * 16;
    int shared = 0;
    for (int i = 0; i < 16; ++i) {
      const int e = static_cast<int>((std::bit_cast<uint32_t>(v[i]) >> 23) & 0xff);
      shared = e > shared ? e : shared;
    }
    dst[row] = static_cast<uint8_t>(shared);
    for (int i = 0; i < 16; ++i) {
      const float scaled = std::ldexp(std::fabs(v[i]), 127 + 6 - shared);
      long m = std::lrint(scaled);  // round to nearest even
      m = m > 127 ? 127 : m;
      mant[row * 16 + i] = static_cast<uint8_t>(m | (std::signbit(v[i]) && m != 0 ? 0x80 : 0));
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

uint32_t datum_size_bytes(DataFormat fmt) { return fmt == DataFormat::Bfp8_b ? 0 : tile_size_bytes(fmt) / kTileHW; }

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
    case DataFormat::Bfp8_b: break;
  }
  throw EmulatorError("load_datums: Bfp8_b is stored in tiles only");
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
    case DataFormat::Bfp8_b: break;
  }
  throw EmulatorError("store_datums: Bfp8_b is stored in tiles only");
}

void unpack_tile(const uint8_t* src, DataFormat fmt, float* out) {
  float face_ordered[kTileHW];
  if (fmt == DataFormat::Bfp8_b)
    unpack_bfp8(src, face_ordered);
  else
    load_datums(src, fmt, kTileHW, face_ordered);
  const auto& idx = kOrder.to_face;
  for (uint32_t i = 0; i < kTileHW; ++i) out[i] = face_ordered[idx[i]];
}

void pack_tile_data(const float* in, DataFormat fmt, uint8_t* dst) {
  float face_ordered[kTileHW];
  const auto& idx = kOrder.to_face;
  for (uint32_t i = 0; i < kTileHW; ++i) face_ordered[idx[i]] = in[i];
  if (fmt == DataFormat::Bfp8_b)
    pack_bfp8(face_ordered, dst);
  else
    store_datums(face_ordered, kTileHW, fmt, dst);
}

}  // namespace emu
