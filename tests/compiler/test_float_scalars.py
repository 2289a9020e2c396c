"""Float scalar parameters (``scale: T.float32``, TileLang's ``sm_scale``, ``eps``, DeepSeek TileKernels'
``swiglu_clamp_value``): the plan records each scalar's dtype, the host passes a float's float32 bits as a
runtime argument (as ttnn's kernels receive floats: ``writer_moreh_arange.cpp`` reinterprets
``get_arg_val<uint32_t>``), compute uses a value of such parameters as the parameter of an SFPU op with a
scalar or fills a tile with it, the reader generates blocks of values that mix it with the indices, and every
entry point takes a Python float in its position."""

import json

import jsonschema
import pytest
import tilelang
import tilelang.language as T
import torch
from tilelang import tvm

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tilelang_tt.contract.dims import SizeError, float32_bits
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan
from tilelang_tt.host.ttnn_program import load_program


def scaled_gemm(scale_dtype: str = "float32"):
    """C = (A @ B) * scale: the scale of a GEMM epilogue (an attention kernel's sm_scale)."""
    scalar = getattr(T, scale_dtype)

    @T.prim_func
    def main(A: T.Tensor((64, 64), "bfloat16"), B: T.Tensor((64, 64), "bfloat16"), scale: scalar,
             C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            b = T.alloc_shared((32, 32), "bfloat16")
            c = T.alloc_fragment((32, 32), "float32")
            T.clear(c)
            for k in T.Pipelined(2, num_stages=2):
                T.copy(A[by * 32, k * 32], a)
                T.copy(B[k * 32, bx * 32], b)
                T.gemm(a, b, c)
            for i, j in T.Parallel(32, 32):
                c[i, j] = c[i, j] * scale
            T.copy(c, C[by * 32, bx * 32])

    return main


def rmsnorm_eps():
    """Y = X * rsqrt(mean(X^2) + eps) per row, eps the caller's."""

    @T.prim_func
    def main(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32"), eps: T.float32):
        with T.Kernel(2) as by:
            x = T.alloc_shared((32, 64), "float32")
            sq = T.alloc_fragment((32, 64), "float32")
            ss = T.alloc_fragment((32,), "float32")
            T.copy(X[by * 32, 0], x)
            for i, j in T.Parallel(32, 64):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, ss, dim=1)
            for i in T.Parallel(32):
                ss[i] = T.rsqrt(ss[i] / 64 + eps)
            for i, j in T.Parallel(32, 64):
                sq[i, j] = x[i, j] * ss[i]
            T.copy(sq, Y[by * 32, 0])

    return main


def thresholds():
    """A threshold in a selection and a clamp by a limit and its negation (TileKernels' SwiGLU clamp),
    and a value the reader generates from the indices and the scalar."""

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), threshold: T.float32, limit: T.float32,
             C: T.Tensor((64, 64), "float32"), D: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            c = T.alloc_fragment((32, 32), "float32")
            d = T.alloc_fragment((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], a)
            for i, j in T.Parallel(32, 32):
                c[i, j] = T.if_then_else(a[i, j] > threshold, a[i, j], 0.0) + T.clamp(a[i, j], -limit, limit)
                d[i, j] = a[i, j] + T.if_then_else(bx * 32 + j < 40, threshold, 0.0)
            T.copy(c, C[by * 32, bx * 32])
            T.copy(d, D[by * 32, bx * 32])

    return main


@pytest.fixture(scope="module")
def gemm_program():
    return tilelang_tt.compile(scaled_gemm(), grid=(2, 2))


@pytest.mark.parametrize("scale", [0.125, -3.5])
def test_the_scale_of_a_gemm_epilogue(gemm_program, scale):
    a, b = bf16(64, 64, seed=1), bf16(64, 64, seed=2)
    assert_close(gemm_program.run(a, b, scale), (a.float() @ b.float()) * scale, 2.0 ** -12)


