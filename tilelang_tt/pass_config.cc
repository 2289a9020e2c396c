// Registers the `tt.*` PassContext config keys with TVM (tilelang_tt.backend builds and loads this).
//
// TVM's PassContext refuses a config key that was not registered, and registration is C++ only
// (`PassContext::RegisterConfigOption<T>`, what TVM_REGISTER_PASS_CONFIG_OPTION expands to; no FFI
// function exposes it). The keys are registered with a value type that passes every value through
// unchanged: `tilelang_tt.options.CompileOptions.from_config` validates them, so a bad value gives
// the same OptionError from every entry point, and a key may hold any Python object (a BufferLayout).

// tilelang 0.1.15's TVM headers define in tvm/ir/repr.h the ostream operators that
// apache-tvm-ffi 0.1.12 now defines in tvm/ffi/extra/dataclass.h: skip repr.h (nothing here prints).
#define TVM_IR_REPR_H_

#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/ir/transform.h>

#include <deque>
#include <optional>
#include <string>
#include <utility>

namespace tilelang_tt {

/*! \brief A config value TVM keeps as given. */
struct PassThrough {
  tvm::ffi::Any value;
};

}  // namespace tilelang_tt

namespace tvm {
namespace ffi {

template <>
struct TypeTraits<tilelang_tt::PassThrough> : public TypeTraitsBase {
  static constexpr bool storage_enabled = false;

  static void CopyToAnyView(const tilelang_tt::PassThrough& src, TVMFFIAny* result) {
    *result = AnyView(src.value).CopyToTVMFFIAny();
  }
  static void MoveToAny(tilelang_tt::PassThrough src, TVMFFIAny* result) {
    *result = details::AnyUnsafe::MoveAnyToTVMFFIAny(std::move(src.value));
  }
  static std::optional<tilelang_tt::PassThrough> TryCastFromAnyView(const TVMFFIAny* src) {
    return tilelang_tt::PassThrough{Any(AnyView::CopyFromTVMFFIAny(*src))};
  }
  static std::string TypeStr() { return "Any"; }
};

}  // namespace ffi
}  // namespace tvm

namespace tilelang_tt {

void RegisterPassConfig(const tvm::ffi::String& key) {
  // TVM keeps the key's pointer (for its messages): the text must live as long as the process.
  static std::deque<std::string> keys;
  keys.emplace_back(key);
  tvm::transform::PassContext::RegisterConfigOption<PassThrough>(keys.back().c_str());
}

}  // namespace tilelang_tt

TVM_FFI_DLL_EXPORT_TYPED_FUNC(register_pass_config, tilelang_tt::RegisterPassConfig);
