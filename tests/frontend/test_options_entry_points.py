"""Every CompileOptions field from every entry point: ``tilelang_tt.compile(func, **options)``,
``tilelang.compile``/``@tilelang.jit`` with ``pass_configs={"tt.<option>": ...}``, and
``tilelang.lower``/``tvm.compile``/``tvm.build`` under ``tvm.transform.PassContext(config=...)``.
Each option shows in the program as it does through ``tilelang_tt.compile`` (and not without it),
every entry point gives that same program, and a bad value is the same OptionError everywhere."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

import pytest
import tilelang
import tilelang_tt
import tvm

from tests.kernels import eltwise, gemm, pass_names, split_k_gemm
from tests.op_kernels import softmax
from tilelang_tt import BufferLayout, CompileOptions
from tilelang_tt.artifacts import Artifacts
from tilelang_tt.backend import artifacts_of
from tilelang_tt.compiler import dump_file_name
from tilelang_tt.contract.kernels import ComputeConfig
from tilelang_tt.contract.vocabulary import Policy, WorkPolicy
from tilelang_tt.options import CONFIG_KEYS, CONFIG_PREFIX, OptionError
from tilelang_tt.target import DEFAULT_ARCH

KERNELS = {"gemm": gemm(128, 256, 64, 128, 64, 32), "add": eltwise("add", 256, 256, 64, 64),
           "softmax": softmax(64, 128, 32), "split_k": split_k_gemm(64, 64, 128, 32, 64, 32, 2)}
SHARDED_C = {"C": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(4, 1))}
DUMP_DIR = "ir"  # relative: each test runs in its own tmp_path


@pytest.fixture(autouse=True)
def in_tmp_path_without_knobs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for knob in ("TILELANG_TT_DUMP_IR", "TILELANG_TT_PRINT_IR", "TILELANG_TT_PASS_TIMING"):
        monkeypatch.delenv(knob, raising=False)


# ---- the entry points: (kernel, options) -> Artifacts ------------------------------------------


def _config(options: dict) -> dict:
    return {CONFIG_PREFIX + name: value for name, value in options.items()}


def _target(options: dict) -> str:
    return f"tenstorrent/{options.get('arch', DEFAULT_ARCH)}"  # the target chooses the arch


def via_tilelang_tt(func, options, target=None):
    return tilelang_tt.compile(func, **options)


def via_tilelang_compile(func, options, target=None):
    return tilelang.compile(func, target=target or _target(options), pass_configs=_config(options)).artifacts


def via_tilelang_jit(func, options, target=None):
    @tilelang.jit(target=target or _target(options), pass_configs=_config(options))
    def kernel():
        return func

    return kernel().artifacts


def via_tilelang_lower(func, options, target=None):
    with tvm.transform.PassContext(config=_config(options)):
        return artifacts_of(tilelang.lower(func, target=target or _target(options)))


def via_tvm_compile(func, options, target=None):
    with tvm.transform.PassContext(config=_config(options)):
        return artifacts_of(tvm.compile(func, target=target or _target(options)))


ENTRY_POINTS = {
    "tilelang_tt.compile": via_tilelang_tt,
    "tilelang.compile": via_tilelang_compile,
    "tilelang.jit": via_tilelang_jit,
    "tilelang.lower": via_tilelang_lower,
    "tvm.compile": via_tvm_compile,
}
CONFIG_ENTRY_POINTS = [name for name in ENTRY_POINTS if name != "tilelang_tt.compile"]


# ---- what each option does to the program -------------------------------------------------------


def _compute(art: Artifacts) -> ComputeConfig:
    return art.plan.kernel("compute").config


def _placement(art: Artifacts, name: str) -> tuple:
    buffer = next(b for b in art.plan.buffers if b.name == name)
    return buffer.memory, buffer.layout, buffer.shard_grid


def _printed(line: str, err: str) -> list[str]:
    return re.findall(f"^{line}$", err, flags=re.M)


def _dumped() -> list[str]:
    kernel_dir = Path(DUMP_DIR, "main")
    return sorted(p.name for p in kernel_dir.iterdir()) if kernel_dir.is_dir() else []


@dataclass(frozen=True)
class Case:
    kernel: str
    value: object
    shows: Callable[[Artifacts, str], bool]  # (artifacts, stderr): the option was honoured
    base: dict = field(default_factory=dict)  # other options the case needs


CASES = {
    "arch": Case("add", "blackhole", lambda art, err: art.plan.arch.name == "blackhole"),
    "grid": Case("gemm", (2, 1), lambda art, err: art.plan.core_grid == (2, 1)),
    "cb_depth": Case("add", 3, lambda art, err: [cb.num_pages for cb in art.plan.cbs] == [12, 12, 12]),
    "math_fidelity": Case("gemm", "LoFi", lambda art, err: _compute(art).math_fidelity == "LoFi"),
    "math_approx_mode": Case("add", True, lambda art, err: _compute(art).math_approx_mode is True
                             and ".math_approx_mode = true" in art.sources["main.cpp"]),
    # the division by the row sum as a multiplication by its reciprocal, computed once per row; the approximate
    # forms too
    "fast_math": Case("softmax", True, lambda art, err: "recip_tile(" in art.sources["compute.cpp"]
                      and "div_binary_tile(" not in art.sources["compute.cpp"]
                      and _compute(art).math_approx_mode is True),
    # "dst": no partial sums kept in L1 between K steps, so no C_l_out CB (and another compute.cpp)
    "gemm_reuse": Case("gemm", "dst", lambda art, err: "C_l_out" not in [cb.name for cb in art.plan.cbs]),
    # one row of two tiles per DST acquire where the default takes 2x2 of the 4x2-tile block
    "gemm_subblock": Case("gemm", (1, 2), lambda art, err: "matmul_block_init(cb_A_s, cb_B_s, 0, 2, 1, 1)"
                          in art.sources["compute.cpp"]),
    "partition": Case("gemm", "row_major", lambda art, err: art.plan.work_policy == WorkPolicy(
        Policy.ROW_MAJOR, stride=2), base={"grid": (2, 1)}),
    # an L1-sharded output makes "auto" local_shard
    "partition_mode": Case("add", "global", lambda art, err: art.plan.partition_mode == "global",
                           base={"layouts": SHARDED_C}),
    # "auto" leaves this 4-core GEMM's blocks to each core's own reads (ChooseMulticastTT's costs); "on" shares them
    "multicast": Case("gemm", "on", lambda art, err: art.plan.multicast != ()),
    # the 4 block rows in two panels: each device's plan has 2
    "mesh": Case("add", (1, 2), lambda art, err: art.plan.mesh is not None and art.plan.block_grid == (2, 4)),
    # the two K slices split over the chips (without it the two block rows are), the partials reduce-scattered
    "mesh_reduce": Case("split_k", "reduce_scatter", lambda art, err: art.plan.mesh.collective is not None
                        and art.plan.mesh.collective.kind == "reduce_scatter", base={"mesh": (1, 2)}),
    # the 4 block columns in two panels instead of the rows: each device's plan has 4 block rows of 2 columns
    "mesh_axis": Case("add", "blockIdx.x", lambda art, err: art.plan.mesh.axis == "blockIdx.x"
                      and art.plan.block_grid == (4, 2), base={"mesh": (1, 2)}),
    "layouts": Case("add", SHARDED_C, lambda art, err: _placement(art, "C") == ("L1", "height_sharded", (4, 1))),
    "storage": Case("gemm", {"A": "bfloat8_b"}, lambda art, err: [
        b.data_format for b in art.plan.buffers if b.name == "A"] == ["Bfp8_b"]),
    "dump_ir": Case("add", DUMP_DIR, lambda art, err: _dumped() == [
        dump_file_name(i, name) for i, name in enumerate(pass_names(), 1)]),
    "print_ir": Case("add", True, lambda art, err: _printed(r"# main after (\w+)", err) == pass_names()),
    "pass_timing": Case("add", True, lambda art, err: _printed(r"\[tilelang-tt\] main: (\w+): [\d.]+ ms", err)
                        == pass_names()),
    "keep_ir": Case("add", True, lambda art, err: [name for name, _ in art.ir_after_pass] == pass_names()),
}


def test_every_option_has_a_config_key_and_a_case():
    names = [f.name for f in fields(CompileOptions)]
    assert sorted(CASES) == sorted(names)
    assert CONFIG_KEYS == tuple(f"tt.{name}" for name in names)
    registered = tvm.transform.PassContext.list_configs()
    assert all(key in registered for key in CONFIG_KEYS)


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("option", list(CASES))
def test_option_is_honoured_and_the_program_is_the_same(option, entry, capsys):
    case = CASES[option]
    func = KERNELS[case.kernel]
    without = tilelang_tt.compile(func, **case.base)
    assert not case.shows(without, capsys.readouterr().err)
    options = {**case.base, option: case.value}
    reference = tilelang_tt.compile(func, **options)
    for stale in Path(DUMP_DIR).glob("*/*"):  # the reference's dump: the entry point must write its own
        stale.unlink()
    capsys.readouterr()
    art = ENTRY_POINTS[entry](func, options)
    assert case.shows(art, capsys.readouterr().err)
    assert art.sources == reference.sources
    assert art.plan == reference.plan
    if option == "gemm_reuse":
        assert art.get_source("compute") != without.get_source("compute")


def test_tvm_build_reads_the_pass_context():
    options = {"grid": (2, 1), "partition": "row_major", "multicast": "off"}
    reference = tilelang_tt.compile(KERNELS["gemm"], **options)
    with tvm.transform.PassContext(config=_config(options)), pytest.warns(DeprecationWarning):
        module = tvm.build(KERNELS["gemm"], target="tenstorrent")
    assert artifacts_of(module).sources == reference.sources
    assert artifacts_of(module).plan.work_policy.policy == Policy.ROW_MAJOR


def test_tilelang_keys_beside_tt_keys():
    kernel = tilelang.compile(KERNELS["gemm"], target="tenstorrent",
                              pass_configs={"tl.disable_buffer_init_check": True, "tt.grid": (2, 1)})
    assert kernel.artifacts.plan.core_grid == (2, 1)


def test_pass_configs_override_the_callers_pass_context():
    with tvm.transform.PassContext(config={"tt.grid": (1, 1), "tt.multicast": "off"}):
        kernel = tilelang.compile(KERNELS["gemm"], target="tenstorrent", pass_configs={"tt.grid": (2, 1)})
    reference = tilelang_tt.compile(KERNELS["gemm"], grid=(2, 1), multicast="off")
    assert kernel.artifacts.sources == reference.sources


def test_a_functions_own_pass_configs():
    """TileLang's per-function pass configs (the ``tilelang_pass_configs`` attribute) hold for that
    function under tvm.compile too, over the PassContext's."""
    func = KERNELS["gemm"].with_attr("tilelang_pass_configs", {"tt.grid": (2, 1)})
    with tvm.transform.PassContext(config={"tt.grid": (1, 1), "tt.multicast": "off"}):
        art = artifacts_of(tvm.compile(func, target="tenstorrent"))
    assert art.sources == tilelang_tt.compile(KERNELS["gemm"], grid=(2, 1), multicast="off").sources


