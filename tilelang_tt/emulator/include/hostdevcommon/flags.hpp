// Bit-set over the enumerators of an enum class (tt-metal hostdevcommon/flags.hpp).
#pragma once

#include <type_traits>

template <typename E>
class Flags {
public:
    static_assert(std::is_enum_v<E>, "Flags<E> requires E to be an enum.");
    using Underlying = std::underlying_type_t<E>;

    constexpr Flags() noexcept = default;
    constexpr Flags(E value) noexcept : bits_(static_cast<Underlying>(value)) {}
    constexpr Flags(E a, E b) noexcept : bits_(static_cast<Underlying>(a) | static_cast<Underlying>(b)) {}
    constexpr explicit Flags(Underlying bits) noexcept : bits_(bits) {}

    constexpr Flags operator|(E other) const noexcept {
        return Flags(static_cast<Underlying>(bits_ | static_cast<Underlying>(other)));
    }
    constexpr Flags operator|(Flags other) const noexcept { return Flags(static_cast<Underlying>(bits_ | other.bits_)); }
    constexpr Flags operator&(E other) const noexcept {
        return Flags(static_cast<Underlying>(bits_ & static_cast<Underlying>(other)));
    }
    constexpr bool test(E single) const noexcept {
        return (bits_ & static_cast<Underlying>(single)) == static_cast<Underlying>(single);
    }
    void set(E single, bool value = true) noexcept {
        bits_ = value ? static_cast<Underlying>(bits_ | static_cast<Underlying>(single))
                      : static_cast<Underlying>(bits_ & ~static_cast<Underlying>(single));
    }
    constexpr Underlying raw() const noexcept { return bits_; }

private:
    Underlying bits_ = 0;
};
