"""A reduction of a copy reduces the copy's source (Reduce.reduce_copy_sources): ``T.copy(x, x_f32);
T.reduce_max(x_f32, m)`` pools the bfloat16 x, and ``T.reduce_sum`` of a shared block reads it without the
fragment copy TileLang's ``T.reduce_*`` makes of it (DropDeadBlocksTT drops the copy nobody else reads).
Exact: the source registers read a bfloat16 datum and its float32 copy as the same number."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch
from tvm import tirx

import tilelang_tt
from tests.compiler.test_ops import bf16
from tests.kernels import lower_until, run_pass
from tests.passes.helpers import nodes
from tilelang_tt.ir.common import as_region
from tilelang_tt.ir.intrin import Intrin

PASS = "LowerTTTileIntrinsics"


def row_stats(m=64, n=128, bm=32, copy_dtype="float32", source_dtype="bfloat16", shared=False):
    """The row max and row sum of X: of a ``copy_dtype`` copy of the block X is read into, or (``shared``) of
    that block itself, through the copy TileLang's reductions make of a shared block."""

    @T.prim_func
    def main(X: T.Tensor((m, n), source_dtype), MX: T.Tensor((m,), "float32"), SM: T.Tensor((m,), "float32")):
        with T.Kernel(T.ceildiv(m, bm), threads=128) as bx:
            x = T.alloc_shared((bm, n), source_dtype)
            xc = T.alloc_fragment((bm, n), copy_dtype)
            mx = T.alloc_fragment((bm,), "float32")
            sm = T.alloc_fragment((bm,), "float32")
            T.copy(X[bx * bm, 0], x)
            if shared:
                T.reduce_max(x, mx, dim=1)
                T.reduce_sum(x, sm, dim=1)
            else:
                T.copy(x, xc)
                T.reduce_max(xc, mx, dim=1)
                T.reduce_sum(xc, sm, dim=1)
            T.copy(mx, MX[bx * bm])
            T.copy(sm, SM[bx * bm])

    return main


def reduce_sources(func) -> list[tirx.Var]:
    return [s.value.args[1] for s in nodes(func.body, lambda n: isinstance(n, tirx.Evaluate)
                                           and isinstance(n.value, tirx.Call)
                                           and n.value.op.name == Intrin.TILE_REDUCE.value)]


def shared_block(func) -> tirx.Var:
    return as_region(next(s.value.args[1] for s in nodes(func.body, lambda n: isinstance(n, tirx.Evaluate)
                                                         and isinstance(n.value, tirx.Call)
                                                         and n.value.op.name == Intrin.READ_TO_CB.value))).buffer.data


@pytest.mark.parametrize("options", [dict(), dict(copy_dtype="bfloat16"), dict(shared=True)],
                         ids=["widening", "same-dtype", "tilelang-copy-of-shared"])
def test_the_reductions_read_the_copied_block(options):
    after = run_pass(lower_until(row_stats(**options), PASS), PASS)["main"]
    x = shared_block(after)
    sources = reduce_sources(after)
    assert len(sources) == 2 and all(s.same_as(x) for s in sources)


@pytest.mark.parametrize("copy_dtype", ["bfloat16", "float32"])
def test_a_copy_of_a_float32_block_is_reduced(copy_dtype):
    """A bfloat16 copy of a float32 block holds other values (rounded); a float32 one is read by its other ops
    in all 32 bits only if reduce_tile (through TF32 SrcA) does not read it: the reductions read the copy."""
    after = run_pass(lower_until(row_stats(copy_dtype=copy_dtype, source_dtype="float32"), PASS), PASS)["main"]
    assert [s.name for s in reduce_sources(after)] == ["xc", "xc"]


def test_the_copy_nobody_reads_is_gone():
    art = tilelang_tt.compile(row_stats(shared=True))
    assert not any("frag" in cb.name for cb in art.plan.cbs)
    assert "copy_tile" not in art.sources["compute.cpp"]


@pytest.mark.parametrize("options", [dict(), dict(shared=True), dict(copy_dtype="bfloat16")],
                         ids=["widening", "tilelang-copy-of-shared", "same-dtype"])
def test_row_stats_against_torch(options):
    x = bf16(64, 128, seed=5)
    mx, sm = (torch.as_tensor(t).float() for t in tilelang_tt.compile(row_stats(**options)).run(x))
    xf = x.float()
    assert torch.equal(mx, xf.max(dim=1).values)  # the maximum of bfloat16 values is one of them
    torch.testing.assert_close(sm, xf.double().sum(dim=1).float(), rtol=2.0**-18, atol=2.0**-16)
