"""`tilelang-tt compile/emulate --func FACTORY --arg NAME=VALUE`: a kernel factory called with its
arguments from the command line, without a wrapper file (issue 32)."""

import json

import pytest

from tests.compiler.test_cli import cli

FACTORY = '''
import tilelang
import tilelang.language as T


def scale(M, N, factor=3.0, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(N // 32, M // 32, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), dtype)
            C_s = T.alloc_shared((32, 32), dtype)
            T.copy(A[by * 32, bx * 32], A_s)
            for i, j in T.Parallel(32, 32):
                C_s[i, j] = A_s[i, j] * factor
            T.copy(C_s, C[by * 32, bx * 32])

    return main


@tilelang.jit(out_idx=[-1])
def scale_jit(M, N):
    return scale(M, N, 2.0)


def reference(a):
    return a * 3.0
'''


@pytest.fixture
def factory_file(tmp_path):
    path = tmp_path / "factory.py"
    path.write_text(FACTORY)
    return path


def test_compile_calls_the_factory_with_the_arguments(factory_file, tmp_path):
    done = cli("compile", factory_file, "--func", "scale", "--arg", "M=64", "--arg", "N=96", "--out", tmp_path / "o")
    assert done.returncode == 0, done.stderr
    plan = json.loads((tmp_path / "o" / "tt.plan.json").read_text())
    assert [b["shape"] for b in plan["buffers"]] == [[64, 96], [64, 96]]


def test_emulate_checks_the_factorys_kernel_against_the_reference(factory_file):
    done = cli("emulate", factory_file, "--func", "scale", "--arg", "M=32", "--arg", "N=64", "--arg", "factor=3.0")
    assert done.returncode == 0, done.stderr
    assert "result check: max |error|" in done.stdout and "PASS" in done.stdout
    done = cli("emulate", factory_file, "--func", "scale", "--arg", "M=32", "--arg", "N=64", "--arg", "factor=5.0")
    assert done.returncode == 1 and "FAIL" in done.stdout  # the argument reached the kernel


def test_a_jit_factory_takes_arguments_too(factory_file, tmp_path):
    done = cli("compile", factory_file, "--func", "scale_jit", "--arg", "M=32", "--arg", "N=32", "--out", tmp_path / "j")
    assert done.returncode == 0, done.stderr


def test_the_examples_gemm_factory_from_the_command_line(tmp_path):
    done = cli("compile", "examples/gemm.py", "--func", "gemm", "--arg", "M=128", "--arg", "N=256",
               "--out", tmp_path / "g")
    assert done.returncode == 0, done.stderr
    plan = json.loads((tmp_path / "g" / "tt.plan.json").read_text())
    assert [b["shape"] for b in plan["buffers"]] == [[128, 512], [512, 256], [128, 256]]


@pytest.mark.parametrize("args, message", [
    (["--func", "scale"], "tilelang-tt: --func scale(M, N, factor=3.0, dtype='float32'): missing a required "
                          "argument: 'M'; give each parameter without a default with --arg NAME=VALUE, e.g. --arg M=..."),
    (["--func", "scale", "--arg", "M=32", "--arg", "n=1"], "tilelang-tt: --arg n: --func scale(M, N, factor=3.0, "
                                                           "dtype='float32') has no parameter 'n'; did you mean 'N'? "
                                                           "its parameters are M, N, factor, dtype"),
    (["--func", "scale", "--arg", "M=32"], "missing a required argument: 'N'; give each parameter without a default "
                                           "with --arg NAME=VALUE, e.g. --arg N=..."),
    (["--func", "scale", "--arg", "M32"], "tilelang-tt: --arg 'M32': write it as NAME=VALUE, e.g. --arg M=512"),
    (["--arg", "M=32"], "tilelang-tt: --arg gives an argument of a kernel factory: name the factory with --func"),
    (["--func", "reference", "--arg", "a=1"], "reference(a=1) returned a float, not a @T.prim_func kernel"),
])
def test_factory_usage_errors(factory_file, args, message):
    done = cli("compile", factory_file, *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
