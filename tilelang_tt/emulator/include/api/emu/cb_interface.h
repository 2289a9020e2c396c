// tt-metal's LocalCBInterface (internal/circular_buffer_interface.h): FIFO size, limit, page size and
// pointers in bytes (L1 addresses) as a data movement kernel sees it, in 16-byte units as a compute
// kernel (COMPILE_FOR_TRISC) does. The device model keeps the FIFO state, so get_local_cb_interface
// returns a view of CB `cb_id` where tt-metal returns a reference into the core's interface table: each
// field reads the model's value when read, and a kernel may write the FIFO pointers as there
// (fifo_rd_ptr / fifo_wr_ptr: ttnn's matmul compute kernel points an alias CB's read pointer at another
// CB's, bmm_large_block_zm_fused_bias_activation.cpp reload_from_cb_to_dst), which moves the model's
// pointer to that page of the FIFO (an address off a page boundary is an error). A pointer written outside the
// FIFO is a step of the kernel's pointer arithmetic (ttnn's SDPA cb_push_back_hold_wr_ptr rewinds fifo_wr_ptr below
// the FIFO's start, then wraps it): the view holds it until a write brings it back, and it is an error if the next
// get_local_cb_interface of the CB still finds it outside. A write to another field is an error.
#pragma once

#include <cstdint>

#include "api/emu/kernel_common.h"

namespace emu::detail {
#ifdef COMPILE_FOR_TRISC
// A compute kernel's interface holds sizes and pointers in 16-byte units
// (CIRCULAR_BUFFER_COMPUTE_ADDR_SHIFT = 4, tt-metalium/circular_buffer_constants.h).
inline constexpr uint32_t kCbAddrShift = 4;
#else
inline constexpr uint32_t kCbAddrShift = 0;
#endif

template <emu::k::CbField field>
struct CbInterfaceField {
  uint32_t cb;
  emu::k::Loc loc;
  static constexpr bool kPointer = field == emu::k::CbField::RdPtr || field == emu::k::CbField::WrPtr;
  bool outside = false;  // a pointer written outside the FIFO, held in `held` (kernel units)
  uint32_t held = 0;
  operator uint32_t() const {
    if (outside) return held;
    const emu::k::CbState s = emu::k::cb_state(cb, "get_local_cb_interface", loc);
    switch (field) {
      case emu::k::CbField::Size: return s.size >> kCbAddrShift;
      case emu::k::CbField::Limit: return s.limit >> kCbAddrShift;
      case emu::k::CbField::PageSize: return s.page_size >> kCbAddrShift;
      case emu::k::CbField::NumPages: return s.num_pages;
      case emu::k::CbField::RdPtr: return s.rd_ptr >> kCbAddrShift;
      case emu::k::CbField::WrPtr: return s.wr_ptr >> kCbAddrShift;
    }
    return 0;
  }
  void bind(uint32_t cb_id, emu::k::Loc where) {
    if (outside)
      emu::k::api_errorf(where, "get_local_cb_interface(%u): a FIFO pointer the kernel wrote at line %u is still "
                         "outside the FIFO", cb, loc.line());
    cb = cb_id;
    loc = where;
  }
  CbInterfaceField& operator=(uint32_t value) {
    if constexpr (kPointer) {
      const emu::k::CbState s = emu::k::cb_state(cb, "get_local_cb_interface", loc);
      const uint32_t addr = value << kCbAddrShift;
      outside = addr < s.limit - s.size || addr >= s.limit;
      held = value;
      if (outside) return *this;
    }
    emu::k::cb_set_field(cb, field, field == emu::k::CbField::NumPages ? value : value << kCbAddrShift, loc);
    return *this;
  }
  CbInterfaceField& operator=(const CbInterfaceField& other) { return *this = static_cast<uint32_t>(other); }
  template <emu::k::CbField other_field>
  CbInterfaceField& operator=(const CbInterfaceField<other_field>& other) {
    return *this = static_cast<uint32_t>(other);
  }
  // Pointer arithmetic on the field, as on tt-metal's uint32_t (ttnn's SDPA cb_push_back_hold_wr_ptr rewinds
  // fifo_wr_ptr by the pages it pushed)
  CbInterfaceField& operator+=(uint32_t value) { return *this = static_cast<uint32_t>(*this) + value; }
  CbInterfaceField& operator-=(uint32_t value) { return *this = static_cast<uint32_t>(*this) - value; }
};
}  // namespace emu::detail

struct LocalCBInterface {
  emu::detail::CbInterfaceField<emu::k::CbField::Size> fifo_size;
  emu::detail::CbInterfaceField<emu::k::CbField::Limit> fifo_limit;
  emu::detail::CbInterfaceField<emu::k::CbField::PageSize> fifo_page_size;
  emu::detail::CbInterfaceField<emu::k::CbField::NumPages> fifo_num_pages;
  emu::detail::CbInterfaceField<emu::k::CbField::RdPtr> fifo_rd_ptr;
  emu::detail::CbInterfaceField<emu::k::CbField::WrPtr> fifo_wr_ptr;
};

// A reference, as there (kernels bind it: `auto& cb = get_local_cb_interface(id)`): the calling thread's view of
// the CB, naming the caller's line.
FORCE_INLINE LocalCBInterface& get_local_cb_interface(uint32_t cb_id, emu::k::Loc loc = emu::k::Loc::current()) {
  static thread_local LocalCBInterface views[256];
  LocalCBInterface& view = views[cb_id & 0xFF];
  view.fifo_size.bind(cb_id, loc);  // rebinding, not an assignment (which would write the field)
  view.fifo_limit.bind(cb_id, loc);
  view.fifo_page_size.bind(cb_id, loc);
  view.fifo_num_pages.bind(cb_id, loc);
  view.fifo_rd_ptr.bind(cb_id, loc);
  view.fifo_wr_ptr.bind(cb_id, loc);
  return view;
}
