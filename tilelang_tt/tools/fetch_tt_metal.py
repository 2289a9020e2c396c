"""Fetch the pinned tt-metal kernel headers (and libtt_metal.so) from the ttnn 0.81.1 wheel.

The wheel is downloaded with pip (it only exists for cp310/cp312) into the cache directory
(:data:`tilelang_tt.env.CACHE_DIR`) and only ``ttnn/tt_metal/``, the ttnn operation kernels
(``ttnn/ttnn/cpp/ttnn/``: the device kernels ttnn's ops run, which the emulator tests run unmodified)
and ``ttnn/build/lib/libtt_metal.so`` are extracted. Idempotent: the marker file records what was
extracted, and a cache extracted with fewer members is extracted again.
Called by ``make`` (``tilelang-tt fetch-headers``).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from tilelang_tt.env import CACHE_DIR, libtt_metal_path, tt_metal_root, ttnn_kernels_root

TTNN_VERSION = "0.81.1"
_MEMBERS = ("ttnn/tt_metal/", "ttnn/ttnn/cpp/ttnn/", "ttnn/build/lib/libtt_metal.so")
_MARKER = "\n".join((TTNN_VERSION, *_MEMBERS)) + "\n"


def fetch(dest: Path | None = None) -> Path:
    dest = dest or (CACHE_DIR.get() / f"ttnn-{TTNN_VERSION}")
    marker = dest / ".complete"
    if marker.exists() and marker.read_text() == _MARKER:
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"ttnn=={TTNN_VERSION}", "--no-deps",
             "--python-version", "3.12", "--only-binary=:all:", "-d", tmp, "-q"],
            check=True,
        )
        (wheel,) = Path(tmp).glob("ttnn-*.whl")
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if name.startswith(_MEMBERS) and not (dest / name).exists():  # a re-extraction adds members
                    zf.extract(name, dest)
    marker.write_text(_MARKER)
    return dest


def main() -> None:
    root = fetch()
    assert tt_metal_root().is_dir() and libtt_metal_path().is_file() and ttnn_kernels_root().is_dir(), root
    print(f"tt-metal {TTNN_VERSION} headers at {tt_metal_root()}")

