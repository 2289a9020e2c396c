// Emulated tt-metal host API: circular buffer configuration.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>

#include <tt-metalium/base_types.hpp>

namespace tt::tt_metal {

using CBHandle = uintptr_t;

class CircularBufferConfig {
public:
    static constexpr std::size_t max_buffer_index = 64;

    explicit CircularBufferConfig(uint32_t total_size);
    CircularBufferConfig(uint32_t total_size, const std::map<uint8_t, tt::DataFormat>& data_format_spec);

    CircularBufferConfig& set_page_size(uint8_t buffer_index, uint32_t page_size);

    uint32_t total_size() const { return total_size_; }
    const std::array<std::optional<tt::DataFormat>, max_buffer_index>& data_formats() const { return formats_; }
    const std::array<std::optional<uint32_t>, max_buffer_index>& page_sizes() const { return page_sizes_; }

private:
    uint32_t total_size_;
    std::array<std::optional<tt::DataFormat>, max_buffer_index> formats_{};
    std::array<std::optional<uint32_t>, max_buffer_index> page_sizes_{};
};

}  // namespace tt::tt_metal
