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

std::string Device::trace_json() const {
  const DeviceImpl& d = *impl_;
  const ArchSpec& a = d.arch;
  std::ostringstream os;
  os << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"arch\":\"" << a.name
     << "\",\"clock_hz\":" << static_cast<uint64_t>(a.clock_hz) << "},\n\"traceEvents\":[";
  bool first = true;
  const auto event = [&]() -> std::ostringstream& {
    os << (first ? "\n" : ",\n");
    first = false;
    return os;
  };
  for (size_t i = 0; i < d.last_timing.size(); ++i) {
    const CoreXY c = d.last_cores[i];
    const uint32_t pid = 1 + c.y * a.grid_x + c.x;
    event() << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"name\":\"core ("
            << c.x << "," << c.y << ")\"}}";
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
  os << "\n]}\n";
  return os.str();
}

}  // namespace emu
