"""Values known only at run time (issue 29, item 5). A scalar kernel parameter (``offset: T.int32``,
as tile-ai/tilelang's ``matmul_int_variable`` and the gqa decode kernel's ``real_seqlen_kv`` declare
it) is one of the plan's dims, given by the caller instead of read from a tensor: every kernel gets
it as a runtime argument, and it may be an index, a loop bound, a guard or an element-wise value.
Each entry point takes it as a Python int in its parameter position."""

import json

import jsonschema
import pytest
import tilelang
import tilelang.language as T
import torch
from tilelang import tvm

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tilelang_tt import TTCompileError
from tilelang_tt.contract.dims import SizeError
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan
from tilelang_tt.host.ttnn_program import load_program


def scaled(op: str):
    """C = A (op) n element-wise, the scalar between the two tensors in the signature."""

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), n: T.int32, C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], a)
            for i, j in T.Parallel(32, 32):
                if op == "add":
                    a[i, j] = a[i, j] + n
                else:
                    a[i, j] = a[i, j] * n
            T.copy(a, C[by * 32, bx * 32])

    return main


def k_tiles():
    """A GEMM over the first ``kt`` K tiles: the scalar is the pipelined loop's bound."""

    @T.prim_func
    def main(A: T.Tensor((64, 256), "bfloat16"), B: T.Tensor((256, 64), "bfloat16"),
             C: T.Tensor((64, 64), "float32"), kt: T.int32):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            b = T.alloc_shared((32, 32), "bfloat16")
            c = T.alloc_fragment((32, 32), "float32")
            T.clear(c)
            for k in T.Pipelined(kt, num_stages=2):
                T.copy(A[by * 32, k * 32], a)
                T.copy(B[k * 32, bx * 32], b)
                T.gemm(a, b, c)
            T.copy(c, C[by * 32, bx * 32])

    return main


def masked_columns():
    """Columns from ``valid_len`` on are zero: the scalar in a guard, as a decode kernel masks the
    positions past its real sequence length."""

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32"), valid_len: T.int32):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], a)
            for i, j in T.Parallel(32, 32):
                a[i, j] = T.if_then_else(bx * 32 + j < valid_len, a[i, j], 0.0)
            T.copy(a, C[by * 32, bx * 32])

    return main


def row_window():
    """Rows ``t * 32`` on of A: the scalar in the copy's index."""

    @T.prim_func
    def main(A: T.Tensor((128, 64), "float32"), C: T.Tensor((64, 64), "float32"), t: T.int32):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            T.copy(A[(t + by) * 32, bx * 32], a)
            T.copy(a, C[by * 32, bx * 32])

    return main


@pytest.fixture(scope="module")
def add_program():
    return tilelang_tt.compile(scaled("add"), grid=(2, 2))


@pytest.mark.parametrize("n", [3, -7, 0])
def test_scalar_is_an_element_wise_value(add_program, n):
    """Positive, negative and zero: the kernels receive the int32's 32 bits."""
    a = torch.randn(64, 64, generator=torch.Generator().manual_seed(n + 10))
    assert_close(add_program.run(a, n), a + n, 1e-6)


def test_scalar_in_every_position_form(add_program):
    """Artifacts.run takes it among the inputs, among all the parameters, or by name."""
    a = torch.randn(64, 64, generator=torch.Generator().manual_seed(1))
    assert_close(add_program.run(a, 5), a + 5, 1e-6)
    assert_close(add_program.run(a, 5, torch.empty(64, 64)), a + 5, 1e-6)
    assert_close(add_program.run(a, n=-2), a - 2, 1e-6)


def test_plan_records_scalar_parameter_as_a_dim(add_program):
    plan = add_program.plan.to_json()
    jsonschema.validate(plan, json.loads(SCHEMA_PATH.read_text()))
    assert plan["dims"] == [{"name": "n", "param_index": 1, "dtype": "int32"}]
    assert [b["param_index"] for b in plan["buffers"]] == [0, 2]
    parsed = Plan.from_json(plan)
    assert parsed == add_program.plan
    assert [(p.name, p.param_index) for p in parsed.parameters] == [("A", 0), ("n", 1), ("C", 2)]
    for kernel in plan["kernels"]:  # every kernel may use it
        assert {"name": "n", "kind": "dim", "dim": "n"} in kernel["runtime_args"]
    bound = parsed.bind(parsed.dim_values({"A": (64, 64)}, {"n": -1}))
    assert 0xFFFFFFFF in bound.runtime_args[0].values["compute"]  # -1 as the kernels read it
    main_cpp = add_program.sources["main.cpp"]
    assert 'parse_scalar(argv[2], "n")' in main_cpp and "// N: the scalar parameter n (an int32)." in main_cpp


@pytest.mark.parametrize("kt", [8, 3])
def test_scalar_is_a_loop_bound(kt):
    program = tilelang_tt.compile(k_tiles(), grid=(2, 2))
    a, b = bf16(64, 256, seed=kt), bf16(256, 64, seed=kt + 1)
    assert_close(program.run(a, b, kt), a[:, :kt * 32].float() @ b[:kt * 32].float(), 2.0 ** -7)


def test_scalar_in_a_guard():
    program = tilelang_tt.compile(masked_columns(), grid=(2, 2))
    a = torch.randn(64, 64, generator=torch.Generator().manual_seed(2))
    for valid_len in (40, 64, 0):
        expected = a.clone()
        expected[:, valid_len:] = 0
        assert_close(program.run(a, valid_len), expected, 0.0)


