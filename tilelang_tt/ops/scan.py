"""Scans: ``T.cumsum(src, dst, dim, reverse)`` of a block, as a product with a triangle of ones on
the matrix unit.

TileLang's ``T.cumsum(X, Y, dim, reverse)`` (tilelang/language/scan_op.py): ``Y[i, j]`` is the sum
of X along ``dim`` up to ``(i, j)``, from the far end with ``reverse``; in place when Y is X (the
default). Of a fragment TileLang scans a shared copy in place (``cumsum_fragment``: ``T.copy(X,
X_smem); cumsum(X_smem); T.copy(X_smem, Y)``); of a shared block it emits the tile op itself.

C2, before the sequence holding it is lowered (:meth:`Scan.expand_scans`, called by
LowerTTTileIntrinsics' ``lower_seq``): the tile op becomes tile ops the compiler lowers already,
    - ``tt.generate_block(X_ones, i, j, T.if_then_else(cond, 1, 0))``: the reader fills an n x n
      bfloat16 block (n the extent along ``dim``) with ones on the diagonal and on one side of it
      (:func:`_ones_where`);
    - ``T.clear(Y_acc); T.gemm(X, X_ones, Y_acc)`` along dim 1 (``Y[i, j] = sum_k X[i, k] ones[k, j]``)
      or ``T.gemm(X_ones, X, Y_acc)`` along dim 0, into a float32 fragment ``Y_acc`` (Y itself when
      Y is a float32 fragment other than X): the gemm family's accumulate scope; a float32 X is
      first split into ``X_hi = bfloat16(X)`` and ``X_lo = X - X_hi`` (two ``T.Parallel`` stores),
      and both are multiplied into ``Y_acc``;
    - ``for i, j in T.Parallel(..): Y[i, j] = Y_acc[i, j]`` otherwise, rounding to Y's dtype; a Y the
      reader fills (an in-place scan of a block copied from a tensor) then gets a new version the rest
      of the sequence reads (``version_reader_blocks``), as any update in place does.

Why the matrix unit: every output tile is the sum of the tile products along its row (or column) of
tiles, the tiles before the diagonal's all ones: that is the carry between tiles, with no serial
chain between them. tt-llk 0.81.1's one scan, the SFPU's ``cumsum_tile`` (api/compute/cumsum.h),
runs down a tile's columns only, has no reverse, and keeps its carry between tiles in SFPU
registers any other SFPU op clobbers; the FPU has no prefix within a tile. Exact: the triangle's ones
and zeros and bfloat16 values are exact in the source registers, and HiFi4 (the default
``math_fidelity``) multiplies them exactly (docs/numerics.md, fidelity phases), so each output is
the float32 sum of its terms, rounded once to Y's dtype. A float32 datum would be truncated to TF32
there (2^-9 relative in SrcA, where X is along dim 0), too coarse for a running sum users
exponentiate (cumulative log-decays); split, ``X_hi`` is exact and ``X_lo`` (exact in float32, within
2^-8 of |X|) loses at most 2^-9 of itself: each term within 2^-17 of |X|, for twice the products.
Cost: a scan along W tiles of R tiles across takes R W^2 tile products (half of them by zero tiles)
where a serial scan would take R W tile operations, and the triangle W^2 tiles of L1: at most
``MAX_SCAN_TILES`` tiles along the scan (256 elements, the triangle 128 KiB), beyond which the scan
is refused with its rewrite (blocks scanned one by one, each adding the total of those before it).
Errors: a scan of a vector (a 1-D block), of an integer block, along more than 256 elements; an
in-place scan of a block read outside the statement sequence holding it.

    Before: T.copy(A[by * 64, 0], A_s); T.cumsum(A_s, dim=1); T.copy(A_s, B[by * 64, 0])
    After:  T.copy(A[by * 64, 0], A_s)
            T.tt.generate_block(A_s_ones, i, j, T.if_then_else(i <= j, 1, 0))
            T.clear(A_s_acc); T.gemm(A_s, A_s_ones, A_s_acc)
            for i, j in T.Parallel(64, 128): A_s_v[i, j] = T.Cast("bfloat16", A_s_acc[i, j])
            T.copy(A_s_v, B[by * 64, 0])
"""

from __future__ import annotations

import tilelang  # noqa: F401
import tilelang.language as T
from tvm import ir, tirx

from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.common import TILE, WRITE, as_region, evaluate, keep_span, make_region, seq, tile_op_name
from tilelang_tt.ops.base import TileOp, register

MAX_SCAN_TILES = 8  # tiles along a scan: the triangle of ones is MAX_SCAN_TILES^2 tiles of L1
DIM, REVERSE = 2, 3  # T.cumsum's arguments after the source and destination regions


