"""Hostile kernels, options and plans get a clear error at the user's line (or naming the file) instead of an
internal error or a silent success: zero-size tensors and launches, nested T.Kernel, booleans for integer
options, tensors larger than the device's DRAM, plans whose CBs exceed L1 or that are damaged, a program
folder missing a kernel file, the T.atomic_add overlap, and the command line on a full or read-only disk."""

import errno
import inspect
import json
import pathlib
import re
import shutil

import pytest
import tilelang.language as T

import tilelang_tt
from tests.compiler.test_cli import cli
from tests.kernels import eltwise
from tilelang_tt import TTCompileError
from tilelang_tt.host.ttnn_program import load_program
from tilelang_tt.options import OptionError

HERE = inspect.getsourcefile(lambda: None)


def line_of(marker: str) -> int:
    lines = pathlib.Path(HERE).read_text().splitlines()
    return next(n for n, text in enumerate(lines, 1) if text.rstrip().endswith(f"# LINE: {marker}"))


def copy_kernel(M, N, gx, gy):
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):  # LINE: copy
        with T.Kernel(gx, gy, threads=128) as (bx, by):  # LINE: launch
            A_s = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[by * 32, bx * 32], A_s)
            T.copy(A_s, C[by * 32, bx * 32])

    return main


def nested_kernel():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "bfloat16"), C: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            with T.Kernel(1, 1, threads=128) as (cx, cy):  # LINE: nested
                A_s = T.alloc_shared((32, 32), "bfloat16")
                T.copy(A[by * 32, bx * 32], A_s)
                T.copy(A_s, C[by * 32, bx * 32])

    return main


def overlapping_atomic_add():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((32, 64), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], A_s)
            T.atomic_add(C[0, bx * 16], A_s)  # LINE: atomic

    return main


def compile_error(kernel, **options) -> TTCompileError:
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(kernel, **options)
    return info.value


def at(err: TTCompileError, marker: str) -> None:
    assert err.location is not None and err.location[:2] == (HERE, line_of(marker)), err.location
    assert err.hint and f"{HERE}:{line_of(marker)}:" in str(err)


@pytest.mark.parametrize("shape", [(0, 64), (64, 0)])
def test_a_zero_size_dimension_is_refused_at_the_kernel(shape):
    err = compile_error(copy_kernel(*shape, 2, 2))
    assert err.pass_name == "CheckKernel" and f"parameter `A` has a dimension of size 0 (shape {shape})" in err.message
    at(err, "copy")


@pytest.mark.parametrize("grid, axis", [((0, 2), "blockIdx.x"), ((2, 0), "blockIdx.y")])
def test_a_launch_of_no_blocks_is_refused_at_the_t_kernel(grid, axis):
    err = compile_error(copy_kernel(64, 64, *grid))
    assert f"T.Kernel launches 0 blocks along {axis}" in err.message
    at(err, "launch")


def test_a_nested_t_kernel_is_refused_at_the_inner_one():
    err = compile_error(nested_kernel())
    assert "a T.Kernel inside another T.Kernel" in err.message
    at(err, "nested")


def test_a_tensor_larger_than_the_devices_dram_is_refused():
    err = compile_error(copy_kernel(2 ** 17, 2 ** 16, 2, 2))  # 2^33 bfloat16 elements: 16 GiB, DRAM 12 GiB
    assert "parameter `A` [131072, 65536] bfloat16 takes 17179869184 bytes, more than the 12884901888 bytes of " \
           "DRAM of a wormhole_b0" in err.message
    at(err, "copy")
    together = compile_error(copy_kernel(2 ** 16, 2 ** 16, 2, 2))  # 8 GiB each: 16 GiB
    assert "the kernel's tensors take 17179869184 bytes together, more than the 12884901888 bytes" in together.message
    stored = {"A": "bfloat4_b", "C": "bfloat4_b"}  # 2.25 GiB each
    assert tilelang_tt.compile(copy_kernel(2 ** 16, 2 ** 16, 2, 2), storage=stored).plan


