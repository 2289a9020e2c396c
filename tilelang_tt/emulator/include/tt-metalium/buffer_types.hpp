// Emulated tt-metal host API: buffer enums (tt-metal 0.81.1 names and values).
#pragma once

namespace tt::tt_metal {

enum class TensorMemoryLayout {
    INTERLEAVED = 0,
    HEIGHT_SHARDED = 2,
    WIDTH_SHARDED = 3,
    BLOCK_SHARDED = 4,
    ND_SHARDED = 5,
};

enum class ShardOrientation {
    ROW_MAJOR = 0,
    COL_MAJOR,
};

enum class ShardDistributionStrategy {
    // Shard i goes to core i % num_cores of the linearised core list.
    ROUND_ROBIN_1D = 0,
    // A 2D grid of shards onto the 2D grid of cores, one shard per core.
    GRID_2D = 1,
    // num_shards / num_cores consecutive shards per core of the linearised core list.
    CONTIGUOUS_1D = 2,
};

enum class BufferType { DRAM, L1, SYSTEM_MEMORY, L1_SMALL, TRACE };

}  // namespace tt::tt_metal
