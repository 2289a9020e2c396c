// Emulated tt-metal host API: how the pages of a sharded buffer are distributed over cores (L1)
// or DRAM banks (DRAM cores are (bank, 0)).
//
// As in tt-metal 0.81.1: the core list is the core range set linearised row-major
// (ShardOrientation::ROW_MAJOR) or column-major, range by range (GRID_2D: the single range
// trimmed to the shard grid); the tensor and shard shapes (in pages) are then squeezed to the
// smallest rank that shards the same way (detail::squeeze_shape_ranks), which is what
// tensor_shape_in_pages() / shard_shape_in_pages() and the TensorAccessorArgs report.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <tt-metalium/buffer_types.hpp>
#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/shape.hpp>

namespace tt::tt_metal {

namespace detail {
std::pair<Shape, Shape> squeeze_shape_ranks(const Shape& tensor_shape, const Shape& shard_shape);
}  // namespace detail

class BufferDistributionSpec {
public:
    BufferDistributionSpec(
        const Shape& tensor_shape_in_pages,
        const Shape& shard_shape_in_pages,
        const CoreRangeSet& core_range_set,
        ShardOrientation shard_orientation,
        ShardDistributionStrategy shard_distribution_strategy = ShardDistributionStrategy::ROUND_ROBIN_1D);
    BufferDistributionSpec(
        const Shape& tensor_shape_in_pages, const Shape& shard_shape_in_pages, std::vector<CoreCoord> cores);

    const Shape& tensor_shape_in_pages() const { return tensor_shape_in_pages_; }
    const Shape& shard_shape_in_pages() const { return shard_shape_in_pages_; }
    std::size_t num_shards() const;
    std::size_t max_num_shards_per_core() const;
    std::size_t max_num_dev_pages_per_core() const;
    std::size_t num_cores() const { return cores_.size(); }
    const std::vector<CoreCoord>& cores() const { return cores_; }
    ShardDistributionStrategy shard_distribution_strategy() const { return shard_distribution_strategy_; }

private:
    static std::vector<CoreCoord> compute_core_list(
        const Shape& tensor_shape_in_pages,
        const Shape& shard_shape_in_pages,
        const CoreRangeSet& core_range_set,
        ShardOrientation shard_orientation,
        ShardDistributionStrategy shard_distribution_strategy);
    void validate() const;

    Shape tensor_shape_in_pages_;
    Shape shard_shape_in_pages_;
    std::vector<CoreCoord> cores_;
    ShardDistributionStrategy shard_distribution_strategy_ = ShardDistributionStrategy::ROUND_ROBIN_1D;
};

}  // namespace tt::tt_metal
