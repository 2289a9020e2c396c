"""The tilelang-tt command line: every verb, its output files, exit codes 0/1/2 and no Python
traceback on failures. The verbs run in this process (``cli``: what escapes ``main`` would be the
traceback a user sees, and fails the test); the console entry point runs as a subprocess once."""

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from tilelang_tt.artifacts import Artifacts
from tilelang_tt.cli import main
from tilelang_tt.plan_view import summary
from tests import kernels
from tests.frontend.test_instrumentation import SPEC_ORDER

ROOT = Path(__file__).resolve().parents[2]

# 10x3 blocks on a 4x3 grid: six cores get 3 blocks, six get 2.
UNEVEN = """
import tilelang_tt
from tests.kernels import eltwise

def build(**options):
    return tilelang_tt.compile(eltwise("add", 320, 96, 32, 32), **{"grid": (4, 3), **options})

def reference(a, b):
    return a.float() + b.float()
"""
NOT_TILE_ALIGNED = """
import tilelang.language as T

@T.prim_func
def ragged(A: T.Tensor((64, 96), "bfloat16"), C: T.Tensor((64, 96), "bfloat16")):
    with T.Kernel(1, 1, threads=128) as (bx, by):
        A_s = T.alloc_shared((32, 32), "bfloat16")
        T.copy(A[0, 40], A_s)
        T.copy(A_s, C[0, 40])
"""
UNSUPPORTED_MATH = """
import tilelang.language as T

@T.prim_func
def arctan(A: T.Tensor((64, 96), "bfloat16"), C: T.Tensor((64, 96), "bfloat16")):
    with T.Kernel(1, 1, threads=128) as (bx, by):
        A_s = T.alloc_shared((32, 32), "bfloat16")
        T.copy(A[0, 32], A_s)
        for i, j in T.Parallel(32, 32):
            A_s[i, j] = T.atan(A_s[i, j])
        T.copy(A_s, C[0, 32])
"""
RAISES_ON_IMPORT = """
def helper():
    return {}["missing"]

TABLE = helper()
"""


