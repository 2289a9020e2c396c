// The runtime module `tvm.runtime.load_module` returns for an exported Tenstorrent module
// (tilelang_tt.module builds and loads this, with pass_config.cc, as one library).
//
// `tvm.runtime.load_module(path)` ends in tvm-ffi's `Module::LoadFromFile`, which calls the global
// function `ffi.Module.load_from_file.<suffix of path>` and casts what it returns to `ffi::Module`.
// `ModuleObj` is a final FFI type (every module has the one type index, whatever its C++ class), so
// the loader must return a C++ module, and Python sees it as `tvm.runtime.Module`. This one holds
// the programs' files as one text (`InspectSource`) and asks Python for its functions by name
// (`tilelang_tt.module_function(text, name)`: the kernels, which run the program, and the helpers
// that give its files), looking that up at each call and holding no Python object: tvm-ffi keeps a
// loaded module alive until exit, and a Python function released after the interpreter has gone
// crashes the process.

// tilelang 0.1.15's TVM headers and apache-tvm-ffi 0.1.12 both define ostream operators (see
// pass_config.cc); nothing here includes TVM's, only tvm-ffi's.
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/string.h>

#include <utility>

namespace tilelang_tt {

using tvm::ffi::Function;
using tvm::ffi::Module;
using tvm::ffi::Optional;
using tvm::ffi::String;

class TenstorrentModuleObj final : public tvm::ffi::ModuleObj {
 public:
  explicit TenstorrentModuleObj(String text) : text_(std::move(text)) {}

  const char* kind() const final { return "tenstorrent"; }

  int GetPropertyMask() const final { return Module::kRunnable; }

  Optional<Function> GetFunction(const String& name) final {
    Optional<Function> resolve = Function::GetGlobal("tilelang_tt.module_function");
    if (!resolve.has_value()) {
      TVM_FFI_THROW(RuntimeError) << "a Tenstorrent module's functions are tilelang_tt's: import tilelang_tt";
    }
    return (*resolve)(text_, name).cast<Optional<Function>>();
  }

  String InspectSource(const String& format) const final { return text_; }

 private:
  String text_;
};

Module CreateTenstorrentModule(String text) {
  return Module(tvm::ffi::make_object<TenstorrentModuleObj>(std::move(text)));
}

}  // namespace tilelang_tt

TVM_FFI_DLL_EXPORT_TYPED_FUNC(create_tenstorrent_module, tilelang_tt::CreateTenstorrentModule);
