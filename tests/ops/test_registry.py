"""The op registry (tilelang_tt/ops): every tile op and compute intrinsic has its family; every SFPU
table entry has its emulator function, its codegen rule and a kernel run against torch; every
intrinsic call is checked against its schema."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch
from tvm import tirx

import tilelang_tt
from tests import op_kernels as K
from tests.compiler import bad_kernels
from tests.compiler import test_float_scalars as float_scalars
from tests.compiler.test_class_masks import nan_to_num
from tests.compiler.test_condition_masks import counts_scaled
from tests.compiler.test_negative import line_of
from tilelang_tt.ir.attrs import Scope
from tilelang_tt.ir.intrin import Intrin, Operand, call
from tilelang_tt.codegen.rules import header_of, rule_for
from tilelang_tt.ops import COMPUTE_OPS, DST_SCOPES, TILE_OPS
from tilelang_tt.ops.eltwise import SUPPORTED
from tilelang_tt.ops.sfpu import INT_OPS, SFPU_OPS, UNARY_CALLS, SfpuKind
from tilelang_tt.tools.header_check import check_compute_calls

EMULATOR_INCLUDE = Path(tilelang_tt.__file__).parent / "emulator" / "include"
M, N = 64, 128


def test_every_tile_op_and_compute_intrinsic_has_a_family():
    assert sorted(TILE_OPS) == ["copy", "cumsum", "fill", "gemm", "reduce", "transpose"]
    assert set(COMPUTE_OPS) == {Intrin.MM_MMA, Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE}
    assert all(op.intrin == intrin for intrin, op in COMPUTE_OPS.items())
    assert DST_SCOPES == {Scope.ACCUMULATE.value: COMPUTE_OPS[Intrin.MM_MMA]}


def test_unary_calls_come_from_the_table():
    assert UNARY_CALLS == {op.tir: op for op in SFPU_OPS if op.kind == SfpuKind.UNARY and op.tir is not None}
    assert ("T.exp, T.exp2, T.log, T.sqrt, T.rsqrt, T.sigmoid, T.tanh, T.erf, T.abs, T.log1p, T.floor, T.ceil, "
            "T.trunc, T.sin, T.cos, T.tan, T.isnan, T.log2, T.log10, T.round, T.nearbyint, T.pow, T.fmod, T.exp10, "
            "T.clamp, T.sinh, T.cosh, T.hypot and casts") in SUPPORTED


@pytest.mark.parametrize("math", [T.atan, T.asinh, lambda x: T.atan2(x, x)])
def test_math_without_an_sfpu_op_is_refused_at_its_line(math):
    """TIR math the table has no op for stays a TTCompileError naming the call, at the user's line."""
    with pytest.raises(tilelang_tt.TTCompileError, match=r"unsupported element-wise expression `T\.(atan|asinh|atan2)\(") as info:
        tilelang_tt.compile(bad_kernels.unsupported_expression(math))
    err = info.value
    assert err.pass_name == "LowerTTTileIntrinsics" and "T.pow, T.fmod" in err.hint
    assert err.location[:2] == (bad_kernels.__file__, line_of("unsupported_expression"))


def emulator_functions(header: str) -> set[str]:
    """The functions the emulator's copy of ``header`` defines: ALWI definitions and the SFPU macros'
    ``<name>_tile`` (and ``_tile_init`` of the unary and binary ones)."""
    text = (EMULATOR_INCLUDE / header).read_text()
    names = set(re.findall(r"ALWI\s+void\s+(\w+)\s*\(", text))
    for macro, name in re.findall(r"TT_EMU_SFPU_(UNARY|BINARY|SCALAR)\((\w+),", text):
        names.add(f"{name}_tile")
        if macro != "SCALAR":
            names.add(f"{name}_tile_init")
    return names


@pytest.mark.parametrize("op", SFPU_OPS + INT_OPS, ids=lambda op: f"{op.kind.value}-{op.name}")
def test_sfpu_op_has_its_emulator_function(op):
    assert {op.function, op.init_function} <= emulator_functions(op.header)


def render(intrin: Intrin, *args) -> tuple[str, str]:
    """(C++ call, header) codegen gives the call ``intrin(*args)``; CB ids print as numbers here."""
    expr = call(intrin, *args)
    rule = rule_for(intrin)
    raw = list(expr.args)
    text = [a.value if isinstance(a, tirx.StringImm) else str(a) for a in raw]
    return rule.render(text, raw), header_of(rule, raw)


