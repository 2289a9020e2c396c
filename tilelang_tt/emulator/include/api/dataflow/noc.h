// The Noc class of tt-metal 0.81.1 (api/dataflow/noc.h) on the emulator: reads and writes between
// an endpoint described by noc_traits_t<Src / Dst> (a TensorAccessor page in api/tensor/noc_traits.h,
// a DataflowBuffer's FIFO in api/dataflow/dataflow_buffer.h) and the barriers, over the same device
// model as the free noc_async_* calls. Members take a trailing source location for their errors.
// With NocOptions::TXN_ID a read or write carries noc_opts.trid and a barrier waits for that id's
// transfers only (noc.h:250-253, 412-443, 718-770; the runtime's NocIds). Virtual channels and posted
// writes change nothing the emulator models.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/dataflow/dataflow_api.h"

struct DataflowBufferArgs {
  uint32_t offset_bytes{};
};

template <typename T>
struct noc_traits_t {
  static_assert(sizeof(T) == 0, "NoC transactions are not supported for this type");
};

// May T be a local-L1 endpoint of noc.async_write_zeros? (tt-metal 0.81.1 noc.h; DataflowBuffer says yes.)
template <typename T>
inline constexpr bool noc_zero_l1_endpoint_v = false;

enum class NocOptions : uint32_t {
  DEFAULT = 0,
  TXN_ID = 1u << 0,
  POSTED = 1u << 1,
  CUSTOM_VC = 1u << 2,
  MCAST_INCL_SRC = 1u << 3,
  INLINE_L1 = 1u << 4,
  INLINE_REG = 1u << 5,
};

constexpr NocOptions operator|(NocOptions a, NocOptions b) noexcept {
  return static_cast<NocOptions>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}

constexpr bool has_flag(NocOptions opts, NocOptions flag) noexcept {
  return (static_cast<uint32_t>(opts) & static_cast<uint32_t>(flag)) != 0;
}

struct NocOptVals {
  uint32_t vc = NOC_UNICAST_WRITE_VC;
  uint32_t trid = 0;
};

class Noc {
 public:
  enum class AddressType { NOC, LOCAL_L1 };

  static constexpr uint32_t INVALID_TXN_ID = 0xFFFFFFFF;

 private:
  template <typename T>
  using src_args_t = typename noc_traits_t<T>::src_args_type;
  template <typename T>
  using dst_args_t = typename noc_traits_t<T>::dst_args_type;
  template <typename T>
  using dst_args_mcast_t = typename noc_traits_t<T>::dst_args_mcast_type;

  // With NocOptions::TXN_ID: tag the read / write command buffer with noc_opts.trid (sticky, as the hardware's
  // NOC_PACKET_TAG).
  template <NocOptions opts>
  static void tag(bool write, const NocOptVals& noc_opts, emu::k::Loc loc) {
    if constexpr (has_flag(opts, NocOptions::TXN_ID)) emu::k::noc_set_trid(write, noc_opts.trid, loc);
  }

 public:
  Noc() : noc_id_(noc_index) {}
  explicit Noc(uint8_t noc_id) : noc_id_(noc_id) {}

  uint8_t get_noc_id() const { return noc_id_; }

  // Reads `size_bytes` from `src` (a NOC address: a tensor page) into `dst` (this core's L1: a DFB).
  template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
            bool enable_noc_tracing = true, typename Src, typename Dst>
  void async_read(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                  const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {},
                  emu::k::Loc loc = emu::k::Loc::current()) const {
    tag<opts>(false, noc_opts, loc);
    const uint32_t dst_addr = noc_traits_t<Dst>::template dst_addr<AddressType::LOCAL_L1>(dst, *this, dst_args, loc);
    const uint64_t src_addr = noc_traits_t<Src>::template src_addr<AddressType::NOC>(src, *this, src_args, loc);
    emu::k::noc_read(src_addr, dst_addr, size_bytes, loc);
  }

  // Writes `size_bytes` from `src` (this core's L1: a DFB) to `dst` (a NOC address: a tensor page).
  template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
            bool enable_noc_tracing = true, typename Src, typename Dst>
  void async_write(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                   const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {},
                   emu::k::Loc loc = emu::k::Loc::current()) const {
    tag<opts>(true, noc_opts, loc);
    const uint32_t src_addr = noc_traits_t<Src>::template src_addr<AddressType::LOCAL_L1>(src, *this, src_args, loc);
    const uint64_t dst_addr = noc_traits_t<Dst>::template dst_addr<AddressType::NOC>(dst, *this, dst_args, loc);
    emu::k::noc_write(src_addr, dst_addr, size_bytes, loc);
  }