class Scan(TileOp):
    tile_ops = ("cumsum",)

    def lower(self, ctx, stmt):
        """A scan that is a statement of its own (no sequence around it): its expansion, lowered. In
        place, any other statement reading the block would miss the new version: refused."""
        return ctx.visit(seq(self.expand(ctx, stmt, [stmt])))

    def expand_scans(self, ctx, stmts: list[tirx.Stmt]) -> list[tirx.Stmt]:
        """C2, over a statement sequence before it is lowered: each ``T.cumsum`` as the tile ops
        computing it (the module's docstring)."""
        out: list[tirx.Stmt] = []
        for s in stmts:
            out.extend(self.expand(ctx, s, stmts) if tile_op_name(s) == "cumsum" else [s])
        return out

    def expand(self, ctx, stmt, around: list[tirx.Stmt]) -> list[tirx.Stmt]:
        """The tile ops computing the scan ``stmt``, a statement of the sequence ``around``."""
        args = stmt.value.args
        src, dst = as_region(args[0]), as_region(args[1])
        dim, reverse = int(args[DIM]), bool(args[REVERSE])
        x, y = src.buffer, dst.buffer
        if len(x.shape) != 2 or list(src.extents) != [int(d) for d in x.shape] \
                or list(dst.extents) != [int(d) for d in y.shape]:
            raise ctx.error(stmt, f"T.cumsum of `{x.name}` {list(src.extents)}: a scan of a vector or of part of a "
                                  "block", "scan a whole 2-D block of 32x32 tiles; a vector of n values as a tensor "
                                  "of one row, (1, n), copied into a (32, n) block (the reader pads the other rows "
                                  "with zeros) and scanned along dim 1")
        ctx.check_compute_dtypes(stmt, (x, y))
        n = int(x.shape[dim])
        if n > MAX_SCAN_TILES * TILE:
            raise ctx.error(stmt, f"T.cumsum of `{x.name}` {[int(d) for d in x.shape]} along dim {dim}: a scan of "
                                  f"{n} elements, over the {MAX_SCAN_TILES * TILE} the triangle of ones it is "
                                  "multiplied by holds in L1",
                            f"scan blocks of at most {MAX_SCAN_TILES * TILE} along dim {dim} one after another, "
                            "each adding the total of those before it: T.cumsum(blk, dim=...), then "
                            "T.reduce_sum(blk, total, dim=...) and a T.Parallel adding the running total")
        if x.same_as(y) and _read_outside(ctx.func, x, around):
            raise ctx.error(stmt, f"T.cumsum in place of `{x.name}`, which statements outside the sequence holding "
                                  "the scan read: the scan writes a new block that only the statements after it "
                                  "in that sequence read",
                            f"scan into another block, T.cumsum({x.name}, dst=Y), and read Y")
        ones = ctx.new_block(x, "_ones", "bfloat16", "shared.dyn", shape=(n, n))
        direct = not x.same_as(y) and str(y.dtype) == "float32" and y.scope() == "local.fragment"
        acc = y if direct else ctx.new_block(x, "_acc", "float32", "local.fragment")
        i, j = tirx.Var("i", "int32"), tirx.Var("j", "int32")
        # Y = X @ U along dim 1 (U[k, j] = 1 where k <= j), Y = L @ X along dim 0 (L[i, k] = 1 where k <= i)
        ones_at = _ones_where(j, i, reverse) if dim == 1 else _ones_where(i, j, reverse)
        out = [evaluate(Intrin.GENERATE_BLOCK, make_region(ones, [0, 0], ones.shape, WRITE), i, j, ones_at,
                        like=stmt)]
        terms = [x]
        if str(x.dtype) == "float32":  # X = hi + lo, each exact enough in the source registers
            hi = ctx.new_block(x, "_hi", "bfloat16", "local.fragment")
            lo = ctx.new_block(x, "_lo", "float32", "local.fragment")
            out += [_parallel(stmt, hi, lambda r, c: tirx.Cast("bfloat16", tirx.BufferLoad(x, [r, c]))),
                    _parallel(stmt, lo, lambda r, c: tirx.BufferLoad(x, [r, c]) - tirx.Cast(
                        "float32", tirx.BufferLoad(hi, [r, c])))]
            terms = [hi, lo]
        out.append(keep_span(stmt, tirx.Evaluate(T.clear(acc))))
        out += [keep_span(stmt, tirx.Evaluate(T.gemm(t, ones, acc) if dim == 1 else T.gemm(ones, t, acc)))
                for t in terms]
        if not direct:
            out.append(_parallel(stmt, y, lambda r, c: tirx.BufferLoad(acc, [r, c]) if y.dtype == acc.dtype else
                                 tirx.Cast(y.dtype, tirx.BufferLoad(acc, [r, c]))))
        return out


def _parallel(stmt, buf: tirx.Buffer, value_of) -> tirx.Stmt:
    """``for i, j in T.Parallel(*buf.shape): buf[i, j] = value_of(i, j)``, at ``stmt``'s line."""
    r, c = tirx.Var("i", "int32"), tirx.Var("j", "int32")
    store = keep_span(stmt, tirx.BufferStore(buf, value_of(r, c), [r, c]))
    inner = keep_span(stmt, tirx.For(c, 0, int(buf.shape[1]), tirx.ForKind.PARALLEL, store))
    return keep_span(stmt, tirx.For(r, 0, int(buf.shape[0]), tirx.ForKind.PARALLEL, inner))


def _ones_where(at, k, reverse: bool) -> tirx.PrimExpr:
    """1 where term ``k`` of the scan enters output ``at`` (k <= at; k >= at with ``reverse``), else 0,
    in bfloat16."""
    cond = tirx.GE(k, at) if reverse else tirx.LE(k, at)
    one, zero = tirx.const(1.0, "bfloat16"), tirx.const(0.0, "bfloat16")
    return tirx.Call("bfloat16", ir.Op.get("tirx.if_then_else"), [cond, one, zero])


def _read_outside(func: tirx.PrimFunc, buf: tirx.Buffer, stmts: list[tirx.Stmt]) -> bool:
    """Whether a statement of ``func`` other than ``stmts`` reads or writes ``buf``."""
    def accesses(node) -> int:
        found = []
        tirx.stmt_functor.post_order_visit(node, lambda n: found.append(n) if isinstance(
            n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.same_as(buf) else None)
        return len(found)

    return accesses(func.body) > sum(accesses(s) for s in stmts)


SCAN = register(Scan())