@pytest.mark.parametrize("op", SFPU_OPS + INT_OPS, ids=lambda op: f"{op.kind.value}-{op.name}")
def test_sfpu_op_has_its_codegen_rule(op):
    assert render(Intrin.SFPU_INIT, op.kind.value, op.name) == (f"{op.init_function}{op.init_call_template}()",
                                                                op.header)
    if op.kind == SfpuKind.UNARY:
        assert render(Intrin.SFPU_UNARY, op.name, 3) == (f"{op.function}{op.template}(3)", op.header)
    elif op.kind == SfpuKind.SCALAR:
        bits = tirx.IntImm("uint32", 0x3FC00000)
        assert render(Intrin.SFPU_SCALAR, op.name, 3, bits) == (f"{op.function}{op.template}(3, 0x3fc00000u)",
                                                                 op.header)
    elif op.kind == SfpuKind.BINARY:
        assert render(Intrin.SFPU_BINARY, op.name, 0, 1, 2) == (f"{op.function}{op.template}(0, 1, 2)", op.header)
    else:
        assert render(Intrin.FILL_TILE, 3, tirx.FloatImm("float32", 2.5)) == (f"{op.function}(3, 2.5f)", op.header)


def rsub(M, N, bm, bn, dtype="bfloat16"):
    """A = 1.5 - A, block by block: the constant minus the tile (rsub_unary_tile), written in place
    into the block the reader filled."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            X = T.alloc_shared((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], X)
            for i, j in T.Parallel(bm, bn):
                X[i, j] = 1.5 - X[i, j]
            T.copy(X, C[by * bm, bx * bn])

    return main


# Each SFPU op -> a kernel tests/compiler/test_ops.py (or this file) runs on the emulator against torch.
KERNELS = {
    **{f"unary-{name}": (lambda name=name: K.unary(name, M, N, 32, 64))
       for name in ("exp", "exp2", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "abs", "relu", "gelu", "log1p",
                    "floor", "ceil", "trunc", "sin", "cos", "tan")},
    **{f"scalar-{name}": (lambda name=name: K.unary(name, M, N, 32, 64))
       for name in ("log2", "log10", "round", "nearbyint")},  # test_rounding, test_unary
    "scalar-pow": lambda: K.unary("pow_const", M, N, 32, 64),
    "unary-recip": lambda: K.unary("reciprocal", M, N, 32, 64),
    "fill-fill": lambda: K.fill(M, N, 32, 64, 2.5),
    "scalar-add": lambda: K.unary("shift", M, N, 32, 64),
    "scalar-sub": lambda: K.broadcast("scalar", M, N, 32, 64),
    "scalar-mul": lambda: K.unary("scale", M, N, 32, 64),
    "scalar-rsub": lambda: rsub(M, N, 32, 64),  # test_rsub below
    "binary-add": lambda: K.fma(M, N, 32, 64),
    # v - A and (A + 1) * v (test_broadcast): A - v and A * v are the FPU's broadcasting ops
    "binary-sub": lambda: K.broadcast("col", M, N, 32, 64, value=K.SFPU_BROADCAST["v - a"]),
    "binary-mul": lambda: K.broadcast("row", M, N, 32, 64, value=K.SFPU_BROADCAST["(a + 1) * v"]),
    "binary-div": lambda: K.binary("div", M, N, 32, 64),
    "binary-max": lambda: K.binary("maximum", M, N, 32, 64),
    "binary-min": lambda: K.binary("minimum", M, N, 32, 64),
    "binary-pow": lambda: K.binary("pow", M, N, 32, 64, dtype="float32"),  # test_pow_of_two_blocks
    "binary-fmod": lambda: K.binary("fmod", M, N, 32, 64),
    # test_a_cast_to_bfloat16_inside_a_float32_value_rounds (tests/compiler/test_ops.py)
    "unary-round_bf16": lambda: K.binary("rounded_product", M, N, 32, 64, dtype="float32"),
    # test_int32_values_converted_to_floats (tests/compiler/test_condition_masks.py)
    "unary-int32_to_fp32": lambda: counts_scaled(M, N, "float32"),
    # test_nan_and_infinities_are_selected_away_as_torch_nan_to_num (tests/compiler/test_class_masks.py)
    "unary-isnan": lambda: nan_to_num("float32"),
    # test_comparisons (tests/compiler/test_ops.py)
    **{f"scalar-{name}": (lambda name=name: K.compare(name, M, N, 32, 64)) for name in K.COMPARISONS},
    **{f"unary-{name}z": (lambda name=name: K.compare(name, M, N, 32, 64, with_block=True)) for name in K.COMPARISONS},
    # the integer ops: tests/compiler/test_integer.py
    **{f"binary-{name}_int": (lambda name=name: K.integer(name, M, N, 32, 64))
       for name in ("add", "sub", "mul", "max", "min", "floordiv", "floormod", "truncdiv", "eq", "ne", "gt", "lt", "le")},
    "binary-ge_int": lambda: K.integer("ge_select", M, N, 32, 64),
    "scalar-add_int32": lambda: K.integer("add_const", M, N, 32, 64),
    "scalar-sub_int32": lambda: K.integer("sub_const", M, N, 32, 64),
    "scalar-fill_int": lambda: K.integer("const_sub", M, N, 32, 64),
    # the bounds of T.clamp(x, -limit, limit), limit a float32 parameter (tests/compiler/test_float_scalars.py)
    "scalar-fill_bitcast": lambda: float_scalars.thresholds(),
}


@functools.cache
def compute_source(key: str) -> str:
    return tilelang_tt.compile(KERNELS[key]()).sources["compute.cpp"]


@pytest.mark.parametrize("op", SFPU_OPS + INT_OPS, ids=lambda op: f"{op.kind.value}-{op.name}")
def test_sfpu_op_is_run_against_torch(op):
    """Every table entry is called by a kernel a numeric test runs (a new op needs one)."""
    key = f"{op.kind.value}-{op.name}"
    assert key in KERNELS, f"no kernel runs {op.function}: add one (see tests/compiler/test_ops.py)"
    assert re.search(rf"\b{op.function}{re.escape(op.template)}\(", compute_source(key))


@pytest.mark.parametrize("op", SFPU_OPS + INT_OPS, ids=lambda op: f"{op.kind.value}-{op.name}")
def test_sfpu_op_kernel_matches_the_real_compute_api(op):
    """The kernel running each op calls the real tt-metal 0.81.1 compute API (names, arity, templates)."""
    assert check_compute_calls(compute_source(f"{op.kind.value}-{op.name}")) == []


def test_rsub():
    a = torch.randn(M, N, generator=torch.Generator().manual_seed(40)).to(torch.bfloat16)
    out = tilelang_tt.compile(rsub(M, N, 32, 64)).run(a).float()
    ref = 1.5 - a.float()
    assert (out - ref).abs().max().item() <= 2.0 ** -7 * max(ref.abs().max().item(), 1.0)


# -- intrinsic schemas ------------------------------------------------------------------------------
def test_every_intrinsic_declares_its_arguments():
    for intrin in Intrin:
        names = [a.name for a in intrin.schema]
        assert len(set(names)) == len(names), intrin
    assert [(a.name, a.kind) for a in Intrin.SFPU_INIT.schema] == [("kind", Operand.STR), ("op", Operand.STR),
                                                                  ("scale", Operand.INT)]
    assert Intrin.REDUCE_INIT.positions(Operand.CB) == (2, 3, 4)


def test_codegen_prints_the_schema_cb_and_semaphore_arguments_by_name():
    for intrin in Intrin:
        if intrin.value.startswith(("tt.mm.", "tt.tile.", "tt.pack_block", "tt.read_to_cb", "tt.write_from_cb",
                                    "tt.generate_block")):
            continue  # protocol-less: lowered before codegen
        rule = rule_for(intrin)
        assert (rule.cb_args, rule.semaphore_args) == (intrin.positions(Operand.CB), intrin.positions(Operand.SEMAPHORE))


@pytest.mark.parametrize("args,message", [
    ((0,), r"takes 2 arguments, got 1"),
    ((0, 1, 2), r"takes 2 arguments, got 3"),
    (("0", 1), r"`cb` must be cb, got"),
    ((0, tirx.Var("n", "int32")), r"`pages` must be int, got n"),
])
def test_call_checks_the_schema(args, message):
    with pytest.raises(TypeError, match=re.escape("tt.cb_wait_front(cb: cb, pages: int)") + ".*" + message):
        call(Intrin.CB_WAIT_FRONT, *args)


def test_call_checks_buffers_and_booleans():
    with pytest.raises(TypeError, match=r"`transpose` must be bool, got 1"):
        call(Intrin.MATMUL_INIT, 0, 1, 1)
    with pytest.raises(TypeError, match=r"`out` must be buffer"):
        call(Intrin.TILE_ELTWISE, tirx.Var("C", "int32"), 0, 0, tirx.FloatImm("float32", 1.0))
