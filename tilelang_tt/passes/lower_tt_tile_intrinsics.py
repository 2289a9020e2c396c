"""C2 LowerTTTileIntrinsics: compute tile ops become protocol-less CB intrinsics.

Reads: ``T.gemm``, ``T.clear``/``T.fill``, ``T.reduce_*``, on-chip ``T.copy`` and ``T.Parallel``
stores; ``tt.cb_desc`` (block geometry, vectors); the arch's DST capacity.
Writes: ``tt.compute_config`` {fp32_dest_acc_en, math_fidelity, math_approx_mode, dst_budget}:
fp32 DST accumulation whenever an on-chip block is float32.
TIR:
- GEMM into a cleared accumulator: ``T.clear(C)`` and the statements after it that ``T.gemm``
  into C (the K loop) become ``T.attr(C, "tt.accumulate", 0)`` around
  ``tt.mm.mma(A, B, C, m0, n0, sm, sn, transpose_b, k == 0)`` and a trailing
  ``tt.pack_block(C, m0, n0, sm, sn)``: the accumulator lives in DST over the whole K loop and
  every output tile is packed once. A block with more tiles than one DST acquire holds is
  split into sub-blocks: by default (``gemm_reuse="auto"``) the sub-block loop goes inside the K
  loop and partial sums round-trip through C's CB (attribute value 2), so each A and B block is
  read once per K step; with ``gemm_reuse="dst"`` the K loop goes inside the sub-block loop (one
  pack per output tile, operands re-read per sub-block). ``T.gemm`` into a live C (no clear:
  flash attention's ``acc_o += P @ V``) has attribute value 1: C is reloaded into DST.
- ``for i, j in T.Parallel(..): X[i, j] = expr`` → ``tt.tile.eltwise(X, i, j, expr)`` where
  ``expr`` reads whole blocks ``A[i, j]``, per-row vectors ``v[i]``, per-column vectors ``v[j]`` and
  scalars with + - * /, max/min, exp, exp2, log, sqrt, rsqrt, sigmoid, tanh, erf, abs and casts.
- ``T.fill(X, v)``/``T.clear(X)`` of a block no gemm accumulates into, and on-chip
  ``T.copy(X, Y)`` (a copy or cast) → ``tt.tile.eltwise``.
- ``T.reduce_sum/max(X, v, dim)`` → ``tt.tile.reduce("sum"|"max", X, v, dim, clear)``.
Errors: any other tile op or expression, naming it and the user's line.

    Before: T.fill(C_l, 0); for k in T.serial(4): (reads); T.gemm(A_s, B_s, C_l, ...)
    After:  with T.attr(C_l.data, "tt.accumulate", 0):
                for k in T.serial(4): (reads); T.tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 2, 2, False, k == 0)
                T.tt.pack_block(C_l.data, 0, 0, 2, 2)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.arch import get_arch
from tilelang_tt.attrs import AccumulateMode, Attr, Intrin, get, with_attrs
from tilelang_tt.passes.common import (
    COL,
    ROW,
    TILE,
    as_region,
    contains,
    error,
    evaluate,
    float_constant,
    is_cb_buffer,
    keep_span,
    prim_func_pass,
    seq,
    stmt_intrin,
    tile_op_name,
)

PASS = "LowerTTTileIntrinsics"
SUPPORTED = (
    "T.copy, T.clear/T.fill, T.gemm, T.reduce_sum/T.reduce_max, and T.Parallel stores whose value combines "
    "block elements X[i, j], per-row vectors v[i], per-column vectors v[j] and constants with + - * /, "
    "T.max/T.min, T.exp, T.exp2, T.log, T.sqrt, T.rsqrt, T.sigmoid, T.tanh, T.erf, T.abs and casts"
)
UNARY_CALLS = {
    "tirx.exp": "exp", "tirx.exp2": "exp2", "tirx.log": "log", "tirx.sqrt": "sqrt", "tirx.rsqrt": "rsqrt",
    "tirx.sigmoid": "sigmoid", "tirx.tanh": "tanh", "tirx.erf": "erf", "tirx.fabs": "abs",
}
BINARY_NODES = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Max, tirx.Min)
COMPUTE_DTYPES = ("bfloat16", "float32")  # DST holds floats: integer tiles would lose bits above 2^24


def sub_block(bmt: int, bnt: int, budget: int) -> tuple[int, int]:
    """Largest (rows, cols) sub-block of the bmt×bnt tile block that fits ``budget`` DST tiles and
    packs in row-major block order (full rows of tiles, or a divisor of one row)."""
    if bnt <= budget:
        sh = max(d for d in range(1, bmt + 1) if bmt % d == 0 and d * bnt <= budget)
        return sh, bnt
    return 1, max(d for d in range(1, budget + 1) if bnt % d == 0)


def tile_shape(buf: tirx.Buffer) -> tuple[int, int]:
    shape = [int(d) for d in buf.shape]
    return shape[0] // TILE, shape[1] // TILE


class _Lowerer:
    def __init__(self, func: tirx.PrimFunc, budget_of, cbs: dict, gemm_reuse: str):
        self.func = func
        self.gemm_reuse = gemm_reuse
        self.budget_of = budget_of
        self.cbs = cbs
        self.fp32 = any(d["data_format"] == "Float32" for d in cbs.values())

    def check_compute_dtypes(self, node, buffers) -> None:
        """Compute runs on float tiles in DST; an integer block would come back rounded."""
        for buf in buffers:
            if str(buf.dtype) not in COMPUTE_DTYPES:
                raise error(PASS, self.func, node, f"unsupported compute on `{buf.name}` ({buf.dtype})",
                            f"tile math in DST is {' or '.join(COMPUTE_DTYPES)} only: compute in those dtypes; "
                            "integer tensors can only be copied between DRAM and on-chip blocks")

    # -- gemm --------------------------------------------------------------------------------
    def gemm_parts(self, node):
        args = node.value.args
        a, b, c = (as_region(x) for x in args[:3])
        if bool(args[3]):
            raise error(PASS, self.func, node, "T.gemm with transpose_A=True is not supported",
                        "load A untransposed (M x K) into shared memory")
        if not all(r is not None and is_cb_buffer(r.buffer) and len(r.buffer.shape) == 2 for r in (a, b, c)):
            raise error(PASS, self.func, node, "T.gemm operands must be 2-D shared/fragment blocks",
                        "copy A and B blocks with T.copy into T.alloc_shared buffers first")
        self.check_compute_dtypes(node, (a.buffer, b.buffer, c.buffer))
        return a, b, c, bool(args[4])

    def is_gemm_into(self, node, acc: tirx.Buffer) -> bool:
        if tile_op_name(node) != "gemm":
            return False
        c = as_region(node.value.args[2])
        return c is not None and c.buffer.same_as(acc)

    def lower_accumulation(self, region: list[tirx.Stmt], acc: tirx.Buffer, like, reload: bool) -> tirx.Stmt:
        bmt, bnt = tile_shape(acc)
        sh, sw = sub_block(bmt, bnt, self.budget_of(self.fp32))
        ncols = bnt // sw
        nsub = (bmt // sh) * ncols

        def build(sb):
            m0 = (sb // ncols) * sh if nsub > 1 else 0
            n0 = (sb % ncols) * sw if nsub > 1 else 0
            body = [self.rewrite_gemms(s, acc, m0, n0, sh, sw, reload) for s in region]
            body.append(evaluate(Intrin.PACK_BLOCK, acc.data, m0, n0, sh, sw, like=like))
            return seq(body)

        kloop = region[0] if len(region) == 1 and isinstance(region[0], tirx.For) else None
        spill = (nsub > 1 and not reload and self.gemm_reuse == "auto" and kloop is not None
                 and isinstance(kloop.body, tirx.SeqStmt)
                 and any(self.is_gemm_into(s, acc) for s in kloop.body.seq))
        if spill:
            return self.lower_spilled(kloop, acc, like, sh, sw, ncols, nsub)
        if nsub == 1:
            body = build(0)
        else:
            var = tirx.Var("sb", "int32")
            body = keep_span(like, tirx.For(var, 0, nsub, tirx.ForKind.SERIAL, build(var)))
        mode = AccumulateMode.RELOAD if reload else AccumulateMode.FRESH
        return keep_span(like, tirx.AttrStmt(acc.data, Attr.ACCUMULATE.value, tirx.IntImm("int32", mode), body))

    def lower_spilled(self, kloop: tirx.For, acc, like, sh, sw, ncols, nsub) -> tirx.Stmt:
        """Block reuse for a C block beyond one DST acquire: every A and B block is read once per K
        step; each sub-block of C accumulates in DST and its partial sums round-trip through C's CB
        (reloaded from the second K step on)."""
        var = tirx.Var("sb", "int32")
        m0, n0 = (var // ncols) * sh, (var % ncols) * sw
        body = []
        for s in kloop.body.seq:
            if self.is_gemm_into(s, acc):
                a, b, c, trans_b = self.gemm_parts(s)
                self.check_gemm_shapes(s, a, b, c, trans_b)
                first = tirx.EQ(kloop.loop_var, kloop.min)
                sub = seq([evaluate(Intrin.MM_MMA, a.buffer.data, b.buffer.data, acc.data, m0, n0, sh, sw, trans_b,
                                    first, like=s),
                           evaluate(Intrin.PACK_BLOCK, acc.data, m0, n0, sh, sw, like=s)])
                body.append(keep_span(s, tirx.For(var, 0, nsub, tirx.ForKind.SERIAL, sub)))
            else:
                body.append(self.visit(s))
        new_loop = keep_span(kloop, tirx.For(kloop.loop_var, kloop.min, kloop.extent, tirx.ForKind.SERIAL, seq(body),
                                             None, kloop.annotations))
        return keep_span(like, tirx.AttrStmt(acc.data, Attr.ACCUMULATE.value,
                                             tirx.IntImm("int32", AccumulateMode.SPILL), new_loop))

    def rewrite_gemms(self, stmt, acc, m0, n0, sh, sw, reload):
        loops: list[tirx.For] = []

        def pre(node):
            if isinstance(node, tirx.For):
                loops.append(node)
            return None

        def post(node):
            if isinstance(node, tirx.For):
                loops.pop()
                return None
            if not self.is_gemm_into(node, acc):
                return None
            a, b, c, trans_b = self.gemm_parts(node)
            self.check_gemm_shapes(node, a, b, c, trans_b)
            first = tirx.IntImm("bool", not reload) if not loops else tirx.EQ(loops[-1].loop_var, loops[-1].min)
            return evaluate(Intrin.MM_MMA, a.buffer.data, b.buffer.data, c.buffer.data, m0, n0, sh, sw, trans_b,
                            first, like=node)

        return tirx.stmt_functor.ir_transform(stmt, pre, post, ["tirx.For", "tirx.Evaluate"])

    def check_gemm_shapes(self, node, a, b, c, trans_b):
        (am, ak), (bk, bn), (cm, cn) = tile_shape(a.buffer), tile_shape(b.buffer), tile_shape(c.buffer)
        if trans_b:
            bk, bn = bn, bk
        if am != cm or bn != cn or ak != bk:
            raise error(PASS, self.func, node,
                        f"T.gemm shapes do not agree: A {list(a.buffer.shape)}, B {list(b.buffer.shape)}, "
                        f"C {list(c.buffer.shape)}{' (B transposed)' if trans_b else ''}",
                        "use blocks with A (bm, bk), B (bk, bn) (or (bn, bk) with transpose_B) and C (bm, bn)")

    # -- sequences -------------------------------------------------------------------------------
    def lower_seq(self, stmts: list[tirx.Stmt]) -> list[tirx.Stmt]:
        out: list[tirx.Stmt] = []
        i = 0
        while i < len(stmts):
            s = stmts[i]
            acc = self.cleared_block(s)
            if acc is not None:
                j = i + 1
                while j < len(stmts) and contains(stmts[j], lambda n: self.is_gemm_into(n, acc)):
                    j += 1
                if j > i + 1 and self.accumulates_alone(stmts[i + 1:j], acc):
                    out.append(self.lower_accumulation(stmts[i + 1:j], acc, s, reload=False))
                    i = j
                    continue
            out.append(self.visit(s))
            i += 1
        return out

    def accumulates_alone(self, stmts: list[tirx.Stmt], acc: tirx.Buffer) -> bool:
        """Whether ``stmts`` only read blocks and gemm into ``acc``, so ``acc`` can stay in DST over
        all of them. Any other compute between K steps (a rescale of ``acc``, a block computed for
        the gemm, another accumulator) needs DST itself: ``acc`` is then a block every gemm reloads."""
        def alone(s) -> bool:
            if isinstance(s, tirx.SeqStmt):
                return all(alone(x) for x in s.seq)
            if isinstance(s, tirx.For):
                return s.kind != tirx.ForKind.PARALLEL and alone(s.body)
            return isinstance(s, tirx.Bind) or self.is_gemm_into(s, acc) or stmt_intrin(s) == Intrin.READ_TO_CB

        return all(alone(s) for s in stmts)

    def cleared_block(self, s) -> tirx.Buffer | None:
        """The block a ``T.clear``/``T.fill(.., 0)`` statement zeroes, if it is one."""
        if tile_op_name(s) != "fill":
            return None
        region = as_region(s.value.args[0])
        value = s.value.args[1]
        if region is None or not is_cb_buffer(region.buffer):
            return None
        if isinstance(value, (tirx.IntImm, tirx.FloatImm)) and float(value.value) == 0.0:
            return region.buffer
        return None

    # -- element-wise ------------------------------------------------------------------------------
    def block_kind(self, buf: tirx.Buffer) -> str:
        return self.cbs[buf.name]["vector"]

    def check_access(self, node, access, i, j) -> None:
        """A load/store must address a whole block element-wise: X[i, j], v[i] (per-row) or v[j]."""
        buf, idx = access.buffer, list(access.indices)
        kind = self.block_kind(buf) if buf.name in self.cbs else None
        ok = False
        if kind is not None:
            if len(idx) == 2 and kind == "":
                ok = i is not None and j is not None and idx[0].same_as(i) and idx[1].same_as(j)
            elif len(idx) == 2 and kind == ROW:
                ok = j is not None and _is_zero(idx[0]) and idx[1].same_as(j)
            elif len(idx) == 2 and kind == COL:
                ok = i is not None and idx[0].same_as(i) and _is_zero(idx[1])
            elif len(idx) == 1:
                var = i if kind == COL else j
                ok = var is not None and idx[0].same_as(var)
        if not ok:
            raise error(PASS, self.func, node,
                        f"`{buf.name}[{', '.join(str(x) for x in idx)}]` is not an element-wise access of an on-chip block",
                        "index blocks with the T.Parallel loop variables: X[i, j], per-row v[i] or per-column v[j]")

    def check_expr(self, node, expr, i, j) -> None:
        if isinstance(expr, tirx.BufferLoad):
            self.check_access(node, expr, i, j)
        elif isinstance(expr, (tirx.IntImm, tirx.FloatImm)):
            return
        elif isinstance(expr, tirx.Cast):
            self.check_expr(node, expr.value, i, j)
        elif isinstance(expr, BINARY_NODES):
            self.check_expr(node, expr.a, i, j)
            self.check_expr(node, expr.b, i, j)
        elif isinstance(expr, tirx.Call) and isinstance(expr.op, ir.Op) and expr.op.name in UNARY_CALLS:
            self.check_expr(node, expr.args[0], i, j)
        else:
            raise error(PASS, self.func, node, f"unsupported element-wise expression `{expr}`", f"supported: {SUPPORTED}")

    def lower_parallel(self, loop: tirx.For) -> tirx.Stmt:
        loops = [loop]
        body = loop.body
        while isinstance(body, tirx.For) and body.kind == tirx.ForKind.PARALLEL:
            loops.append(body)
            body = body.body
        if len(loops) > 2:
            raise error(PASS, self.func, loop, "T.Parallel over more than two dimensions", f"supported: {SUPPORTED}")
        stores = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
        out = []
        for store in stores:
            if not isinstance(store, tirx.BufferStore):
                raise error(PASS, self.func, store, "unsupported T.Parallel body (only stores into blocks)",
                            f"supported: {SUPPORTED}")
            if len(loops) == 2:
                i, j = loops[0].loop_var, loops[1].loop_var
            elif store.buffer.name in self.cbs and self.block_kind(store.buffer) == ROW:
                i, j = None, loops[0].loop_var
            else:
                i, j = loops[0].loop_var, None
            self.check_access(store, store, i, j)
            self.check_extents(store, store.buffer, [lp.extent for lp in loops])
            self.check_expr(store, store.value, i, j)
            loads = []
            tirx.stmt_functor.post_order_visit(
                store.value, lambda n: loads.append(n.buffer) if isinstance(n, tirx.BufferLoad) else None)
            self.check_compute_dtypes(store, [store.buffer, *loads])
            out.append(evaluate(Intrin.TILE_ELTWISE, store.buffer.data, i if i is not None else 0,
                                j if j is not None else 0, store.value, like=store))
        return seq(out)

    def check_extents(self, node, buf, extents) -> None:
        shape = [int(d) for d in buf.shape]
        full = [d for d in shape if d != 1]
        if [int(e) for e in extents] != full:
            raise error(PASS, self.func, node,
                        f"T.Parallel{tuple(int(e) for e in extents)} does not cover the whole block `{buf.name}` {shape}",
                        "iterate T.Parallel over the block's full shape")

    def eltwise_from(self, node, dst: tirx.Buffer, value_of) -> tirx.Stmt:
        """An eltwise statement writing every element of ``dst`` with ``value_of(i, j)``."""
        kind = self.block_kind(dst)
        i, j = tirx.Var("i", "int32"), tirx.Var("j", "int32")
        return evaluate(Intrin.TILE_ELTWISE, dst.data, i if kind != ROW else 0, j if kind != COL else 0,
                        value_of(i, j), like=node)

    def load(self, buf: tirx.Buffer, i, j) -> tirx.BufferLoad:
        kind = self.block_kind(buf)
        if len(buf.shape) == 1:
            return tirx.BufferLoad(buf, [i if kind == COL else j])
        if kind == ROW:
            return tirx.BufferLoad(buf, [tirx.IntImm("int32", 0), j])
        if kind == COL:
            return tirx.BufferLoad(buf, [i, tirx.IntImm("int32", 0)])
        return tirx.BufferLoad(buf, [i, j])

    def lower_copy(self, node) -> tirx.Stmt:
        src, dst = (as_region(a) for a in node.value.args[:2])
        if list(src.buffer.shape) != list(dst.buffer.shape) or self.block_kind(src.buffer) != self.block_kind(dst.buffer):
            raise error(PASS, self.func, node, f"T.copy from `{src.buffer.name}` to `{dst.buffer.name}` changes the block shape",
                        "copy between on-chip blocks of the same shape")
        self.check_compute_dtypes(node, (src.buffer, dst.buffer))
        return self.eltwise_from(node, dst.buffer, lambda i, j: tirx.Cast(str(dst.buffer.dtype), self.load(src.buffer, i, j)))

    def lower_fill(self, node) -> tirx.Stmt:
        region = as_region(node.value.args[0])
        if region is None or not is_cb_buffer(region.buffer):
            raise error(PASS, self.func, node, "T.fill of a global tensor is not supported", "fill an on-chip block")
        value = float_constant(node.value.args[1])
        if value is None:
            raise error(PASS, self.func, node, "T.fill with a non-constant value", "fill with a constant")
        self.check_compute_dtypes(node, (region.buffer,))
        return self.eltwise_from(node, region.buffer, lambda i, j: tirx.FloatImm("float32", value))

    def lower_reduce(self, node) -> tirx.Stmt:
        args = node.value.args
        src, dst = as_region(args[0]), as_region(args[1])
        kind, dim, clear = args[2].value, int(args[3]), bool(args[4])
        if kind not in ("sum", "max"):
            raise error(PASS, self.func, node, f"T.reduce_{kind} is not supported", "use T.reduce_sum or T.reduce_max")
        self.check_compute_dtypes(node, (src.buffer, dst.buffer))
        if len(src.buffer.shape) != 2 or self.block_kind(src.buffer) != "":
            raise error(PASS, self.func, node,
                        f"T.reduce of `{src.buffer.name}` {[int(d) for d in src.buffer.shape]}: the source is a vector",
                        "reduce a 2-D block of whole 32x32 tiles (rows and columns both multiples of 32)")
        dim = dim % 2
        want = COL if dim == 1 else ROW
        if self.block_kind(dst.buffer) != want:
            raise error(PASS, self.func, node,
                        f"the result `{dst.buffer.name}` of a reduction along dim {dim} must be a "
                        f"{'per-row' if dim == 1 else 'per-column'} vector",
                        f"allocate it as T.alloc_fragment(({int(src.buffer.shape[1 - dim])},), ...)")
        return evaluate(Intrin.TILE_REDUCE, kind, src.buffer.data, dst.buffer.data, dim, clear, like=node)

    # -- dispatch ------------------------------------------------------------------------------
    def visit(self, s):
        if isinstance(s, tirx.SeqStmt):
            return seq(self.lower_seq(list(s.seq)))
        if isinstance(s, tirx.For):
            if s.kind == tirx.ForKind.PARALLEL:
                return self.lower_parallel(s)
            return keep_span(s, tirx.For(s.loop_var, s.min, s.extent, tirx.ForKind.SERIAL, self.visit(s.body),
                                         None, s.annotations))
        if isinstance(s, tirx.AttrStmt):
            return keep_span(s, tirx.AttrStmt(s.node, s.attr_key, s.value, self.visit(s.body)))
        if isinstance(s, tirx.SBlockRealize):
            blk = s.block
            new_blk = tirx.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, self.visit(blk.body),
                                  blk.init, blk.alloc_buffers, blk.match_buffers, blk.annotations)
            return keep_span(s, tirx.SBlockRealize(s.iter_values, s.predicate, new_blk))
        name = tile_op_name(s)
        if name == "gemm":
            a, b, c, _ = self.gemm_parts(s)
            return self.lower_accumulation([s], c.buffer, s, reload=True)
        if name == "fill":
            return self.lower_fill(s)
        if name == "copy":
            return self.lower_copy(s)
        if name == "reduce":
            return self.lower_reduce(s)
        if name is not None:
            raise error(PASS, self.func, s, f"unsupported tile op `T.{name}`", f"supported: {SUPPORTED}")
        if isinstance(s, (tirx.Evaluate, tirx.Bind)) or stmt_intrin(s) is not None:
            return s
        if isinstance(s, tirx.BufferStore):
            raise error(PASS, self.func, s, f"scalar store into `{s.buffer.name}` outside T.Parallel",
                        f"supported: {SUPPORTED}")
        raise error(PASS, self.func, s, f"unsupported statement {type(s).__name__}", f"supported: {SUPPORTED}")


def _is_zero(e) -> bool:
    return isinstance(e, tirx.IntImm) and int(e.value) == 0


def _transform(func: tirx.PrimFunc, mod, ctx, arch_name: str, math_fidelity: str, gemm_reuse: str) -> tirx.PrimFunc:
    arch = get_arch(get(func, Attr.ARCH, arch_name))
    lowerer = _Lowerer(func, arch.dst_budget, get(func, Attr.CB_DESC, {}), gemm_reuse)
    body = lowerer.visit(func.body)
    return with_attrs(func.with_body(body), {
        Attr.COMPUTE_CONFIG: {
            "fp32_dest_acc_en": lowerer.fp32,
            "math_fidelity": math_fidelity,
            "math_approx_mode": False,
            "dst_budget": arch.dst_budget(lowerer.fp32),
        }
    })


def LowerTTTileIntrinsics(arch: str = "wormhole_b0", math_fidelity: str = "HiFi4", gemm_reuse: str = "auto"):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, arch, math_fidelity, gemm_reuse), PASS)
