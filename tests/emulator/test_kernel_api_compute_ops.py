"""Compute ops beyond add/matmul: broadcast, reduce, SFPU unary and binary, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects, tilize, untilize
from .device_kernels import COMPUTE_ONE_TILE, READER_BINARY, WRITER_UNARY

TILE = 2048


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def one_tile(tmp_path, runtime, body, a, b, fp32=1, fails=False):
    cta = (2, TILE)
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_BINARY, cta + cta),
        Kernel("compute.cpp", COMPUTE_ONE_TILE.replace("INIT", "").replace("BODY", body)),
        Kernel("writer.cpp", WRITER_UNARY, cta),
    ])
    spec = "\n".join([
        "arch wormhole_b0", f"buffer A {TILE} {TILE} in", f"buffer B {TILE} {TILE} in", f"buffer C {TILE} {TILE} out",
        f"cb 0,0 0 {TILE} {TILE} Float16_b", f"cb 0,0 1 {TILE} {TILE} Float16_b", f"cb 0,0 16 {TILE} {TILE} Float16_b",
        "kernel reader.cpp reader 0,0 0 2,2048,2,2048", f"kernel compute.cpp compute 0,0 {fp32} -",
        "kernel writer.cpp writer 0,0 0 2,2048", "rtargs 0 0,0 @A @B 0 1", "rtargs 2 0,0 @C 0 1"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": bf16_bits(tilize(a)).tobytes(), "B": bf16_bits(tilize(b)).tobytes()}, ["C"])
    if fails:
        assert res.returncode != 0
        return res.stderr, None
    assert res.returncode == 0, res.stderr
    return untilize(bf16_to_f32(np.frombuffer(res.outputs["C"], dtype=np.uint16)), 32, 32), res.counters


def bf(x):
    return bf16_to_f32(bf16_bits(np.asarray(x, dtype=np.float32)))


RNG = np.random.default_rng(7)
A = bf(RNG.uniform(0.5, 2.0, (32, 32)))
B = bf(RNG.uniform(-1.0, 1.0, (32, 32)))


@pytest.mark.parametrize("body,expected", [
    ("add_tiles_bcast_rows(a, b, 0, 0, 0);", A + B[0:1, :]),
    ("sub_tiles_bcast_cols(a, b, 0, 0, 0);", A - B[:, 0:1]),
    ("mul_tiles_bcast_scalar(a, b, 0, 0, 0);", A * B[0, 0]),
])
def test_broadcast(tmp_path, runtime, body, expected):
    got, counters = one_tile(tmp_path, runtime, body, A, B)
    np.testing.assert_array_equal(got, bf(expected))


def test_reduce_row_sum_and_col_max(tmp_path, runtime):
    scaler = np.full((32, 32), 0.5, dtype=np.float32)
    got, _ = one_tile(tmp_path, runtime, "reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>(a, b, 0, 0, 0);", A, scaler)
    np.testing.assert_allclose(got[:, 0], A.sum(axis=1) * 0.5, rtol=2**-8)
    assert not got[:, 1:].any()
    neg = -A
    got, _ = one_tile(tmp_path, runtime, "reduce_tile<PoolType::MAX, ReduceDim::REDUCE_COL>(a, b, 0, 0, 0);",
                      neg, np.ones((32, 32), dtype=np.float32))
    np.testing.assert_array_equal(got[0, :], neg.max(axis=0))


@pytest.mark.parametrize("op,fn", [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("rsqrt", lambda x: 1 / np.sqrt(x)),
    ("recip", lambda x: 1 / x), ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("tanh", np.tanh),
    ("negative", np.negative), ("square", np.square), ("abs", np.abs),
])
def test_sfpu_unary(tmp_path, runtime, op, fn):
    got, counters = one_tile(tmp_path, runtime, f"copy_tile(a, 0, 0);\n    {op}_tile_init();\n    {op}_tile(0);", A, B)
    np.testing.assert_allclose(got, fn(A.astype(np.float64)), rtol=2**-8)
    assert counters["total"]["tile_ops"][f"{op}_tile"] == 1


def test_relu(tmp_path, runtime):
    got, _ = one_tile(tmp_path, runtime, "copy_tile(b, 0, 0);\n    relu_tile_init();\n    relu_tile(0);", A, B)
    np.testing.assert_array_equal(got, np.maximum(B, 0))


@pytest.mark.parametrize("op,fn", [("binary_max", np.maximum), ("binary_min", np.minimum),
                                   ("div_binary", np.divide), ("mul_binary", np.multiply)])
def test_sfpu_binary(tmp_path, runtime, op, fn):
    body = f"copy_tile(a, 0, 0);\n    copy_tile(b, 0, 1);\n    {op}_tile_init();\n    {op}_tile(0, 1, 0);"
    got, _ = one_tile(tmp_path, runtime, body, A, B)
    np.testing.assert_allclose(got, fn(A.astype(np.float64), B), rtol=2**-8)


SFPU_REDUCE = ("copy_tile(a, 0, 0);\n    copy_tile(b, 0, 1);\n    sfpu_reduce_init<PoolType::POOL, DataFormat::FMT>();"
               "\n    sfpu_reduce<PoolType::POOL, DataFormat::FMT, ReduceDim::REDUCE_ROW>(0, 2, 1);")


@pytest.mark.parametrize("pool", ["SUM", "MAX", "MIN"])
@pytest.mark.parametrize("fp32,fmt", [(1, "Float32"), (0, "Float16_b")])
def test_sfpu_row_reduce_puts_each_rows_result_in_the_first_tiles_even_columns(tmp_path, runtime, pool, fp32, fmt):
    """sfpu_reduce<pool, fmt, REDUCE_ROW>(0, ct_dim=2, rt_dim=1) over DST tiles 0 (A) and 1 (B): each row's sum,
    maximum or minimum over both tiles' 64 columns lands in the even columns of tile 0's left faces, where
    ckernel_sfpu_reduce.h stores LREG0; every other datum of tile 0 keeps A's value."""
    got, counters = one_tile(tmp_path, runtime, SFPU_REDUCE.replace("POOL", pool).replace("FMT", fmt), A, B, fp32=fp32)
    both = np.concatenate([A, B], axis=1).astype(np.float64)
    want = {"SUM": both.sum(axis=1), "MAX": both.max(axis=1), "MIN": both.min(axis=1)}[pool]
    even = got[:, 0:16:2]
    if pool == "SUM":  # partial sums rounded to DST's format, the output to bfloat16
        np.testing.assert_allclose(even, np.repeat(want[:, None], 8, axis=1), rtol=2**-7)
    else:
        np.testing.assert_array_equal(even, np.repeat(want[:, None], 8, axis=1))
    kept = np.ones((32, 32), dtype=bool)
    kept[:, 0:16:2] = False
    np.testing.assert_array_equal(got[kept], A[kept])
    assert counters["total"]["tile_ops"]["sfpu_reduce"] == 1


