// Emulated tt-metal host API: a mesh workload (programs per device range).
#pragma once

#include <utility>
#include <vector>

#include <tt-metalium/mesh_coord.hpp>
#include <tt-metalium/program.hpp>

namespace tt::tt_metal::distributed {

class MeshWorkload {
public:
    MeshWorkload();
    MeshWorkload(MeshWorkload&& other) noexcept;
    MeshWorkload& operator=(MeshWorkload&& other) noexcept;
    ~MeshWorkload();

    void add_program(const MeshCoordinateRange& device_range, Program&& program);
    std::vector<std::pair<MeshCoordinateRange, Program>>& get_programs() { return programs_; }

private:
    std::vector<std::pair<MeshCoordinateRange, Program>> programs_;
};

}  // namespace tt::tt_metal::distributed
