// Registration of a kernel translation unit with the device model.
//
// The driver compiles each kernel source as its own translation unit:
//   g++ -std=c++20 -O2 -I<emulator>/include -I<emulator>/runtime \
//       -Dkernel_main=<unique_name> -DKERNEL_COMPILE_TIME_ARGS=a,b,c -c reader.cpp
// (a compute kernel also -DTT_EMU_MATH_APPROX_MODE=0|1, its ComputeConfig::math_approx_mode; a data-movement
// kernel -DNOC_INDEX=0|1, its DataMovementConfig::noc)
// with this appended after the kernel source:
//   #include "kernel_registry.hpp"
//   TT_EMU_REGISTER_KERNEL("reader.cpp", <unique_name>)
// The registrar records the function, the compile-time args, the APPROX and the NOC the TU was built with, so
// Device::add_kernel can check them against what the host program gives the kernel.
#pragma once

#include "device_types.hpp"

#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS
#endif

#define TT_EMU_REGISTER_KERNEL(source_name, fn)                                                   \
  namespace {                                                                                     \
  [[maybe_unused]] const bool tt_emu_registered_##fn =                                            \
      (::emu::register_kernel(source_name, &fn, {KERNEL_COMPILE_TIME_ARGS}, TT_EMU_MATH_APPROX_MODE != 0, \
                              NOC_INDEX),                                                         \
       true);                                                                                     \
  }
