// The fabric between the chips of a mesh: tt-metal 0.81.1's TT-Fabric as a worker kernel sees it
// (tt_metal/fabric/hw/inc: a WorkerToFabricEdmSender connection to the fabric router of one ethernet link,
// packet headers from the packet header pool, unicast routes, NOC writes and atomic increments that the
// router at the destination chip performs), and its links in the timing model.
//
// Topology (an assumption of the emulator, stated in docs/emulator.md "Fabric"): the chips of a (rows, cols)
// mesh are row-major (chip id = row * cols + col, the FabricNodeId chip id MeshDevice::get_fabric_node_id
// gives); a chip's ethernet neighbours are the chips beside it in its row (EAST: col + 1, WEST: col - 1) and
// column (NORTH: row - 1, SOUTH: row + 1), one fabric link (routing plane) to each, as an n300's two chips
// (1, 2), a T3K's eight (2, 4) or its line view (1, 8) are wired for the fabric (tech_reports/EthernetMultichip/
// BasicEthernetGuide.md, "Topology and connectivity": N300, T3000). FABRIC_1D_RING adds the link that closes
// each row and column of three or more chips into a ring.
//
// Routing: a 1-D packet header (LowLatencyPacketHeader) travels the number of hops its route gives in the
// direction of the router the worker is connected to (a multicast, to_chip_multicast: on to the last chip of its
// range, written at each chip of the range as the packet passes); a 2-D one (HybridMeshPacketHeader, fabric_set_unicast_route
// to a destination chip) goes dimension by dimension, north/south first, then east/west (the order its route
// maps are laid out in: tt_fabric_api.h:101-105, route_buffer[0..Y) then [Y..Y+X)). The first hop must leave
// through the connection's router (append_fabric_connection_rt_args connects the worker to the router toward
// the destination: fabric.cpp, get_forwarding_direction).
//
// Timing (timing.hpp, "Fabric"): the worker's NOC writes of the payload and the header into the router's
// buffer slot, then each link of the route in turn, a shared resource: a packet holds a link for its bytes /
// the link's bandwidth, at the earliest time the link is free for that long at or after the packet reaches it,
// and reaches the next chip the link's latency after it starts on the link (the router forwards it as it
// comes in); at the destination the router's NOC write. The packet's writes and increments carry that
// arrival time (a semaphore wait on them ends there), and the worker's buffer slot is free again when the
// packet has left over the first link (wait_for_empty_write_slot).
#include <sstream>

#include "internal.hpp"

