// The emulator's plan host: the program of a plan, set up through the same tt-metal 0.81.1 host API
// calls the generated main.cpp makes, from a script the driver writes (tilelang_tt/emulator/plan_host.py), with
// the kernels loaded from a shared object.
//
// A run of a program of one device whose main.cpp is the compiler's (driver.run: the tests' runs, the autotuner's
// candidates, the profiler's do_bench) needs the device to run the program and, unless it only times it, its
// outputs. main.cpp differs from program to program in its constants only (buffer sizes, CBs, cores, runtime
// args), and compiling it is most of a new program's build; this host is compiled once and reads those constants.
// It makes the calls main.cpp makes (codegen/host.py), in the same order: the buffers in plan order, each uploaded
// as main.cpp uploads it (the driver writes its pages: tilized, or rows, or block floating point tiles), then per
// launch CreateProgram, the core ranges, the CBs, the semaphores (their ids checked), the kernels with their
// compile-time args (TensorAccessorArgs of the buffers at the accessors' offsets), the runtime args per core and
// EnqueueMeshWorkload, then Finish, the reads of the outputs' pages (main.cpp's reads, in plan order; the driver
// untilizes them as main.cpp does) and close.
//
// Usage: plan_host SCRIPT KERNELS.so. The shared object holds the plan's kernel translation units, compiled as
// the driver compiles them for main.cpp's executable (kernel_registry.hpp): loading it registers them by source
// name, and CreateKernel finds them as it finds compiled-in kernels. The script, one directive per line, tokens
// separated by spaces (names are plan buffer names: identifiers):
//   buffer NAME SIZE PAGE_SIZE TYPE               an interleaved buffer (TYPE: BufferType, 0 DRAM, 1 L1)
//   sharded NAME SIZE PAGE_SIZE TYPE TR TC SR SC GX GY
//                                                 sharded: tensor and shard shapes in pages, shard grid in cores
//   upload NAME PATH                              write the bytes of PATH to the buffer (non-blocking)
//   program X0 Y0 X1 Y1 [X0 Y0 X1 Y1 ...]         a launch: CreateProgram over these core ranges
//   cb INDEX SIZE PAGE_SIZE FORMAT                FORMAT: tt::DataFormat's value
//   semaphore ID INITIAL
//   args ROLE ITEM...                             compile-time args: a number, @NAME (TensorAccessorArgs of the
//                                                 buffer), @@NAME (sharded: its bank coordinates to the common args)
//   unpack INDEX...                               a compute kernel's CBs unpacked to DST (UnpackToDestFp32)
//   datamovement ROLE SOURCE PROCESSOR NOC        CreateKernel with a DataMovementConfig (enum values)
//   compute ROLE SOURCE FIDELITY FP32 APPROX      CreateKernel with a ComputeConfig (MathFidelity's value, 0/1)
//   runtime ROLE X Y VALUE...                     SetRuntimeArgs: a number, @NAME (the buffer's address),
//                                                 noc_x:X,Y / noc_y:X,Y (a logical core's NOC coordinate)
//   enqueue                                       the launch's MeshWorkload, enqueued without waiting
//   download NAME PATH                            after Finish: read the buffer (blocking), its bytes to PATH
#include <dlfcn.h>

#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/distributed.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/tensor_accessor_args.hpp>

using namespace tt;
using namespace tt::tt_metal;

namespace {

using MeshBufferPtr = std::shared_ptr<distributed::MeshBuffer>;

uint32_t number(const std::string& token) { return static_cast<uint32_t>(std::stoull(token)); }

std::vector<uint8_t> read_bytes(const std::string& path, uint64_t size) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::vector<uint8_t> bytes(size, 0);
  file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  return bytes;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!file) throw std::runtime_error("cannot write " + path);
}

