// The emulated JIT build of kernel files (jit.hpp).
//
// As tt-metal's JIT does (tt_metal/jit_build/genfiles.cpp: a generated kernel_includes.hpp that
// #includes the kernel by path, compiled with the kernel's -D defines, KERNEL_COMPILE_TIME_ARGS and
// KERNEL_COMPILE_TIME_ARG_MAP), the kernel is compiled from a generated translation unit that includes
// it by its path, so its own quoted includes resolve beside it. The unit becomes a shared object the
// program loads (dlopen): its calls into the emulator resolve to the program's runtime, which the
// driver links with -rdynamic.
#include "jit.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace emu {

namespace fs = std::filesystem;

namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// 64-bit FNV-1a of the parts, each prefixed with its length: the built kernel's cache key.
struct Hash {
  uint64_t h = 1469598103934665603ull;
  void add(const std::string& part) {
    const uint64_t n = part.size();
    for (int i = 0; i < 8; ++i) byte(static_cast<unsigned char>(n >> (8 * i)));
    for (const char c : part) byte(static_cast<unsigned char>(c));
  }
  void byte(unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  }
  std::string hex() const {
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
  }
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path partial = path.string() + "." + std::to_string(getpid()) + ".tmp";
  std::ofstream(partial, std::ios::binary) << text;
  fs::rename(partial, path);
}

// Runs argv (no shell) with its output in `log`; true when it exits 0.
bool run_command(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw EmulatorError("cannot run the kernel compiler '" + argv[0] + "'");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string config_text(const KernelBuild& build) {
  std::string text = "defines {";
  for (const auto& [name, value] : build.defines) text += " " + name + "=" + value + ";";
  text += " }, named compile-time args {";
  std::map<std::string, uint32_t> named(build.named_args.begin(), build.named_args.end());
  for (const auto& [name, value] : named) text += " " + name + "=" + std::to_string(value) + ";";
  text += " }, compile-time args {";
  for (const uint32_t a : build.compile_args) text += " " + std::to_string(a);
  return text + " }";
}

// tt-metal 0.81.1 jit_build/genfiles.cpp, write_kernel_bindings_generated_header: the kernel's DFB and semaphore
// accessors (sorted by name, for a deterministic file) and its tensor binding tokens (in binding order).
std::string bindings_header(const tt::tt_metal::experimental::Metal2KernelBindings& b) {
  std::ostringstream text;
  text << "// AUTO-GENERATED — do not edit.\n\n#pragma once\n\n";
  if (b.dfbs.empty() && b.semaphores.empty() && b.tensors.empty()) return text.str() + "// No bindings for this kernel.\n";
  if (!b.dfbs.empty()) text << "#include \"api/dataflow/dataflow_buffer.h\"\n";
  if (!b.semaphores.empty()) text << "#include <cstdint>\n";
  if (!b.tensors.empty()) text << "#include \"api/tensor/tensor_binding_token.h\"\n";
  text << "\n";
  const std::map<std::string, uint32_t> dfbs(b.dfbs.begin(), b.dfbs.end()), sems(b.semaphores.begin(), b.semaphores.end());
  if (!dfbs.empty()) {
    text << "namespace dfb {\n";
    for (const auto& [name, id] : dfbs) text << "constexpr DFBBindingToken " << name << "{" << id << "};\n";
    text << "}  // namespace dfb\n";
  }
  if (!sems.empty()) {
    text << "namespace sem {\n";
    for (const auto& [name, id] : sems) text << "constexpr std::uint32_t " << name << " = " << id << "u;\n";
    text << "}  // namespace sem\n";
  }
  if (!b.tensors.empty()) {
    text << "namespace tensor {\n";
    for (size_t i = 0; i < b.tensors.size(); ++i) {
      const auto& t = b.tensors[i];
      const size_t addr_crta_offset = (b.common_runtime_arg_names.size() + i) * sizeof(uint32_t);
      text << "using " << t.name << "_t = ::tensor_accessor::TensorBindingToken<" << t.cta_offset << "u, "
           << addr_crta_offset << "u>;\n";
      text << "constexpr " << t.name << "_t " << t.name << "{};\n";
    }
    text << "}  // namespace tensor\n";
  }
  return text.str();
}

// tt-metal 0.81.1 jit_build/genfiles.cpp, write_kernel_args_generated_header: the named runtime args at their byte
// offsets, the named common runtime args likewise, the named compile-time args by value (sorted by name); then the
// vararg helpers, past the named args (and, for the common ones, past the tensors' address words).
std::string args_header(const tt::tt_metal::experimental::Metal2KernelBindings& b,
                        const std::unordered_map<std::string, uint32_t>& named_ctas) {
  std::ostringstream text;
  text << "// AUTO-GENERATED — do not edit.\n\n#pragma once\n\n#include \"experimental/kernel_args.h\"\n\n";
  const std::map<std::string, uint32_t> ctas(named_ctas.begin(), named_ctas.end());
  if (!b.runtime_arg_names.empty() || !b.common_runtime_arg_names.empty() || !ctas.empty()) {
    text << "namespace args {\n";
    for (size_t i = 0; i < b.runtime_arg_names.size(); ++i)
      text << "constexpr experimental::RtaArg<uint32_t> " << b.runtime_arg_names[i] << "{" << i * sizeof(uint32_t) << "};\n";
    for (size_t i = 0; i < b.common_runtime_arg_names.size(); ++i)
      text << "constexpr experimental::CrtaArg<uint32_t> " << b.common_runtime_arg_names[i] << "{"
           << i * sizeof(uint32_t) << "};\n";
    for (const auto& [name, value] : ctas) text << "constexpr experimental::CtaVal<uint32_t> " << name << "{" << value << "u};\n";
    text << "}  // namespace args\n\n";
  }
  text << "FORCE_INLINE uint32_t get_vararg(uint32_t idx) { return get_arg_val<uint32_t>(" << b.runtime_arg_names.size()
       << " + idx); }\n"
       << "FORCE_INLINE uint32_t get_common_vararg(uint32_t idx) { return get_common_arg_val<uint32_t>("
       << b.common_runtime_arg_names.size() + b.tensors.size() << " + idx); }\n";
  return text.str();
}

}  // namespace

