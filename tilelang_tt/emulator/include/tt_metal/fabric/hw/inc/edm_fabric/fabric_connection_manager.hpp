// Emulated tt-metal 0.81.1 kernel API: a worker's forward and backward fabric connections
// (tt_metal/fabric/hw/inc/edm_fabric/fabric_connection_manager.hpp). build_from_args reads, for each direction,
// a flag and, when set, the WorkerToFabricEdmSender's args (append_fabric_connection_rt_args').
#pragma once

#include <cstddef>
#include <cstdint>

#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"

class FabricConnectionManager final {
public:
    enum BuildFromArgsMode : uint8_t { BUILD_ONLY, BUILD_AND_OPEN_CONNECTION, BUILD_AND_OPEN_CONNECTION_START_ONLY };

    inline bool is_logically_connected() const { return has_forward_connection() || has_backward_connection(); }
    inline bool has_forward_connection() const { return connection_flags & kForward; }
    inline bool has_backward_connection() const { return connection_flags & kBackward; }

    template <BuildFromArgsMode build_mode = BuildFromArgsMode::BUILD_ONLY>
    static FabricConnectionManager build_from_args(std::size_t& arg_idx, emu::k::Loc loc = emu::k::Loc::current()) {
        FabricConnectionManager manager;
        for (const uint8_t direction : {kForward, kBackward}) {
            if (get_arg_val<uint32_t>(arg_idx++, loc) == 0) continue;
            manager.connection_flags |= direction;
            auto& sender = direction == kForward ? manager.forward_fabric_sender : manager.backward_fabric_sender;
            sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg_idx, loc);
            if constexpr (build_mode != BuildFromArgsMode::BUILD_ONLY) sender.open_start(loc);
        }
        return manager;
    }

    template <bool SEND_CREDIT_ADDR = false>
    inline void open(emu::k::Loc loc = emu::k::Loc::current()) {
        if (has_forward_connection()) forward_fabric_sender.open_start<SEND_CREDIT_ADDR>(loc);
        if (has_backward_connection()) backward_fabric_sender.open_start<SEND_CREDIT_ADDR>(loc);
    }
    inline void open_finish() {}
    inline void close_start(emu::k::Loc loc = emu::k::Loc::current()) {
        if (has_forward_connection()) forward_fabric_sender.close_start(loc);
        if (has_backward_connection()) backward_fabric_sender.close_start(loc);
    }
    inline void close_finish() {}
    inline void close(emu::k::Loc loc = emu::k::Loc::current()) { close_start(loc); }

    tt::tt_fabric::WorkerToFabricEdmSender& get_forward_connection(emu::k::Loc loc = emu::k::Loc::current()) {
        if (!has_forward_connection()) emu::k::api_error("FabricConnectionManager: no forward connection", loc);
        return forward_fabric_sender;
    }
    tt::tt_fabric::WorkerToFabricEdmSender& get_backward_connection(emu::k::Loc loc = emu::k::Loc::current()) {
        if (!has_backward_connection()) emu::k::api_error("FabricConnectionManager: no backward connection", loc);
        return backward_fabric_sender;
    }

private:
    static constexpr uint8_t kForward = 0x01, kBackward = 0x02;
    tt::tt_fabric::WorkerToFabricEdmSender forward_fabric_sender;
    tt::tt_fabric::WorkerToFabricEdmSender backward_fabric_sender;
    uint8_t connection_flags = 0;
};