@pytest.mark.parametrize("option", [{"grid": (True, 8)}, {"grid": 8}, {"cb_depth": True}, {"mesh": (1, True)},
                                    {"gemm_subblock": (True, 1)}])
def test_booleans_and_scalars_are_not_integer_pairs_or_counts(option):
    name = next(iter(option))
    with pytest.raises(OptionError, match=re.escape(f"{name}={option[name]!r} is not")):
        tilelang_tt.compile(copy_kernel(64, 64, 2, 2), **option)


def test_the_atomic_add_overlap_does_not_suggest_the_atomic_add_in_use():
    err = compile_error(overlapping_atomic_add())
    assert "the 2 blocks along `bx` add into overlapping regions of `C`" in err.message
    assert "T.atomic_add makes blocks take turns only along the grid coordinates" in err.message
    assert "atomic_add" not in err.hint and "whole slice" in err.hint
    at(err, "atomic")


# -- plans and program folders -------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return tilelang_tt.compile(eltwise("add", 64, 96, 32, 32)).save(tmp_path_factory.mktemp("plans") / "add")


def _copy_with_plan(saved, tmp_path, edit) -> pathlib.Path:
    target = tmp_path / "program"
    shutil.copytree(saved, target)
    text = (target / "tt.plan.json").read_text()
    (target / "tt.plan.json").write_bytes(edit(text))
    return target


def _huge_cb(text: str) -> bytes:
    plan = json.loads(text)
    plan["cbs"][0]["num_pages"] = 200 * 1024 * 1024 // plan["cbs"][0]["page_size"]  # 200 MiB on every core
    return json.dumps(plan).encode()


@pytest.mark.parametrize("edit, message", [
    (_huge_cb, r"does not fit a core's L1: CBs \d+ bytes \+ L1 buffers 0 bytes > 1393296 bytes available on core"),
    (lambda text: text[: len(text) // 3].encode(), r"tt.plan.json is not JSON: Unterminated"),
    (lambda text: bytes(range(256)) * 4, r"its tt.plan.json is not text \('utf-8' codec can't decode"),
], ids=["cbs_over_l1", "truncated", "binary"])
def test_emulate_and_plan_show_refuse_a_plan_a_device_cannot_hold_or_read(saved, tmp_path, edit, message):
    program = _copy_with_plan(saved, tmp_path, edit)
    done = cli("emulate", program)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 and re.search(message, done.stderr), done.stderr
    shown = cli("plan", "show", program / "tt.plan.json")
    assert shown.returncode == 2 and "Traceback" not in shown.stderr and len(shown.stderr.splitlines()) == 1


def test_a_program_folder_missing_a_kernel_file_names_it(saved, tmp_path):
    program = tmp_path / "program"
    shutil.copytree(saved, program)
    (program / "writer.cpp").unlink()
    with pytest.raises(FileNotFoundError, match=r"program is not a saved tilelang-tt program: it lacks writer.cpp"):
        load_program(program)
    done = cli("emulate", program)
    assert done.returncode == 2 and "it lacks writer.cpp" in done.stderr


@pytest.mark.parametrize("code, text", [(errno.ENOSPC, "No space left on device"),
                                        (errno.EROFS, "Read-only file system")])
def test_compile_out_on_a_full_or_read_only_disk_is_an_error_line(tmp_path, monkeypatch, code, text):
    def fail(self, *args, **kwargs):
        raise OSError(code, text, str(self))

    monkeypatch.setattr(pathlib.Path, "write_text", fail)
    done = cli("compile", "examples/eltwise_add.py", "--out", tmp_path / "out")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("tilelang-tt: ") and done.stderr.rstrip().endswith(text)
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists() and list(tmp_path.iterdir()) == []  # nothing half-written left


def test_save_over_a_file_from_the_command_line_is_a_usage_error(tmp_path):
    (tmp_path / "out").write_text("keep me\n")
    done = cli("compile", "examples/eltwise_add.py", "--out", tmp_path / "out")
    assert done.returncode == 2 and "is a file, not a folder" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "out").read_text() == "keep me\n"
