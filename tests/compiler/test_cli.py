"""The tilelang-tt command line, run as a subprocess."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(*args):
    return subprocess.run([sys.executable, "-c", "from tilelang_tt.cli import entry; entry()", *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_emulate_kernel_file_checks_against_reference():
    done = cli("emulate", "examples/eltwise_add.py", "--grid", "2x2")
    assert done.returncode == 0, done.stderr
    assert "PASS" in done.stdout and "dram_bytes_read" in done.stdout


def test_compile_then_emulate_directory(tmp_path):
    done = cli("compile", "examples/gemm.py", "--out", str(tmp_path / "gemm"))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "gemm").iterdir()) == [
        "compute.cpp", "main.cpp", "reader.cpp", "tt.plan.json", "writer.cpp"]
    done = cli("emulate", str(tmp_path / "gemm"))
    assert done.returncode == 0, done.stderr
    assert "outputs not checked" in done.stdout and "matmul_tiles" in done.stdout


def test_usage_errors_exit_2():
    assert cli("emulate", "no_such_kernel.py").returncode == 2
    done = cli("compile", "examples/gemm.py", "--grid", "9x9")
    assert done.returncode == 2 and "larger than" in done.stderr
    assert cli("compile", "examples/gemm.py", "--grid", "banana").returncode == 2
    assert cli("frobnicate").returncode == 2