def test_compute_multiplies_by_the_runtime_argument_s_bits(gemm_program):
    """The value of the parameter is an SFPU op's parameter, read from the runtime argument: no block of it is
    generated (no `_gen` CB), the reader does not read it, compute declares it a float."""
    compute = gemm_program.sources["compute.cpp"]
    assert "const float scale = __builtin_bit_cast(float, get_arg_val<uint32_t>(" in compute
    assert "mul_unary_tile(0, __builtin_bit_cast(uint32_t, scale));" in compute
    assert not any(cb.name.endswith("_gen") for cb in gemm_program.plan.cbs)
    assert "scale" not in gemm_program.sources["reader.cpp"]


def test_the_eps_of_an_rmsnorm():
    program = tilelang_tt.compile(rmsnorm_eps(), grid=(2, 1))
    x = torch.randn(64, 64, generator=torch.Generator().manual_seed(3)) * 0.1
    for eps in (1e-6, 0.5):
        assert_close(program.run(x, eps), x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + eps), 2.0 ** -12)
    assert "add_unary_tile(" in program.sources["compute.cpp"]


def test_a_threshold_in_a_selection_a_clamp_and_a_generated_value():
    program = tilelang_tt.compile(thresholds(), grid=(2, 2))
    a = torch.randn(64, 64, generator=torch.Generator().manual_seed(4))
    for threshold, limit in ((0.25, 1.0), (-1.0, 0.5)):
        c, d = program.run(a, threshold, limit)
        assert_close(c, torch.where(a > threshold, a, 0.0) + a.clamp(-limit, limit), 0.0)
        ramp = torch.zeros(64, 64)
        ramp[:, :40] = threshold
        assert_close(d, a + ramp, 0.0)
    compute, reader = program.sources["compute.cpp"], program.sources["reader.cpp"]
    assert "unary_gt_tile(" in compute and "fill_tile_bitcast(" in compute  # the comparison, the clamp's bounds
    assert "const float threshold = __builtin_bit_cast(float, get_arg_val<uint32_t>(" in reader  # the ramp's value


def test_the_plan_records_each_scalar_s_dtype_and_binds_its_bits(gemm_program):
    plan = gemm_program.plan.to_json()
    jsonschema.validate(plan, json.loads(SCHEMA_PATH.read_text()))
    assert plan["dims"] == [{"name": "scale", "param_index": 2, "dtype": "float32"}]
    assert [(p.name, p.param_index) for p in gemm_program.plan.parameters] == [("A", 0), ("B", 1), ("scale", 2),
                                                                                 ("C", 3)]
    bound = gemm_program.plan.bind(gemm_program.plan.dim_values({}, {"scale": -0.1}))
    assert bound.runtime_args[0].values["compute"][-1] == float32_bits(-0.1) == 0xBDCCCCCD
    main_cpp = gemm_program.sources["main.cpp"]
    assert 'parse_float_scalar(argv[2], "scale")' in main_cpp
    assert "// SCALE: the scalar parameter scale (a float32: a float)." in main_cpp
    assert Plan.from_json(plan) == gemm_program.plan


def test_a_bfloat16_parameter_is_its_value_rounded_to_bfloat16():
    program = tilelang_tt.compile(scaled_gemm("bfloat16"), grid=(2, 2))
    assert program.plan.dims[0].dtype == "bfloat16"
    a, b = bf16(64, 64, seed=5), bf16(64, 64, seed=6)
    rounded = torch.tensor(0.1).to(torch.bfloat16).float()  # 0.10009765625
    assert program.plan.dim_values({}, {"scale": 0.1}) == {"scale": rounded.item()}
    assert_close(program.run(a, b, 0.1), (a.float() @ b.float()) * rounded, 2.0 ** -12)


