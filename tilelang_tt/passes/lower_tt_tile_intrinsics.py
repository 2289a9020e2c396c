"""C2 LowerTTTileIntrinsics: compute tile ops become protocol-less CB intrinsics.

Reads: ``T.gemm``, ``T.clear``/``T.fill(0)`` of a gemm accumulator, ``T.Parallel`` element-wise
assignments; ``tt.cb_desc``; the arch's DST capacity.
Writes: ``tt.compute_config`` {fp32_dest_acc_en, math_fidelity, dst_budget}.
TIR:
- ``T.gemm(A_s, B_s, C)`` inside the K loop → ``tt.mm.mma(A_s, B_s, C, m0, n0, sm, sn, tb, k == 0)``;
  the clear of C is dropped (DST starts at zero on acquire) and ``tt.pack_block(C, m0, n0, sm, sn)``
  follows the K loop: the accumulator is final there. When the bm×bn block has more tiles than one
  DST acquire holds, the clear..K-loop region is wrapped in a sub-block loop so every output tile
  still accumulates over K in DST and is packed exactly once (K loop inside, sub-blocks outside).
- ``for i, j in T.Parallel(bm, bn): C[i, j] = A[i, j] op B[i, j]`` (op in + - *) over whole
  blocks → ``tt.fpu.binary(op, A, B, C)``.
Errors: any other tile op or element-wise form, naming the op and the user's line.

    Before: T.fill(C_l, 0); for k in T.serial(4): (reads); T.gemm(A_s, B_s, C_l, ...)
    After:  for k in T.serial(4): (reads); T.tt.mm.mma(A_s, B_s, C_l, 0, 0, 2, 2, False, k == 0)
            T.tt.pack_block(C_l, 0, 0, 2, 2)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.arch import get_arch
from tilelang_tt.attrs import Attr, Intrin, get, with_attrs
from tilelang_tt.passes.common import (
    TILE,
    as_region,
    contains,
    error,
    evaluate,
    is_cb_buffer,
    keep_span,
    prim_func_pass,
    seq,
    stmt_intrin,
    tile_op_name,
)

PASS = "LowerTTTileIntrinsics"
SUPPORTED = "T.copy, T.gemm (accumulating over a K loop after T.clear), T.clear of a gemm accumulator, " \
            "and T.Parallel element-wise C[i, j] = A[i, j] (+|-|*) B[i, j] over whole blocks"
BINARY_OPS = {tirx.Add: "add", tirx.Sub: "sub", tirx.Mul: "mul"}


def sub_block(bmt: int, bnt: int, budget: int) -> tuple[int, int]:
    """Largest (rows, cols) sub-block of the bmt×bnt tile block that fits ``budget`` DST tiles and
    packs in row-major block order (full rows of tiles, or a divisor of one row)."""
    if bnt <= budget:
        sh = max(d for d in range(1, bmt + 1) if bmt % d == 0 and d * bnt <= budget)
        return sh, bnt
    return 1, max(d for d in range(1, budget + 1) if bnt % d == 0)


class _Lowerer:
    def __init__(self, func: tirx.PrimFunc, budget_of):
        self.func = func
        self.budget_of = budget_of
        self.fp32_acc = False
        self.accumulators: set[str] = set()

    # -- gemm --------------------------------------------------------------------------------
    def gemm_parts(self, node):
        args = node.value.args
        a, b, c = (as_region(x) for x in args[:3])
        trans_a, trans_b = bool(args[3]), bool(args[4])
        if trans_a:
            raise error(PASS, self.func, node, "T.gemm with transpose_A=True is not supported",
                        "load A untransposed (M x K) into shared memory")
        if not all(r is not None and is_cb_buffer(r.buffer) for r in (a, b, c)):
            raise error(PASS, self.func, node, "T.gemm operands must be shared/fragment blocks",
                        "copy A and B blocks with T.copy into T.alloc_shared buffers first")
        return a, b, c, trans_b

    def lower_seq(self, stmts: list[tirx.Stmt]) -> list[tirx.Stmt]:
        """Rewrite a statement list; handles clear → K loop with gemm → consumers."""
        out: list[tirx.Stmt] = []
        i = 0
        while i < len(stmts):
            s = stmts[i]
            acc = self.cleared_accumulator(s)
            if acc is not None:
                # region: following statements that contain a gemm into acc
                j = i + 1
                while j < len(stmts) and contains(stmts[j], lambda n: self.is_gemm_into(n, acc)):
                    j += 1
                if j == i + 1:
                    raise error(PASS, self.func, s, f"T.clear/T.fill of `{acc.name}` is not followed by a T.gemm into it",
                                "T.fill/T.clear are supported on gemm accumulators; element-wise fills are not yet")
                out.extend(self.lower_accumulation(stmts[i + 1:j], acc, s))
                i = j
                continue
            out.append(self.visit(s))
            i += 1
        return out

    def cleared_accumulator(self, s) -> tirx.Buffer | None:
        if tile_op_name(s) != "fill":
            return None
        region = as_region(s.value.args[0])
        value = s.value.args[1]
        if region is None or not is_cb_buffer(region.buffer):
            raise error(PASS, self.func, s, "T.fill of a global tensor is not supported", "fill an on-chip block")
        if not (isinstance(value, (tirx.IntImm, tirx.FloatImm)) and float(value.value) == 0.0):
            raise error(PASS, self.func, s, "T.fill with a non-zero value is not supported yet",
                        "only T.clear (fill 0) of a gemm accumulator is lowered")
        return region.buffer

    def is_gemm_into(self, node, acc: tirx.Buffer) -> bool:
        if tile_op_name(node) != "gemm":
            return False
        c = as_region(node.value.args[2])
        return c is not None and c.buffer.same_as(acc)

    def lower_accumulation(self, region: list[tirx.Stmt], acc: tirx.Buffer, clear_stmt) -> list[tirx.Stmt]:
        self.accumulators.add(acc.name)
        if str(acc.dtype) == "float32":
            self.fp32_acc = True
        bmt, bnt = int(acc.shape[0]) // TILE, int(acc.shape[1]) // TILE
        sh, sw = sub_block(bmt, bnt, self.budget_of(str(acc.dtype) == "float32"))
        ncols = bnt // sw
        nsub = (bmt // sh) * ncols

        def build(sb):
            m0 = (sb // ncols) * sh if nsub > 1 else 0
            n0 = (sb % ncols) * sw if nsub > 1 else 0
            body = [self.rewrite_gemms(s, acc, m0, n0, sh, sw) for s in region]
            body.append(evaluate(Intrin.PACK_BLOCK, acc.data, m0, n0, sh, sw, like=clear_stmt))
            return seq(body)

        if nsub == 1:
            return [build(0)]
        var = tirx.Var("sb", "int32")
        return [keep_span(clear_stmt, tirx.For(var, 0, nsub, tirx.ForKind.SERIAL, build(var)))]

    def rewrite_gemms(self, stmt, acc, m0, n0, sh, sw):
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
            if not loops:
                first = tirx.IntImm("bool", True)
            else:
                k = loops[-1]
                first = tirx.EQ(k.loop_var, k.min)
            return evaluate(Intrin.MM_MMA, a.buffer.data, b.buffer.data, c.buffer.data, m0, n0, sh, sw, trans_b,
                            first, like=node)

        return tirx.stmt_functor.ir_transform(stmt, pre, post, ["tirx.For", "tirx.Evaluate"])

    # -- element-wise --------------------------------------------------------------------------
    def lower_parallel(self, loop: tirx.For) -> tirx.Stmt:
        loops = [loop]
        body = loop.body
        while isinstance(body, tirx.For):
            loops.append(body)
            body = body.body
        if len(loops) != 2 or not isinstance(body, tirx.BufferStore):
            raise error(PASS, self.func, loop, "unsupported T.Parallel body",
                        f"supported: {SUPPORTED}")
        i, j = loops[0].loop_var, loops[1].loop_var
        store = body

        def whole(buf, indices) -> bool:
            return (is_cb_buffer(buf) and len(indices) == 2 and indices[0].same_as(i) and indices[1].same_as(j)
                    and int(buf.shape[0]) == int(loops[0].extent) and int(buf.shape[1]) == int(loops[1].extent))

        value = store.value
        op = BINARY_OPS.get(type(value))
        ok = op is not None and whole(store.buffer, store.indices)
        if ok:
            lhs, rhs = value.a, value.b
            ok = all(isinstance(x, tirx.BufferLoad) and whole(x.buffer, x.indices) for x in (lhs, rhs))
        if not ok:
            raise error(PASS, self.func, store, f"unsupported element-wise expression `{store.buffer.name}[i, j] = {value}`",
                        f"supported: {SUPPORTED}")
        return evaluate(Intrin.FPU_BINARY, op, lhs.buffer.data, rhs.buffer.data, store.buffer.data, like=store)

    # -- dispatch ------------------------------------------------------------------------------
    def visit(self, s):
        if isinstance(s, tirx.SeqStmt):
            return seq(self.lower_seq(list(s.seq)))
        if isinstance(s, tirx.For):
            if s.kind == tirx.ForKind.PARALLEL:
                return self.lower_parallel(s)
            return keep_span(s, tirx.For(s.loop_var, s.min, s.extent, s.kind, self.visit(s.body),
                                         s.thread_binding, s.annotations))
        if isinstance(s, tirx.AttrStmt):
            return keep_span(s, tirx.AttrStmt(s.node, s.attr_key, s.value, self.visit(s.body)))
        if isinstance(s, tirx.SBlockRealize):
            blk = s.block
            new_blk = tirx.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, self.visit(blk.body),
                                  blk.init, blk.alloc_buffers, blk.match_buffers, blk.annotations)
            return keep_span(s, tirx.SBlockRealize(s.iter_values, s.predicate, new_blk))
        name = tile_op_name(s)
        if name == "gemm":
            raise error(PASS, self.func, s, "T.gemm whose accumulator is not cleared with T.clear before the K loop",
                        "write T.clear(C_local) before the loop that calls T.gemm")
        if name is not None:
            raise error(PASS, self.func, s, f"unsupported tile op `T.{name}`", f"supported: {SUPPORTED}")
        if isinstance(s, (tirx.Evaluate, tirx.Bind)) or stmt_intrin(s) is not None:
            return s
        if isinstance(s, tirx.BufferStore):
            raise error(PASS, self.func, s, f"scalar store into `{s.buffer.name}` outside T.Parallel",
                        f"supported: {SUPPORTED}")
        raise error(PASS, self.func, s, f"unsupported statement {type(s).__name__}", f"supported: {SUPPORTED}")


def _transform(func: tirx.PrimFunc, mod, ctx, arch_name: str, math_fidelity: str) -> tirx.PrimFunc:
    arch = get_arch(get(func, Attr.ARCH, arch_name))
    lowerer = _Lowerer(func, arch.dst_budget)
    body = lowerer.visit(func.body)
    fp32 = lowerer.fp32_acc
    return with_attrs(func.with_body(body), {
        Attr.COMPUTE_CONFIG: {
            "fp32_dest_acc_en": fp32,
            "math_fidelity": math_fidelity,
            "math_approx_mode": False,
            "dst_budget": arch.dst_budget(fp32),
        }
    })


def LowerTTTileIntrinsics(arch: str = "wormhole_b0", math_fidelity: str = "HiFi4"):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, arch, math_fidelity), PASS)