std::string resolve_kernel_source(const std::string& file_name) {
  std::vector<fs::path> searched{file_name};
  const fs::path given(file_name);
  if (!given.is_absolute()) {
    for (const char* var : {"TT_METAL_RUNTIME_ROOT", "TT_METAL_KERNEL_PATH"}) {
      const std::string dir = env_or_empty(var);
      if (!dir.empty()) searched.push_back(fs::path(dir) / given);
    }
  }
  std::string tried;
  for (const fs::path& path : searched) {
    if (fs::is_regular_file(path)) return fs::absolute(path).lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + path.string();
  }
  throw EmulatorError("Kernel file " + file_name + " doesn't exist in any of the searched paths! (" + tried + ")");
}

namespace {

const KernelInfo& build_and_load(const KernelBuild& build) {
  std::vector<std::string> argv;
  std::istringstream command(env_or_empty("TT_EMU_KERNEL_BUILD"));
  for (std::string line; std::getline(command, line);) {
    if (!line.empty()) argv.push_back(line);
  }
  const std::string cache = env_or_empty("TT_EMU_KERNEL_CACHE");
  if (argv.empty() || cache.empty())
    throw EmulatorError("CreateKernel(" + build.path + "): the emulator builds kernel files with the command in "
                        "TT_EMU_KERNEL_BUILD into TT_EMU_KERNEL_CACHE, which tilelang_tt.emulator's driver sets; "
                        "they are not set");
  if (build.path.find_first_of("\"\n\\") != std::string::npos)
    throw EmulatorError("kernel path " + build.path + " has a quote, backslash or newline");
  // The JIT build's include roots (tt-metal jit_build/build.cpp, JitBuildEnv::init's includeDirs): the root
  // dir, whose ttnn/cpp/ttnn/... the ttnn kernels include by that path (kernel_lib), ttnn, for their
  // "cpp/ttnn/operations/..." includes (the SDPA kernels'), and ttnn/cpp, for their "ttnn/operations/..." ones.
  const std::string root = env_or_empty("TT_METAL_RUNTIME_ROOT");
  if (!root.empty()) {
    argv.push_back("-I" + root);
    argv.push_back("-I" + (fs::path(root) / "ttnn").string());
    argv.push_back("-I" + (fs::path(root) / "ttnn" / "cpp").string());
  }
  argv.push_back("-fPIC");
  argv.push_back("-shared");
  argv.push_back("-Dkernel_main=tt_emu_jit_kernel_main");
  std::string ct;
  for (size_t i = 0; i < build.compile_args.size(); ++i) ct += (i ? "," : "") + std::to_string(build.compile_args[i]);
  argv.push_back("-DKERNEL_COMPILE_TIME_ARGS=" + ct);
  if (!build.named_args.empty()) {
    // api/compile_time_args.h's map: {"name",value},... (sorted, so that the key does not depend on the
    // unordered_map's order).
    std::map<std::string, uint32_t> named(build.named_args.begin(), build.named_args.end());
    std::string map;
    for (const auto& [name, value] : named) map += (map.empty() ? "" : ",") + ("{\"" + name + "\"," + std::to_string(value) + "}");
    argv.push_back("-DKERNEL_COMPILE_TIME_ARG_MAP=" + map);
  }
  if (!build.cb_formats.empty()) {
    std::string formats;
    for (size_t i = 0; i < build.cb_formats.size(); ++i) formats += (i ? "," : "") + std::to_string(build.cb_formats[i]);
    argv.push_back("-DTT_EMU_CB_FORMATS=" + formats);
  }
  if (build.compute != nullptr) {
    // A compute kernel is built as the math TRISC's, with the descriptors tt-metal's JIT writes for it
    // (include/api/emu/chlkc_descriptors.h).
    argv.push_back("-DCOMPILE_FOR_TRISC=1");
    argv.push_back("-DUCK_CHLKC_MATH");
    // tt-metal's genfiles define TRISC_UNPACK / TRISC_MATH / TRISC_PACK in the TRISC's own build
    // (jit_build/genfiles.cpp, the chlkc_*.cpp prologs); the emulator's one build runs the three TRISCs' code
    // (common.h: MATH(x), PACK(x), UNPACK(x) are x), so a kernel's code for any one of them is compiled.
    argv.push_back("-DTRISC_UNPACK");
    argv.push_back("-DTRISC_MATH");
    argv.push_back("-DTRISC_PACK");
    argv.push_back("-DTT_EMU_DST_ACCUM_MODE=" + std::to_string(build.compute->fp32_dest_acc_en ? 1 : 0));
    argv.push_back("-DTT_EMU_DST_FULL_SYNC=" + std::to_string(build.compute->dst_full_sync_en ? 1 : 0));
    argv.push_back("-DTT_EMU_MATH_FIDELITY=" + std::to_string(build.compute->math_fidelity));
    argv.push_back("-DTT_EMU_MATH_APPROX_MODE=" + std::to_string(build.compute->math_approx_mode ? 1 : 0));
  } else {
    // tt-metal's DataMovementKernel::process_defines (tt_metal/impl/kernels/kernel.cpp): NOC_INDEX, the config's
    // noc, which dataflow_api_common.h makes noc_index.
    argv.push_back("-DNOC_INDEX=" + std::to_string(build.noc));
  }
  // tt-metal 0.81.1 JitBuildEnv::init (tt_metal/jit_build/build.cpp): every kernel is built with its arch's
  // ARCH_WORMHOLE / ARCH_BLACKHOLE, which the headers test (api/dataflow/dataflow_api.h: DRAM_ALIGNMENT).
  if (build.arch == "wormhole_b0") argv.push_back("-DARCH_WORMHOLE");
  if (build.arch == "blackhole") argv.push_back("-DARCH_BLACKHOLE");
  for (const auto& [name, value] : build.defines) argv.push_back("-D" + name + "=" + value);
  // A Metal 2.0 kernel: the generated headers before the kernel, as tt-metal's JIT prolog has them (after the
  // dataflow API, which its data-movement firmware includes first; a compute kernel's come from kernel_args.h).
  std::string generated_bindings, generated_args, prolog;
  if (build.metal2 != nullptr) {
    generated_bindings = bindings_header(*build.metal2);
    generated_args = args_header(*build.metal2, build.named_args);
    prolog = std::string(build.compute == nullptr ? "#include \"api/dataflow/dataflow_api.h\"\n" : "") +
             "#include \"kernel_bindings_generated.h\"\n#include \"kernel_args_generated.h\"\n";
  }
  const std::string unit = prolog + "#include \"" + build.path + "\"\n"
                           "extern \"C\" void tt_emu_jit_entry() { kernel_main(); }\n";
  Hash key;
  for (const std::string& a : argv) key.add(a);
  key.add(unit);
  key.add(generated_bindings);
  key.add(generated_args);
  key.add(read_file(build.path));
  const fs::path dir = fs::path(cache) / key.hex();
  const fs::path object = dir / (fs::path(build.path).stem().string() + ".so");

  static std::map<std::string, const KernelInfo*> loaded;  // the host program is one thread
  static std::deque<KernelInfo> infos;
  static std::deque<std::string> names;
  if (const auto it = loaded.find(object.string()); it != loaded.end()) return *it->second;

  if (fs::exists(object)) {
    // A use: the cache's eviction (tilelang_tt/cache.py, trim) removes the least recently used entries first.
    std::error_code ignored;
    fs::last_write_time(object, fs::file_time_type::clock::now(), ignored);
  } else {
    fs::create_directories(dir);
    const fs::path source = dir / "kernel_unit.cpp";
    if (!fs::exists(source)) write_atomically(source, unit);
    if (build.metal2 != nullptr) {
      write_atomically(dir / "kernel_bindings_generated.h", generated_bindings);
      write_atomically(dir / "kernel_args_generated.h", generated_args);
      argv.push_back("-I" + dir.string());
    }
    const std::string pid = std::to_string(getpid());
    const fs::path partial = object.string() + "." + pid + ".tmp", log = dir / ("build." + pid + ".log");
    argv.push_back(source.string());
    argv.push_back("-o");
    argv.push_back(partial.string());
    if (!run_command(argv, log)) {
      const std::string messages = read_file(log);
      fs::remove(partial);
      fs::remove(log);
      throw EmulatorError("building kernel " + build.path + " failed (CreateKernel gave " + config_text(build) +
                          "):\n" + messages);
    }
    fs::remove(log);
    fs::rename(partial, object);  // atomic: another process building the same kernel finds it whole
  }
  void* handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw EmulatorError("loading kernel " + object.string() + ": " + dlerror());
  auto* entry = reinterpret_cast<KernelFn>(dlsym(handle, "tt_emu_jit_entry"));
  if (entry == nullptr) throw EmulatorError("kernel " + object.string() + " has no entry: " + dlerror());
  names.push_back(build.path);
  infos.push_back(KernelInfo{names.back().c_str(), entry, build.compile_args,
                             build.compute != nullptr && build.compute->math_approx_mode,
                             build.compute == nullptr ? build.noc : uint8_t{0}});
  loaded[object.string()] = &infos.back();
  return infos.back();
}

}  // namespace

const KernelInfo& build_kernel(const KernelBuild& build) {
  try {
    return build_and_load(build);
  } catch (const fs::filesystem_error& error) {  // the cache directory: not writable, not a directory ...
    throw EmulatorError("building kernel " + build.path + ": " + error.what());
  }
}

}  // namespace emu