  // Multicasts `size_bytes` from `src` (this core's L1) to `num_dsts` cores of the rectangle `dst` names
  // (a MulticastEndpoint); with NocOptions::MCAST_INCL_SRC the sender is one of them
  // (noc_async_write_multicast_loopback_src), else it is not (noc_async_write_multicast). As tt-metal
  // 0.81.1 noc.h, no transaction ids or posted multicasts.
  template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, typename Src,
            typename Dst>
  void async_write_multicast(const Src& src, const Dst& dst, uint32_t size_bytes, uint32_t num_dsts,
                             const src_args_t<Src>& src_args, const dst_args_mcast_t<Dst>& dst_args,
                             bool linked = false, emu::k::Loc loc = emu::k::Loc::current()) const {
    static_assert(!has_flag(opts, NocOptions::TXN_ID), "Mcasts with transaction id are not supported yet");
    static_assert(!has_flag(opts, NocOptions::POSTED), "Mcasts with posted transactions are not supported");
    const uint32_t src_addr = noc_traits_t<Src>::template src_addr<AddressType::LOCAL_L1>(src, *this, src_args, loc);
    const uint64_t dst_addr = noc_traits_t<Dst>::template dst_addr_mcast<AddressType::NOC>(dst, *this, dst_args, loc);
    emu::k::noc_write_multicast(src_addr, dst_addr, size_bytes, num_dsts, has_flag(opts, NocOptions::MCAST_INCL_SRC),
                                linked, noc_id_, loc);
  }

  template <NocOptions opts = NocOptions::DEFAULT>
  void async_read_barrier(const NocOptVals& noc_opts = {}, emu::k::Loc loc = emu::k::Loc::current()) const {
    if constexpr (has_flag(opts, NocOptions::TXN_ID))
      emu::k::noc_read_barrier_trid(noc_opts.trid, loc);
    else
      emu::k::noc_read_barrier(loc);
  }

  template <NocOptions opts = NocOptions::DEFAULT>
  void async_write_barrier(const NocOptVals& noc_opts = {}, emu::k::Loc loc = emu::k::Loc::current()) const {
    if constexpr (has_flag(opts, NocOptions::TXN_ID))
      emu::k::noc_write_barrier_trid(noc_opts.trid, loc);
    else
      emu::k::noc_write_barrier(loc);
  }

  template <NocOptions opts = NocOptions::DEFAULT>
  void async_writes_flushed(const NocOptVals& noc_opts = {}, emu::k::Loc loc = emu::k::Loc::current()) const {
    if constexpr (has_flag(opts, NocOptions::TXN_ID))
      emu::k::noc_writes_flushed_trid(noc_opts.trid, loc);
    else
      emu::k::noc_writes_flushed(loc);
  }

  void async_atomic_barrier() const {}

  // Zeroes `size_bytes` of a local-L1 endpoint as tt-metal 0.81.1 does on Wormhole and Blackhole
  // (internal/tt-1xx/noc_zero_l1.inl): NOC reads of the core's own zero region (MEM_ZEROS_BASE,
  // MEM_ZEROS_SIZE bytes: dataflow_api.h) into it, MEM_ZEROS_SIZE at a time; write_zeros_l1_barrier
  // is the read barrier. (The DRAM overload, zeroing a TensorAccessor's pages from a scratch, is not here.)
  template <typename Dst>
  void async_write_zeros(const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& args = {},
                         emu::k::Loc loc = emu::k::Loc::current()) const {
    static_assert(noc_zero_l1_endpoint_v<Dst>,
                  "noc.async_write_zeros: unsupported local-L1 destination. Supported: CircularBuffer, "
                  "DataflowBuffer, CoreLocalMem, Scratchpad, LocalTensorAccessor. Use the TensorAccessor overload "
                  "for DRAM.");
    const uint64_t zeros = emu::k::noc_self_addr(emu::k::mem_zeros_base(loc), loc);
    const uint32_t dst_addr = noc_traits_t<Dst>::template dst_addr<AddressType::LOCAL_L1>(dst, *this, args, loc);
    for (uint32_t done = 0; done < size_bytes; done += MEM_ZEROS_SIZE) {
      const uint32_t chunk = size_bytes - done < MEM_ZEROS_SIZE ? size_bytes - done : MEM_ZEROS_SIZE;
      emu::k::noc_read(zeros, dst_addr + done, chunk, loc);
    }
  }

  void write_zeros_l1_barrier(emu::k::Loc loc = emu::k::Loc::current()) const { emu::k::noc_read_barrier(loc); }

  void async_full_barrier(emu::k::Loc loc = emu::k::Loc::current()) const {
    emu::k::noc_read_barrier(loc);
    emu::k::noc_write_barrier(loc);
  }

 private:
  uint8_t noc_id_;
};

#define TT_EMU_NOC_H_DEFINED
#ifdef TT_EMU_DATAFLOW_BUFFER_DEFINED
#include "api/emu/dfb_noc_traits.h"
#endif
#if defined(TT_EMU_CIRCULAR_BUFFER_DEFINED) && !defined(COMPILE_FOR_TRISC)
#include "api/emu/cb_noc_traits.h"
#endif