def test_scalar_in_an_index():
    program = tilelang_tt.compile(row_window(), grid=(2, 2))
    a = torch.randn(128, 64, generator=torch.Generator().manual_seed(3))
    for t in (0, 2):
        assert_close(program.run(a, t), a[t * 32:t * 32 + 64], 0.0)


def test_a_row_offset_inside_a_tile_reads_the_tensor_in_rows():
    """A slice starting at any row (the scalar need not be whole tiles): the tensor is laid out in rows
    (InferTTLayout), whose slices start anywhere."""
    @T.prim_func
    def main(A: T.Tensor((128, 64), "float32"), C: T.Tensor((64, 64), "float32"), row0: T.int32):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            T.copy(A[row0 + by * 32, bx * 32], a)
            T.copy(a, C[by * 32, bx * 32])

    program = tilelang_tt.compile(main, grid=(2, 2))
    assert {b.name: b.layout.value for b in program.plan.buffers}["A"] == "row_major"
    a = torch.randn(128, 64, generator=torch.Generator().manual_seed(5))
    for row0 in (5, 37):
        assert_close(program.run(a, row0), a[row0:row0 + 64], 0.0)


def test_tilelang_compile_and_the_module_function_take_it_in_its_position():
    a = torch.randn(64, 64, generator=torch.Generator().manual_seed(4))
    kernel = tilelang.compile(scaled("mul"), out_idx=[-1], target="tenstorrent")
    assert_close(kernel(a, 5), a * 5, 1e-6)
    c = torch.empty(64, 64)
    kernel(a, -2, c)
    assert_close(c, a * -2, 1e-6)
    module = tvm.build(scaled("mul"), target="tenstorrent")
    module["main"](a, 7, c)
    assert_close(c, a * 7, 1e-6)
    with pytest.raises(TypeError, match="the scalar parameter `n` takes an int, got float"):
        module["main"](a, 1.5, c)


def test_the_ttnn_path_plans_for_the_scalar(add_program):
    plan, _ = load_program(add_program, {"A": (64, 64)}, {"n": 9})
    assert all(e.values["compute"][-1] == 9 for e in plan.runtime_args)


def test_a_missing_or_out_of_range_scalar_is_an_error_naming_it(add_program):
    a = torch.zeros(64, 64)
    with pytest.raises(SizeError, match="the scalar parameter `n` \\(parameter 1\\) is not given"):
        add_program.plan.dim_values({"A": (64, 64)})
    with pytest.raises(SizeError, match="the scalar parameter `n` is 2147483648, not an int32"):
        add_program.run(a, 2**31)


def test_a_float64_scalar_parameter_is_refused_with_a_rewrite():
    """Kernels receive 32-bit runtime arguments: a float64 would lose its low bits without a word."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32"), scale: T.float64):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], a)
            for i, j in T.Parallel(32, 32):
                a[i, j] = a[i, j] * T.Cast("float32", scale)
            T.copy(a, C[by * 32, bx * 32])

    with pytest.raises(TTCompileError, match="the scalar parameter `scale: float64` is neither an integer") as err:
        tilelang_tt.compile(main, grid=(2, 2))
    assert "declare `scale: T.float32`" in str(err.value)


def test_blocks_of_16_rows_over_a_dynamic_row_count_are_grouped():
    """CoarsenRowBlocksTT groups the ceildiv(m, 16) blocks of 16 rows in pairs: ceildiv of a
    dynamic extent (sglang's swap-AB kernel has such a grid over ``tvm.te.var`` N)."""
    m_dim = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((m_dim, 64), "float32"), C: T.Tensor((m_dim, 64), "float32")):
        with T.Kernel(T.ceildiv(m_dim, 16)) as bx:
            a = T.alloc_shared((16, 64), "float32")
            T.copy(A[bx * 16, 0], a)
            for i, j in T.Parallel(16, 64):
                a[i, j] = a[i, j] * 2.0
            T.copy(a, C[bx * 16, 0])

    program = tilelang_tt.compile(main, grid=(2, 2))
    for m in (48, 100):
        a = torch.randn(m, 64, generator=torch.Generator().manual_seed(m))
        assert_close(program.run(a), a * 2, 0.0)


def test_an_extent_that_is_an_expression_of_sizes():
    """``X: (s * 2, 64)`` beside ``Y: (s, 64)`` (lightning_indexer's ``seq_len * heads`` rows): the
    plan keeps the formula, the host solves ``s`` from X when only X is given (Y is the output) and
    refuses an X whose rows no ``s`` gives."""
    s_dim = T.dynamic("s")

    @T.prim_func
    def main(X: T.Tensor((s_dim * 2, 64), "float32"), Y: T.Tensor((s_dim, 64), "float32")):
        with T.Kernel(T.ceildiv(s_dim, 32)) as by:
            a = T.alloc_shared((32, 64), "float32")
            b = T.alloc_shared((32, 64), "float32")
            c = T.alloc_fragment((32, 64), "float32")
            T.copy(X[by * 64, 0], a)
            T.copy(X[by * 64 + 32, 0], b)
            for i, j in T.Parallel(32, 64):
                c[i, j] = a[i, j] + b[i, j]
            T.copy(c, Y[by * 32, 0])

    program = tilelang_tt.compile(main, grid=(2, 2))
    assert program.plan.to_json()["buffers"][0]["shape"] == ["s * 2", 64]
    for s in (64, 96):
        x = torch.randn(2 * s, 64, generator=torch.Generator().manual_seed(s))
        assert_close(program.run(x), x.view(s // 32, 2, 32, 64).sum(1).reshape(s, 64), 1e-6)
    with pytest.raises(SizeError, match=r"`X`.shape\[0\] is 129, the kernel declares it s \* 2 = 130"):
        program.run(torch.zeros(129, 64))
