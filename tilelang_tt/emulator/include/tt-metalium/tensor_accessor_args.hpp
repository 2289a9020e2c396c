// Emulated tt-metal host API: the arguments describing a buffer to a kernel's TensorAccessor,
// in the layout of tt-metal 0.81.1 (api/tensor/tensor_accessor_args.h on the device):
//   interleaved: compile-time [ArgsConfig, aligned page size]
//   sharded:     compile-time [ArgsConfig, aligned page size, rank, num_banks, tensor_shape[rank],
//                shard_shape[rank], bank coords] where num_banks carries the shard-contiguous
//                flag in its top bit and bank coords pack ((x << 8) | y) two per word, low half
//                first (NOC coordinates of the shard cores for L1, (bank id, 0) for DRAM).
// Each sharded field whose ArgConfig Runtime* bit is set moves, in the same order, to the common
// runtime args (append_to(cta, crta), get_common_runtime_args). Interleaved buffers ignore the
// Runtime* bits, as tt-metal does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <hostdevcommon/tensor_accessor/arg_config.hpp>
#include <tt-metalium/buffer.hpp>
#include <tt-metalium/mesh_buffer.hpp>

namespace tt::tt_metal {

class TensorAccessorArgs {
public:
    explicit TensorAccessorArgs(
        const Buffer& buffer, tensor_accessor::ArgsConfig args_config = tensor_accessor::ArgConfig::None);
    explicit TensorAccessorArgs(
        const Buffer* buffer, tensor_accessor::ArgsConfig args_config = tensor_accessor::ArgConfig::None);
    explicit TensorAccessorArgs(
        const distributed::MeshBuffer& buffer, tensor_accessor::ArgsConfig args_config = tensor_accessor::ArgConfig::None);
    explicit TensorAccessorArgs(
        const std::shared_ptr<distributed::MeshBuffer>& buffer,
        tensor_accessor::ArgsConfig args_config = tensor_accessor::ArgConfig::None);

    void append_to(std::vector<uint32_t>& compile_time_args) const;
    void append_to(std::vector<uint32_t>& compile_time_args, std::vector<uint32_t>& common_runtime_args) const;
    std::vector<uint32_t> get_compile_time_args() const;
    std::vector<uint32_t> get_common_runtime_args() const;

    static constexpr std::size_t MAX_NUM_DIMENSIONS = 8;

private:
    void update_args_config();
    void append_sharded_args(std::vector<uint32_t>& args, bool is_runtime) const;

    const Buffer* buffer_ = nullptr;
    tensor_accessor::ArgsConfig args_config_ = tensor_accessor::ArgConfig::None;
};

}  // namespace tt::tt_metal
