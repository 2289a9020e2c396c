"""Compile options: a frozen, validated dataclass whose errors say how to fix them."""

from __future__ import annotations

from dataclasses import dataclass, fields

from tilelang_tt.arch import ARCHS, get_arch


class OptionError(ValueError):
    """An invalid compile option; the message names the option and how to fix it."""


@dataclass(frozen=True)
class CompileOptions:
    arch: str = "wormhole_b0"
    grid: tuple[int, int] | None = None  # (x, y) cores to use; default: as many as useful, up to the device
    cb_depth: int = 2  # CB depth (in blocks) where T.Pipelined gives no num_stages
    math_fidelity: str = "HiFi4"
    gemm_reuse: str = "auto"  # "auto": spill partial sums when a C block exceeds DST; "dst": re-read operands
    dump_ir: str | None = None  # directory: write the TIR after each pass as numbered files
    print_ir: bool = False
    pass_timing: bool = False
    keep_ir: bool = False  # keep the per-pass IR on the Artifacts

    def __post_init__(self) -> None:
        if self.arch not in ARCHS:
            raise OptionError(f"arch={self.arch!r} is not a Tenstorrent arch: use one of {sorted(ARCHS)}")
        if self.grid is not None:
            grid = tuple(self.grid)
            if len(grid) != 2 or any(not isinstance(g, int) or g < 1 for g in grid):
                raise OptionError(f"grid={self.grid!r} must be two positive integers (x, y), e.g. grid=(8, 8)")
            dev = get_arch(self.arch).grid
            if grid[0] > dev[0] or grid[1] > dev[1]:
                raise OptionError(
                    f"grid={grid} is larger than the {self.arch} worker grid {dev}: use at most grid={dev}"
                )
            object.__setattr__(self, "grid", grid)
        if not isinstance(self.cb_depth, int) or self.cb_depth < 1:
            raise OptionError(f"cb_depth={self.cb_depth!r} must be a positive integer (2 = double buffering)")
        if self.gemm_reuse not in ("auto", "dst"):
            raise OptionError(f"gemm_reuse={self.gemm_reuse!r}: use 'auto' (read A and B once per K step, partial "
                              "sums in L1) or 'dst' (one pack per output tile, operands re-read per DST sub-block)")
        if self.math_fidelity not in ("LoFi", "HiFi2", "HiFi3", "HiFi4"):
            raise OptionError(f"math_fidelity={self.math_fidelity!r}: use LoFi, HiFi2, HiFi3 or HiFi4")

    @classmethod
    def from_kwargs(cls, **kwargs) -> CompileOptions:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise OptionError(f"unknown compile option(s) {unknown}; known options are {sorted(known)}")
        return cls(**kwargs)
