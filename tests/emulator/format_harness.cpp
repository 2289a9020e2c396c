// The emulator's tile format conversions alone (runtime/formats.cpp), for test_bfp_format.py:
//   format_harness FORMAT pack IN OUT     IN: row-major float32 tiles (1024 each), OUT: their tiles' bytes
//   format_harness FORMAT unpack IN OUT   IN: tiles' bytes, OUT: row-major float32 tiles
// FORMAT is Bfp8_b or Bfp4_b. pack_tile_data is what pack_tile does to a DST tile, unpack_tile what
// the unpacker does to a CB page.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "internal.hpp"

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const std::string name = argv[1], verb = argv[2];
  const emu::DataFormat fmt = name == "Bfp8_b" ? emu::DataFormat::Bfp8_b : emu::DataFormat::Bfp4_b;
  std::ifstream in(argv[3], std::ios::binary);
  const std::vector<char> data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const uint32_t tile = emu::tile_size_bytes(fmt);
  std::vector<char> out;
  if (verb == "pack") {
    const size_t tiles = data.size() / (emu::kTileHW * sizeof(float));
    out.resize(tiles * tile);
    for (size_t t = 0; t < tiles; ++t)
      emu::pack_tile_data(reinterpret_cast<const float*>(data.data()) + t * emu::kTileHW, fmt,
                          reinterpret_cast<uint8_t*>(out.data()) + t * tile);
  } else {
    const size_t tiles = data.size() / tile;
    out.resize(tiles * emu::kTileHW * sizeof(float));
    for (size_t t = 0; t < tiles; ++t)
      emu::unpack_tile(reinterpret_cast<const uint8_t*>(data.data()) + t * tile, fmt,
                       reinterpret_cast<float*>(out.data()) + t * emu::kTileHW);
  }
  std::ofstream(argv[4], std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
  return 0;
}
