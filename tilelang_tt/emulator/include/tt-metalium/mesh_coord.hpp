// Emulated tt-metal host API: mesh shapes and coordinates (2D meshes: rows, cols).
#pragma once

#include <cstdint>
#include <vector>

namespace tt::tt_metal::distributed {

class MeshShape {
public:
    explicit MeshShape(uint32_t x);
    MeshShape(uint32_t x, uint32_t y);

    std::size_t dims() const { return dims_.size(); }
    uint32_t operator[](std::size_t dim) const { return dims_.at(dim); }
    std::size_t mesh_size() const;

private:
    std::vector<uint32_t> dims_;
};

class MeshCoordinate {
public:
    explicit MeshCoordinate(uint32_t x);
    MeshCoordinate(uint32_t x, uint32_t y);

    const std::vector<uint32_t>& coords() const { return coords_; }

private:
    std::vector<uint32_t> coords_;
};

// Inclusive range of mesh coordinates.
class MeshCoordinateRange {
public:
    explicit MeshCoordinateRange(const MeshShape& shape);
    MeshCoordinateRange(const MeshCoordinate& start, const MeshCoordinate& end);

    const MeshCoordinate& start_coord() const { return start_; }
    const MeshCoordinate& end_coord() const { return end_; }

private:
    MeshCoordinate start_;
    MeshCoordinate end_;
};

}  // namespace tt::tt_metal::distributed