def test_tilelangs_own_fast_math_key():
    """TileLang's ``tl.enable_fast_math`` (tilelang/transform/pass_config.py) is ``fast_math``."""
    kernel = tilelang.compile(KERNELS["softmax"], target="tenstorrent", pass_configs={"tl.enable_fast_math": True})
    assert kernel.artifacts.sources == tilelang_tt.compile(KERNELS["softmax"], fast_math=True).sources


def test_layouts_from_a_config_come_back_as_buffer_layouts():
    with tvm.transform.PassContext(config={"tt.layouts": SHARDED_C}):
        config = tvm.transform.PassContext.current().config
        assert config["tt.layouts"]["C"] is SHARDED_C["C"]  # the object itself, through the FFI
        assert CompileOptions.from_config(config, arch=DEFAULT_ARCH).layouts == SHARDED_C


# ---- errors ------------------------------------------------------------------------------------

BAD = {
    "grid": ((9, 9), "grid=(9, 9) is larger than the wormhole_b0 worker grid (8, 8)", "grid=(8, 8)"),
    "grid-text": ("8x8", "grid='8x8' is not two positive integers (x, y)", "grid=(8, 8)"),
    "cb_depth": (0, "cb_depth=0 is not a positive integer", "double buffering"),
    "math_fidelity": ("HiFi5", "math_fidelity='HiFi5' is not a math fidelity", "LoFi, HiFi2, HiFi3 or HiFi4"),
    "math_approx_mode": ("yes", "math_approx_mode='yes' is not a bool", "math_approx_mode=True"),
    "fast_math": ("yes", "fast_math='yes' is not a bool", "fast_math=True"),
    "gemm_reuse": ("spill", "gemm_reuse='spill' is not a GEMM reuse mode", "'auto'"),
    "gemm_subblock": ((1, 0), "gemm_subblock=(1, 0) is not two positive integers (rows, cols)",
                      "gemm_subblock=(1, 4)"),
    "partition": ("diagonal", "partition='diagonal' is not one of ['auto', 'contiguous', 'row_major', 'zigzag', 'block']",
                  "partition='auto'"),
    "layouts": ({"C": {"memory": "L1"}}, "layouts['C'] is a dict, not a BufferLayout", "tilelang_tt.BufferLayout("),
    "mesh": ((2, 0), "mesh=(2, 0) is not two positive integers (rows, cols) of chips", "mesh=(2, 4)"),
    "mesh_reduce": ("all", "mesh_reduce='all' is not a collective", "mesh_reduce='all_reduce'"),
    "storage": ({"A": "bfloat16"}, "storage['A']='bfloat16' is not a storage format", "['bfloat4_b', 'bfloat8_b']"),
    "storage-text": ("bfloat8_b", "storage='bfloat8_b' is not a mapping of parameter names to storage formats",
                     "storage={'A': 'bfloat8_b'"),
}


