// Emulated tt-metal host API: the fabric's configuration and node ids (tt-metal 0.81.1
// tt-metalium/experimental/fabric/fabric_types.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <tt_stl/strong_type.hpp>

namespace tt::tt_fabric {

enum class FabricConfig : uint32_t {
    DISABLED = 0,
    FABRIC_1D_NEIGHBOR_EXCHANGE = 1,  // 1D topology with no forwarding between non-adjacent devices
    FABRIC_1D = 2,                    // 1D routing and no deadlock avoidance
    FABRIC_1D_RING = 3,               // 1D routing and deadlock avoidance using datelines
    FABRIC_2D = 4,                    // 2D routing
    FABRIC_2D_TORUS_X = 5,            // 2D routing and deadlock avoidance along X axis
    FABRIC_2D_TORUS_Y = 6,            // 2D routing and deadlock avoidance along Y axis
    FABRIC_2D_TORUS_XY = 7,           // 2D routing and deadlock avoidance along XY axes
    CUSTOM = 8
};

enum class FabricTensixConfig : uint32_t { DISABLED = 0, MUX = 1, UDM = 2 };

enum class FabricUDMMode : uint32_t { DISABLED = 0, ENABLED = 1 };

enum class FabricManagerMode : uint32_t {
    INIT_FABRIC = 1 << 0,
    TERMINATE_FABRIC = 1 << 1,
    ENABLED = (INIT_FABRIC & TERMINATE_FABRIC),
    DEFAULT = (INIT_FABRIC | TERMINATE_FABRIC),
};

struct FabricRouterConfig {
    std::optional<size_t> max_packet_payload_size_bytes = std::nullopt;
};

enum class FabricReliabilityMode : uint32_t {
    STRICT_SYSTEM_HEALTH_SETUP_MODE = 0,
    RELAXED_SYSTEM_HEALTH_SETUP_MODE = 1,
    DYNAMIC_RECONFIGURATION_SETUP_MODE = 2,
};

using MeshId = ttsl::StrongType<uint32_t, struct MeshIdTag>;

// A chip of the fabric: its mesh and its chip id in the mesh (row-major over the mesh's shape).
class FabricNodeId {
public:
    explicit FabricNodeId(MeshId mesh_id_val, uint32_t chip_id_val) : mesh_id(mesh_id_val), chip_id(chip_id_val) {}
    MeshId mesh_id{0};
    uint32_t chip_id = 0;
};

inline bool operator==(const FabricNodeId& lhs, const FabricNodeId& rhs) {
    return lhs.mesh_id == rhs.mesh_id && lhs.chip_id == rhs.chip_id;
}
inline bool operator!=(const FabricNodeId& lhs, const FabricNodeId& rhs) { return !(lhs == rhs); }

}  // namespace tt::tt_fabric