def test_sfpu_reduce_names_a_form_the_emulator_does_not_model(tmp_path, runtime):
    body = "copy_tile(a, 0, 0);\n    sfpu_reduce<PoolType::SUM, DataFormat::Float32, ReduceDim::REDUCE_COL>(0);"
    stderr, _ = one_tile(tmp_path, runtime, body, A, B, fails=True)
    assert "sfpu_reduce: the emulator models REDUCE_ROW of Float32 or Float16_b tiles only" in stderr


WHERE = ("copy_tile(b, 0, 0);\n    relu_tile_init();\n    relu_tile(0);\n    copy_tile(a, 0, 1);\n    copy_tile(b, 0, 2);"
         "\n    where_tile_init();\n    where_tile<DataFormat::FORMAT>(0, 1, 2, 0);")


@pytest.mark.parametrize("fp32,fmt", [(1, "Float32"), (0, "Float16_b")])
def test_where_selects_on_a_nonzero_condition(tmp_path, runtime, fp32, fmt):
    """where_tile(cond, a, b, out): out = cond != 0 ? a : b (cond = relu(B): zero where B <= 0)."""
    got, counters = one_tile(tmp_path, runtime, WHERE.replace("FORMAT", fmt), A, B, fp32=fp32)
    np.testing.assert_array_equal(got, np.where(B > 0, A, B))
    assert counters["total"]["tile_ops"]["where_tile"] == 1


def test_where_names_a_format_that_is_not_dst_s(tmp_path, runtime):
    stderr, _ = one_tile(tmp_path, runtime, WHERE.replace("FORMAT", "Float16_b"), A, B, fp32=1, fails=True)
    assert "where_tile<DataFormat 5>: DST holds Float32 (fp32_dest_acc_en) tiles" in stderr


@pytest.mark.parametrize("body,expected", [
    ("copy_tile(b, 0, 0);\n    unary_gt_tile_init();\n    unary_gt_tile(0, 0x3e800000u);", (B > 0.25) * 1.0),
    ("copy_tile(b, 0, 0);\n    unary_le_tile_init();\n    unary_le_tile(0, 0x00000000u);", (B <= 0) * 1.0),
    ("copy_tile(a, 0, 0);\n    unary_eq_tile_init();\n    unary_eq_tile(0, 0x3f800000u);", (A == 1.0) * 1.0),
    ("copy_tile(b, 0, 0);\n    ltz_tile_init();\n    ltz_tile(0);", (B < 0) * 1.0),
    ("copy_tile(b, 0, 0);\n    nez_tile_init();\n    nez_tile(0);", (B != 0) * 1.0),
])
def test_comparisons_give_one_or_zero(tmp_path, runtime, body, expected):
    """api/compute/eltwise_unary/comp.h: 1.0 where the comparison with param0's float (or zero) holds."""
    got, _ = one_tile(tmp_path, runtime, body, A, B)
    np.testing.assert_array_equal(got, expected)
