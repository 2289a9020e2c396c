"""The FPU computes a binary op where its operands' formats make it exact (``eltwise.fpu_binary``): bfloat16 blocks,
and float32 blocks holding bfloat16 values (``base.bfloat16_valued``: a row maximum or minimum of a bfloat16 block).
A float32 copy of a bfloat16 block is read as its source by the element-wise statement after it
(``Eltwise.forward_copies``), so softmax's ``x - max`` is ``sub_tiles_bcast_cols`` of the bfloat16 input and the
row maximum: the same bits as the SFPU's subtraction of the float32 copy."""

import tilelang  # noqa: F401
import tilelang.language as T
import torch
from tvm import tirx

import tilelang_tt
from tests import op_kernels as OPS
from tests.kernels import lower_until, run_pass
from tests.passes.helpers import nodes
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops import base
from tilelang_tt.ops.eltwise import Eltwise

PASS = "LowerTTTileIntrinsics"


def min_shift(m=64, n=256, bm=32):
    """y = x - min(x) per row (the row minimum: -max(-x), a bfloat16 value) and z = x - mean (not one)."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), Y: T.Tensor((m, n), "float32"), Z: T.Tensor((m, n), "float32")):
        with T.Kernel(T.ceildiv(m, bm), threads=128) as bx:
            x = T.alloc_shared((bm, n), "bfloat16")
            lo = T.alloc_fragment((bm,), "float32")
            mean = T.alloc_fragment((bm,), "float32")
            y = T.alloc_fragment((bm, n), "float32")
            z = T.alloc_fragment((bm, n), "float32")
            T.copy(X[bx * bm, 0], x)
            T.reduce_min(x, lo, dim=1)
            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(bm):
                mean[i] = mean[i] / n
            for i, j in T.Parallel(bm, n):
                y[i, j] = x[i, j] - lo[i]
            for i, j in T.Parallel(bm, n):
                z[i, j] = x[i, j] - mean[i]
            T.copy(y, Y[bx * bm, 0])
            T.copy(z, Z[bx * bm, 0])

    return main


def eltwise_values(func) -> list:
    return [s.value.args[3] for s in nodes(func.body, lambda n: isinstance(n, tirx.Evaluate)
                                           and isinstance(n.value, tirx.Call)
                                           and n.value.op.name == Intrin.TILE_ELTWISE.value)]


def test_softmax_reads_its_bfloat16_input_for_the_exp():
    """The exp statement reads the bfloat16 block x, not its float32 copy xf, and the copy is gone."""
    after = run_pass(lower_until(OPS.softmax(64, 256, 32), PASS), PASS)["main"]
    values = eltwise_values(after)
    assert len(values) == 2  # exp(x - mx) and xf / sm: no copy of x
    loads = []
    tirx.stmt_functor.post_order_visit(values[0], lambda n: loads.append(n.buffer.name)
                                       if isinstance(n, tirx.BufferLoad) else None)
    assert loads == ["x", "mx"]


def test_the_fpu_subtracts_the_row_maximum_and_minimum_not_the_mean():
    art = tilelang_tt.compile(min_shift())
    compute = art.sources["compute.cpp"]
    assert compute.count("sub_tiles_bcast_cols(") == 1  # x - lo on the FPU
    assert "sub_binary_tile(" in compute  # x - mean on the SFPU: a mean is no bfloat16 value
    x = (torch.randn(64, 256) * 40).bfloat16()
    y, z = art.run(x)
    xf = x.float()
    torch.testing.assert_close(y, xf - xf.min(dim=1, keepdim=True).values, rtol=0, atol=0)
    torch.testing.assert_close(z, xf - xf.mean(dim=1, keepdim=True), rtol=2.0**-20, atol=2.0**-16)


def test_the_fpu_form_gives_the_sfpu_forms_bits(monkeypatch):
    """Softmax with x - max on the FPU from the bfloat16 input, and with the float32 copy and the SFPU (neither
    mechanism): bit for bit the same output, over rows of a wide range (exp arguments down to about -300)."""
    x = (torch.randn(64, 256) * 60).bfloat16()
    fast = tilelang_tt.compile(OPS.softmax(64, 256, 32))
    assert "sub_tiles_bcast_cols(" in fast.sources["compute.cpp"]
    out = fast.run(x)
    monkeypatch.setattr(base, "bfloat16_valued", lambda func, cbs: frozenset())
    monkeypatch.setattr(Eltwise, "forward_copies", lambda self, ctx, stmts: stmts)
    slow = tilelang_tt.compile(OPS.softmax(64, 256, 32))
    assert "sub_tiles_bcast_cols(" not in slow.sources["compute.cpp"]
    assert "sub_binary_tile(" in slow.sources["compute.cpp"]
    assert torch.equal(out, slow.run(x))


def test_a_copy_another_statement_still_reads_is_kept():
    """Softmax over 136 columns: the exp reads the bfloat16 input, but the masked block the row maximum pools reads the
    float32 copy before the exp overwrites it (inside PadBlocksTT's mask statement), so the copy stays."""
    from tests.compiler.test_any_shape import softmax_rows

    after = run_pass(lower_until(softmax_rows(64, 136, 64), PASS), PASS)["main"]
    values = eltwise_values(after)
    assert sum(isinstance(v, tirx.Cast) and isinstance(v.value, tirx.BufferLoad) and v.value.buffer.name == "x"
               for v in values) == 1  # f = x, kept
    (exp,) = [v for v in values if isinstance(v, tirx.Call) and v.op.name == "tirx.exp"]
    loads = []
    tirx.stmt_functor.post_order_visit(exp, lambda n: loads.append(n.buffer.name)
                                       if isinstance(n, tirx.BufferLoad) else None)
    assert loads == ["x", "mx"]
