"""Rank-1 tensors used as columns (one value per row): InferTTLayout lays them out as (n, 1) (data
in column 0 of the tiles, ``"column": true`` in the plan) instead of the row (1, n); the user
passes and receives (n,) tensors. TileLang's layernorm example writes its per-row statistics this
way; each kernel runs on the emulator and is compared with torch.

Tolerances: bfloat16 outputs to 2^-6 of their range (several bfloat16 roundings, as
tests/compiler/test_ops.py); float32 statistics to 2^-16 (float32 sums in another order), except a sum of
float32 squares, which the FPU reads as TF32 (2^-10)."""

import importlib.machinery
import json
import math
import sys
import types
from pathlib import Path

import jsonschema
import pytest
import tilelang
import tilelang.language as T
import torch

import tilelang_tt
from tests.examples.norm import layer_norm_forward
from tilelang_tt import TTCompileError
from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.contract.formats import FORMATS
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.host import ttnn_program


def layernorm(N, D, blk_m=32):
    """TileLang's layer norm forward (examples/norm/layernorm.py, as tests/examples/norm.py writes it
    in its idioms): per-row statistics stored into the rank-1 Mean and Rstd one element per row."""
    return layer_norm_forward.get_tir(N=N, D=D, blk_m=blk_m)


def scale_rows(M, N, bm, bn):
    """GPU-style element accesses: a per-row scale S (a column) and a per-column bias B (a row)."""
    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), S: T.Tensor((M,), "bfloat16"), B: T.Tensor((N,), "bfloat16"),
             Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                Y[by * bm + i, bx * bn + j] = X[by * bm + i, bx * bn + j] * S[by * bm + i] + B[bx * bn + j]

    return main


