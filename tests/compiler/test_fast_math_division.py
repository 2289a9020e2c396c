"""Under fast math (``fast_math=True``, TileLang's ``tl.enable_fast_math``) a division by an element of a vector
block, ``a / v[i]`` or ``a / v[j]``, is ``a * r[i]`` with ``r = 1 / v`` computed once per vector
(eltwise.reciprocal_divisors): recip_tile on the vector's tiles, then a multiplication per tile, where the exact
form divides every tile (div_binary_tile). ttnn's softmax normalises so (softmax.cpp: recip_tile of the row sum,
mul_tiles_bcast_cols)."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch
from tvm import tirx

import tilelang_tt
from tilelang_tt import CompileOptions
from tests.compiler.test_ops import bf16
from tests.kernels import lower_until, run_pass
from tests.op_kernels import softmax
from tests.passes.helpers import nodes
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops.sfpu_errors import APPROX_ERRORS, APPROX_EXP

PASS = "LowerTTTileIntrinsics"
FAST = CompileOptions(fast_math=True)


def scaled(m=64, n=128, bm=32):
    """Y = X / s[i] + X / s[i] * 2 (s the row sums) and Z = X / w[j] (w a tensor row): two divisions by one row
    vector in one value, one by a column's value."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), W: T.Tensor((n,), "bfloat16"), Y: T.Tensor((m, n), "bfloat16"),
             Z: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(T.ceildiv(m, bm), threads=128) as bx:
            x = T.alloc_shared((bm, n), "bfloat16")
            w = T.alloc_shared((n,), "bfloat16")
            s = T.alloc_fragment((bm,), "float32")
            y = T.alloc_fragment((bm, n), "float32")
            z = T.alloc_fragment((bm, n), "float32")
            T.copy(X[bx * bm, 0], x)
            T.copy(W[0], w)
            T.reduce_sum(x, s, dim=1)
            for i, j in T.Parallel(bm, n):
                y[i, j] = x[i, j] / s[i] + x[i, j] / s[i] * 2.0
            for i, j in T.Parallel(bm, n):
                z[i, j] = x[i, j] / w[j]
            T.copy(y, Y[bx * bm, 0])
            T.copy(z, Z[bx * bm, 0])

    return main


def eltwise_values(func) -> dict[str, tirx.PrimExpr]:
    return {s.value.args[0].name: s.value.args[3] for s in nodes(
        func.body, lambda n: isinstance(n, tirx.Evaluate) and isinstance(n.value, tirx.Call)
        and n.value.op.name == Intrin.TILE_ELTWISE.value)}


def divisions(e) -> int:
    found = []
    tirx.stmt_functor.post_order_visit(e, lambda n: found.append(n) if isinstance(n, tirx.Div) else None)
    return len(found)


def test_each_vector_divided_by_becomes_its_reciprocal_once():
    fast = run_pass(lower_until(scaled(), PASS, FAST), PASS, FAST)["main"]
    values = eltwise_values(fast)
    assert sorted(values) == ["s_recip", "w_recip", "x_frag", "y", "z"]  # x_frag: the row sum's copy of x
    assert divisions(values["y"]) == 0 and divisions(values["z"]) == 0
    assert divisions(values["s_recip"]) == 1 and divisions(values["w_recip"]) == 1  # 1 / s, 1 / w
    exact = eltwise_values(run_pass(lower_until(scaled(), PASS), PASS)["main"])
    assert sorted(exact) == ["x_frag", "y", "z"] and divisions(exact["y"]) == 2


def test_against_torch():
    x, w = bf16(64, 128, seed=7, positive=True), bf16(128, seed=8, positive=True)
    y, z = (torch.as_tensor(t).float() for t in tilelang_tt.compile(scaled(), fast_math=True).run(x, w))
    xd, wd = x.double(), w.double()
    s = xd.sum(dim=1, keepdim=True)
    # fast math sets math_approx_mode: the reciprocal's approximate form (its relative error), the product of
    # float32 values, then the bfloat16 output's rounding (2^-8 relative)
    bound = 2.0**-8 + APPROX_ERRORS["recip"][0]
    torch.testing.assert_close(y, (xd / s * 3).float(), rtol=bound, atol=0)
    torch.testing.assert_close(z, (xd / wd).float(), rtol=bound, atol=0)


@pytest.mark.parametrize("fast_math", [False, True])
def test_softmax_against_torch(fast_math):
    x = bf16(64, 256, seed=9) * 3
    art = tilelang_tt.compile(softmax(64, 256, 32), fast_math=fast_math)
    assert ("div_binary_tile(" in art.sources["compute.cpp"]) != fast_math
    y = torch.as_tensor(art.run(x)).float()
    ref = torch.softmax(x.double(), dim=1)
    # fast math sets math_approx_mode: the approximate exp's relative error in each value and in the row sum that
    # divides it
    relative = 2.0**-6 + (2 * APPROX_EXP if fast_math else 0.0)
    assert ((y - ref).abs() <= torch.clamp(ref.abs() * relative, min=2.0**-10)).all()


def test_softmax_written_with_the_reciprocals_takes_one_a_row():
    # ttnn's function (recip_tile of the row sum, then a product per tile), written in TileLang: sm[i] = 1 / sm[i]
    # is recip_tile on the row sums' tiles, and no tile is divided
    x = bf16(64, 256, seed=9) * 3
    art = tilelang_tt.compile(softmax(64, 256, 32, reciprocal=True))
    source = art.sources["compute.cpp"]
    assert "recip_tile(" in source and "div_binary_tile(" not in source
    y = torch.as_tensor(art.run(x)).float()
    ref = torch.softmax(x.double(), dim=1)
    assert ((y - ref).abs() <= torch.clamp(ref.abs() * 2.0**-6, min=2.0**-10)).all()