def test_a_fill_with_a_float16_parameter():
    """``T.fill`` of a block with a parameter (fill_tile_bitcast); a float16 one is its value rounded to float16."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32"), offset: T.float16):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            c = T.alloc_fragment((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], a)
            T.fill(c, offset)
            for i, j in T.Parallel(32, 32):
                c[i, j] = c[i, j] + a[i, j]
            T.copy(c, C[by * 32, bx * 32])

    program = tilelang_tt.compile(main, grid=(2, 2))
    assert program.plan.dims[0].dtype == "float16"
    assert "fill_tile_bitcast(" in program.sources["compute.cpp"]
    a = torch.randn(64, 64, generator=torch.Generator().manual_seed(9))
    assert_close(program.run(a, 0.1), a + torch.tensor(0.1).half().float(), 0.0)


def test_a_condition_on_a_float_parameter_around_tile_work():
    """``if scale > 0.0:`` is taken by the three kernels alike, in float math."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32"), scale: T.float32):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], a)
            if scale > 0.0:
                for i, j in T.Parallel(32, 32):
                    a[i, j] = a[i, j] * scale
            T.copy(a, C[by * 32, bx * 32])

    program = tilelang_tt.compile(main, grid=(2, 2))
    assert "if (scale > 0.0f)" in program.sources["compute.cpp"]
    a = torch.randn(64, 64, generator=torch.Generator().manual_seed(12))
    assert_close(program.run(a, 1.5), a * 1.5, 0.0)
    assert_close(program.run(a, -0.5), a, 0.0)


def test_a_float_converted_to_an_integer_is_a_loop_bound():
    @T.prim_func
    def main(A: T.Tensor((64, 128), "bfloat16"), B: T.Tensor((128, 64), "bfloat16"), C: T.Tensor((64, 64), "float32"),
             kt: T.float32):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            b = T.alloc_shared((32, 32), "bfloat16")
            c = T.alloc_fragment((32, 32), "float32")
            T.clear(c)
            for k in T.Pipelined(T.Cast("int32", kt), num_stages=2):
                T.copy(A[by * 32, k * 32], a)
                T.copy(B[k * 32, bx * 32], b)
                T.gemm(a, b, c)
            T.copy(c, C[by * 32, bx * 32])

    program = tilelang_tt.compile(main, grid=(2, 2))
    a, b = bf16(64, 128, seed=10), bf16(128, 64, seed=11)
    assert_close(program.run(a, b, 2.5), a[:, :64].float() @ b[:64].float(), 2.0 ** -12)  # int32(2.5) tiles


def test_every_entry_point_takes_a_float_in_its_position(gemm_program):
    a, b = bf16(64, 64, seed=7), bf16(64, 64, seed=8)
    expected = a.float() @ b.float()
    assert_close(gemm_program.run(a, b, scale=0.5), expected * 0.5, 2.0 ** -12)
    assert_close(gemm_program.run(a, b, 2), expected * 2, 2.0 ** -12)  # an int is a float too
    kernel = tilelang.compile(scaled_gemm(), out_idx=[-1], target="tenstorrent")
    assert_close(kernel(a, b, 0.25), expected * 0.25, 2.0 ** -12)
    c = torch.empty(64, 64)
    module = tvm.build(scaled_gemm(), target="tenstorrent")
    module["main"](a, b, -1.5, c)
    assert_close(c, expected * -1.5, 2.0 ** -12)
    for wrong in (True, "0.5", None):
        with pytest.raises(TypeError, match=r"the scalar parameter `scale: float32` takes a float, got "):
            module["main"](a, b, wrong, c)


def test_a_timing_only_run_takes_the_float(gemm_program):
    """A timing-only run (the timing host, emulator/plan_host.py) runs from the plan bound for the scalar."""
    a, b = bf16(64, 64, seed=13), bf16(64, 64, seed=14)
    assert gemm_program.run(a, b, 0.75, timing_only=True) is None
    assert gemm_program.last_counters["timing"]["cycles"] > 0


def test_the_ttnn_path_plans_for_the_float_s_bits(gemm_program):
    plan, _ = load_program(gemm_program, {"A": (64, 64), "B": (64, 64)}, {"scale": 1.5})
    assert all(e.values["compute"][-1] == 0x3FC00000 for e in plan.runtime_args)


def test_a_value_the_dtype_cannot_hold_is_an_error_naming_the_parameter(gemm_program):
    with pytest.raises(SizeError, match=r"the scalar parameter `scale: float32` is 1e\+39, beyond the largest float32"):
        gemm_program.plan.dim_values({}, {"scale": 1e39})
    with pytest.raises(SizeError, match=r"the scalar parameter `scale` \(parameter 2\) is not given: pass it as a "
                                        r"float"):
        gemm_program.plan.dim_values({})
