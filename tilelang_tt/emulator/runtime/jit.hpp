// The emulated host API's kernel build: what tt-metal's JIT does when a program names a kernel by
// its file (CreateKernel with a path): find the file, compile it with the CreateKernel config's
// compile-time args, named compile-time args and defines and the program's CB formats, and load it.
// The driver's own kernels (a plan's, compiled into the program ahead of time and registered by
// name, kernel_registry.hpp) never come here.
//
// The build is configured by the environment the driver sets (tilelang_tt/emulator/driver.py,
// kernel_build_env): TT_EMU_KERNEL_BUILD, the compiler and its flags, one argument per line;
// TT_EMU_KERNEL_CACHE, the directory of built kernels (one subdirectory per content hash);
// TT_METAL_RUNTIME_ROOT / TT_METAL_KERNEL_PATH, where relative kernel paths are searched, as in
// tt-metal 0.81.1.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <tt-metalium/experimental/metal2_bindings.hpp>

#include "device.hpp"

namespace emu {

struct KernelBuild {
  std::string path;  // the source file, resolved (resolve_kernel_source)
  std::vector<uint32_t> compile_args;
  std::map<std::string, std::string> defines;
  std::unordered_map<std::string, uint32_t> named_args;
  std::vector<uint8_t> cb_formats;  // kernel-side DataFormat by CB index, 0xff for none (chlkc_descriptors.h)
  const ComputeOptions* compute = nullptr;  // a compute kernel's config (its descriptors); null for data movement
  uint8_t noc = 0;  // a data-movement kernel's DataMovementConfig::noc (its NOC_INDEX)
  std::string arch;  // the device's arch (contract/arch.py name): the build's ARCH_* define
  // A Metal 2.0 kernel's bindings (BindMetal2Kernel): the build writes the generated headers the JIT writes
  // for it and includes them before the kernel; null for a kernel of the legacy API.
  const tt::tt_metal::experimental::Metal2KernelBindings* metal2 = nullptr;
};

// tt-metal 0.81.1 KernelSource's search (tt_metal/impl/kernels/kernel.cpp, source_search_paths): the
// path as given (absolute or relative to the working directory), then under TT_METAL_RUNTIME_ROOT (the
// root dir: the directory holding tt_metal/ and ttnn/), then under TT_METAL_KERNEL_PATH. Throws
// EmulatorError naming every path searched when none exists.
std::string resolve_kernel_source(const std::string& file_name);

// The kernel built as `build` says (compiled once per content into TT_EMU_KERNEL_CACHE, loaded once
// per process). Throws EmulatorError with the compiler's messages when it does not compile.
const KernelInfo& build_kernel(const KernelBuild& build);

}  // namespace emu
