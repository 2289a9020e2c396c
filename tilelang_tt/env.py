"""The one place that declares the environment knobs of tilelang-tt, with their types.

Every knob is read through :data:`KNOBS`; nothing else in the package reads ``os.environ``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


def _as_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected a boolean (1/0, true/false, yes/no, on/off), got {text!r}")


@dataclass(frozen=True)
class Knob(Generic[T]):
    name: str
    parse: Callable[[str], T]
    default: Callable[[], T]
    doc: str

    def get(self) -> T:
        raw = os.environ.get(self.name)
        if raw is None:
            return self.default()
        try:
            return self.parse(raw)
        except ValueError as err:
            raise ValueError(f"environment variable {self.name}={raw!r}: {err}") from None


CACHE_DIR: Knob[Path] = Knob(
    "TILELANG_TT_CACHE_DIR",
    Path,
    lambda: Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tilelang-tt",
    "Where the tt-metal headers (from the ttnn 0.81.1 wheel) and emulator builds are cached.",
)
_SIZE_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _as_size(text: str) -> int:
    """Bytes of ``5G``, ``500M``, ``1.5GiB``, ``123456`` (binary units; ``0``: no limit)."""
    number = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = number[-1:] if number[-1:] in _SIZE_UNITS else ""
    try:
        size = float(number.removesuffix(unit) if unit else number) * _SIZE_UNITS[unit]
    except ValueError:
        raise ValueError(f"expected a size such as 5G, 500M or 1048576 (bytes), got {text!r}") from None
    if size < 0:
        raise ValueError(f"expected a size of 0 bytes or more, got {text!r}")
    return int(size)


CACHE_MAX_SIZE: Knob[int] = Knob(
    "TILELANG_TT_CACHE_MAX_SIZE",
    _as_size,
    lambda: 5 * 2**30,
    "The most the emulator's builds under the cache directory (<cache>/emu) may hold, e.g. 5G or 500M (0: no limit); "
    "past it the least recently used builds are removed, those of emulator versions no longer in use first.",
)
DUMP_IR: Knob[Path | None] = Knob(
    "TILELANG_TT_DUMP_IR",
    lambda s: Path(s) if s else None,
    lambda: None,
    "A directory: write the TIR after every TT pass there as numbered files.",
)
PRINT_IR: Knob[bool] = Knob(
    "TILELANG_TT_PRINT_IR", _as_bool, lambda: False, "Print the TIR after every TT pass to stderr."
)
PASS_TIMING: Knob[bool] = Knob(
    "TILELANG_TT_PASS_TIMING", _as_bool, lambda: False, "Print the time spent in each TT pass to stderr."
)
EMU_CXX: Knob[str] = Knob("TILELANG_TT_CXX", str, lambda: "g++",
                          "C++ compiler used to build emulator programs and the tt.* config-key library.")

UPDATE_GOLDEN: Knob[bool] = Knob(
    "TILELANG_TT_UPDATE_GOLDEN", _as_bool, lambda: False,
    "Tests: rewrite the golden generated sources under tests/golden instead of comparing with them.",
)

KNOBS = (CACHE_DIR, CACHE_MAX_SIZE, DUMP_IR, PRINT_IR, PASS_TIMING, EMU_CXX, UPDATE_GOLDEN)


def tt_metal_root() -> Path:
    """Root of the extracted ``ttnn/tt_metal`` headers of the pinned wheel."""
    return CACHE_DIR.get() / "ttnn-0.81.1" / "ttnn" / "tt_metal"


def ttnn_kernels_root() -> Path:
    """The include root of the pinned wheel's ttnn operation kernels (``ttnn/operations/...`` under it)."""
    return CACHE_DIR.get() / "ttnn-0.81.1" / "ttnn" / "ttnn" / "cpp"


def libtt_metal_path() -> Path:
    """The wheel's ``libtt_metal.so`` (its exported symbols are the host API we may call)."""
    return CACHE_DIR.get() / "ttnn-0.81.1" / "ttnn" / "build" / "lib" / "libtt_metal.so"
