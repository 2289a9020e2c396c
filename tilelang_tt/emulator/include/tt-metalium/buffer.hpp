// Emulated tt-metal host API: a device buffer as seen from one device.
#pragma once

#include <cstdint>

#include <tt-metalium/base_types.hpp>

namespace tt::tt_metal {

enum class BufferType { DRAM, L1, SYSTEM_MEMORY, L1_SMALL, TRACE };

class Buffer {
public:
    Buffer(DeviceAddr address, DeviceAddr size, DeviceAddr page_size, BufferType type);

    DeviceAddr address() const;
    DeviceAddr size() const;
    DeviceAddr page_size() const;
    BufferType buffer_type() const { return type_; }

private:
    DeviceAddr address_;
    DeviceAddr size_;
    DeviceAddr page_size_;
    BufferType type_;
};

}  // namespace tt::tt_metal
