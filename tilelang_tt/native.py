"""The package's C++ side: ``pass_config.cc`` (the ``tt.*`` ``PassContext`` config keys) and
``runtime_module.cc`` (the runtime module ``tvm.runtime.load_module`` returns for an exported
Tenstorrent module), built into one shared library against the TVM and tvm-ffi headers with
``$TILELANG_TT_CXX`` the first time it is needed, and cached under ``<cache>/native`` with its record
(:mod:`tilelang_tt.cache`): checked before it is loaded, since loading a library cut short kills the
process (SIGBUS), and built again when it does not match or fails to load."""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

import tilelang
import tvm_ffi
import tvm_ffi.libinfo

from tilelang_tt import cache
from tilelang_tt.env import CACHE_DIR, EMU_CXX

SOURCES = (Path(__file__).with_name("pass_config.cc"), Path(__file__).with_name("runtime_module.cc"))


def library_path(rebuild: bool = False) -> Path:
    """:data:`SOURCES` built into a shared library, cached by sources, compiler, flags and the
    TileLang and tvm-ffi versions (whose headers and libraries it is built against); a cached
    library that does not match its record is built again (:mod:`tilelang_tt.cache`), and so is one
    ``rebuild`` asks for (it failed to load)."""
    tilelang_dir = Path(tilelang.__file__).parent
    ffi_lib = Path(tvm_ffi.libinfo.find_libtvm_ffi()).parent
    tvm_lib = tilelang_dir / "lib"
    cxx = EMU_CXX.get()
    compile_flags = ["-std=c++17", "-O2", "-fPIC", "-shared", f"-I{tilelang_dir / '3rdparty' / 'tvm' / 'include'}",
                     f"-I{tvm_ffi.libinfo.find_include_path()}", f"-I{tvm_ffi.libinfo.find_dlpack_include_path()}"]
    # -z nodelete: TVM calls into the library (to legalize a tt.* value) for as long as the process lives
    link_flags = [f"-L{tvm_lib}", f"-L{ffi_lib}", "-ltvm_compiler", "-ltvm_ffi", f"-Wl,-rpath,{tvm_lib}:{ffi_lib}",
                  "-Wl,-z,nodelete"]
    texts = [source.read_text() for source in SOURCES]
    key = hashlib.sha256("\0".join([*texts, cxx, *compile_flags, *link_flags, tilelang.__version__,
                                    tvm_ffi.__version__, cache.LAYOUT]).encode())
    root = CACHE_DIR.get() / "native"
    cache.sweep(root)
    library = root / key.hexdigest()[:24] / "libtilelang_tt.so"

    def build(partial: Path) -> None:
        command = [cxx, *compile_flags, *map(str, SOURCES), *link_flags, "-o", str(partial)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"building {', '.join(s.name for s in SOURCES)} (tilelang-tt's C++ side) with {cxx} "
                               f"failed:\n{done.stderr.strip()}")

    if rebuild:
        with cache.locked(library):
            cache.discard(library)
    return cache.build_entry(library, build)


@functools.cache
def library() -> tvm_ffi.Module:
    """The built library, loaded once per process: its functions are ``register_pass_config`` and
    ``create_tenstorrent_module``. A library that fails to load is built again and loaded once more."""
    try:
        return tvm_ffi.load_module(str(library_path()))
    except RuntimeError:  # tvm_ffi's error for a library dlopen refuses
        return tvm_ffi.load_module(str(library_path(rebuild=True)))
