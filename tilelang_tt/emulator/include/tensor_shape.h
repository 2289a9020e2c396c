// tt-llk common/tensor_shape.h (tt-metal 0.81.1): a tile's shape in faces, which the newer compute API calls take
// (api/compute/reduce_custom.h). The emulator's tiles are 32 x 32 of four 16 x 16 faces.
#pragma once

#include <cstdint>

namespace ckernel {

constexpr std::uint8_t MAX_FACE_R_DIM = 16;
constexpr std::uint8_t MAX_FACE_C_DIM = 16;
constexpr std::uint8_t MAX_TILE_R_DIM = 32;
constexpr std::uint8_t MAX_TILE_C_DIM = 32;
constexpr std::uint8_t MAX_NUM_FACES = 4;

struct __attribute__((packed)) TensorShape {
  std::uint8_t face_r_dim;
  std::uint8_t face_c_dim;
  std::uint8_t num_faces_r_dim;
  std::uint8_t num_faces_c_dim;
  constexpr std::uint8_t total_num_faces() const { return num_faces_r_dim * num_faces_c_dim; }
};

// tensor_shape.h:120 tensor_shape_from_num_faces: 4 faces are 2 x 2, else one row of num_faces.
constexpr TensorShape tensor_shape_from_num_faces(const std::uint32_t face_r_dim = MAX_FACE_R_DIM,
                                                  const std::uint32_t num_faces = MAX_NUM_FACES) {
  return {static_cast<std::uint8_t>(face_r_dim), MAX_FACE_C_DIM, static_cast<std::uint8_t>(num_faces == 4 ? 2 : 1),
          static_cast<std::uint8_t>(num_faces == 4 ? 2 : num_faces)};
}

}  // namespace ckernel
