"""Compile options: a frozen, validated dataclass whose errors say how to fix them.

Every option is reachable from the three entry points: ``tilelang_tt.compile(func, grid=...)``
(:meth:`CompileOptions.from_kwargs`), and, as the config key ``tt.<option>`` (:data:`CONFIG_KEYS`,
one per field), ``tilelang.compile(..., pass_configs={"tt.grid": ...})`` and
``with tvm.transform.PassContext(config={"tt.grid": ...}): tvm.build(...)``
(:meth:`CompileOptions.from_config`). The architecture comes from the target there.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from types import MappingProxyType

from tilelang_tt.contract.arch import ARCHS, get_arch
from tilelang_tt.contract.formats import BLOCK_FORMATS
from tilelang_tt.contract.mesh import MESH_AXES, REPLICATE
from tilelang_tt.errors import TTCompileError
from tilelang_tt.layout import BufferLayout, LayoutError

PASS = "CompileOptions"


def _is_int(value) -> bool:
    """An int that is not a bool: ``True`` is an int to Python, never a size or count to an option."""
    return isinstance(value, int) and not isinstance(value, bool)
PARTITIONS = ("auto", "contiguous", "row_major", "zigzag", "block")
MATH_FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")


def closest(word: object, choices: Iterable[str]) -> list[str]:
    """The valid names nearest a misspelt one: the one equal but for case (``hifi4`` -> ``HiFi4``),
    else those starting with it (``wormhole`` -> ``wormhole_b0``), else those ``difflib`` finds
    similar (``gird`` -> ``grid``: ratio 0.6 or more, within 0.05 of the best), best first; at most three."""
    choices, text = list(choices), str(word)
    same = [c for c in choices if c.lower() == text.lower()]
    prefixed = [c for c in choices if text and c.lower().startswith(text.lower())]
    if same or prefixed:
        return same or prefixed[:3]
    scores = {c: difflib.SequenceMatcher(None, text, c).ratio() for c in choices}
    best = max(scores.values(), default=0.0)
    near = [c for c in choices if scores[c] >= max(0.6, best - 0.05)]  # as good as the best, or nearly
    return sorted(near, key=lambda c: -scores[c])[:3]


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``"did you mean 'grid'? "`` (the closest valid names, quoted), or ``""`` when none is close."""
    near = closest(word, choices)
    return f"did you mean {' or '.join(repr(c) for c in near)}? " if near else ""


class OptionError(TTCompileError):
    """An invalid compile option: a :class:`TTCompileError` whose message names the option and
    whose hint says how to fix it (``tilelang_tt.compile`` adds the kernel and its ``def`` line)."""

    def __init__(self, message: str, *, pass_name: str = PASS, hint: str = "", **context) -> None:
        super().__init__(message, pass_name=pass_name, hint=hint, **context)


