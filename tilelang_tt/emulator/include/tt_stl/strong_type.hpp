// Emulated tt-metal host API: tt-stl's StrongType, a value of type T that only converts to and from T
// explicitly (MeshId is one).
#pragma once

#include <compare>

namespace ttsl {

template <typename T, typename Tag>
class StrongType {
public:
    constexpr explicit StrongType(T value) : value_(value) {}
    constexpr const T& operator*() const { return value_; }
    constexpr const T& get() const { return value_; }
    constexpr auto operator<=>(const StrongType&) const = default;

private:
    T value_;
};

}  // namespace ttsl

namespace tt::stl {
using ttsl::StrongType;
}  // namespace tt::stl
