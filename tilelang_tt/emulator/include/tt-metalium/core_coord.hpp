// Emulated tt-metal host API: logical core coordinates and core ranges.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tt {

struct xy_pair {
    constexpr xy_pair() = default;
    constexpr xy_pair(std::size_t x_, std::size_t y_) : x(x_), y(y_) {}
    std::size_t x = 0;
    std::size_t y = 0;
    friend constexpr bool operator==(const xy_pair&, const xy_pair&) = default;
};

}  // namespace tt

using CoreCoord = tt::xy_pair;

namespace tt::tt_metal {

// Inclusive rectangle of logical cores.
class CoreRange {
public:
    explicit CoreRange(const CoreCoord& point);
    CoreRange(const CoreCoord& start, const CoreCoord& end);

    CoreCoord start_coord;
    CoreCoord end_coord;

    std::size_t size() const;
    bool contains(const CoreCoord& core) const;
};

class CoreRangeSet {
public:
    CoreRangeSet(const CoreRange& range);
    CoreRangeSet(std::span<const CoreRange> ranges);
    CoreRangeSet(std::vector<CoreRange>&& ranges);

    const std::vector<CoreRange>& ranges() const { return ranges_; }
    std::size_t num_cores() const;

private:
    std::vector<CoreRange> ranges_;
};

}  // namespace tt::tt_metal