def cli(*args) -> subprocess.CompletedProcess:
    """``tilelang-tt ARGS`` from the repository root: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exit_:  # argparse's usage errors and --help
            code = exit_.code
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_the_console_entry_point_exits_with_the_verbs_code():
    entry = [sys.executable, "-c", "from tilelang_tt.cli import entry; entry()"]
    done = subprocess.run([*entry, "--help"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0 and "tilelang-tt compile examples/gemm.py" in done.stdout
    done = subprocess.run([*entry, "compile", "examples/gemm.py", "--grid", "banana"], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 2 and "XxY" in done.stderr and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def uneven(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cli")
    (directory / "uneven.py").write_text(UNEVEN)
    done = cli("compile", directory / "uneven.py", "--out", directory / "uneven")
    assert done.returncode == 0, done.stderr
    return directory


def test_compile_writes_the_program(uneven):
    assert sorted(p.name for p in (uneven / "uneven").iterdir()) == [
        "compute.cpp", "main.cpp", "reader.cpp", "source_map.json", "tt.plan.json", "writer.cpp"]
    source_map = json.loads((uneven / "uneven" / "source_map.json").read_text())
    assert sorted(source_map) == ["compute.cpp", "reader.cpp", "writer.cpp"]
    kernel_source = Path(kernels.__file__).resolve()  # uneven.py compiles tests/kernels.py's eltwise
    assert {origin.rsplit(":", 2)[0] for lines in source_map.values() for origin in lines.values()} == {str(kernel_source)}
    assert json.loads((uneven / "uneven" / "tt.plan.json").read_text())["core_grid"] == [4, 3]


def test_emulate_kernel_file_checks_against_reference(uneven):
    done = cli("emulate", uneven / "uneven.py")
    assert done.returncode == 0, done.stderr
    assert "result check: max |error|" in done.stdout and "PASS" in done.stdout
    assert done.stderr == ""  # a pipe, not a terminal: no progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_emulate_shows_progress_on_a_terminal_only(uneven, monkeypatch, capsys):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["emulate", str(uneven / "uneven.py")]) == 0
    shown = terminal.getvalue()
    assert shown.startswith(f"\r\x1b[Kcompiling {uneven / 'uneven.py'} (TileLang to TT-Metalium)")
    lines = shown.split("\r\x1b[K")
    running = [line for line in lines if line.startswith("running on the emulator:")]
    assert running[0] == "running on the emulator: 0/12 cores finished"
    assert running[-1] == "running on the emulator: 12/12 cores finished"
    assert lines[-1].startswith("done in ") and lines[-1].endswith(" s\n")
    assert "PASS" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a file
    assert main(["emulate", str(uneven / "uneven")]) == 0
    assert sys.stderr.getvalue() == ""


def test_progress_line_is_cleared_when_emulate_fails(uneven, monkeypatch, capsys):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["emulate", str(uneven / "uneven"), "--size", "m=3"]) == 2
    assert terminal.getvalue().endswith("\r\x1b[Ktilelang-tt: --size m=3: expected NAME=VALUE with NAME one of "
                                        "the kernel's sizes []\n")


def test_emulate_timing_only_predicts_without_checking(uneven):
    done = cli("emulate", uneven / "uneven.py", "--timing-only")
    assert done.returncode == 0, done.stderr
    assert "result check: timing only" in done.stdout and "PASS" not in done.stdout
    assert "predicted" in done.stdout


def test_emulate_directory_keeps_outputs_and_counters(uneven, tmp_path):
    done = cli("emulate", uneven / "uneven", "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    assert "outputs not checked" in done.stdout
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["A.bin", "B.bin", "C.out.bin", "counters.json"]
    counters = json.loads((tmp_path / "run" / "counters.json").read_text())
    assert len(counters["cores"]) == 12
    assert counters["total"]["dram_bytes_written"] == 320 * 96 * 2
    total = done.stdout.split("counters (total):")[1].split("counters per core:")[0]
    assert f"dram_bytes_written{counters['total']['dram_bytes_written']:>{12 + 24 - len('dram_bytes_written')}}" in total
    assert f"tile op add_tiles{counters['total']['tile_ops']['add_tiles']:>{12 + 16 - len('add_tiles')}}" in total
    per_core, predicted, kept = done.stdout.split("counters per core:")[1].strip().split("\n\n")
    assert kept == f"wrote inputs (<buffer>.bin), outputs (<buffer>.out.bin) and counters.json to {tmp_path / 'run'}"
    timing = counters["timing"]
    assert predicted.startswith(f"predicted time (wormhole_b0, timing model): {timing['seconds'] * 1e6:.2f} us = "
                                f"{timing['cycles']} cycles, bound: {timing['bound']} (critical path ")
    per_core = per_core.splitlines()
    assert len(per_core) == 1 + 12  # header + one line per core
    assert per_core[1].split()[:3] == ["(0,0)", str(counters["cores"][0]["dram_bytes_read"]),
                                       str(counters["cores"][0]["dram_bytes_written"])]


def test_emulate_writes_the_trace_and_the_utilization_png(uneven, tmp_path):
    trace, png, run = tmp_path / "t" / "uneven.trace.json", tmp_path / "grid.png", tmp_path / "run"
    done = cli("emulate", uneven / "uneven", "--out", run, "--trace", trace, "--png", png)
    assert done.returncode == 0, done.stderr
    assert f"wrote the timing model's timeline to {trace} (Chrome trace" in done.stdout
    assert f"wrote {png} (3520x800 px): work, L1 use and busy time per RISC per core" in done.stdout
    assert image.imread(png).shape[:2] == (800, 3520)  # work, L1, utilization per core (twice as wide), per RISC
    timing = json.loads((run / "counters.json").read_text())["timing"]
    events = json.loads(trace.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert sorted(processes.values()) == sorted(f"core ({x},{y})" for x in range(4) for y in range(3))
    for core in timing["cores"]:  # Wormhole's 1 GHz: a cycle is 1e-3 us
        x, y = core["core"]
        math = [e for e in events if e["ph"] == "X" and e["pid"] == 1 + y * 8 + x and e["tid"] == 3]  # TRISC1
        assert round(sum(e["dur"] for e in math if e["cat"] == "busy") * 1000) == core["math"]["busy"]
        assert round((math[-1]["ts"] + math[-1]["dur"]) * 1000) == core["math"]["end"]


def test_emulate_trace_or_png_path_that_cannot_be_written_exits_2(uneven, tmp_path):
    (tmp_path / "a_file").write_text("")
    for option, path, message in (("--trace", tmp_path, "is a directory; name a file in it"),
                                  ("--trace", tmp_path / "a_file" / "t.json", "a_file is a file, not a directory"),
                                  ("--png", tmp_path / "a_file" / "g.png", "a_file is a file, not a directory")):
        done = cli("emulate", uneven / "uneven", option, path)
        assert done.returncode == 2 and f"tilelang-tt: {option} {path}: " in done.stderr, done.stderr
        assert message in done.stderr and done.stdout == ""  # refused before the run


def test_plan_show_prints_the_summary(uneven):
    done = cli("plan", "show", uneven / "uneven" / "tt.plan.json")
    assert done.returncode == 0, done.stderr
    plan = Artifacts.load(uneven / "uneven").plan
    assert done.stdout.strip() == summary(plan)
    assert "core grid 4x3 of the 8x8 device, 12 active cores" in done.stdout
    assert "  (2,1)           18      2" in done.stdout
    assert "L1 per core: at most 12.0 KiB" in done.stdout
    assert "  (3,2): reader [@A, @B, 28, 2]  compute [28, 2]  writer [@C, 28, 2]" in done.stdout


def test_plan_show_png_draws_work_and_l1_per_core(uneven, tmp_path):
    png = tmp_path / "grid.png"
    done = cli("plan", "show", uneven / "uneven" / "tt.plan.json", "--png", png)
    assert done.returncode == 0, done.stderr
    pixels = image.imread(png)
    height, width = pixels.shape[:2]
    assert f"wrote {png} ({width}x{height} px)" in done.stdout
    assert (width, height) == (1600, 800) and png.stat().st_size > 20_000
    colours = {tuple(px) for px in (pixels[::4, ::4, :3] * 255).round().astype(int).reshape(-1, 3)}
    assert len(colours) > 50  # two colour maps, idle grey, text, colour bars
    idle, background = (211, 211, 211), (255, 255, 255)  # matplotlib "lightgrey", the figure
    work, l1 = (_areas(pixels[:, : width // 2]), _areas(pixels[:, width // 2:]))
    assert idle in work and background in work and idle in l1 and background in l1
    # work: the six 3-block cores and the six 2-block cores in two colours of equal area
    (three, two) = sorted(set(work) - {idle, background}, key=lambda colour: -sum(colour))
    assert abs(work[three] - work[two]) < 0.05 * work[three]
    # L1: the twelve active cores in one colour, twice the area of each work colour
    ((used, area),) = ((c, n) for c, n in l1.items() if c not in (idle, background))
    assert abs(area - 2 * work[three]) < 0.05 * area and used not in (three, two)


def _areas(panel, at_least=10_000) -> dict[tuple, int]:
    """{colour: pixel count} of the colours covering large areas (cells, background)."""
    values, counts = np.unique((panel[..., :3] * 255).round().astype(int).reshape(-1, 3), axis=0, return_counts=True)
    return {tuple(int(v) for v in value): int(n) for value, n in zip(values, counts) if n >= at_least}


def test_dump_ir_writes_numbered_files_and_replaces_stale_ones(tmp_path):
    stale = tmp_path / "ir" / "main"
    stale.mkdir(parents=True)
    (stale / "99_Gone.py").write_text("stale")
    done = cli("dump-ir", "examples/eltwise_add.py", "--out", tmp_path / "ir")
    assert done.returncode == 0, done.stderr
    expected = [f"{i:02d}_{name}.py" for i, name in enumerate(SPEC_ORDER, 1)]
    assert sorted(p.name for p in stale.iterdir()) == expected
    assert f"wrote the TIR after each of {len(SPEC_ORDER)} passes to {stale}: {expected[0]} ... {expected[-1]}" in done.stdout


def test_help_shows_an_example_for_each_verb():
    done = cli("--help")
    assert done.returncode == 0
    for example in ("tilelang-tt compile examples/gemm.py --out out/gemm", "tilelang-tt emulate examples/gemm.py",
                    "tilelang-tt emulate out/gemm --out", "tilelang-tt plan show out/gemm/tt.plan.json",
                    "--png out/gemm/grid.png", "tilelang-tt dump-ir examples/gemm.py --out ir/gemm",
                    "tilelang-tt fetch-headers", "Exit codes: 0 success; 1", "--trace gemm.trace.json --png gemm.png"):
        assert example in done.stdout, example
    for verb in (["compile"], ["emulate"], ["plan", "show"], ["dump-ir"], ["fetch-headers"]):
        done = cli(*verb, "--help")
        assert done.returncode == 0 and f"tilelang-tt {' '.join(verb)}" in done.stdout.split("example")[1], verb


def test_compile_error_exits_1_with_the_source_line(tmp_path):
    (tmp_path / "arctan.py").write_text(UNSUPPORTED_MATH)
    done = cli("compile", tmp_path / "arctan.py", "--func", "arctan", "--out", tmp_path / "out")
    assert done.returncode == 1
    assert done.stderr.startswith("error[") and "`T.atan(A_s[i, j])`" in done.stderr
    assert f"--> {tmp_path / 'arctan.py'}:10:" in done.stderr and "= help:" in done.stderr
    assert not (tmp_path / "out").exists()


def test_kernel_file_raising_on_import_exits_1_naming_the_line(tmp_path):
    (tmp_path / "broken.py").write_text(RAISES_ON_IMPORT)
    done = cli("compile", tmp_path / "broken.py")
    assert done.returncode == 1
    assert "broken.py: importing it raised KeyError: 'missing'" in done.stderr
    assert f"at {tmp_path / 'broken.py'}:3: return {{}}[\"missing\"]" in done.stderr


def test_emulation_failure_exits_1_with_the_emulator_report(uneven, tmp_path):
    broken = Artifacts.load(uneven / "uneven")
    broken.sources["compute.cpp"] = broken.sources["compute.cpp"].replace("cb_pop_front(", "(void)(")
    broken.save(tmp_path / "leaky")
    done = cli("emulate", tmp_path / "leaky")
    assert done.returncode == 1
    assert done.stderr.startswith("tilelang-tt: emulation failed:\nemulator error: deadlock")


def test_inputs_that_are_not_what_the_verb_takes_exit_2(uneven, tmp_path):
    plan = json.loads((uneven / "uneven" / "tt.plan.json").read_text())
    del plan["work_partition"]
    (tmp_path / "partial.json").write_text(json.dumps(plan))
    done = cli("plan", "show", tmp_path / "partial.json")
    assert done.returncode == 2
    assert "partial.json is not a valid tt.plan.json: at top level: 'work_partition' is a required property" in done.stderr
    (tmp_path / "notes").mkdir()
    done = cli("emulate", tmp_path / "notes")
    assert done.returncode == 2
    assert "notes is not a saved tilelang-tt program: it lacks reader.cpp, compute.cpp" in done.stderr
    # a plan the schema admits and the plan contract does not, as `plan show` and `emulate` inputs
    wrong_grid = Artifacts.load(uneven / "uneven")
    wrong_grid.sources["tt.plan.json"] = json.dumps(wrong_grid.plan.to_json() | {"device_grid": [13, 10]})
    saved = wrong_grid.save(tmp_path / "wrong_grid")
    message = (f"{saved / 'tt.plan.json'} is not a valid tt.plan.json: device_grid [13, 10] is not the wormhole_b0 "
               "worker grid [8, 8] (write plans with")
    for verb in (("plan", "show", saved / "tt.plan.json"), ("emulate", saved)):
        done = cli(*verb)
        assert done.returncode == 2 and message in done.stderr, done.stderr


TWO_KERNELS = NOT_TILE_ALIGNED.replace("def ragged", "def copy_tile").replace("40", "64") + NOT_TILE_ALIGNED


def test_a_file_with_one_prim_func_compiles_it_and_several_ask_which(tmp_path):
    (tmp_path / "one.py").write_text(NOT_TILE_ALIGNED.replace("40", "64"))
    done = cli("compile", tmp_path / "one.py", "--out", tmp_path / "one")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "one" / "tt.plan.json").exists()
    (tmp_path / "two.py").write_text(TWO_KERNELS)
    done = cli("compile", tmp_path / "two.py")
    assert done.returncode == 2
    assert "several @T.prim_func kernels (copy_tile, ragged)" in done.stderr and "--func copy_tile" in done.stderr


def test_usage_errors_exit_2():
    done = cli("emulate", "no_such_kernel.py")
    assert done.returncode == 2 and "no such kernel file or artifacts directory" in done.stderr
    done = cli("compile", "examples/gemm.py", "--grid", "9x9")
    assert done.returncode == 2 and "larger than" in done.stderr
    done = cli("compile", "examples/gemm.py", "--grid", "banana")
    assert done.returncode == 2 and "XxY" in done.stderr
    assert cli("frobnicate").returncode == 2
    assert cli("plan", "show", "missing.json").returncode == 2


def test_any_compile_option_from_the_command_line(tmp_path):
    """-O NAME=VALUE reaches tilelang_tt.compile: a word (HiFi2), a literal (a mapping); unknown names
    and malformed items are usage errors, an invalid value the option's own error."""
    done = cli("compile", "examples/gemm.py", "--out", tmp_path / "g", "-O", "math_fidelity=HiFi2", "-O",
               "math_approx_mode=True", "-O", "storage={'A': 'bfloat8_b'}")
    assert done.returncode == 0, done.stderr
    plan = json.loads((tmp_path / "g" / "tt.plan.json").read_text())
    (compute,) = [k for k in plan["kernels"] if k["role"] == "compute"]
    assert (compute["math_fidelity"], compute["math_approx_mode"]) == ("HiFi2", True)
    assert {b["name"]: b["data_format"] for b in plan["buffers"]}["A"] == "Bfp8_b"
    done = cli("compile", "examples/gemm.py", "-O", "fidelity=HiFi2")
    assert done.returncode == 2 and "no compile option of that name" in done.stderr and "math_fidelity" in done.stderr
    done = cli("compile", "examples/gemm.py", "-O", "math_fidelity")
    assert done.returncode == 2 and "NAME=VALUE" in done.stderr
    done = cli("compile", "examples/gemm.py", "--grid", "2x2", "-O", "grid=(4, 4)")
    assert done.returncode == 2 and "given twice" in done.stderr
    done = cli("compile", "examples/gemm.py", "-O", "math_fidelity=HiFi9")
    assert done.returncode != 0 and "HiFi9" in done.stderr
