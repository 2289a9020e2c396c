// Emulated tt-metal host API: a global semaphore (tt-metal 0.81.1 names and signatures; the wheel's
// libtt_metal.so exports tt::tt_metal::GlobalSemaphore::address() const and
// tt::tt_metal::CreateGlobalSemaphore(distributed::MeshDevice&, CoreRangeSet, uint32_t, BufferType)).
// One L1 word at the same address on the given cores of every chip of the mesh, set to its initial
// value when created, before any program runs; kernels use its address as any semaphore's.
#pragma once

#include <cstdint>

#include <tt-metalium/base_types.hpp>
#include <tt-metalium/buffer_types.hpp>
#include <tt-metalium/core_coord.hpp>

namespace tt::tt_metal {

namespace distributed {
class MeshDevice;
}  // namespace distributed

class GlobalSemaphore {
public:
    DeviceAddr address() const;

private:
    explicit GlobalSemaphore(DeviceAddr address) : address_(address) {}

    DeviceAddr address_;

    friend GlobalSemaphore CreateGlobalSemaphore(
        distributed::MeshDevice& device, CoreRangeSet cores, uint32_t initial_value, BufferType buffer_type);
};

}  // namespace tt::tt_metal
