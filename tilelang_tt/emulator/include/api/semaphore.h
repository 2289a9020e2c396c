// The experimental Semaphore class of tt-metal 0.81.1 (api/semaphore.h, its data movement side
// api/dataflow/semaphore_dm_impl.h) on the emulator: a handle on semaphore `id` of the program
// (its word at get_semaphore(id) in this core's L1). On Wormhole and Blackhole a data movement build
// has one mechanism, SemScope::LOCAL_NONATOMIC (semaphore.h: `scope_` a constant), so each member is
// the plain dataflow call semaphore_dm_impl.h makes for that scope: up = an L1 read-modify-write (a set),
// down = wait until the value is at least `value` then subtract, wait / wait_min = noc_semaphore_wait /
// noc_semaphore_wait_min, set = noc_semaphore_set, up(noc, x, y, v) = noc_semaphore_inc of the word on
// core (x, y), set_multicast = noc_semaphore_set_multicast (with NocOptions::MCAST_INCL_SRC its
// loopback form), relay_unicast / relay_multicast = noc_semaphore_set_remote / _set_multicast of this
// word into another semaphore's, inc_multicast = noc_semaphore_inc_multicast. Not emulated: the
// binding-token constructor (Metal 2.0 program specs) and the compute side (a compute kernel may
// not build a Semaphore from an id in 0.81.1 either: a static_assert there, one here).
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"

template <ProgrammableCoreType core_type = ProgrammableCoreType::TENSIX>
class Semaphore {
  template <ProgrammableCoreType>
  friend class Semaphore;

 public:
  explicit Semaphore(std::uint32_t semaphore_id, emu::k::Loc loc = emu::k::Loc::current())
      : handle_(get_semaphore<core_type>(semaphore_id, loc)) {
#ifdef COMPILE_FOR_TRISC
    static_assert(sizeof(core_type) == 0,
                  "a compute semaphore cannot be built from a runtime semaphore id (tt-metal 0.81.1 api/semaphore.h)");
#endif
  }

  void up(std::uint32_t value, emu::k::Loc loc = emu::k::Loc::current()) {
    noc_semaphore_set(word(), *word() + value, loc);
  }

  void down(std::uint32_t value, emu::k::Loc loc = emu::k::Loc::current()) {
    noc_semaphore_wait_min(word(), value, loc);
    noc_semaphore_set(word(), *word() - value, loc);
  }

  void wait(std::uint32_t value, emu::k::Loc loc = emu::k::Loc::current()) const {
    noc_semaphore_wait(word(), value, loc);
  }

  void wait_min(std::uint32_t value, emu::k::Loc loc = emu::k::Loc::current()) const {
    noc_semaphore_wait_min(word(), value, loc);
  }

  void set(std::uint32_t value, emu::k::Loc loc = emu::k::Loc::current()) { noc_semaphore_set(word(), value, loc); }

  std::uint32_t value() const { return *word(); }

  void up(const Noc& noc, std::uint32_t noc_x, std::uint32_t noc_y, std::uint32_t value,
          std::uint8_t vc = NOC_UNICAST_WRITE_VC, emu::k::Loc loc = emu::k::Loc::current()) {
    noc_semaphore_inc(::get_noc_addr(noc_x, noc_y, static_cast<uint32_t>(handle_), noc.get_noc_id()), value,
                      noc.get_noc_id(), vc, loc);
  }

  template <ProgrammableCoreType dst_core_type = core_type>
  void relay_unicast(const Noc& noc, const Semaphore<dst_core_type>& dst_sem, std::uint32_t noc_x, std::uint32_t noc_y,
                     emu::k::Loc loc = emu::k::Loc::current()) {
    if (dst_sem.handle_ == handle_) emu::k::api_error("Semaphore::relay_unicast: dst_sem is this semaphore", loc);
    noc_semaphore_set_remote(static_cast<uint32_t>(handle_),
                             ::get_noc_addr(noc_x, noc_y, static_cast<uint32_t>(dst_sem.handle_), noc.get_noc_id()),
                             noc.get_noc_id(), loc);
  }

  template <NocOptions opts = NocOptions::DEFAULT>
  void set_multicast(const Noc& noc, std::uint32_t noc_x_start, std::uint32_t noc_y_start, std::uint32_t noc_x_end,
                     std::uint32_t noc_y_end, std::uint32_t num_dests, bool linked = false,
                     emu::k::Loc loc = emu::k::Loc::current()) {
    multicast_word<opts>(handle_, noc, noc_x_start, noc_y_start, noc_x_end, noc_y_end, num_dests, linked, loc);
  }

  template <NocOptions opts = NocOptions::DEFAULT, ProgrammableCoreType dst_core_type = core_type>
  void relay_multicast(const Noc& noc, const Semaphore<dst_core_type>& dst_sem, std::uint32_t noc_x_start,
                       std::uint32_t noc_y_start, std::uint32_t noc_x_end, std::uint32_t noc_y_end,
                       std::uint32_t num_dests, bool linked = false, emu::k::Loc loc = emu::k::Loc::current()) {
    if (dst_sem.handle_ == handle_) emu::k::api_error("Semaphore::relay_multicast: dst_sem is this semaphore", loc);
    multicast_word<opts>(dst_sem.handle_, noc, noc_x_start, noc_y_start, noc_x_end, noc_y_end, num_dests, linked, loc);
  }

  void inc_multicast(const Noc& noc, std::uint32_t noc_x_start, std::uint32_t noc_y_start, std::uint32_t noc_x_end,
                     std::uint32_t noc_y_end, std::uint32_t value, std::uint32_t num_dests,
                     emu::k::Loc loc = emu::k::Loc::current()) {
    noc_semaphore_inc_multicast(get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end,
                                                       static_cast<uint32_t>(handle_), noc.get_noc_id()),
                                value, num_dests, noc.get_noc_id(), NOC_MULTICAST_WRITE_VC, loc);
  }

 private:
  volatile tt_l1_ptr std::uint32_t* word() const {
    return reinterpret_cast<volatile tt_l1_ptr std::uint32_t*>(handle_);
  }

  // This semaphore's word multicast into the word at `dst_offset` on each core of the rectangle.
  template <NocOptions opts>
  void multicast_word(std::uintptr_t dst_offset, const Noc& noc, std::uint32_t noc_x_start, std::uint32_t noc_y_start,
                      std::uint32_t noc_x_end, std::uint32_t noc_y_end, std::uint32_t num_dests, bool linked,
                      emu::k::Loc loc) {
    const std::uint64_t dst = get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end,
                                                     static_cast<uint32_t>(dst_offset), noc.get_noc_id());
    if constexpr (has_flag(opts, NocOptions::MCAST_INCL_SRC)) {
      noc_semaphore_set_multicast_loopback_src(static_cast<uint32_t>(handle_), dst, num_dests, linked,
                                               noc.get_noc_id(), loc);
    } else {
      noc_semaphore_set_multicast(static_cast<uint32_t>(handle_), dst, num_dests, linked, noc.get_noc_id(),
                                  NOC_MULTICAST_WRITE_VC, loc);
    }
  }

  std::uintptr_t handle_;
};
