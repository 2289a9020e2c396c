"""The emulator's kernel API headers stay light: a kernel translation unit is mostly header parsing,
and the suite compiles thousands of them. Every header under include/api, and kernel_registry.hpp
that the driver appends, reaches no standard header heavier than <bit> (runtime/device_types.hpp)."""

from __future__ import annotations

import re
import subprocess

from tilelang_tt.emulator.driver import CXX_FLAGS, INCLUDE_DIR, RUNTIME_DIR
from tilelang_tt.env import EMU_CXX

# What <string>, <vector>, <memory>, <span>, <array>, <map> and iostreams bring: each alone is 14k-52k
# preprocessed lines, where every kernel header together is about 8k.
HEAVY = ("string", "vector", "memory", "span", "array", "map", "unordered_map", "functional", "sstream",
         "iostream", "ostream", "stdexcept", "optional", "variant", "tuple", "algorithm")
LINES_BUDGET = 12_000


def _every_kernel_header() -> str:
    headers = sorted(p.relative_to(INCLUDE_DIR).as_posix() for p in (INCLUDE_DIR / "api").rglob("*.h"))
    return "".join(f'#include "{h}"\n' for h in headers) + '#include "kernel_registry.hpp"\n'


def _preprocess(source: str, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([EMU_CXX.get(), *CXX_FLAGS, f"-I{INCLUDE_DIR}", f"-I{RUNTIME_DIR}", *flags, "-E", "-x", "c++",
                           "-"], input=source, capture_output=True, text=True, check=True)


def test_kernel_headers_include_no_heavy_standard_header():
    done = _preprocess(_every_kernel_header(), "-H")
    included = {re.sub(r"^\.+ ", "", line).strip() for line in done.stderr.splitlines() if line.startswith(".")}
    heavy = sorted(path for path in included if path.rsplit("/", 1)[-1] in HEAVY)
    assert heavy == [], f"kernel headers include {heavy}: keep them to runtime/device_types.hpp's light set"
    assert len(done.stdout.splitlines()) < LINES_BUDGET


def test_the_check_sees_a_heavy_header():
    done = _preprocess(_every_kernel_header() + "#include <vector>\n", "-H")
    assert any(line.rstrip().endswith("/vector") for line in done.stderr.splitlines())
