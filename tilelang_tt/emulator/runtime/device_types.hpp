// The device model's types and functions that the kernel API headers use as well as the runtime.
// Kernels include this, never device.hpp: it includes nothing heavier than <cstdint> (a kernel
// translation unit is mostly header parsing; <string>, <vector> and <memory> would triple it).
#pragma once

#include <cstdint>
#include <initializer_list>

namespace emu {

enum class DataFormat : uint8_t { Float32, Float16_b, Bfp8_b, Bfp4_b, UInt32, Int32, UInt16, UInt8 };

uint32_t tile_size_bytes(DataFormat fmt);
const char* data_format_name(DataFormat fmt);

// A compute kernel's ComputeConfig::math_approx_mode as its build sees it. tt-metal's JIT build writes it
// into the kernel's generated chlkc_descriptors.h as `constexpr bool APPROX` (tt_metal/jit_build/genfiles.cpp,
// emit_math_scalar_descriptors), the default of the SFPU API's approximation arguments; the emulator's build
// passes it as -DTT_EMU_MATH_APPROX_MODE=0|1 (driver.py), api/compute/common.h makes it APPROX, and
// Device::add_kernel checks it against the program's ComputeConfig. Without the define a kernel is built
// with APPROX = false.
#ifndef TT_EMU_MATH_APPROX_MODE
#define TT_EMU_MATH_APPROX_MODE 0
#endif

// A data-movement kernel's NOC as its build sees it: tt-metal 0.81.1 makes it the kernel's
// `constexpr uint8_t noc_index = NOC_INDEX;` (hw/inc/internal/dataflow/dataflow_api_common.h:10), its JIT build
// defining NOC_INDEX as the DataMovementConfig's noc (tt_metal/impl/kernels/kernel.cpp,
// DataMovementKernel::process_defines); the emulator's builds pass it the same way (driver.py for a plan's
// kernels, runtime/jit.cpp for kernel files) and Device::add_kernel checks it against the program's config.
// Without the define a kernel is built for NOC 0 (tt-metal gives compute kernels none: they do not use the NOC).
#ifndef NOC_INDEX
#define NOC_INDEX 0
#endif

// A kernel translation unit's entry point, registered when the program starts (kernel_registry.hpp)
// with the compile-time args, the APPROX and the NOC it was built with.
using KernelFn = void (*)();
void register_kernel(const char* source_name, KernelFn fn, std::initializer_list<uint32_t> compile_args,
                     bool math_approx_mode, uint8_t noc_index);

// A read-only view of `count` consecutive values (what std::span<const T> would be, without <span>).
template <typename T>
struct View {
  const T* ptr = nullptr;
  uint32_t count = 0;

  constexpr const T& operator[](uint32_t i) const { return ptr[i]; }
  constexpr uint32_t size() const { return count; }
  constexpr const T* data() const { return ptr; }
  constexpr const T* begin() const { return ptr; }
  constexpr const T* end() const { return ptr + count; }
};

// Bank (index into the shard cores / DRAM banks) and page slot within that bank of page
// `page_id` of a sharded buffer, as tt-metal's TensorAccessor::get_bank_and_offset computes it:
// the page's coordinates (row-major over tensor_shape, in pages) give the flattened shard id
// (shards row-major over the shard grid) and the page's position inside its shard; shards go to
// banks round-robin (bank = shard % num_banks, slot = shard / num_banks) or, shard-contiguous
// (CONTIGUOUS_1D), num_shards / num_banks consecutive shards per bank. page_in_bank =
// slot * shard volume + position in the shard.
struct ShardPage {
  uint32_t bank;
  uint32_t page_in_bank;
};
ShardPage locate_shard_page(View<uint32_t> tensor_shape, View<uint32_t> shard_shape, uint32_t num_banks,
                            bool shard_contiguous, uint32_t page_id);
// Bank and slot within the bank of shard `shard_id` of `num_shards` (the distribution step above).
struct BankSlot {
  uint32_t bank;
  uint32_t slot;
};
BankSlot shard_to_bank(uint64_t shard_id, uint64_t num_shards, uint32_t num_banks, bool shard_contiguous);

}  // namespace emu
