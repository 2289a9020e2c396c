// The timing model's timeline as a Chrome trace (the trace-event JSON Perfetto and chrome://tracing
// load), for the last launch:
//   {"displayTimeUnit": "ns", "otherData": {"arch", "clock_hz"}, "traceEvents": [...]}
// One process per used core, pid 1 + y * grid_x + x, named "core (x,y)" (a "process_name" metadata
// event, "M"), sorted by pid; one thread per RISC-V that ran a kernel, tid 1 reader, 2 unpack, 3 math,
// 4 pack (a compute kernel's three TRISCs), 5 writer, named so ("thread_name"). Each span a thread recorded (internal.hpp, TraceSpan) is a complete
// event ("X") with ts / dur in microseconds of the arch clock: cat "busy", named by the API call
// (family) that charged the cycles ("cb_wait_front", "noc_async_read", "matmul_tiles", ...), or cat
// "stall", named "wait <call>" ("wait cb_wait_front c_0", "wait noc_async_read_barrier",
// "wait noc_semaphore_wait"); first, "firmware init" (cat "init"), the firmware's work before the kernel's
// start (device.cpp start_kernel), which the kernel's busy cycles leave out. Back-to-back spans of one name are one event with "args": {"calls": n}
// (absent when n is 1). Times are printed from whole picoseconds (cycles * 1e12 / clock_hz, rounded),
// so an event ends exactly where the next one of its thread starts; a thread's spans cover [0, its
// final clock]. Events are in (core, thread, ts) order: the same program gives the same bytes.
// A mesh's trace (Device::mesh_trace_json) holds every chip's: chip c's cores are processes
// c * (cores + 2) + 1 + y * grid_x + x named "chip c core (x,y)", and its fabric links the process
// c * (cores + 2) + cores + 1 named "chip c links", a thread per link leaving the chip ("EAST link", tid 1 +
// its direction: EAST, WEST, NORTH, SOUTH) with a span per packet that held the link (name "packet", cat
// "link"; runtime/fabric.cpp).
#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>

#include "internal.hpp"

namespace emu {

namespace {

// Whole picoseconds of `cycles` at `clock_hz`.
uint64_t picos(uint64_t cycles, double clock_hz) {
  return static_cast<uint64_t>(
      std::llround(static_cast<long double>(cycles) * 1e12L / static_cast<long double>(clock_hz)));
}

// `ps` picoseconds as microseconds with 6 decimals.
std::string micros(uint64_t ps) {
  char text[48];
  std::snprintf(text, sizeof text, "%llu.%06llu", static_cast<unsigned long long>(ps / 1000000),
                static_cast<unsigned long long>(ps % 1000000));
  return text;
}

// Trace thread ids (1-based) and the order threads appear in.
constexpr Risc kTraceRiscs[] = {Risc::Reader, Risc::Unpack, Risc::Math, Risc::Pack, Risc::Writer};

}  // namespace

void Device::set_tracing(bool on) { impl_->tracing = on; }

namespace {

// Appends the events of device `d`'s last launch: its cores as processes pid_base + 1 + y * grid_x + x, named
// `prefix` "core (x,y)"; and, when `links` holds any, a process pid_base + links_pid named `prefix` "links" with a
// thread per fabric link leaving the chip (tid 1 + its direction), a span per packet on it (cat "link").
template <class Event>
void device_events(std::ostringstream& os, Event event, const DeviceImpl& d, uint32_t pid_base,
                   const std::string& prefix, const std::vector<FabricLinkSpans>& links, uint32_t links_pid) {
  const ArchSpec& a = d.arch;
  for (size_t i = 0; i < d.last_timing.size(); ++i) {
    const CoreXY c = d.last_cores[i];
    const uint32_t pid = pid_base + 1 + c.y * a.grid_x + c.x;
    event() << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"name\":\"" << prefix
            << "core (" << c.x << "," << c.y << ")\"}}";
    event() << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"sort_index\":"
            << pid << "}}";
    for (int tid = 1; tid <= static_cast<int>(std::size(kTraceRiscs)); ++tid) {
      const Risc risc = kTraceRiscs[tid - 1];
      const size_t r = static_cast<size_t>(risc);
      if (!d.last_timing[i][r]) continue;
      event() << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
              << ",\"args\":{\"name\":\"" << risc_name(risc) << "\"}}";
      event() << "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
              << ",\"args\":{\"sort_index\":" << tid << "}}";
      for (const TraceSpan& s : d.last_spans[i][r]) {
        // dur from the rounded ends: ts + dur is exactly the next span's ts
        const uint64_t start = picos(s.start, a.clock_hz), end = picos(s.end, a.clock_hz);
        event() << "{\"name\":\"" << s.name << "\",\"cat\":\"" << (s.init ? "init" : s.stall ? "stall" : "busy")
                << "\",\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << micros(start)
                << ",\"dur\":" << micros(end - start);
        if (s.calls > 1) os << ",\"args\":{\"calls\":" << s.calls << "}";
        os << "}";
      }
    }
  }
  if (links.empty()) return;
  const uint32_t pid = pid_base + links_pid;
  event() << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"name\":\"" << prefix
          << "links\"}}";
  event() << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"sort_index\":"
          << pid << "}}";
  for (const FabricLinkSpans& link : links) {
    const uint32_t tid = 1 + link.direction;
    event() << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
            << ",\"args\":{\"name\":\"" << link.name << "\"}}";
    for (const auto& [begin, finish] : link.busy) {
      const uint64_t start = picos(begin, a.clock_hz), end = picos(finish, a.clock_hz);
      event() << "{\"name\":\"packet\",\"cat\":\"link\",\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid
              << ",\"ts\":" << micros(start) << ",\"dur\":" << micros(end - start) << "}";
    }
  }
}

std::string trace_header(const ArchSpec& a) {
  std::ostringstream os;
  os << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"arch\":\"" << a.name
     << "\",\"clock_hz\":" << static_cast<uint64_t>(a.clock_hz) << "},\n\"traceEvents\":[";
  return os.str();
}

}  // namespace

std::string Device::trace_json() const {
  const DeviceImpl& d = *impl_;
  std::ostringstream os;
  os << trace_header(d.arch);
  bool first = true;
  const auto event = [&]() -> std::ostringstream& {
    os << (first ? "\n" : ",\n");
    first = false;
    return os;
  };
  device_events(os, event, d, 0, "", {}, 0);
  os << "\n]}\n";
  return os.str();
}

std::string Device::mesh_trace_json(const std::vector<Device*>& devices) {
  std::ostringstream os;
  os << trace_header(devices.front()->impl_->arch);
  bool first = true;
  const auto event = [&]() -> std::ostringstream& {
    os << (first ? "\n" : ",\n");
    first = false;
    return os;
  };
  for (const Device* device : devices) {
    const DeviceImpl& d = *device->impl_;
    const uint32_t cores = d.arch.grid_x * d.arch.grid_y;
    device_events(os, event, d, d.index * (cores + 2), "chip " + std::to_string(d.index) + " ",
                  fabric_link_spans(d.index), cores + 1);
  }
  os << "\n]}\n";
  return os.str();
}

}  // namespace emu
