"""Errors TileLang's front end raises while it parses a kernel reach the user as a TTCompileError at their
line (pass "TileLang"), without TileLang's traceback and without the dump of its generated parser source it
logs: through the command line (importing a kernel file) and tilelang.jit(target="tenstorrent")."""

import importlib.util
import logging
import re
import textwrap

import pytest

from tests.compiler.test_cli import cli
from tilelang_tt import TTCompileError
from tilelang_tt.errors import FRONTEND, frontend_error, tilelang_frontend

KERNEL = '''
import tilelang.language as T


def make():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((32, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 64), "float32")
            B_s = T.alloc_shared((32, 64), "float32")
            S = T.alloc_fragment((64,), "float32")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.copy(A[0, 0], A_s)
            T.copy(B[0, 0], B_s)
            {statement}
            T.copy(C_l, C[0, 0])
    return main


kernel = make()
'''
STATEMENTS = {
    "gemm_k": ("T.gemm(A_s, B_s, C_l)", r"T.gemm K shape check failed: K_A = 64, K_B = 32"),
    "copy_one_argument": ("T.copy(A_s)", r"copy\(\) missing 1 required positional argument: 'dst'"),
    "reduce_dim_2": ("T.reduce_sum(A_s, S, dim=2)", r"Invalid reduce output shape.*dim is 2"),
    "name_error": ("T.copy(D_s, C_l)", r"name 'D_s' is not defined"),
}
LINE = KERNEL.splitlines().index("            {statement}") + 1
EXEC = '''
import tilelang.language as T

SOURCE = """
@T.prim_func
def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, 1, threads=128) as (bx, by):
        A_s = T.alloc_shared((64, 64), "float32")
        T.copy(A[0, 0], A_s)
        T.copy(A_s, C[0, 0])
"""
namespace = {"T": T}
exec(SOURCE, namespace)  # LINE
kernel = namespace["main"]
'''


class Records(logging.Handler):
    """What the TileLang builder's logger lets through its filters."""

    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def builder_log():
    logger, handler = logging.getLogger("tilelang.language.eager.builder"), Records()
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)


@pytest.mark.parametrize("case", sorted(STATEMENTS))
def test_a_kernel_file_tilelang_cannot_parse_is_a_compile_error_at_the_users_line(case, tmp_path, builder_log):
    statement, message = STATEMENTS[case]
    path = tmp_path / f"{case}.py"
    path.write_text(KERNEL.format(statement=statement))
    done = cli("compile", path, "--out", tmp_path / "out")
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"error[{FRONTEND}]: ")
    assert f"{path}:{LINE}:13" in done.stderr and f"{LINE} |             {statement}" in done.stderr
    assert "= help: " in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) <= 6
    assert re.search(message, done.stderr.splitlines()[0])
    assert not builder_log, "TileLang's dump of its generated parser source was logged"


def test_a_kernel_defined_through_exec_is_located_at_the_exec(tmp_path, builder_log):
    path = tmp_path / "through_exec.py"
    path.write_text(EXEC)
    line = EXEC.splitlines().index("exec(SOURCE, namespace)  # LINE") + 1
    done = cli("compile", path, "--out", tmp_path / "out")
    assert done.returncode == 1, done.stderr
    assert "TileLang parses a kernel from its source file" in done.stderr and "defined through exec()" in done.stderr
    assert f"{path}:{line}:1" in done.stderr and "Traceback" not in done.stderr
    assert "write the text to a file" in done.stderr


JITTED = textwrap.dedent('''
    import tilelang
    import tilelang.language as T


    def doubled(target):
        @tilelang.jit(target=target)
        def build(M, N):
            @T.prim_func
            def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
                with T.Kernel(1, 1, threads=128) as (bx, by):
                    A_s = T.alloc_shared((M, N), "float32")
                    T.copy(A[0, 0], A_s)
                    T.copy(A_s, C_s[0, 0])  # LINE
            return main
        return build
    ''')


@pytest.fixture
def jitted(tmp_path):
    path = tmp_path / "jitted.py"
    path.write_text(JITTED)
    spec = importlib.util.spec_from_file_location("jitted", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def test_tilelang_jit_for_tenstorrent_raises_the_compile_error(jitted, builder_log):
    path, module = jitted
    with pytest.raises(TTCompileError) as info:
        module.doubled("tenstorrent")(64, 64)
    line = JITTED.splitlines().index("                T.copy(A_s, C_s[0, 0])  # LINE") + 1
    assert info.value.pass_name == FRONTEND and "name 'C_s' is not defined" in info.value.message
    assert info.value.location[:2] == (str(path), line) and info.value.func_name == "main"
    assert not builder_log


def test_other_targets_and_other_errors_pass_through_unchanged(jitted):
    _, module = jitted
    with pytest.raises(NameError, match="C_s"):  # parsed before any CUDA build: no GPU needed
        module.doubled("cuda")(64, 64)
    with pytest.raises(KeyError):
        with tilelang_frontend():
            {}["missing"]
    assert frontend_error(ValueError("not from TileLang")) is None
