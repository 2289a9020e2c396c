"""C2 LowerTTTileIntrinsics: compute tile ops become protocol-less CB intrinsics.

Reads: ``T.gemm``, ``T.clear``/``T.fill``, ``T.reduce_*``, on-chip ``T.copy`` and ``T.Parallel``
stores; ``tt.cb_desc`` (block geometry, vectors); ``tt.arch`` (its DST capacity).
Writes: ``tt.compute_config`` {fp32_dest_acc_en, math_fidelity, math_approx_mode, dst_budget,
unpack_to_dest}: a 32-bit DST whenever an on-chip block is float32 or an int32 block is computed
on, and the int32 blocks compute reads, whose CBs the host marks as unpacked straight to DST
(``UnpackToDestFp32``: 32-bit integer tiles go there unchanged); ``tt.cb_desc`` entries of the
blocks it makes, and ``push_pages`` of the blocks element-wise ops alone write and the writer copies to a
tensor (``eltwise.drain_steps``: the writer drains them as compute pushes them); ``tt.column_major_blocks``:
the B blocks of ``transpose_B`` gemms wider than one tile column that the reader alone fills (from a
tensor of tiles) and only such gemms read — their tiles stored column by column, B's columns of tiles
(C's columns) are adjacent and one ``matmul_block`` steps through them, where row by row they are a K
row apart and each output tile takes ``matmul_tiles`` (both operands unpacked per tile product).
TIR: each tile op is lowered by its family in :mod:`tilelang_tt.ops` (the registry ``TILE_OPS``;
``T.Parallel`` nests by :mod:`~tilelang_tt.ops.eltwise`):
- gemm: ``T.clear(C)`` and the statements after it that ``T.gemm`` into C (the K loop) become one
  ``tt.accumulate`` scope of ``tt.mm.mma`` and ``tt.pack_block`` (sub-blocked to fit DST); a
  ``T.gemm`` into a live C reloads it;
- eltwise: ``for i, j in T.Parallel(..): X[i, j] = expr`` → ``tt.tile.eltwise(X, i, j, expr)``; the
  parts of ``expr`` that depend on the indices only become blocks the reader generates
  (``tt.generate_block`` into a new block ``<X>_gen``);
- fill and copy: ``T.fill(X, v)``/``T.clear(X)`` of a block no gemm accumulates into, and on-chip
  ``T.copy(X, Y)`` (a copy or cast) → ``tt.tile.eltwise``;
- copies forwarded: an element-wise statement reading a float32 copy of a bfloat16 block reads the block
  (``Eltwise.forward_copies``: exact), the copy dropped where its value is then never read;
- reduce: ``T.reduce_sum/max(X, v, dim)`` → ``tt.tile.reduce("sum"|"max", X, v, dim, clear)``; a row
  sum of a float32 block the element-wise op just before computes reads a block ``X_rowsum`` of one
  tile per tile row that op packs besides X (``Reduce.fuse_row_sums``: the packer adds a row's
  tiles in L1, the reduction unpacks one tile per row).
This pass groups a clear with the gemms after it. A block the reader fills is never written by
compute here: VersionOnChipBuffersTT gave such a write a block of its own.
Errors: any other tile op, statement or expression, naming it and the user's line.

    Before: T.fill(C_l, 0); for k in T.serial(4): (reads); T.gemm(A_s, B_s, C_l, ...)
    After:  with T.attr(C_l.data, "tt.accumulate", 0):
                for k in T.serial(4): (reads); T.tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 2, 2, False, k == 0)
                T.tt.pack_block(C_l.data, 0, 0, 2, 2)

    Before: for i, j in T.Parallel(64, 128): e[i, j] = T.exp(e[i, j] - mx[i])
            T.reduce_sum(e, s, dim=1); ... (e read)
    After:  T.tt.tile.eltwise(e, i, j, T.exp(e_1[i, j] - mx_1[i]), e_rowsum)
            T.tt.tile.reduce("sum", e_rowsum, s, 1, T.bool(True)); ...
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, ComputeKernelConfig, Scope
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops import ELTWISE, GEMM, REDUCE, SCAN, TILE_OPS
from tilelang_tt.ops.base import INTEGER_DTYPES, LowerContext
from tilelang_tt.ops.eltwise import SUPPORTED, drain_steps
from tilelang_tt.ir.slices import is_row_major
from tilelang_tt.ir.common import (
    as_region,
    contains,
    keep_span,
    prim_func_pass,
    seq,
    stmt_intrin,
    tile_op_name,
)

PASS = "LowerTTTileIntrinsics"


class _Lowerer(LowerContext):
    def lower_seq(self, stmts: list[tirx.Stmt]) -> list[tirx.Stmt]:
        stmts = GEMM.fold_reload_scales(self, GEMM.untranspose(self, SCAN.expand_scans(self, stmts)))
        out: list[tirx.Stmt] = []
        i = 0
        while i < len(stmts):
            accumulation = GEMM.lower_cleared(self, stmts, i)
            if accumulation is not None:
                stmt, i = accumulation
                out.append(stmt)
                continue
            out.append(self.visit(stmts[i]))
            i += 1
        return REDUCE.fuse_row_sums(self, ELTWISE.forward_copies(self, REDUCE.reduce_copy_sources(self, out)))

    def visit(self, s):
        if isinstance(s, tirx.SeqStmt):
            return seq(self.lower_seq(list(s.seq)))
        if isinstance(s, tirx.For):
            if s.kind == tirx.ForKind.PARALLEL:
                return ELTWISE.lower(self, s)
            return keep_span(s, tirx.For(s.loop_var, s.min, s.extent, tirx.ForKind.SERIAL, self.visit(s.body),
                                         None, s.annotations))
        if isinstance(s, tirx.AttrStmt):
            return keep_span(s, tirx.AttrStmt(s.node, s.attr_key, s.value, self.visit(s.body)))
        if isinstance(s, tirx.IfThenElse) and contains(s.condition, lambda n: isinstance(n, tirx.BufferLoad)):
            # reads skipped on a tensor's values (a block-sparse mask, LegalizeGlobalAccessTT checked the
            # branch): the reader decides each read, the gemm adds the zero blocks it reads instead
            return tirx.stmt_functor.ir_transform(self.visit(s.then_case), None, lambda n: keep_span(n, tirx.AttrStmt(
                as_region(n.value.args[1]).buffer.data, Scope.READ_WHEN.value, s.condition, n))
                if stmt_intrin(n) == Intrin.READ_TO_CB else None, ["tirx.Evaluate"])
        if isinstance(s, tirx.IfThenElse):  # a guard of the block coordinates (LegalizeGlobalAccessTT checked it)
            return keep_span(s, tirx.IfThenElse(s.condition, self.visit(s.then_case),
                                                None if s.else_case is None else self.visit(s.else_case)))
        if isinstance(s, tirx.SBlockRealize):
            blk = s.block
            first = len(self.generated)
            body = self.visit(blk.body)
            allocs = list(blk.alloc_buffers)
            if allocs and len(self.generated) > first:  # generated blocks live beside the user's blocks
                allocs += self.generated[first:]
                del self.generated[first:]
            new_blk = tirx.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, body,
                                  blk.init, allocs, blk.match_buffers, blk.annotations)
            return keep_span(s, tirx.SBlockRealize(s.iter_values, s.predicate, new_blk))
        name = tile_op_name(s)
        if name in TILE_OPS:
            return TILE_OPS[name].lower(self, s)
        if name is not None:
            raise self.error(s, f"unsupported tile op `T.{name}`", ALTERNATIVES.get(name, f"supported: {SUPPORTED}"))
        if isinstance(s, (tirx.Evaluate, tirx.Bind)) or stmt_intrin(s) is not None:
            return s
        if isinstance(s, tirx.BufferStore):
            raise self.error(s, *_scalar_store(s))
        raise self.error(s, f"unsupported statement {type(s).__name__}", f"supported: {SUPPORTED}")


# What a Tenstorrent kernel does instead of tile ops with no lowering yet.
ALTERNATIVES = {
    "im2col": "T.im2col gathers image patches element by element, which the reader does not do: write the "
              "convolution as K*K shifted GEMMs (for kh, kw: T.copy the shifted image rows and T.gemm with the "
              "filter tap), or unfold the image on the host",
}


def _scalar_store(store: tirx.BufferStore) -> tuple[str, str]:
    """(message, hint) for a store outside T.Parallel, naming the GPU construct it comes from."""
    name = store.buffer.name
    if store.buffer.scope() == "local":
        return (f"store into `{name}`, per-thread registers (T.alloc_local) outside T.Parallel: a Tenstorrent core "
                "has no per-thread registers", "keep the values in a T.alloc_fragment block and compute them in a "
                "T.Parallel nest, or read them element-wise from the block they come from")
    if store.buffer.scope() == "local.var":
        return (f"store into `{name}`, a scalar variable (T.alloc_var) set in a loop or from block values: the "
                "reader, compute and writer kernels share no scalar registers",
                "set it once from block coordinates and sizes (it is then inlined), or keep the value in a "
                "one-row block")
    return f"scalar store into `{name}` outside T.Parallel", f"supported: {SUPPORTED}"


def _integer_operands(body) -> list[str]:
    """The int32 blocks element-wise values read, sorted."""
    names = set()

    def visit(node):
        if stmt_intrin(node) == Intrin.TILE_ELTWISE:
            tirx.stmt_functor.post_order_visit(node.value.args[3], lambda n: names.add(n.buffer.name) if isinstance(
                n, tirx.BufferLoad) and str(n.buffer.dtype) in INTEGER_DTYPES else None)

    tirx.stmt_functor.post_order_visit(body, visit)
    return sorted(names)


def _column_major_blocks(func: tirx.PrimFunc, body) -> list[str]:
    """The B blocks of ``transpose_B`` gemms whose sub-blocks are more than one tile column wide, that
    only reads from a tensor of tiles fill and only such gemms read (tt.column_major_blocks)."""
    wide, other = set(), set()

    def visit(node):
        intrin = stmt_intrin(node)
        if isinstance(node, tirx.AttrStmt) and isinstance(node.node, tirx.Var):
            other.add(node.node)
        if not isinstance(node, tirx.Evaluate) or intrin is None:
            return
        args = list(node.value.args)
        if intrin == Intrin.MM_MMA and bool(args[7]) and int(args[6]) > 1:
            wide.add(args[1])
            args = args[:1] + args[2:]
        elif intrin == Intrin.READ_TO_CB and not is_row_major(func, as_region(args[0]).buffer):
            args = args[:1]
        used = set()
        for a in args:
            tirx.stmt_functor.post_order_visit(a, lambda n: used.add(n) if isinstance(n, tirx.Var) else (
                used.add(n.buffer.data) if isinstance(n, tirx.BufferLoad) else None))
        other.update(used)

    tirx.stmt_functor.post_order_visit(body, visit)
    return sorted(v.name for v in wide - other)


def _transform(func: tirx.PrimFunc, mod, ctx, math_fidelity: str, gemm_reuse: str, math_approx_mode: bool,
               gemm_subblock: tuple[int, int] | None, fast_math: bool) -> tirx.PrimFunc:
    arch = Attr.ARCH.read(func)
    lowerer = _Lowerer(PASS, func, arch.dst_budget, Attr.CB_DESC.read(func), gemm_reuse, gemm_subblock, fast_math)
    body = lowerer.visit(func.body)
    drain_steps(lowerer, body)
    column_major = _column_major_blocks(func, body)
    func = func.with_body(body)
    if column_major:
        func = Attr.COLUMN_MAJOR_BLOCKS.write(func, column_major)
    func = Attr.CB_DESC.write(func, dict(sorted(lowerer.cbs.items())))
    return Attr.COMPUTE_CONFIG.write(func, ComputeKernelConfig(
        fp32_dest_acc_en=lowerer.fp32, math_fidelity=math_fidelity, math_approx_mode=math_approx_mode,
        dst_budget=arch.dst_budget(lowerer.fp32), unpack_to_dest=tuple(_integer_operands(body)), fast_math=fast_math))


def LowerTTTileIntrinsics(math_fidelity: str = "HiFi4", gemm_reuse: str = "auto", math_approx_mode: bool = False,
                          gemm_subblock: tuple[int, int] | None = None, fast_math: bool = False):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, math_fidelity, gemm_reuse, math_approx_mode,
                                                     gemm_subblock, fast_math), PASS)