// One launch being set up: its program, cores, compile-time args, kernels.
struct Launch {
  explicit Launch(std::vector<CoreRange> ranges) : cores(std::move(ranges)) {}
  Program program = CreateProgram();
  CoreRangeSet cores;
  std::map<std::string, std::vector<uint32_t>> compile_args, common_args;
  std::vector<UnpackToDestMode> unpack_to_dest;
  std::map<std::string, KernelHandle> kernels;
};

class Host {
 public:
  explicit Host(std::shared_ptr<distributed::MeshDevice> device)
      : device_(std::move(device)), queue_(device_->mesh_command_queue()) {}

  void directive(const std::vector<std::string>& t) {
    const std::string& what = t.at(0);
    if (what == "buffer" || what == "sharded") {
      distributed::DeviceLocalBufferConfig local{.page_size = number(t.at(3)),
                                                 .buffer_type = static_cast<BufferType>(number(t.at(4)))};
      if (what == "sharded") {
        const CoreRangeSet grid(std::vector<CoreRange>{
            CoreRange(CoreCoord{0, 0}, CoreCoord{number(t.at(9)) - 1, number(t.at(10)) - 1})});
        local.sharding_args = BufferShardingArgs(BufferDistributionSpec(
            Shape({number(t.at(5)), number(t.at(6))}), Shape({number(t.at(7)), number(t.at(8))}), grid,
            ShardOrientation::ROW_MAJOR, ShardDistributionStrategy::ROUND_ROBIN_1D));
      }
      distributed::ReplicatedBufferConfig replicated{.size = std::stoull(t.at(2))};
      buffers_[t.at(1)] = distributed::MeshBuffer::create(replicated, local, device_.get());
    } else if (what == "upload") {
      const MeshBufferPtr& buffer = buffers_.at(t.at(1));
      uploads_.push_back(read_bytes(t.at(2), buffer->size()));
      queue_.enqueue_write_mesh_buffer(buffer, uploads_.back().data(), false);
    } else if (what == "program") {
      std::vector<CoreRange> ranges;
      for (size_t i = 1; i + 3 < t.size(); i += 4)
        ranges.emplace_back(CoreCoord{number(t[i]), number(t[i + 1])}, CoreCoord{number(t[i + 2]), number(t[i + 3])});
      launch_ = std::make_unique<Launch>(std::move(ranges));
    } else if (what == "cb") {
      const auto index = static_cast<uint8_t>(number(t.at(1)));
      std::map<uint8_t, tt::DataFormat> formats = {{index, static_cast<tt::DataFormat>(number(t.at(4)))}};
      CircularBufferConfig config(number(t.at(2)), formats);
      config.set_page_size(index, number(t.at(3)));
      CreateCircularBuffer(launch_->program, launch_->cores, config);
    } else if (what == "semaphore") {
      if (CreateSemaphore(launch_->program, launch_->cores, number(t.at(2))) != number(t.at(1)))
        throw std::runtime_error("semaphore " + t.at(1) + " was not allocated as id " + t.at(1));
    } else if (what == "args") {
      std::vector<uint32_t>& args = launch_->compile_args[t.at(1)];
      std::vector<uint32_t>& common = launch_->common_args[t.at(1)];
      for (size_t i = 2; i < t.size(); ++i) {
        if (t[i].rfind("@@", 0) == 0) {
          TensorAccessorArgs(*buffers_.at(t[i].substr(2)), tensor_accessor::ArgConfig::RuntimeBankCoords)
              .append_to(args, common);
        } else if (t[i].rfind('@', 0) == 0) {
          TensorAccessorArgs(*buffers_.at(t[i].substr(1))).append_to(args);
        } else {
          args.push_back(number(t[i]));
        }
      }
    } else if (what == "unpack") {
      launch_->unpack_to_dest.assign(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);
      for (size_t i = 1; i < t.size(); ++i) launch_->unpack_to_dest.at(number(t[i])) = UnpackToDestMode::UnpackToDestFp32;
    } else if (what == "datamovement") {
      add_kernel(t.at(1), t.at(2),
                 DataMovementConfig{.processor = static_cast<DataMovementProcessor>(number(t.at(3))),
                                    .noc = static_cast<NOC>(number(t.at(4))),
                                    .compile_args = launch_->compile_args[t.at(1)]});
    } else if (what == "compute") {
      add_kernel(t.at(1), t.at(2),
                 ComputeConfig{.math_fidelity = static_cast<MathFidelity>(number(t.at(3))),
                               .fp32_dest_acc_en = number(t.at(4)) != 0,
                               .unpack_to_dest_mode = launch_->unpack_to_dest,
                               .math_approx_mode = number(t.at(5)) != 0,
                               .compile_args = launch_->compile_args[t.at(1)]});
    } else if (what == "runtime") {
      std::vector<uint32_t> values;
      for (size_t i = 4; i < t.size(); ++i) values.push_back(value(t[i]));
      SetRuntimeArgs(launch_->program, launch_->kernels.at(t.at(1)), CoreCoord{number(t.at(2)), number(t.at(3))},
                     values);
    } else if (what == "enqueue") {
      distributed::MeshWorkload workload;
      distributed::MeshCoordinateRange device_range(device_->shape());
      workload.add_program(device_range, std::move(launch_->program));
      distributed::EnqueueMeshWorkload(queue_, workload, false);
      launch_.reset();
    } else if (what == "download") {
      distributed::Finish(queue_);
      const MeshBufferPtr& buffer = buffers_.at(t.at(1));
      std::vector<uint8_t> bytes(buffer->size());
      queue_.enqueue_read_mesh_buffer(bytes.data(), buffer, true);
      write_bytes(t.at(2), bytes);
    } else {
      throw std::runtime_error("unknown directive " + what);
    }
  }

