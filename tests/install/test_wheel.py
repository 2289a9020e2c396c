"""`pip install <checkout>` (not editable) gives a working compiler and command line (issue 32): the
checkout's wheel, installed into a fresh venv, compiles a kernel, runs it on the emulator and checks
it, from its package data alone (emulator headers and runtime sources, the plan schema, the native
``.cc`` files) and from outside the checkout.

The wheel is built from a copy of the checkout (setuptools writes ``build/`` and ``*.egg-info`` next
to the sources) without build isolation (setuptools and wheel come from this venv: no download). The
fresh venv gets the wheel alone, ``--no-deps``; its dependencies (TileLang, torch, numpy, ...) are
this venv's site-packages, reached through a ``.pth`` line, which adds the directory but none of the
``.pth`` files in it, so this venv's editable ``tilelang_tt`` stays out of the fresh one. Installing
torch and TileLang anew would take minutes and only test pip; `make test`'s wheel cache serves
those."""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.install
ROOT = Path(__file__).resolve().parents[2]
SKIP = shutil.ignore_patterns(".git", ".venv", ".venv312", "out", "build", "*.egg-info", "__pycache__",
                              ".pytest_cache", ".ruff_cache", ".hypothesis")

RUN = '''
import tilelang.language as T
import torch
import tilelang_tt

print("package", tilelang_tt.__file__)


@T.prim_func
def add(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(2, 2, threads=128) as (bx, by):
        A_s = T.alloc_shared((32, 32), "float32")
        B_s = T.alloc_shared((32, 32), "float32")
        C_s = T.alloc_shared((32, 32), "float32")
        T.copy(A[by * 32, bx * 32], A_s)
        T.copy(B[by * 32, bx * 32], B_s)
        for i, j in T.Parallel(32, 32):
            C_s[i, j] = A_s[i, j] + B_s[i, j]
        T.copy(C_s, C[by * 32, bx * 32])


a, b = torch.randn(64, 64), torch.randn(64, 64)
torch.testing.assert_close(tilelang_tt.compile(add).run(a, b), a + b)
print("ran")
'''


def run(*command, cwd) -> subprocess.CompletedProcess:
    """``command`` in ``cwd`` without PYTHONPATH (the tests run with the checkout on it), which must succeed."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv holding the checkout's wheel (and this venv's packages for its dependencies)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "checkout"
    shutil.copytree(ROOT, source, ignore=SKIP, symlinks=True)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", work / "dist", source,
        cwd=work)
    (wheel,) = (work / "dist").glob("tilelang_tt-*.whl")
    env = work / "venv"
    run(sys.executable, "-m", "venv", env, cwd=work)
    python = env / "bin" / "python"
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=work).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel, cwd=work)
    return env


def test_the_wheel_holds_the_package_data(venv):
    site = Path(next((venv / "lib").glob("python3*/site-packages")))
    package = site / "tilelang_tt"
    for data in ("schema/tt.plan.schema.json", "pass_config.cc", "runtime_module.cc",
                 "emulator/include/api/compute/matmul.h", "emulator/runtime/device.cpp",
                 "emulator/include/tt-metalium/host_api.hpp"):
        assert (package / data).is_file(), data
    assert not (site / "tests").exists() and not (site / "examples").exists()


def test_the_installed_package_compiles_and_runs_a_kernel(venv, tmp_path):
    script = tmp_path / "add.py"
    script.write_text(RUN)
    done = run(venv / "bin" / "python", script, cwd=tmp_path)  # outside the checkout: only the installed package
    assert f"package {next((venv / 'lib').glob('python3*/site-packages'))}/tilelang_tt/__init__.py" in done.stdout
    assert done.stdout.rstrip().endswith("ran")


def test_the_installed_command_line_emulates_a_kernel_file(venv, tmp_path):
    kernel = tmp_path / "scale.py"
    kernel.write_text(RUN.split("a, b = ")[0].replace('print("package", tilelang_tt.__file__)', "")
                      + "\n\ndef reference(a, b):\n    return a + b\n")
    done = run(venv / "bin" / "tilelang-tt", "emulate", kernel, cwd=tmp_path)
    assert "result check: max |error|" in done.stdout and "PASS" in done.stdout