def _error(entry: str, func, options: dict, target: str | None = None) -> Exception:
    with pytest.raises(Exception) as info:
        ENTRY_POINTS[entry](func, options, target)
    return info.value


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("bad", list(BAD))
def test_a_bad_value_is_the_same_option_error_everywhere(bad, entry):
    option = bad.split("-")[0]
    value, message, hint = BAD[bad]
    func = KERNELS["add"]
    reference = _error("tilelang_tt.compile", func, {option: value})
    err = _error(entry, func, {option: value})
    assert isinstance(err, OptionError)
    assert err.message == message and hint in err.hint
    assert err.func_name == "main" and err.location[:2] == reference.location[:2]
    assert str(err) == str(reference)


@pytest.mark.parametrize("entry", ["tilelang.compile", "tilelang.jit"])
def test_an_unknown_tt_key_in_pass_configs_lists_the_known_ones(entry):
    err = _error(entry, KERNELS["add"], {"gird": (2, 2)})
    assert isinstance(err, OptionError)
    assert err.message == "unknown Tenstorrent config key(s) ['tt.gird']"
    assert err.hint == f"did you mean 'tt.grid'? known keys are {list(CONFIG_KEYS)}"


def test_an_unknown_tt_key_in_a_pass_context_is_refused_by_tvm():
    with pytest.raises(AttributeError, match=r"Invalid config option 'tt\.gird' candidates are:.*tt\.grid"):
        tvm.transform.PassContext(config={"tt.gird": (2, 2)})


def test_an_unknown_option_of_tilelang_tt_compile():
    err = _error("tilelang_tt.compile", KERNELS["add"], {"gird": (2, 2)})
    assert err.message == "unknown compile option(s) ['gird']" and "'grid'" in err.hint


@pytest.mark.parametrize("entry", CONFIG_ENTRY_POINTS)
def test_a_tt_arch_config_contradicting_the_target_is_an_option_error(entry):
    err = _error(entry, KERNELS["add"], {"arch": "blackhole"}, target="tenstorrent")
    assert isinstance(err, OptionError)
    assert err.message == "tt.arch='blackhole' contradicts the target's architecture 'wormhole_b0'"
    assert 'target="tenstorrent/<arch>"' in err.hint and "'blackhole'" in err.hint
