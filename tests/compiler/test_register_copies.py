"""Branches on positions a kernel copies into registers (issue 29 item 7): ``T.copy(table[bx, 0], pos_local)``
into a ``T.alloc_local`` array, then ``if pos_local[k] >= 0:`` around tile work and rows picked by
``pos_local[k]``. ForwardTensorCopiesTT reads the table's elements instead (the reader reads them and hands
the branch's condition on); run on the emulator against torch in other authors' idioms: a top-k scatter of
token rows (TileKernels' expand), a per-block route read from a table of flags, and a register copy the
kernel also writes, still refused at the ``if``."""

import inspect
import sys

import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import bf16

THIS = inspect.getsourcefile(sys.modules[__name__])
SOURCE = inspect.getsource(sys.modules[__name__])


def scatter_rows(tokens, slots, hidden, top_k):
    """Out[pos[t, k]] = X[t] for each k with pos[t, k] >= 0: a block per token, its positions copied into
    registers first."""

    @T.prim_func
    def main(X: T.Tensor((tokens, hidden), "float32"), Pos: T.Tensor((tokens, top_k), "int32"),
             Out: T.Tensor((slots, hidden), "float32")):
        with T.Kernel(tokens, threads=128) as bx:
            pos_local = T.alloc_local((top_k,), "int32")
            row = T.alloc_fragment((hidden,), "float32")
            T.copy(Pos[bx, 0], pos_local)
            T.copy(X[bx, :], row)
            for k in T.serial(top_k):
                if pos_local[k] >= 0:
                    for i in T.Parallel(hidden):
                        Out[pos_local[k], i] = row[i] * 2.0

    return main


def routed_blocks(m, n, bm):
    """Y's row block b is X's doubled or negated as the route table's second column says (a flag per block,
    copied with its neighbour into registers)."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), Route: T.Tensor((m // bm, 2), "int32"),
             Y: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(m // bm, threads=128) as bx:
            flags = T.alloc_local((2,), "int32")
            x = T.alloc_shared((bm, n), "bfloat16")
            y = T.alloc_fragment((bm, n), "bfloat16")
            T.copy(Route[bx, 0:2], flags)
            T.copy(X[bx * bm, 0], x)
            if flags[1] == 1:
                for i, j in T.Parallel(bm, n):
                    y[i, j] = x[i, j] * 2.0
            else:
                for i, j in T.Parallel(bm, n):
                    y[i, j] = -x[i, j]
            T.copy(y, Y[bx * bm, 0])

    return main


def test_a_top_k_scatter_by_positions_in_registers():
    tokens, slots, hidden, top_k = 6, 20, 64, 3
    g = torch.Generator().manual_seed(5)
    pos = torch.randperm(slots, generator=g)[:tokens * top_k].reshape(tokens, top_k).to(torch.int32)
    pos[1, 2] = pos[4, 0] = -1  # tokens routed to fewer experts
    x = torch.randn(tokens, hidden, generator=g)
    out0 = torch.full((slots, hidden), 7.0)
    art = tilelang_tt.compile(scatter_rows(tokens, slots, hidden, top_k))
    out = torch.as_tensor(art.run(x, pos, out0.clone()))
    ref = out0.clone()
    for t in range(tokens):
        for k in range(top_k):
            if pos[t, k] >= 0:
                ref[pos[t, k]] = x[t] * 2.0
    assert torch.equal(out, ref)


def test_a_route_copied_into_registers_picks_the_branch():
    m, n, bm = 128, 64, 32
    x = bf16(m, n, seed=6)
    route = torch.tensor([[9, 1], [9, 0], [0, 0], [3, 1]], dtype=torch.int32)
    out = torch.as_tensor(tilelang_tt.compile(routed_blocks(m, n, bm)).run(x, route)).float()
    doubled = route[:, 1].repeat_interleave(bm)[:, None] == 1
    assert torch.equal(out, torch.where(doubled, x.float() * 2.0, -x.float()))


def overwritten_register(m=64, n=64):
    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), Route: T.Tensor((2, 2), "int32"), Y: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(2, threads=128) as bx:
            flags = T.alloc_local((2,), "int32")
            x = T.alloc_shared((32, n), "bfloat16")
            T.copy(Route[bx, 0:2], flags)
            flags[0] = flags[0] + 1
            if flags[0] > 1:  # LINE: overwritten_register
                T.copy(X[bx * 32, 0], x)
                T.copy(x, Y[bx * 32, 0])

    return main


def test_a_register_the_kernel_changes_is_still_refused_at_the_branch():
    err = compile_error(overwritten_register())
    assert_diagnostic(err, "CheckKernelFormsTT", "decides on the on-chip buffer `flags`", "overwritten_register",
                      THIS, SOURCE)
