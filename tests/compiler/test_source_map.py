"""The kernels' source map (Artifacts.source_map): each generated line that comes from a statement of
the user's kernel maps to it, and an emulator error naming a generated line also names the user's
file, line and statement."""

import inspect

import pytest
import torch

import tilelang_tt
from tests import kernels
from tilelang_tt.artifacts import SOURCE_MAP_FILE, Artifacts
from tilelang_tt.emulator import EmulatorError

SOURCE = inspect.getsourcefile(kernels)


def line_of(statement: str) -> int:
    """The line of ``statement`` in tests/kernels.py's gemm."""
    lines, first = inspect.getsourcelines(kernels.gemm)
    return first + next(n for n, text in enumerate(lines) if text.strip() == statement)


@pytest.fixture(scope="module")
def gemm():
    return tilelang_tt.compile(kernels.gemm(64, 64, 64, 32, 32, 32), grid=(1, 1))


def test_generated_lines_map_to_the_statements_they_come_from(gemm):
    compute = gemm.get_source("compute").split("\n")
    mapped = gemm.source_map["compute.cpp"]
    origin = {n: (path, int(line)) for n, (path, line, _) in
              ((n, o.rsplit(":", 2)) for n, o in mapped.items())}
    assert {path for path, _ in origin.values()} == {SOURCE}
    calls = {text.strip().split("(")[0]: n for n, text in enumerate(compute, 1) if text.strip().endswith(");")}
    # the K loop's matmul is the T.gemm; the output block's pack the T.Kernel's block (its one statement
    # list), the A block's pop the T.Pipelined loop that walks the A blocks
    assert origin[calls["matmul_block"]] == (SOURCE, line_of("T.gemm(A_s, B_s, C_l)"))
    assert origin[next(n for n, t in enumerate(compute, 1) if "for (uint32_t k" in t)][1] == line_of(
        "for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):")
    # the preamble (includes, the kernel's signature) comes from no statement
    assert all(not text.startswith("#include") for n, text in enumerate(compute, 1) if n in mapped)
    # the reader reads A, the writer B (BalanceDataMovementTT): each read is its T.copy
    for role, statement in (("reader", "T.copy(A[by * bm, k * bk], A_s)"), ("writer", "T.copy(B[k * bk, bx * bn], B_s)")):
        lines = gemm.source_map[f"{role}.cpp"]
        reads = [n for n, t in enumerate(gemm.get_source(role).split("\n"), 1) if "noc_async_read_page(" in t]
        assert reads and {int(lines[n].rsplit(":", 2)[1]) for n in reads} == {line_of(statement)}


def test_an_emulator_error_names_the_users_statement(gemm, tmp_path):
    """Compute no longer frees A's pages: the reader blocks reserving one (a deadlock the emulator
    reports at the generated line), and the report adds the T.copy that line was generated from."""
    gemm.save(tmp_path / "program")
    assert (tmp_path / "program" / SOURCE_MAP_FILE).is_file()
    broken = Artifacts.load(tmp_path / "program")
    assert broken.source_map == gemm.source_map
    broken.sources["compute.cpp"] = broken.sources["compute.cpp"].replace("cb_pop_front(cb_A_s", "// (", 1)
    a, b = (torch.randn(64, 64).to(torch.bfloat16) for _ in range(2))
    with pytest.raises(EmulatorError) as info:
        broken.run(a, b)
    message = str(info.value)
    assert "deadlock" in message
    generated = next(part for part in message.split() if part.startswith("reader.cpp:")).rstrip(":")
    statement = f"{SOURCE}:{line_of('T.copy(A[by * bm, k * bk], A_s)')}: T.copy(A[by * bm, k * bk], A_s)"
    assert f"  {generated} <- {statement}" in message.split("generated from the kernel's statements:\n")[1]
