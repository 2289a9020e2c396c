// Test harness driving emu::Device directly from a line-based spec (see device_harness.py).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "device.hpp"

namespace {

std::vector<emu::CoreXY> parse_cores(const std::string& s) {
  // "x,y" or "x0,y0-x1,y1" (inclusive rectangle)
  std::vector<emu::CoreXY> out;
  unsigned x0, y0, x1, y1;
  if (std::sscanf(s.c_str(), "%u,%u-%u,%u", &x0, &y0, &x1, &y1) == 4) {
    for (unsigned y = y0; y <= y1; ++y)
      for (unsigned x = x0; x <= x1; ++x) out.push_back({x, y});
  } else if (std::sscanf(s.c_str(), "%u,%u", &x0, &y0) == 2) {
    out.push_back({x0, y0});
  }
  return out;
}

emu::DataFormat parse_format(const std::string& s) {
  if (s == "Float32") return emu::DataFormat::Float32;
  if (s == "Float16_b") return emu::DataFormat::Float16_b;
  if (s == "Bfp8_b") return emu::DataFormat::Bfp8_b;
  if (s == "Bfp4_b") return emu::DataFormat::Bfp4_b;
  if (s == "UInt32") return emu::DataFormat::UInt32;
  if (s == "Int32") return emu::DataFormat::Int32;
  return emu::DataFormat::UInt16;
}

emu::KernelRole parse_role(const std::string& s) {
  if (s == "reader") return emu::KernelRole::Reader;
  if (s == "writer") return emu::KernelRole::Writer;
  return emu::KernelRole::Compute;
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::ifstream spec(dir + "/spec.txt");
  struct Buf {
    uint64_t addr, size;
  };
  std::map<std::string, Buf> bufs;
  std::vector<std::string> outs;
  emu::Device* dev = nullptr;
  uint32_t launches = 1;
  try {
    std::string line;
    while (std::getline(spec, line)) {
      std::istringstream is(line);
      std::string op;
      is >> op;
      if (op == "arch") {
        std::string a;
        is >> a;
        dev = &emu::Device::open(a);
      } else if (op == "buffer") {
        std::string name, dir_flag;
        uint64_t size;
        uint32_t page;
        is >> name >> size >> page >> dir_flag;
        const uint64_t addr = dev->allocate_dram(size, page);
        bufs[name] = {addr, size};
        if (dir_flag == "in" || dir_flag == "inout") {
          const auto data = read_file(dir + "/" + name + ".bin");
          dev->write_buffer(addr, data.data(), data.size());
        }
        if (dir_flag == "out" || dir_flag == "inout") outs.push_back(name);
      } else if (op == "cb") {
        std::string cores, fmt;
        uint32_t index, total, page;
        is >> cores >> index >> total >> page >> fmt;
        // Optional: shares=<index>, the CB takes that CB's L1 (one CircularBufferConfig, several indices).
        std::string shares;
        const int32_t owner = is >> shares && shares.rfind("shares=", 0) == 0 ? std::stoi(shares.substr(7)) : -1;
        for (const auto& c : parse_cores(cores)) dev->add_cb(c, index, total, page, parse_format(fmt), owner);
      } else if (op == "semaphore") {
        std::string cores;
        uint32_t init;
        is >> cores >> init;
        dev->add_semaphore(parse_cores(cores), init);
      } else if (op == "kernel") {
        std::string source, role, cores, ct;
        int fp32;
        is >> source >> role >> cores >> fp32 >> ct;
        std::vector<uint32_t> args;
        if (ct != "-") {
          std::istringstream cs(ct);
          std::string v;
          while (std::getline(cs, v, ',')) args.push_back(static_cast<uint32_t>(std::stoul(v)));
        }
        emu::ComputeOptions opts;
        opts.fp32_dest_acc_en = fp32 != 0;
        // Optional, in any order: utd=<one 0/1 per CB index> (ComputeConfig::unpack_to_dest_mode, 1 =
        // UnpackToDestFp32), fid=<0|2|3|4> (ComputeConfig::math_fidelity), fullsync=<0|1> (dst_full_sync_en),
        // approx=<0|1> (math_approx_mode); a data-movement kernel line noc=<0|1> (DataMovementConfig::noc, 0
        // when not given).
        uint8_t noc = 0;
        std::string opt;
        while (is >> opt) {
          if (opt.rfind("utd=", 0) == 0)
            for (char m : opt.substr(4)) opts.unpack_to_dest_fp32.push_back(m == '1');
          else if (opt.rfind("fid=", 0) == 0) opts.math_fidelity = std::stoi(opt.substr(4));
          else if (opt.rfind("fullsync=", 0) == 0) opts.dst_full_sync_en = opt.substr(9) == "1";
          else if (opt.rfind("approx=", 0) == 0) opts.math_approx_mode = opt.substr(7) == "1";
          else if (opt.rfind("noc=", 0) == 0) noc = static_cast<uint8_t>(std::stoi(opt.substr(4)));
        }
        dev->add_kernel(source, parse_role(role), parse_cores(cores), args, noc, opts);
      } else if (op == "rtargs") {
        uint32_t kid;
        std::string cores, tok;
        is >> kid >> cores;
        std::vector<uint32_t> args;
        while (is >> tok) {
          if (tok[0] == '@') args.push_back(static_cast<uint32_t>(bufs.at(tok.substr(1)).addr));
          else if (tok.rfind("noc:", 0) == 0) {
            // noc:x,y -> NOC x and y of a logical core, as two args
            const auto c = dev->worker_noc_coord(parse_cores(tok.substr(4)).front());
            args.push_back(c.x);
            args.push_back(c.y);
          } else args.push_back(static_cast<uint32_t>(std::stoul(tok)));
        }
        for (const auto& c : parse_cores(cores)) dev->set_runtime_args(kid, c, args);
      } else if (op == "stall_limit") {
        double seconds;
        is >> seconds;
        dev->set_stall_limit(seconds);
      } else if (op == "launches") {
        is >> launches;
      }
    }
    // Several launches (a test of an error path run many times): each failure is counted by its message; the
    // messages go to stderr, each once with its count ("<n> x <message>"), and the exit code is 3.
    std::map<std::string, uint32_t> failures;
    for (uint32_t i = 0; i < launches; ++i) {
      try {
        dev->launch();
      } catch (const emu::EmulatorError& e) {
        if (launches == 1) throw;
        failures[e.what()] += 1;
      }
    }
    if (!failures.empty()) {
      for (const auto& [message, n] : failures) std::cerr << n << " x " << message << std::endl;
      return 3;
    }
    for (const auto& name : outs) {
      std::vector<char> data(bufs[name].size);
      dev->read_buffer(bufs[name].addr, data.data(), data.size());
      std::ofstream(dir + "/" + name + ".out.bin", std::ios::binary).write(data.data(), data.size());
    }
    std::ofstream(dir + "/counters.json") << dev->counters_json();
  } catch (const emu::EmulatorError& e) {
    std::cerr << e.what() << std::endl;
    return 3;
  }
  return 0;
}
