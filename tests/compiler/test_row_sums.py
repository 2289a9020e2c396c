"""Row sums packed by the op computing the block (Reduce.fuse_row_sums): ``T.reduce_sum(X, v, dim=1)``
right after the element-wise op computing a float32 X of several tile columns reads one tile per tile
row that op packs besides X (packer L1 accumulation), where it read every tile of X."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch
from tvm import tirx

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tests.kernels import lower_until, run_pass
from tests.passes.helpers import nodes
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin

PASS = "LowerTTTileIntrinsics"


def row_sum(m=64, n=128, bm=64, dtype="float32", kind="sum", clear=True, read_after=True, scale=2.0, copy=False):
    """E = X * scale (exp(X - max) with ``scale`` None, X itself with ``copy``) in a ``dtype`` block,
    its row sums (max) into S; E to Y when ``read_after``."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), S: T.Tensor((m,), "float32"), Y: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(T.ceildiv(m, bm), threads=128) as bx:
            x = T.alloc_shared((bm, n), "bfloat16")
            e = T.alloc_fragment((bm, n), dtype)
            mx = T.alloc_fragment((bm,), "float32")
            s = T.alloc_fragment((bm,), "float32")
            T.copy(X[bx * bm, 0], x)
            T.fill(s, 1.0)
            if copy:
                T.copy(x, e)
            elif scale is None:
                T.copy(x, e)
                T.reduce_max(e, mx, dim=1)
                for i, j in T.Parallel(bm, n):
                    e[i, j] = T.exp(e[i, j] - mx[i])
            else:
                for i, j in T.Parallel(bm, n):
                    e[i, j] = x[i, j] * scale
            if kind == "sum":
                T.reduce_sum(e, s, dim=1, clear=clear)
            else:
                T.reduce_max(e, s, dim=1, clear=clear)
            T.copy(s, S[bx * bm])
            if read_after:
                T.copy(e, Y[bx * bm, 0])

    return main


def reductions(func) -> list:
    return nodes(func.body, lambda n: isinstance(n, tirx.Evaluate) and isinstance(n.value, tirx.Call)
                 and n.value.op.name in (Intrin.TILE_REDUCE.value, Intrin.TILE_ELTWISE.value))


def test_the_row_sum_reads_the_partials_the_op_packs():
    after = run_pass(lower_until(row_sum(), PASS), PASS)["main"]
    ops = reductions(after)
    scaled = next(s for s in ops if s.value.args[0].name == "e")
    reduce = next(s for s in ops if s.value.op.name == Intrin.TILE_REDUCE.value)
    partial = reduce.value.args[1]
    assert partial.name == "e_rowsum" and scaled.value.args[4:] == [partial]
    cb = Attr.CB_DESC.read(after)["e_rowsum"]
    e = Attr.CB_DESC.read(after)["e"]
    assert (cb.data_format, cb.block_tiles, cb.block_pages) == ("Float32", (2, 1), 2)
    assert cb.num_pages * e.block_pages == e.num_pages * 2  # as many blocks in flight as e's CB


@pytest.mark.parametrize("options", [dict(dtype="bfloat16"), dict(kind="max"), dict(n=32), dict(read_after=False),
                                     dict(copy=True)],
                         ids=["bfloat16", "max", "one-tile-column", "unread-after", "copy-of-bfloat16"])
def test_no_partials_where_they_would_not_serve(options):
    """A bfloat16 block (its partial sums would round), a maximum (the packer only adds), one tile
    column (nothing to sum across tiles), a block nobody reads after (it would be dropped with its op),
    a float32 copy of a bfloat16 block (its values reach reduce_tile's TF32 source registers exactly,
    partial sums of them would be truncated; the reduction reads the bfloat16 block itself:
    Reduce.reduce_copy_sources)."""
    after = run_pass(lower_until(row_sum(**options), PASS), PASS)["main"]
    reduce = next(s for s in reductions(after) if s.value.op.name == Intrin.TILE_REDUCE.value)
    assert reduce.value.args[1].name == ("x" if options.get("copy") else "e")
    assert "e_rowsum" not in Attr.CB_DESC.read(after)


@pytest.mark.parametrize("m,n,bm,clear,scale", [(64, 128, 64, True, 2.0), (128, 64, 64, False, 2.0),
                                                 (64, 256, 32, False, None), (96, 96, 32, True, None)])
def test_row_sums_against_torch(m, n, bm, clear, scale):
    """Acquires of several tile rows (64 columns: the op's four tiles per acquire span both rows),
    several acquires per row, the old value added (clear=False), softmax's exp pass."""
    x = bf16(m, n, seed=3)
    art = tilelang_tt.compile(row_sum(m, n, bm, clear=clear, scale=scale))
    assert "pack_tile<true>" in art.sources["compute.cpp"]
    s, y = (torch.as_tensor(t).float() for t in art.run(x))
    xf = x.float()
    e = xf * scale if scale is not None else torch.exp(xf - xf.max(dim=1, keepdim=True).values)
    assert_close(y, e.bfloat16().float(), 2.0 ** -7)
    # reduce_tile reads float32 tiles through the 19-bit source registers (TF32: 10 mantissa bits,
    # truncated): the sums are within 2^-10 with the partials as without them (measured 4.6e-4, 3.9e-4)
    assert_close(s, e.sum(dim=1) + (0.0 if clear else 1.0), 2.0 ** -10)