  void finish() {
    distributed::Finish(queue_);
    device_->close();
  }

 private:
  template <typename Config>
  void add_kernel(const std::string& role, const std::string& source, const Config& config) {
    const KernelHandle kernel = CreateKernel(launch_->program, source, launch_->cores, config);
    launch_->kernels[role] = kernel;
    if (!launch_->common_args[role].empty()) SetCommonRuntimeArgs(launch_->program, kernel, launch_->common_args[role]);
  }

  // A runtime value: a number, @NAME (a buffer's device address), noc_x:X,Y or noc_y:X,Y.
  uint32_t value(const std::string& token) {
    if (token.rfind('@', 0) == 0) {
      return static_cast<uint32_t>(buffers_.at(token.substr(1))->get_reference_buffer()->address());
    }
    if (token.rfind("noc_", 0) == 0) {
      const size_t comma = token.find(',');
      const CoreCoord core = device_->worker_core_from_logical_core(
          CoreCoord{number(token.substr(6, comma - 6)), number(token.substr(comma + 1))});
      return static_cast<uint32_t>(token[4] == 'x' ? core.x : core.y);
    }
    return number(token);
  }

  std::shared_ptr<distributed::MeshDevice> device_;
  distributed::MeshCommandQueue& queue_;
  std::map<std::string, MeshBufferPtr> buffers_;
  std::vector<std::vector<uint8_t>> uploads_;  // kept until Finish: the writes do not wait
  std::unique_ptr<Launch> launch_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " SCRIPT KERNELS.so" << std::endl;
    return 2;
  }
  try {
    if (dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL) == nullptr) throw std::runtime_error(std::string("loading the kernels: ") + dlerror());
    std::ifstream script(argv[1]);
    if (!script) throw std::runtime_error(std::string("cannot open ") + argv[1]);
    Host host(distributed::MeshDevice::create_unit_mesh(0));
    for (std::string line; std::getline(script, line);) {
      std::istringstream words(line);
      std::vector<std::string> tokens;
      for (std::string word; words >> word;) tokens.push_back(word);
      if (!tokens.empty()) host.directive(tokens);
    }
    host.finish();
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
