"""CheckKernelFormsTT (front, just before LegalizeGlobalAccessTT): refuses the kernel forms that have
no Tenstorrent form at all, at the statement at fault, before any pass rewrites them.

Reads the body only; writes nothing (the function comes out as it went in). Two rules:

* on-chip blocks and ``T.Parallel`` nests have sizes known when the kernel is compiled (CBs are
  sized then): a dynamic size (``T.dynamic``) may size global tensors, grids and loops only;
* an ``if`` around tile operations is taken by the reader, compute and writer alike: its condition may
  read block coordinates, loop variables, sizes and tensor elements (the reader reads those and
  hands the condition on: NameValueConditionsTT), not on-chip blocks (only compute holds them).

    Before: with T.Kernel(4) as bx:
                x = T.alloc_shared((32, n), "float32")      # n = T.dynamic("n")
    After:  TTCompileError at the T.copy into x: "on-chip buffer `x` has the shape [32, n], which
            depends on a dynamic size ..."
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.branches import around_tile_work
from tilelang_tt.ir.common import (
    allocations,
    const_int,
    error,
    first_stmt_using,
    is_global_buffer,
    loads,
    prim_func_pass,
)

PASS = "CheckKernelFormsTT"


def _check_static_blocks(func: tirx.PrimFunc) -> None:
    """On-chip blocks and T.Parallel nests have sizes known when the kernel is compiled (CBs are
    sized then); a dynamic size (``T.dynamic``) may only size global tensors, grids and loops."""
    for buf in allocations(func):
        if any(const_int(d) is None for d in buf.shape):
            raise error(PASS, func, first_stmt_using(func.body, buf) or buf,
                        f"on-chip buffer `{buf.name}` has the shape {list(buf.shape)}, which depends on a dynamic size: "
                        "blocks are circular buffers sized when the kernel is compiled",
                        "give on-chip blocks constant shapes and loop over the dynamic extent in blocks: "
                        "for k in T.Pipelined(T.ceildiv(n, bk)): T.copy(A[by * bm, k * bk], A_s)")
    loops = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: loops.append(n) if isinstance(
        n, tirx.For) and n.kind == tirx.ForKind.PARALLEL and const_int(n.extent) is None else None)
    if loops:
        raise error(PASS, func, loops[-1], f"T.Parallel over {loops[-1].extent}, an extent that depends on a dynamic "
                    "size: a T.Parallel nest works on one block of constant shape",
                    "bound the extent by a constant (T.Parallel(T.min(n, 512)): the nest runs over 512 elements, "
                    "storing below n), or loop over the dynamic extent in blocks of constant size and use T.Parallel "
                    "inside each block")




def _check_branches(func: tirx.PrimFunc) -> None:
    """An ``if`` around tile operations (T.copy, T.gemm, a T.Parallel nest) is taken by the reader,
    compute and writer kernels alike: its condition may read the block coordinates, loop variables,
    sizes and tensor elements (the reader reads those and hands the condition on), not on-chip
    blocks (only compute holds them). Refused at the ``if``."""
    found = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: found.append(n) if around_tile_work(n) else None)
    for branch in reversed(found):  # post order: outer branches last
        blocks = [n for n in loads(branch.condition) if not is_global_buffer(n.buffer)]
        if blocks:
            raise error(PASS, func, branch, f"`if {branch.condition}:` around tile operations (T.copy, T.gemm, "
                        f"T.Parallel) decides on the on-chip buffer `{blocks[0].buffer.name}`: the reader and "
                        "writer, which take the branch too, cannot read on-chip blocks",
                        "decide on tensor elements, block coordinates and sizes, or compute both cases and "
                        "select element-wise: T.Parallel with T.if_then_else(cond, x, y)")


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    _check_static_blocks(func)
    _check_branches(func)
    return func


def CheckKernelFormsTT():
    return prim_func_pass(_transform, PASS)