@dataclass(frozen=True)
class CompileOptions:
    arch: str = "wormhole_b0"
    grid: tuple[int, int] | None = None  # (x, y) cores to use; default: as many as useful, up to the device
    cb_depth: int = 2  # CB depth (in blocks) where T.Pipelined gives no num_stages and L1 holds it (FitCBDepthsTT)
    math_fidelity: str = "HiFi4"
    # ComputeConfig::math_approx_mode (tt-metal's APPROX: the approximate sqrt/rsqrt/recip of the 0.81.1 SFPU API)
    # and the approximate forms of the ops that take theirs as a template argument (ops.sfpu.APPROXIMATE)
    math_approx_mode: bool = False
    # TileLang's fast math (its pass config tl.enable_fast_math, FAST_MATH_KEY): the approximate forms (it sets
    # math_approx_mode) and rewrites that change rounding: x / v[i] as x * (1 / v[i]) with the reciprocal once per
    # row (ops.eltwise.reciprocal_divisors); exp(x * c) / exp2(x * c), and of a * c - b * c, as the approximate exp
    # with c folded into its init's scale, a - b then an FPU op even of float32 blocks (read as TF32)
    # (tilelang_tt.ops.eltwise, TileProgram.scaled_exp)
    fast_math: bool = False
    gemm_reuse: str = "auto"  # "auto": spill partial sums when a C block exceeds DST; "dst": re-read operands
    # (rows, cols) of output tiles one DST acquire accumulates, ttnn's (out_subblock_h, out_subblock_w);
    # default: the largest that fits DST and packs in row order (tilelang_tt.ops.gemm.sub_block)
    gemm_subblock: tuple[int, int] | None = None
    # Work partition over cores: "auto" (block rectangles when the grid divides the block grid, zigzag
    # when blocks differ in work, else contiguous), "contiguous", "row_major" (round-robin), "zigzag"
    # (round-robin, every other round reversed) or "block"; and the partition mode: "auto"
    # (local_shard when the output is L1-sharded), "global" or "local_shard".
    partition: str = "auto"
    partition_mode: str = "auto"
    multicast: str = "auto"  # "auto" (where the arch's figures say it is quicker: ChooseMulticastTT), "on" or "off"
    # (rows, cols) chips: the block grid's rows split into one contiguous panel per chip (SplitMeshTT)
    mesh: tuple[int, int] = (1, 1)
    # Blocks summing into a tensor (T.atomic_add) across the mesh: the mesh splits the summing grid
    # dimension and the chips' partial sums are combined over the fabric, "all_reduce" (every chip holds
    # the sum) or "reduce_scatter" (each chip keeps its panel of rows); None: the mesh splits the rows,
    # and a summing dimension it must split is all-reduced (tilelang_tt.contract.mesh.MeshCollective)
    mesh_reduce: str | None = None
    # The grid dimension the mesh splits, as T.Kernel binds it ("blockIdx.x" its first extent, "blockIdx.y" the
    # second, "blockIdx.z" the third): "blockIdx.x" splits the block columns (a column-parallel projection: the
    # weight and the output by columns, the input whole on every chip). None: the outermost row dimension of more
    # than one block, else the columns (ChooseMeshAxisTT); with mesh_reduce, the summing dimension. "replicate":
    # none; every chip runs the whole grid on its own copy of every tensor (a norm of a tensor-parallel layer)
    mesh_axis: str | None = None
    layouts: Mapping[str, BufferLayout] | None = None  # buffer name -> memory/layout/sharding
    # parameter name -> block floating point storage ("bfloat8_b", "bfloat4_b"): a shorter spelling
    # of BufferLayout(dtype=...), merged into ``layouts`` (the one place later passes read)
    storage: Mapping[str, str] | None = None
    dump_ir: str | None = None  # directory: write the TIR after each pass as numbered files
    print_ir: bool = False
    pass_timing: bool = False
    keep_ir: bool = False  # keep the per-pass IR on the Artifacts

    def __post_init__(self) -> None:
        if self.arch not in ARCHS:
            raise OptionError(f"arch={self.arch!r} is not a Tenstorrent arch",
                              hint=f"{did_you_mean(self.arch, ARCHS)}use one of {sorted(ARCHS)}")
        if self.grid is not None:
            grid = tuple(self.grid) if isinstance(self.grid, Sequence) and not isinstance(self.grid, str) else ()
            if len(grid) != 2 or any(not _is_int(g) or g < 1 for g in grid):
                raise OptionError(f"grid={self.grid!r} is not two positive integers (x, y)", hint="e.g. grid=(8, 8)")
            dev = get_arch(self.arch).grid
            if grid[0] > dev[0] or grid[1] > dev[1]:
                raise OptionError(f"grid={grid} is larger than the {self.arch} worker grid {dev}",
                                  hint=f"use at most grid={dev}, or leave grid unset to use as many cores as useful")
            object.__setattr__(self, "grid", grid)
        mesh = tuple(self.mesh) if isinstance(self.mesh, Sequence) and not isinstance(self.mesh, str) else ()
        if len(mesh) != 2 or any(not _is_int(m) or m < 1 for m in mesh):
            raise OptionError(f"mesh={self.mesh!r} is not two positive integers (rows, cols) of chips",
                              hint="e.g. mesh=(1, 2) for an n300, mesh=(2, 4) for a T3000; mesh=(1, 1) is one chip")
        object.__setattr__(self, "mesh", mesh)
        if self.mesh_reduce not in (None, "all_reduce", "reduce_scatter"):
            raise OptionError(f"mesh_reduce={self.mesh_reduce!r} is not a collective",
                              hint=did_you_mean(str(self.mesh_reduce), ("all_reduce", "reduce_scatter"))
                              + "use mesh_reduce='all_reduce' (every chip holds the sum) or 'reduce_scatter' "
                              "(each chip keeps its panel of rows), or leave it unset")
        if self.mesh_axis not in (None, *MESH_AXES, REPLICATE):
            raise OptionError(f"mesh_axis={self.mesh_axis!r} is not a grid dimension",
                              hint=did_you_mean(str(self.mesh_axis), (*MESH_AXES, REPLICATE)) + "use mesh_axis="
                              "'blockIdx.x' (the first T.Kernel extent: block columns), 'blockIdx.y' or 'blockIdx.z', "
                              "'replicate' (every chip runs the whole grid on its own copy), or leave it unset")
        if self.mesh_axis is not None and self.mesh_reduce is not None:
            raise OptionError(f"mesh_axis={self.mesh_axis!r} with mesh_reduce={self.mesh_reduce!r}: mesh_reduce splits "
                              "the grid dimension whose blocks sum into a tensor, so the mesh splits that one",
                              hint="drop mesh_axis (mesh_reduce chooses the summing dimension), or drop mesh_reduce")
        if not _is_int(self.cb_depth) or self.cb_depth < 1:
            raise OptionError(f"cb_depth={self.cb_depth!r} is not a positive integer",
                              hint="e.g. cb_depth=2 (double buffering)")
        if self.gemm_subblock is not None:
            sub = tuple(self.gemm_subblock) if isinstance(self.gemm_subblock, Sequence) else ()
            if len(sub) != 2 or any(not _is_int(v) or v < 1 for v in sub):
                raise OptionError(f"gemm_subblock={self.gemm_subblock!r} is not two positive integers (rows, cols)",
                                  hint="e.g. gemm_subblock=(1, 4): one row of four output tiles per DST acquire, "
                                       "as ttnn's out_subblock_h=1, out_subblock_w=4")
            object.__setattr__(self, "gemm_subblock", sub)
        if self.gemm_reuse not in ("auto", "dst"):
            raise OptionError(f"gemm_reuse={self.gemm_reuse!r} is not a GEMM reuse mode",
                              hint=did_you_mean(self.gemm_reuse, ("auto", "dst")) + "use 'auto' (read A and B once per K step, partial sums in L1) or 'dst' "
                                   "(one pack per output tile, operands re-read per DST sub-block)")
        for name, value, allowed in (("partition", self.partition, PARTITIONS),
                                     ("partition_mode", self.partition_mode, ("auto", "global", "local_shard")),
                                     ("multicast", self.multicast, ("auto", "on", "off"))):
            if value not in allowed:
                raise OptionError(f"{name}={value!r} is not one of {list(allowed)}",
                                  hint=did_you_mean(value, allowed) + f"use {name}="
                                  + " or ".join(repr(a) for a in allowed))
        if self.layouts is not None:
            layouts = dict(self.layouts)
            for buffer, layout in layouts.items():
                if not isinstance(layout, BufferLayout):
                    raise OptionError(f"layouts[{buffer!r}] is a {type(layout).__name__}, not a BufferLayout",
                                      hint="e.g. layouts={'A': tilelang_tt.BufferLayout(memory='L1', "
                                           "layout='height_sharded', shard_grid=(8, 1))}")
            object.__setattr__(self, "layouts", MappingProxyType(dict(sorted(layouts.items()))))
        if self.storage is not None:
            self._merge_storage()
        if self.math_fidelity not in MATH_FIDELITIES:
            raise OptionError(f"math_fidelity={self.math_fidelity!r} is not a math fidelity",
                              hint=did_you_mean(self.math_fidelity, MATH_FIDELITIES) + "use LoFi, HiFi2, HiFi3 or HiFi4")
        if not isinstance(self.math_approx_mode, bool):
            raise OptionError(f"math_approx_mode={self.math_approx_mode!r} is not a bool",
                              hint="use math_approx_mode=True (the SFPU's approximate forms) or False (the default)")
        if not isinstance(self.fast_math, bool):
            raise OptionError(f"fast_math={self.fast_math!r} is not a bool",
                              hint="use fast_math=True (the approximate forms and rewrites that change rounding, "
                                   "as TileLang's tl.enable_fast_math) or False (the default)")
        if self.fast_math:
            object.__setattr__(self, "math_approx_mode", True)

    def _merge_storage(self) -> None:
        """``storage={"A": "bfloat8_b"}`` becomes ``layouts["A"].dtype``; a layout that already
        names another storage for the parameter is a contradiction."""
        storage = dict(self.storage) if isinstance(self.storage, Mapping) else None
        if storage is None:
            raise OptionError(f"storage={self.storage!r} is not a mapping of parameter names to storage formats",
                              hint="e.g. storage={'A': 'bfloat8_b', 'B': 'bfloat8_b'}")
        layouts = dict(self.layouts or {})
        for name, fmt in storage.items():
            if not isinstance(name, str) or fmt not in BLOCK_FORMATS:
                raise OptionError(f"storage[{name!r}]={fmt!r} is not a storage format",
                                  hint=f"{did_you_mean(fmt, BLOCK_FORMATS)}use one of {sorted(BLOCK_FORMATS)} (block floating point); a parameter "
                                       "left out is stored in its own dtype")
            layout = layouts.get(name, BufferLayout())
            if layout.dtype not in (None, fmt):
                raise OptionError(f"storage[{name!r}]={fmt!r} contradicts layouts[{name!r}].dtype={layout.dtype!r}",
                                  hint="give the parameter's storage in one place: storage= or BufferLayout(dtype=...)")
            try:
                layouts[name] = replace(layout, dtype=fmt)
            except LayoutError as e:
                raise OptionError(f"storage[{name!r}]={fmt!r}: {e}",
                                  hint="block floating point is for tiled tensors") from None
        object.__setattr__(self, "storage", MappingProxyType(dict(sorted(storage.items()))))
        object.__setattr__(self, "layouts", MappingProxyType(dict(sorted(layouts.items()))))

    @classmethod
    def from_kwargs(cls, **kwargs) -> CompileOptions:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise OptionError(f"unknown compile option(s) {unknown}",
                              hint="".join(did_you_mean(key, known) for key in unknown)
                              + f"known options are {sorted(known)}")
        return cls(**kwargs)

    @classmethod
    def from_config(cls, config: Mapping, *, arch: str) -> CompileOptions:
        """The options of a TVM ``PassContext`` config (TileLang's ``pass_configs``) for a target
        of ``arch``: its ``tt.<option>`` entries (TVM containers become tuples, dicts and str);
        other keys belong to TVM and TileLang, but for TileLang's fast-math switch (:data:`FAST_MATH_KEY`),
        which is ``fast_math`` (an explicit ``tt.fast_math`` wins). A ``tt.arch`` entry must agree with the
        target."""
        check_config_keys(config)
        options = {str(key).removeprefix(CONFIG_PREFIX): _plain(value)
                   for key, value in config.items() if str(key) in CONFIG_KEYS}
        if FAST_MATH_KEY in config and "fast_math" not in options:
            options["fast_math"] = bool(_plain(config[FAST_MATH_KEY]))
        given = options.pop("arch", arch)
        if given != arch:
            raise OptionError(f"{CONFIG_PREFIX}arch={given!r} contradicts the target's architecture {arch!r}",
                              hint=f'the target chooses the architecture: drop {CONFIG_PREFIX}arch and use '
                                   f'target="tenstorrent/<arch>", <arch> one of {sorted(ARCHS)}')
        return cls.from_kwargs(arch=arch, **options)


CONFIG_PREFIX = "tt."
# TileLang's fast-math pass config (tilelang.transform.PassConfigKey.TL_ENABLE_FAST_MATH: nvcc's --use_fast_math on
# CUDA): here the option fast_math.
FAST_MATH_KEY = "tl.enable_fast_math"
CONFIG_KEYS = tuple(CONFIG_PREFIX + f.name for f in fields(CompileOptions))  # the PassContext config keys


def check_config_keys(config: Mapping) -> None:
    """A ``tt.*`` key that names no option is an error listing the known keys."""
    unknown = sorted(str(key) for key in config if str(key).startswith(CONFIG_PREFIX) and str(key) not in CONFIG_KEYS)
    if unknown:
        raise OptionError(f"unknown Tenstorrent config key(s) {unknown}",
                          hint="".join(did_you_mean(key, CONFIG_KEYS) for key in unknown)
                          + f"known keys are {list(CONFIG_KEYS)}")


def _plain(value):
    """A config value as Python values: a TVM ``Map``/``Array``/``String`` (what a ``PassContext``
    holds) becomes a dict/tuple/str; other values (ints, bools, BufferLayouts) are kept."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, Sequence):
        return tuple(_plain(item) for item in value)
    return value