namespace emu {

namespace {

// tt::tt_fabric::FabricConfig (tt-metalium/experimental/fabric/fabric_types.hpp).
enum FabricConfigValue : uint32_t {
  kDisabled = 0, kNeighbourExchange = 1, kLine = 2, kRing = 3, k2D = 4, k2DTorusX = 5, k2DTorusY = 6, k2DTorusXY = 7
};
// eth_chan_directions (hostdevcommon/fabric_common.h).
enum Direction : uint32_t { kEast = 0, kWest = 1, kNorth = 2, kSouth = 3 };
constexpr const char* kDirectionNames[] = {"EAST", "WEST", "NORTH", "SOUTH"};
// The emulator's ethernet channel of a connection (the runtime arg append_fabric_connection_rt_args gives and
// WorkerToFabricEdmSender::build_from_args reads): link * 4 + direction.
constexpr uint32_t kDirections = 4;
constexpr uint32_t kLinksPerNeighbour = 1;

// The worker's end of the fabric: how many packets a connection's sender channel buffers (the router's slots).
// ASSUMPTION: 0.81.1's router builder sizes the channels by the packet size and L1 (FabricEriscDatamoverConfig);
// 8 slots of one packet each.
constexpr uint32_t kSenderSlots = 8;

struct Interval {
  uint64_t start, end;
};

struct LinkState {
  std::vector<Interval> busy;  // sorted by start, disjoint
  uint64_t packets = 0, bytes = 0, busy_cycles = 0, last_end = 0;
};

struct Fabric {
  uint32_t config = kDisabled;
  uint32_t rows = 1, cols = 1;
  // Per launch: each link's occupancy, by (chip, direction); guarded by the launch's mu.
  std::map<std::pair<uint32_t, uint32_t>, LinkState> links;
  // Per launch: the worker cores' connections to each router sender channel, by (chip, channel), each from its
  // open() to its close() in logical time (kStillOpen until closed); guarded likewise.
  struct Held {
    const Core* core;
    uint64_t open, close;
  };
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Held>> connected;
};

Fabric g_fabric;

bool is_2d(uint32_t config) { return config >= k2D && config <= k2DTorusXY; }
bool wraps(uint32_t config, uint32_t dir) {
  if (config == kRing) return true;
  if (config == k2DTorusXY) return true;
  if (config == k2DTorusX) return dir == kEast || dir == kWest;
  if (config == k2DTorusY) return dir == kNorth || dir == kSouth;
  return false;
}

// The chip one hop from `chip` in `dir`, or -1 where the mesh has no link there.
int64_t neighbour(uint32_t chip, uint32_t dir) {
  const Fabric& f = g_fabric;
  const int64_t r = chip / f.cols, c = chip % f.cols;
  const int64_t rows = f.rows, cols = f.cols;
  int64_t nr = r, nc = c;
  if (dir == kEast) nc = c + 1;
  if (dir == kWest) nc = c - 1;
  if (dir == kNorth) nr = r - 1;
  if (dir == kSouth) nr = r + 1;
  const int64_t extent = dir == kEast || dir == kWest ? cols : rows;
  if (nr < 0 || nr >= rows || nc < 0 || nc >= cols) {
    if (!wraps(f.config, dir) || extent < 3) return -1;
    nr = (nr + rows) % rows;
    nc = (nc + cols) % cols;
  }
  if (nr == r && nc == c) return -1;
  return nr * cols + nc;
}

std::string chip_name(uint32_t chip) {
  return "chip " + std::to_string(chip) + " (" + std::to_string(chip / g_fabric.cols) + ", " +
         std::to_string(chip % g_fabric.cols) + ")";
}

std::string config_name(uint32_t config) {
  static const char* names[] = {"DISABLED", "FABRIC_1D_NEIGHBOR_EXCHANGE", "FABRIC_1D", "FABRIC_1D_RING", "FABRIC_2D",
                                "FABRIC_2D_TORUS_X", "FABRIC_2D_TORUS_Y", "FABRIC_2D_TORUS_XY"};
  return config < 8 ? names[config] : "FabricConfig " + std::to_string(config);
}

// The direction of the first hop from `src` to `dst` under dimension-order routing (north/south first), or -1.
int64_t first_hop_2d(uint32_t src, uint32_t dst) {
  const uint32_t cols = g_fabric.cols;
  if (src / cols != dst / cols) return src / cols < dst / cols ? kSouth : kNorth;
  if (src % cols != dst % cols) return src % cols < dst % cols ? kEast : kWest;
  return -1;
}

// The earliest time >= ready at which `link` is free for `cycles`; reserves it.
uint64_t reserve(LinkState& link, uint64_t ready, uint64_t cycles) {
  uint64_t start = ready;
  auto it = link.busy.begin();
  for (; it != link.busy.end(); ++it) {
    if (it->end <= start) continue;
    if (it->start >= start + cycles) break;
    start = it->end;
  }
  link.busy.insert(std::upper_bound(link.busy.begin(), link.busy.end(), start,
                                    [](uint64_t s, const Interval& i) { return s < i.start; }),
                   {start, start + cycles});
  link.packets += 1;
  link.busy_cycles += cycles;
  link.last_end = std::max(link.last_end, start + cycles);
  return start;
}

}  // namespace

// ---------------------------------------------------------------- host side
void fabric_set_config(uint32_t config) {
  if (config > k2DTorusXY)
    throw EmulatorError("SetFabricConfig: " + config_name(config) + " is not emulated (the emulator models "
                        "FABRIC_1D, FABRIC_1D_RING, FABRIC_1D_NEIGHBOR_EXCHANGE and the FABRIC_2D configs)");
  g_fabric.config = config;
}

uint32_t fabric_config() { return g_fabric.config; }

void fabric_set_mesh(uint32_t rows, uint32_t cols) {
  g_fabric.rows = rows;
  g_fabric.cols = cols;
}

uint32_t fabric_connection(uint32_t src_chip, uint32_t dst_chip, uint32_t link) {
  const Fabric& f = g_fabric;
  const std::string what = "append_fabric_connection_rt_args(" + chip_name(src_chip) + " -> " + chip_name(dst_chip) +
                           ", link " + std::to_string(link) + "): ";
  if (f.config == kDisabled)
    throw EmulatorError(what + "the fabric is off: call tt::tt_fabric::SetFabricConfig before MeshDevice::create");
  const uint32_t chips = f.rows * f.cols;
  if (src_chip >= chips || dst_chip >= chips)
    throw EmulatorError(what + "the mesh has " + std::to_string(chips) + " chips");
  if (src_chip == dst_chip) throw EmulatorError(what + "the source and destination are the same chip");
  if (link >= kLinksPerNeighbour)
    throw EmulatorError(what + "the emulated mesh has " + std::to_string(kLinksPerNeighbour) +
                        " fabric link between neighbouring chips (link 0)");
  int64_t dir = -1;
  if (is_2d(f.config)) {
    dir = first_hop_2d(src_chip, dst_chip);
  } else {
    // 1-D: the destination must be a neighbour (fabric.cpp: "the sender and receiver chip should be physically
    // adjacent (for 1D)").
    for (uint32_t d = 0; d < kDirections && dir < 0; ++d)
      if (neighbour(src_chip, d) == static_cast<int64_t>(dst_chip)) dir = d;
    if (dir < 0)
      throw EmulatorError(what + "under " + config_name(f.config) + " the destination must be a neighbour of the "
                          "source (a chip beside it in its row or column)");
  }
  return link * kDirections + static_cast<uint32_t>(dir);
}

std::vector<std::string> fabric_kernel_defines() {
  // ROUTING_MODE as fabric_routing_mode.h spells it: 1-D line or ring, or 2-D mesh or torus, low latency (the
  // packet headers mesh/api.h and linear/api.h take: LowLatencyPacketHeader, HybridMeshPacketHeader).
  const uint32_t config = g_fabric.config;
  if (config == kDisabled) return {};
  constexpr uint32_t k1D = 0x1, k2DMode = 0x2, kLineMode = 0x8, kRingMode = 0x10, kMeshMode = 0x20, kTorusMode = 0x40,
                     kLowLatency = 0x80;
  uint32_t mode = kLowLatency;
  if (is_2d(config)) mode |= k2DMode | (config == k2D ? kMeshMode : kTorusMode);
  else mode |= k1D | (config == kRing ? kRingMode : kLineMode);
  std::vector<std::string> defines = {"ROUTING_MODE=" + std::to_string(mode)};
  if (is_2d(config)) defines.push_back("FABRIC_2D");
  return defines;
}

void fabric_begin_launch() {
  g_fabric.links.clear();
  g_fabric.connected.clear();
}

std::string fabric_links_json(uint32_t chip, uint64_t& busiest) {
  std::ostringstream os;
  os << "[";
  bool first = true;
  busiest = 0;
  for (const auto& [key, link] : g_fabric.links) {
    if (key.first != chip) continue;
    const int64_t to = neighbour(key.first, key.second);
    os << (first ? "" : ", ") << "{\"from\": " << key.first << ", \"to\": " << to << ", \"direction\": \""
       << kDirectionNames[key.second] << "\", \"packets\": " << link.packets << ", \"bytes\": " << link.bytes
       << ", \"busy\": " << link.busy_cycles << ", \"end\": " << link.last_end << "}";
    busiest = std::max(busiest, link.last_end);
    first = false;
  }
  os << "]";
  return os.str();
}

std::vector<FabricLinkSpans> fabric_link_spans(uint32_t chip) {
  std::vector<FabricLinkSpans> out;
  for (const auto& [key, link] : g_fabric.links) {
    if (key.first != chip) continue;
    FabricLinkSpans spans{key.second, std::string(kDirectionNames[key.second]) + " link", {}};
    for (const Interval& i : link.busy) spans.busy.emplace_back(i.start, i.end);
    out.push_back(std::move(spans));
  }
  return out;
}

// ---------------------------------------------------------------- kernel side
namespace k {

namespace {

// The chip a kernel thread runs on.
uint32_t my_chip(const ThreadCtx& t) { return t.dev->index; }

Direction channel_direction(uint32_t channel) { return static_cast<Direction>(channel % kDirections); }

// Bytes a NOC address's local part names on `chip`'s core or DRAM bank; a local L1 address of the sending core
// (its host address, as get_semaphore and get_write_ptr give) stands for the same offset on the target core.
uint8_t* fabric_target(ThreadCtx& t, DeviceImpl& d, uint64_t noc_addr, uint32_t size, Core*& core, const char* fn,
                       Loc loc) {
  const uint32_t xy = static_cast<uint32_t>(noc_addr >> kNocLocalBits);
  const uint32_t x = xy & 63, y = (xy >> kNocCoordBits) & 63;
  uint64_t off = noc_addr & ((1ull << kNocLocalBits) - 1);
  std::ostringstream os;
  if (Core* c = d.core_at_noc(x, y)) {
    const uint64_t my_base = t.core->l1_base_addr();
    if (off >= my_base && off < my_base + d.arch.l1_size) off -= my_base;
    if (off + size <= d.arch.l1_size) {
      core = c;
      return c->l1 + off;
    }
    os << fn << ": NOC address offset 0x" << std::hex << off << std::dec << " (+" << size
       << " bytes) is outside the L1 of core (" << c->logical.x << "," << c->logical.y << ") of " << chip_name(d.index);
    protocol_error(loc, os.str());
  }
  if (y == 0 && x < d.arch.dram_banks) {
    core = nullptr;
    if (uint8_t* p = d.dram_ptr(x, off, size)) return p;
    os << fn << ": DRAM bank " << x << " address 0x" << std::hex << off << std::dec << " (+" << size
       << " bytes) of " << chip_name(d.index) << " is outside every allocated buffer";
    protocol_error(loc, os.str());
  }
  os << fn << ": NOC address 0x" << std::hex << noc_addr << std::dec << " targets NOC (" << x << "," << y << ") of "
     << chip_name(d.index) << ", which is neither a worker core nor a DRAM bank";
  protocol_error(loc, os.str());
}

// The chips a packet passes, from the sender's (excluded) to its destination, and the direction of each hop.
std::vector<std::pair<uint32_t, uint32_t>> route_of(ThreadCtx& t, uint32_t channel, const FabricPacket& p,
                                                    const char* fn, Loc loc) {
  const uint32_t src = my_chip(t);
  const Direction dir = channel_direction(channel);
  std::vector<std::pair<uint32_t, uint32_t>> hops;  // (direction, chip reached)
  const auto fail = [&](const std::string& why) { protocol_error(loc, std::string(fn) + ": " + why); };
  if (p.route_kind == kRouteNone)
    fail("the packet header has no route (set one: fabric_set_unicast_route, or to_chip_unicast on a 1-D header)");
  if (p.dst_mesh_id != 0) fail("destination mesh " + std::to_string(p.dst_mesh_id) + ": the emulated fabric is mesh 0");
  const bool two_d = p.route_kind == kRouteDevice2D;
  if (two_d != is_2d(g_fabric.config))
    fail(std::string("a ") + (two_d ? "2-D" : "1-D") + " packet header on a fabric configured " +
         config_name(g_fabric.config) + " (the kernel was built for another fabric config than SetFabricConfig set)");
  uint32_t at = src;
  if (p.route_kind == kRouteMulticast && two_d) fail("a multicast route on a 2-D header");
  if (p.route_kind == kRouteHops || p.route_kind == kRouteDevice1D || p.route_kind == kRouteMulticast) {
    if (p.route_kind == kRouteDevice1D && p.dst_dev_id >= g_fabric.rows * g_fabric.cols)
      fail("destination chip " + std::to_string(p.dst_dev_id) + " is outside the mesh");
    if (p.route_kind == kRouteMulticast && p.hops == 0)
      fail("a multicast starting 0 hops away (start_distance_in_hops counts from the sending chip's neighbour, 1)");
    const bool by_hops = p.route_kind != kRouteDevice1D;
    const uint32_t count = p.route_kind == kRouteMulticast ? p.hops + p.range - 1 : p.hops;
    for (uint32_t i = 0; by_hops ? i < count : at != p.dst_dev_id; ++i) {
      const int64_t next = neighbour(at, dir);
      if (next < 0 || (p.route_kind == kRouteDevice1D && i >= g_fabric.rows * g_fabric.cols))
        fail("the route leaves the mesh " + std::string(kDirectionNames[dir]) + " of " + chip_name(at) +
             " (the connection's router sends " + kDirectionNames[dir] + ")");
      at = static_cast<uint32_t>(next);
      hops.emplace_back(dir, at);
    }
  } else {
    if (p.dst_dev_id >= g_fabric.rows * g_fabric.cols)
      fail("destination chip " + std::to_string(p.dst_dev_id) + " is outside the mesh");
    while (at != p.dst_dev_id) {
      const uint32_t d = static_cast<uint32_t>(first_hop_2d(at, p.dst_dev_id));
      if (hops.empty() && d != dir)
        fail("the route to " + chip_name(p.dst_dev_id) + " leaves " + chip_name(src) + " " + kDirectionNames[d] +
             ", but the connection is to the router " + kDirectionNames[dir] +
             " (connect to the router toward the destination: append_fabric_connection_rt_args with it)");
      at = static_cast<uint32_t>(neighbour(at, d));
      hops.emplace_back(d, at);
    }
  }
  if (hops.empty()) fail("the route ends on the sending chip " + chip_name(src));
  return hops;
}

// The router at chip `dst` writes the packet `p` (its payload the sender's L1 at payload_off) with its NOC, the
// packet whole there at `arrival`.
void deliver(ThreadCtx& t, const FabricPacket& p, DeviceImpl& dst, uint64_t arrival, uint32_t payload_off,
             uint32_t payload_size, const char* fn, Loc loc) {
  const ArchSpec& a = t.dev->arch;
  const auto deliver_write = [&](uint64_t noc_addr) {
    Core* core = nullptr;
    uint8_t* target = fabric_target(t, dst, noc_addr, payload_size, core, fn, loc);
    std::memmove(target, t.core->l1 + payload_off, payload_size);
    if (core != nullptr) core->cv.notify_all();
    return arrival + timing::noc_occupancy(a, payload_size) + a.noc_latency;
  };
  const auto deliver_inc = [&](uint64_t noc_addr, uint32_t val, uint64_t when) {
    Core* core = nullptr;
    uint8_t* target = fabric_target(t, dst, noc_addr, 4, core, fn, loc);
    if (core == nullptr) protocol_error(loc, std::string(fn) + ": an atomic increment of DRAM, not a core's L1");
    uint32_t v;
    std::memcpy(&v, target, 4);
    v += val;
    std::memcpy(target, &v, 4);
    dst.sem_timing[reinterpret_cast<uintptr_t>(target)].incs.emplace_back(when, val);
    core->cv.notify_all();
  };
  switch (p.noc_send_type) {
    case kNocUnicastWrite: deliver_write(p.noc_address); break;
    case kNocUnicastAtomicInc: deliver_inc(p.noc_address, p.val, arrival + a.noc_latency); break;
    case kNocFusedUnicastAtomicInc: {
      const uint64_t written = deliver_write(p.noc_address);
      deliver_inc(p.semaphore_noc_address, p.val, written);
      break;
    }
    default:
      protocol_error(loc, std::string(fn) + ": NocSendType " + std::to_string(p.noc_send_type) +
                              " is not emulated (unicast write, atomic increment and fused write + increment are)");
  }
}

}  // namespace

uint32_t packet_header_alloc(uint32_t size, Loc loc) {
  ThreadCtx& t = ctx(loc);
  if (t.kernel->role == KernelRole::Compute)
    protocol_error(loc, "PacketHeaderPool::allocate_header: the pool is the data movement RISC-Vs' "
                        "(packet_header_pool.h: DM0 or DM1 only)");
  if (size > kPacketHeaderSlot)
    protocol_error(loc, "PacketHeaderPool::allocate_header: " + std::to_string(size) + " bytes of headers");
  const uint32_t per_risc = kPacketHeaderPoolSize / 2;
  if (t.packet_headers + size > per_risc)
    protocol_error(loc, "PacketHeaderPool::allocate_header: the RISC-V's packet header pool (" +
                            std::to_string(per_risc / kPacketHeaderSlot) + " headers) is exhausted");
  const uint32_t base = packet_header_pool_offset(t.dev->arch) +
                        (t.kernel->role == KernelRole::Writer ? 0 : per_risc) + t.packet_headers;
  t.packet_headers += size;
  return t.core->l1_base_addr() + base;
}

void fabric_open(uint32_t channel, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = "WorkerToFabricEdmSender::build_from_args";
  if (g_fabric.config == kDisabled)
    protocol_error(loc, std::string(fn) + ": the fabric is off (the host program calls SetFabricConfig before "
                                          "opening the MeshDevice)");
  if (channel / kDirections >= kLinksPerNeighbour || neighbour(my_chip(t), channel_direction(channel)) < 0)
    protocol_error(loc, std::string(fn) + ": ethernet channel " + std::to_string(channel) + " is no fabric link of " +
                            chip_name(my_chip(t)) + " (its runtime args come from append_fabric_connection_rt_args)");
  charge(t, timing::kDataflowMisc, "fabric open");
}

// A router's sender channel takes one worker at a time: tt-metal 0.81.1 tt_metal/fabric/impl/kernels/edm_fabric/
// fabric_erisc_router.cpp, "Connecting Workers to Channels": "only one worker can push to a given EDM sender channel
// at a time ... If multiple workers try to connect to the same EDM sender channel at the same time, the behavior is
// undefined" (a hang); another worker may connect once the first has torn its connection down (close).
// Checked in logical time, so the same on every run: two cores' connections conflict when one opens while the other
// holds the channel (found at whichever of the two open() and close() calls the threads make last).
void fabric_connect(uint32_t channel, bool open, Loc loc) {
  constexpr uint64_t kStillOpen = ~0ull;
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  const uint64_t now = t.main.tm.clock;
  const auto key = std::make_pair(my_chip(t), channel);
  auto& held = g_fabric.connected[key];
  const Core* other = nullptr;
  if (open) {
    for (const auto& h : held)
      if (h.core != t.core && h.open <= now && h.close > now) other = h.core;
    held.push_back({t.core, now, kStillOpen});
  } else {
    for (auto& h : held) {
      if (h.core != t.core || h.close != kStillOpen) continue;
      h.close = now;
      for (const auto& o : held)
        if (o.core != t.core && o.open >= h.open && o.open < now) other = o.core;
    }
  }
  if (other == nullptr) return;
  std::ostringstream os;
  os << "WorkerToFabricEdmSender::" << (open ? "open" : "close") << ": cores (" << other->logical.x << ","
     << other->logical.y << ") and (" << t.core->logical.x << "," << t.core->logical.y << ") of " << chip_name(key.first)
     << " are connected to the router " << kDirectionNames[channel_direction(channel)] << " (ethernet channel "
     << channel << ") at once: a router's sender channel takes one worker at a time (fabric_erisc_router.cpp, "
     << "\"Connecting Workers to Channels\"); close one connection before the other opens, or send from one core";
  lk.unlock();
  protocol_error(loc, os.str());
}

void fabric_wait_slot(uint32_t channel, Loc loc) {
  ThreadCtx& t = ctx(loc);
  auto& slots = t.fabric_slots[channel];
  charge(t, timing::kDataflowMisc, "fabric wait_for_empty_write_slot");
  while (slots.size() >= kSenderSlots) {
    wait_until(t, slots.front(), &ThreadTiming::noc_stall, "fabric wait_for_empty_write_slot");
    slots.pop_front();
  }
}

void fabric_send(uint32_t channel, uint32_t header_l1, uint32_t payload_l1, uint32_t payload_size, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = "fabric packet";
  const ArchSpec& a = t.dev->arch;
  const uint32_t header_off = [&] {
    const uint64_t base = t.core->l1_base_addr();
    if (header_l1 < base || header_l1 + sizeof(FabricPacket) > base + a.l1_size)
      protocol_error(loc, std::string(fn) + ": the packet header is not in this core's L1");
    return static_cast<uint32_t>(header_l1 - base);
  }();
  FabricPacket p;
  std::memcpy(&p, t.core->l1 + header_off, sizeof p);
  if (payload_size != p.payload_size_bytes && p.noc_send_type != kNocUnicastAtomicInc)
    protocol_error(loc, std::string(fn) + ": the payload sent (" + std::to_string(payload_size) +
                            " bytes) differs from the header's payload size (" +
                            std::to_string(p.payload_size_bytes) + " bytes)");
  if (payload_size > kFabricMaxPayload)
    protocol_error(loc, std::string(fn) + ": a payload of " + std::to_string(payload_size) + " bytes; a packet " +
                            "carries at most " + std::to_string(kFabricMaxPayload) + " (tt_fabric max payload size)");
  const auto hops = route_of(t, channel, p, fn, loc);
  // the hops (indices into `hops`) at whose chip the packet is written: the last, or a multicast's range
  const size_t first_written = p.route_kind == kRouteMulticast ? p.hops - 1 : hops.size() - 1;
  const uint32_t payload_off = payload_size ? [&] {
    const uint64_t base = t.core->l1_base_addr();
    if (payload_l1 < base || payload_l1 + payload_size > base + a.l1_size)
      protocol_error(loc, std::string(fn) + ": the payload is not in this core's L1");
    return static_cast<uint32_t>(payload_l1 - base);
  }() : 0u;

  // The worker's NOC writes of payload and header into the router's buffer slot, then the links.
  charge(t, a.noc_issue, "fabric send");
  uint64_t ready = 0;
  if (payload_size) ready = noc_transfer(t, payload_size, true);
  ready = std::max(ready, noc_transfer(t, sizeof(FabricPacket), true));
  t.main.tm.writes_sent = std::max(t.main.tm.writes_sent, t.main.tm.write_port_free);
  t.counters.noc_write_transactions += payload_size ? 2 : 1;
  const uint64_t bytes = payload_size + kPacketHeaderBytes;
  const uint64_t serialise = timing::link_cycles(a, bytes);

  std::unique_lock lk(t.dev->mu);
  uint32_t at = my_chip(t);
  uint64_t head = ready, slot_free = 0;
  std::vector<uint64_t> arrivals;  // when the packet is whole at each hop's chip
  for (size_t i = 0; i < hops.size(); ++i) {
    LinkState& link = g_fabric.links[{at, hops[i].first}];
    const uint64_t start = reserve(link, head, serialise);
    link.bytes += bytes;
    if (i == 0) slot_free = start + serialise;
    head = start + timing::link_latency(a);
    arrivals.push_back(start + serialise + timing::link_latency(a));
    at = hops[i].second;
  }
  t.fabric_slots[channel].push_back(slot_free);
  for (size_t i = first_written; i < hops.size(); ++i) deliver(t, p, device_impl(hops[i].second), arrivals[i],
                                                             payload_off, payload_size, fn, loc);
}


}  // namespace k

}  // namespace emu
