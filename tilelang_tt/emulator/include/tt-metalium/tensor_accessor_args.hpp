// Emulated tt-metal host API: compile-time arguments describing a buffer to a kernel's
// TensorAccessor. Interleaved buffers give [ArgsConfig bits, aligned page size], as tt-metal
// 0.81.1's tensor_accessor_args.h expects.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <tt-metalium/mesh_buffer.hpp>

namespace tt::tt_metal {

namespace tensor_accessor {
enum class ArgConfig : uint8_t {
    None = 0,
    Sharded = 1 << 0,
    IsDram = 1 << 1,
    RuntimeRank = 1 << 2,
    RuntimeNumBanks = 1 << 3,
    RuntimeTensorShape = 1 << 4,
    RuntimeShardShape = 1 << 5,
    RuntimeBankCoords = 1 << 6,
    RuntimePageSize = 1 << 7,
};
}  // namespace tensor_accessor

class TensorAccessorArgs {
public:
    explicit TensorAccessorArgs(
        const distributed::MeshBuffer& buffer,
        tensor_accessor::ArgConfig args_config = tensor_accessor::ArgConfig::None);
    explicit TensorAccessorArgs(
        const std::shared_ptr<distributed::MeshBuffer>& buffer,
        tensor_accessor::ArgConfig args_config = tensor_accessor::ArgConfig::None);

    void append_to(std::vector<uint32_t>& compile_time_args) const;
    std::vector<uint32_t> get_compile_time_args() const;

private:
    std::vector<uint32_t> compile_time_args_;
};

}  // namespace tt::tt_metal
