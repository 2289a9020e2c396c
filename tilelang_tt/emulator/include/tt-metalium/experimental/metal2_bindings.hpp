// What tt-metal 0.81.1's Metal 2.0 host API (ProgramSpec, MakeProgramFromSpec: tt-metalium/experimental/
// metal2_host_api/, whose headers the ttnn wheel does not ship) records on a kernel for the JIT's generated
// headers (tt_metal/jit_build/genfiles.cpp: kernel_bindings_generated.h, kernel_args_generated.h), for a
// host program that lowers its ProgramSpec itself (tests/emulator/metal2.py): the kernel is created with
// CreateKernel, its DataflowBuffers are circular buffers, its tensors' TensorAccessorArgs are its positional
// compile-time args and their base addresses its common runtime args, and BindMetal2Kernel names them:
//   dfbs                      accessor name -> circular buffer index        (dfb::<name>)
//   semaphores                accessor name -> semaphore id                 (sem::<name>)
//   tensors                   accessor name, first compile-time arg of its TensorAccessorArgs, in binding
//                             order; the address of the i-th is common runtime arg
//                             common_runtime_arg_names.size() + i           (tensor::<name>)
//   runtime_arg_names         the named runtime args, in the order of their words       (args::<name>)
//   common_runtime_arg_names  the named common runtime args, likewise                   (args::<name>)
// The kernel's named compile-time args (its config's named_compile_args) become args::<name> constants.
// Emulator-only: not a tt-metal 0.81.1 API.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tt::tt_metal {
class Program;
using KernelHandle = std::uint32_t;
}  // namespace tt::tt_metal

namespace tt::tt_metal::experimental {

struct Metal2TensorBinding {
    std::string name;
    std::uint32_t cta_offset = 0;
};

struct Metal2KernelBindings {
    std::vector<std::pair<std::string, std::uint32_t>> dfbs;
    std::vector<std::pair<std::string, std::uint32_t>> semaphores;
    std::vector<Metal2TensorBinding> tensors;
    std::vector<std::string> runtime_arg_names;
    std::vector<std::string> common_runtime_arg_names;
};

// Marks `kernel` (a kernel file given to CreateKernel) a Metal 2.0 kernel built with these bindings.
void BindMetal2Kernel(Program& program, KernelHandle kernel, Metal2KernelBindings bindings);

}  // namespace tt::tt_metal::experimental
