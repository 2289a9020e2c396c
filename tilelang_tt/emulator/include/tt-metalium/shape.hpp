// Emulated tt-metal host API: a tensor shape (tt::tt_metal::Shape, header-only in tt-metal's API).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace tt::tt_metal {

class Shape {
public:
    explicit Shape(std::initializer_list<uint32_t> dims) : dims_(dims) {}
    explicit Shape(std::span<const uint32_t> dims) : dims_(dims.begin(), dims.end()) {}

    std::size_t rank() const { return dims_.size(); }
    std::size_t size() const { return dims_.size(); }
    // A negative index counts from the last dimension (-1).
    uint32_t operator[](int64_t index) const {
        return dims_.at(static_cast<std::size_t>(index < 0 ? index + static_cast<int64_t>(dims_.size()) : index));
    }
    uint64_t volume() const {
        uint64_t volume = 1;
        for (uint32_t dim : dims_) {
            volume *= dim;
        }
        return volume;
    }
    std::span<const uint32_t> view() const { return dims_; }
    auto cbegin() const { return dims_.cbegin(); }
    auto cend() const { return dims_.cend(); }
    friend bool operator==(const Shape&, const Shape&) = default;

private:
    std::vector<uint32_t> dims_;
};

}  // namespace tt::tt_metal