def row_means_plus_index(M, N, bm, column_shape=False):
    """Per-row means plus the row index into a rank-1 (M,) tensor, or (``column_shape``) the same
    into a (M, 1) tensor written ``O[.., 0]``. The index is a part of the value the reader
    generates, per row."""
    shape = (M, 1) if column_shape else (M,)

    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), O: T.Tensor(shape, "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            x = T.alloc_shared((bm, N), "bfloat16")
            s = T.alloc_fragment((bm,), "float32")
            T.copy(X[bx * bm, 0], x)
            T.reduce_sum(x, s, dim=1)
            for i in T.Parallel(bm):
                if column_shape:
                    O[bx * bm + i, 0] = s[i] / N + T.Cast("float32", bx * bm + i)
                else:
                    O[bx * bm + i] = s[i] / N + T.Cast("float32", bx * bm + i)

    return main


def row_and_column(M, bm):
    """S scales the rows and the columns of A (S A S): S is used both ways."""
    @T.prim_func
    def main(A: T.Tensor((M, M), "bfloat16"), S: T.Tensor((M,), "bfloat16"), C: T.Tensor((M, M), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bm), "bfloat16")
            r = T.alloc_shared((bm,), "bfloat16")
            c = T.alloc_shared((bm,), "bfloat16")
            o = T.alloc_fragment((bm, bm), "bfloat16")
            T.copy(A[by * bm, bx * bm], a)
            T.copy(S[bx * bm], r)
            T.copy(S[by * bm], c)  # LINE: second_view
            for i, j in T.Parallel(bm, bm):
                o[i, j] = a[i, j] * r[j] * c[i]
            T.copy(o, C[by * bm, bx * bm])

    return main


def row_and_column_elementwise(M, bm):
    @T.prim_func
    def main(A: T.Tensor((M, M), "bfloat16"), S: T.Tensor((M,), "bfloat16"), C: T.Tensor((M, M), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), T.ceildiv(M, bm), threads=128) as (bx, by):
            for i, j in T.Parallel(bm, bm):  # LINE: elementwise_views
                C[by * bm + i, bx * bm + j] = A[by * bm + i, bx * bm + j] * S[by * bm + i] * S[bx * bm + j]

    return main


def bf16(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.bfloat16)


def assert_close(out, ref, rel):
    out = torch.as_tensor(out).float()
    assert out.shape == ref.shape, (out.shape, ref.shape)
    scale = max(ref.abs().max().item(), 1.0)
    err = (out - ref).abs().max().item()
    assert err <= rel * scale, f"max |error| {err} > {rel} * {scale}"


def buffers(artifacts) -> dict:
    return {b["name"]: b for b in artifacts.plan.to_json()["buffers"]}


def line_of(marker: str) -> int:
    for number, text in enumerate(Path(__file__).read_text().splitlines(), start=1):
        if text.rstrip().endswith(f"# LINE: {marker}"):
            return number
    raise AssertionError(marker)


def check_layernorm(artifacts, N, D, seed):
    x, g, b = bf16(N, D, seed=seed), bf16(D, seed=seed + 1), bf16(D, seed=seed + 2)
    y, mean, rstd = artifacts.run(x, g, b)
    xf = x.float()
    assert_close(y, torch.nn.functional.layer_norm(xf, (D,), g.float(), b.float(), 1e-5), 2.0 ** -6)
    assert_close(mean, xf.mean(1), 2.0 ** -16)
    # the row sums run on the FPU (reduce_tile), which reads the float32 block from its source registers
    # truncated to TF32 (tt-isa-documentation UNPACR_Regular.md): the bfloat16 values fit, their float32
    # squares lose up to 2^-10 relative, so E[x^2] does and rstd half that (var = E[x^2] - mean^2, mean ~ 0)
    assert_close(rstd, torch.rsqrt(xf.var(1, unbiased=False) + 1e-5), 2.0 ** -10)


@pytest.mark.parametrize("N,blk_m", [(64, 32), (80, 32), (80, 1)])
def test_layernorm_example_writes_mean_and_rstd_as_columns(N, blk_m):
    """N = 80: the last block reaches past the tensor; the writer drops the padding rows. blk_m = 1
    (the example's default): CoarsenRowBlocksTT makes 32-row blocks, the same columns."""
    artifacts = tilelang_tt.compile(layernorm(N, 128, blk_m=blk_m))
    plan = buffers(artifacts)
    for name in ("Mean", "Rstd"):
        assert plan[name]["column"] is True and plan[name]["shape"] == [N]
        assert plan[name]["num_pages"] == -(-N // 32) and plan[name]["page_size"] == 32 * 32 * 4
    assert all("column" not in plan[name] for name in ("X", "gamma", "beta", "Y"))
    check_layernorm(artifacts, N, 128, seed=N)


@pytest.mark.parametrize("grid,partition", [((2, 1), "contiguous"), ((2, 2), "row_major")])
def test_layernorm_columns_on_several_cores(grid, partition):
    """5 row blocks over 2 or 4 cores: a core writes the Mean/Rstd tiles of each of its blocks."""
    artifacts = tilelang_tt.compile(layernorm(160, 128), grid=grid, partition=partition)
    assert len(artifacts.plan.work_partition) == min(5, grid[0] * grid[1])
    assert max(w.count for w in artifacts.plan.work_partition) > 1
    check_layernorm(artifacts, 160, 128, seed=7)


@pytest.mark.parametrize("M,grid", [(64, (3, 2)), (80, (3, 3))])
def test_per_row_input_read_elementwise_is_a_column(M, grid):
    """``S[by * bm + i]`` in a 2-D T.Parallel: S becomes a column read into a per-row block (shared
    by a core row, multicast), ``B[bx * bn + j]`` stays a row."""
    N = 96
    artifacts = tilelang_tt.compile(scale_rows(M, N, 32, 32), grid=grid, multicast="on")
    plan = buffers(artifacts)
    assert plan["S"].get("column") is True and "column" not in plan["B"]
    assert {mc.cb: mc.axis for mc in artifacts.plan.multicast} == {"S_s": "x", "B_s": "y"}
    x, s, b = bf16(M, N, seed=1), bf16(M, seed=2), bf16(N, seed=3)
    assert_close(artifacts.run(x, s, b), x.float() * s.float()[:, None] + b.float(), 2.0 ** -6)


def test_rank1_column_is_the_n_by_1_tensor():
    """(M,) used as a column and (M, 1) written ``O[.., 0]`` in a 1-D T.Parallel compile to the same
    kernels and the same tiles: the same DRAM traffic, only the declared shape differs. The reader
    generates ``bx * bm + i`` for all 32 rows of the per-row block (it filled only the first)."""
    rank1 = tilelang_tt.compile(row_means_plus_index(80, 64, 32))
    matrix = tilelang_tt.compile(row_means_plus_index(80, 64, 32, column_shape=True))
    for name in ("reader.cpp", "compute.cpp", "writer.cpp"):
        assert rank1.sources[name] == matrix.sources[name], name
    one, two = buffers(rank1)["O"], buffers(matrix)["O"]
    assert one["shape"] == [80] and two["shape"] == [80, 1] and one["column"] is True and "column" not in two
    assert one["num_pages"] == two["num_pages"] == 3
    x = bf16(80, 64, seed=5)
    assert_close(rank1.run(x), x.float().mean(1) + torch.arange(80), 2.0 ** -16)
    assert rank1.last_counters["total"]["dram_bytes_written"] == 3 * 32 * 32 * 4


def test_plan_records_the_column_view():
    """The plan says "column"; its readers take the (80, 1) view from it: tiles, main.cpp's
    tilize/untilize, the ttnn path's device shape. Without the key the buffer is the row (1, 80)."""
    plan = tilelang_tt.compile(row_means_plus_index(80, 64, 32)).plan
    out = plan.buffers[1]
    assert out.column and out.shape == (80,) and out.device_shape == (80, 1)
    assert out.matrix_dims == (1, 80, 1) and out.tile_grid == (3, 1)
    main = emit_main_cpp(plan)
    assert "// O: float32 [80] as the column [80, 1], write, 3 pages" in main
    assert "untilize(result_O, 1, 80, 1)" in main
    plan = plan.to_json()
    assert plan["buffers"][1]["column"] is True
    x, o = plan["buffers"]
    row = Plan.from_json(dict(plan, buffers=[x, {k: v for k, v in o.items() if k != "column"}])).buffers[1]
    assert not row.column and row.matrix_dims == (1, 1, 80) and row.tile_grid == (1, 3) and row.device_shape == (80,)


class FakeTTNN(types.ModuleType):
    """The part of ttnn run_on_device calls around the program: tensors go up and come back as
    torch tensors of the shape they were made with; the "device" fills each output with 0, 1, ..."""

    TILE_LAYOUT, DRAM_MEMORY_CONFIG = "TILE", "DRAM"
    Shape = staticmethod(tuple)

    def __init__(self):
        super().__init__("ttnn")
        self.__spec__ = importlib.machinery.ModuleSpec("ttnn", None)
        self.uploaded, self.allocated = [], []
        for fmt in FORMATS.values():
            setattr(self, fmt.ttnn, fmt.dtype)

    def from_torch(self, tensor, dtype, layout, device, memory_config):
        self.uploaded.append(tuple(tensor.shape))
        return tensor

    def allocate_tensor_on_device(self, shape, dtype, layout, device, memory_config):
        self.allocated.append(shape)
        return torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)

    def to_torch(self, tensor):
        return tensor


def test_ttnn_path_lays_a_column_out_as_n_by_1(monkeypatch):
    """On a device the (80,) column is a (80, 1) ttnn tensor (its values in column 0 of the tiles);
    the caller gets (80,) back. ttnn and the device are stand-ins: the shapes are what is tested."""
    artifacts = tilelang_tt.compile(row_means_plus_index(80, 64, 32))
    ttnn = FakeTTNN()
    monkeypatch.setitem(sys.modules, "ttnn", ttnn)
    monkeypatch.setattr(ttnn_program, "_check_accessors", lambda *args: None)
    monkeypatch.setattr(ttnn_program, "program_descriptor", lambda *args: "descriptor")
    launched = []
    monkeypatch.setattr(ttnn_program, "launch", lambda plan, io, descriptor: launched.append([t.shape for t in io]))
    device = types.SimpleNamespace(arch=lambda: types.SimpleNamespace(name="WORMHOLE_B0"),
                                   compute_with_storage_grid_size=lambda: types.SimpleNamespace(x=8, y=8))
    out = ttnn_program.run_on_device(artifacts, bf16(80, 64, seed=6), device=device)
    assert ttnn.uploaded == [(80, 64)] and ttnn.allocated == [(80, 1)]
    assert launched == [[(80, 64), (80, 1)]]
    assert torch.equal(out, torch.arange(80, dtype=torch.float32))


def test_column_is_a_boolean_of_rank1_buffers_only():
    plan = tilelang_tt.compile(row_means_plus_index(80, 64, 32)).plan.to_json()
    schema = json.loads(SCHEMA_PATH.read_text())
    x, o = plan["buffers"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(plan, buffers=[x, dict(o, column="yes")]), schema)
    with pytest.raises(PlanError, match=r"buffer 'O': column: expected true or false, got 'yes'"):
        Plan.from_json(dict(plan, buffers=[x, dict(o, column="yes")]))
    with pytest.raises(PlanError, match=r"buffer 'X': column is a layout of rank-1 \(or flat\) tensors; its shape is \[80, 64\]"):
        Plan.from_json(dict(plan, buffers=[dict(x, column=True), o]))


@pytest.mark.parametrize("kernel,marker,first,second", [
    (row_and_column, "second_view", "a row (one value per column)", "a column (one value per row)"),
    (row_and_column_elementwise, "elementwise_views", "a column (one value per row)", "a row (one value per column)"),
])
def test_a_rank1_tensor_used_as_row_and_column_is_refused(kernel, marker, first, second):
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(kernel(64, 32))
    err = info.value
    assert err.pass_name == "InferTTLayout" and err.func_name == "main"
    assert f"the rank-1 tensor `S` is used as {first} and here as {second}" in err.message
    assert err.location[:2] == (__file__, line_of(marker))
    assert "two parameters" in err.hint and f"{__file__}:{line_of(marker)}:" in str(err)
